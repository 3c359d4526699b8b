// What the tuner does with the properties a backend read from the driver: the L2 flush between timed
// repetitions is at least twice the L2, and the SM clock, memory clock, bus width and L2 are in the device key.
#include <gtest/gtest.h>
#include <stdlib.h>

#include <filesystem>

#include "isatune/gen/generator.h"
#include "isatune/tune/tuning_recorder.h"
#include "isatune/tune/variant_runner.h"
#include "../../tuner/src/worker_protocol.h"

namespace {

using isatune::tune::flush_bytes_for;

TEST(Flush, AtLeastTwiceTheL2TheDriverReported) {
  isatune::tune::TimingOptions t;
  isatune::loader::DeviceProperties p;
  p.l2_bytes = 0; // not known: the configured size
  EXPECT_EQ(flush_bytes_for(t, p), t.flush_bytes);
  p.l2_bytes = 50ull << 20; // H200: 50 MiB, twice of it is below the 512 MiB default
  EXPECT_EQ(flush_bytes_for(t, p), t.flush_bytes);
  t.flush_bytes = 64ull << 20; // a smaller configured flush is raised to twice the L2
  EXPECT_EQ(flush_bytes_for(t, p), 100ull << 20);
  p.l2_bytes = 300ull << 20; // a larger cache than the default flush
  t.flush_bytes = 512ull << 20;
  EXPECT_EQ(flush_bytes_for(t, p), 600ull << 20);
  t.flush_bytes = 0; // no flush asked for: none
  EXPECT_EQ(flush_bytes_for(t, p), 0u);
}

TEST(DeviceKey, ClocksAndL2AreRecordedAndTellDevicesApart) {
  std::string dir = (std::filesystem::temp_directory_path() / "isatune-devkey-XXXXXX").string();
  ASSERT_NE(mkdtemp(dir.data()), nullptr);
  auto db = isatune::db::Database::open(dir + "/t.db");
  isatune::tune::TuningJob job;
  for (const auto* g : isatune::gen::all_generators())
    if (g->name() == "selftest") job.generator = g;
  ASSERT_NE(job.generator, nullptr);
  job.isa = "gfx942"; // the generator version needs a target it has; the device key is what is tested
  isatune::loader::DeviceProperties p;
  p.backend = "cuda";
  p.vendor = isatune::Vendor::nvidia;
  p.name = "NVIDIA H200";
  p.isa = p.target_id = "sm_90a";
  p.compute_units = 132;
  p.memory_bytes = 141ull << 30;
  p.driver_version = "cuda driver 13.0";
  p.clock_khz = 1980000;
  p.memory_clock_khz = 3201000;
  p.memory_bus_bits = 6144;
  p.l2_bytes = 50ull << 20;
  { isatune::tune::TuningRecorder r(db, job, p); }
  auto rows = db.query("SELECT clock_khz, memory_clock_khz, memory_bus_bits, l2_bytes FROM devices");
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(std::get<int64_t>(rows[0][0]), 1980000);
  EXPECT_EQ(std::get<int64_t>(rows[0][1]), 3201000);
  EXPECT_EQ(std::get<int64_t>(rows[0][2]), 6144);
  EXPECT_EQ(std::get<int64_t>(rows[0][3]), int64_t(50) << 20);
  { isatune::tune::TuningRecorder r(db, job, p); } // the same device: the same row
  EXPECT_EQ(db.query("SELECT id FROM devices").size(), 1u);
  p.clock_khz = 1410000; // a variant of the same name with a lower rated clock: another device
  { isatune::tune::TuningRecorder r(db, job, p); }
  EXPECT_EQ(db.query("SELECT id FROM devices").size(), 2u);
  std::filesystem::remove_all(dir);
}

// A GPU loads the cubin only where SASS runs (the same major version, forwards; sm_XYa on X.Y alone); else the
// PTX, which its driver compiles: sm_80 kernels on an H200.
TEST(CodeFor, CubinsOnlyWhereTheirSassRunsElsePtx) {
  isatune::tune::Compiled c;
  c.code.isa = "sm_80";
  c.machine_code = isatune::CodeObject{};
  c.machine_code->isa = "sm_80";
  isatune::loader::DeviceProperties gpu;
  gpu.vendor = isatune::Vendor::nvidia;
  gpu.isa = "sm_90a"; // H100/H200
  EXPECT_EQ(&c.code_for(gpu), &c.code);
  gpu.isa = "sm_86";
  EXPECT_EQ(&c.code_for(gpu), &*c.machine_code);
  gpu.isa = "sm_80";
  EXPECT_EQ(&c.code_for(gpu), &*c.machine_code);
  gpu.emulated = true; // the PTX emulator runs the text
  EXPECT_EQ(&c.code_for(gpu), &c.code);
  gpu.emulated = false;
  c.code.isa = c.machine_code->isa = "sm_90a";
  gpu.isa = "sm_90a";
  EXPECT_EQ(&c.code_for(gpu), &*c.machine_code);
  gpu.isa = "sm_100a"; // arch-specific SASS on its own chip only
  EXPECT_EQ(&c.code_for(gpu), &c.code);
  c.machine_code.reset();
  gpu.isa = "sm_90a";
  EXPECT_EQ(&c.code_for(gpu), &c.code);
}

// The isolated device worker opens the GPU and sends its properties to the parent, which records the device:
// the driver-read ones must survive the trip.
TEST(DeviceKey, TheWorkerProtocolCarriesTheDriverReadProperties) {
  isatune::loader::DeviceProperties p;
  p.backend = "cuda";
  p.vendor = isatune::Vendor::nvidia;
  p.clock_khz = 1980000;
  p.memory_clock_khz = 3201000;
  p.memory_bus_bits = 6144;
  p.l2_bytes = 60ull << 30; // above 32 bits
  p.default_shared_bytes_per_workgroup = 48 * 1024;
  p.shared_bytes_per_cu = 228 * 1024;
  p.registers_per_cu = 65536;
  auto j = isatune::tune::worker::to_json(p);
  auto q = isatune::tune::worker::properties_from_json(nlohmann::json::parse(j.dump()));
  EXPECT_EQ(q.clock_khz, p.clock_khz);
  EXPECT_EQ(q.memory_clock_khz, p.memory_clock_khz);
  EXPECT_EQ(q.memory_bus_bits, p.memory_bus_bits);
  EXPECT_EQ(q.l2_bytes, p.l2_bytes);
  EXPECT_EQ(q.default_shared_bytes_per_workgroup, p.default_shared_bytes_per_workgroup);
  EXPECT_EQ(q.shared_bytes_per_cu, p.shared_bytes_per_cu);
  EXPECT_EQ(q.registers_per_cu, p.registers_per_cu);
  // A message without them (an older worker) reads as unknown.
  for (const char* k : {"clock_khz", "memory_clock_khz", "memory_bus_bits", "l2_bytes"}) j.erase(k);
  auto r = isatune::tune::worker::properties_from_json(j);
  EXPECT_EQ(r.clock_khz, 0u);
  EXPECT_EQ(r.l2_bytes, 0u);
}

} // namespace
