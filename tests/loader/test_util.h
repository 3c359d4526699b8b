#pragma once
// Helpers: temp dirs and a small tuning database with a known content.
#include <gtest/gtest.h>

#include <filesystem>
#include <random>
#include <string>

#include "isatune/db/database.h"
#include "isatune/loader/sha256.h"

namespace testutil {

inline std::string temp_dir() {
  std::random_device rd;
  auto p = std::filesystem::temp_directory_path() / ("isatune-loader-" + std::to_string(rd()) + std::to_string(rd()));
  std::filesystem::create_directories(p);
  return p.string();
}

// A code object for gfx942 with one kernel `vector_add(a, b, c, n)` plus two hidden arguments.
inline isatune::CodeObject code_object(const std::string& tag = "v1", uint32_t lds = 0) {
  isatune::CodeObject c;
  c.vendor = isatune::Vendor::amd;
  c.isa = "gfx942";
  c.target_id = "amdgcn-amd-amdhsa--gfx942:sramecc+:xnack-";
  c.bytes.assign(tag.begin(), tag.end());
  c.bytes.resize(256, 0x7f);
  c.sha256 = isatune::loader::sha256_hex(c.bytes);
  isatune::KernelInfo k;
  k.name = "vector_add";
  k.symbol = "vector_add.kd";
  k.kernarg_size = 48;
  k.kernarg_align = 8;
  k.lds_bytes = lds;
  k.vgprs = 8;
  k.sgprs = 16;
  k.max_workgroup_size = 256;
  k.wave_size = 64;
  k.args = {{"a", 0, 8, "global_buffer", "global", "read_only"},
            {"b", 8, 8, "global_buffer", "global", "read_only"},
            {"c", 16, 8, "global_buffer", "global", "write_only"},
            {"n", 24, 4, "by_value", "", ""},
            {"", 32, 4, "hidden_block_count_x", "", ""},
            {"", 36, 2, "hidden_group_size_x", "", ""}};
  isatune::KernelDescriptor d;
  d.group_segment_fixed_size = lds;
  d.kernarg_size = 48;
  d.compute_pgm_rsrc1 = 0x1234;
  d.workgroup_id_x = true;
  k.descriptor = d;
  c.kernels.push_back(k);
  return c;
}

struct Ids {
  int64_t device = 0, generator = 0;
  std::vector<int64_t> variants;
};

inline const char* kSignature = R"({"dtype":"f32"})";
inline const char* kLaunch = R"({"block":[256,1,1],"grid":[{"ceil_div":["n",256]},1,1]})";

// Records a device, a generator, `variants` variants (distinct code objects) and, per problem size n in
// `sizes`, one ok measurement per variant with median = base + variant index (variant 0 is the fastest)
// except for n == 4096 where the last variant wins.
inline Ids populate(isatune::db::Database& db, const std::vector<int>& sizes, int variants = 3,
                    bool emulated = false, uint32_t cus = 304) {
  Ids ids;
  isatune::db::DeviceRecord d;
  d.vendor = "amd";
  d.target_id = "amdgcn-amd-amdhsa--gfx942:sramecc+:xnack-";
  d.isa = "gfx942";
  d.name = emulated ? "CDNA emulator (gfx942)" : "AMD Instinct MI300X";
  d.compute_units = cus;
  d.memory_bytes = 192ull << 30;
  d.driver_version = "test";
  d.emulated = emulated;
  ids.device = db.record_device(d);
  ids.generator = db.record_generator("vector_add", "abc123");
  int64_t tc = db.record_toolchain("llvm-mc", "19.1");
  db.record_run_start({"run-" + std::to_string(cus) + (emulated ? "e" : "r"), "grid", "60s", "testhost", "", ""});
  for (int v = 0; v < variants; ++v) {
    auto code = code_object("variant" + std::to_string(v));
    std::string sha = db.record_code_object(code, tc);
    isatune::db::VariantRecord vr;
    vr.generator_id = ids.generator;
    vr.signature = kSignature;
    vr.parameters = "{\"unroll\":" + std::to_string(v + 1) + "}";
    vr.code_object = sha;
    vr.kernel = "vector_add";
    vr.launch = kLaunch;
    ids.variants.push_back(db.record_variant(vr));
  }
  for (int n : sizes)
    for (int v = 0; v < variants; ++v) {
      isatune::db::MeasurementRecord m;
      m.variant_id = ids.variants[size_t(v)];
      m.device_id = ids.device;
      m.problem = "{\"n\":" + std::to_string(n) + "}";
      double t = n * 1e-6 + v;
      if (n == 4096) t = n * 1e-6 + (variants - 1 - v);
      m.median_ms = t;
      m.p20_ms = t * 0.9;
      m.p80_ms = t * 1.1;
      m.min_ms = t * 0.8;
      m.count = 10;
      m.device_kind = emulated ? "emulated" : "real";
      m.timing_method = emulated ? "emulator-estimate" : "events";
      m.run_guid = "run-" + std::to_string(cus) + (emulated ? "e" : "r");
      db.record_measurement(m);
    }
  return ids;
}

} // namespace testutil
