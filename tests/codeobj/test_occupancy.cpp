// Occupancy formula table (shared/notes/cdna.md section 1).
#include <gtest/gtest.h>

#include <cctype>
#include <map>

#include "isatune/codeobj/occupancy.h"
#include "isatune/codeobj/reader.h"
#include "kernels.h"
#include "llvm_programs.h"
#include "llvm_skip.h"

using namespace isatune;
using namespace isatune::codeobj;

namespace {

const cdna::TargetInfo& target(const char* name) {
  const cdna::TargetInfo* t = cdna::find_target(name);
  if (!t) throw std::runtime_error(std::string("no target ") + name);
  return *t;
}

struct Row {
  const char* isa;
  uint32_t vgprs, sgprs, lds, wg;
  uint32_t waves;
  const char* limiter;
};

} // namespace

TEST(Occupancy, Table) {
  const Row rows[] = {
      // VGPRs (all targets share the 512-register unified file, granule 8).
      {"gfx90a", 0, 20, 0, 256, 8, "none"},
      {"gfx942", 7, 20, 0, 256, 8, "none"},
      {"gfx942", 64, 20, 0, 256, 8, "none"},
      {"gfx942", 65, 20, 0, 256, 7, "vgprs"},
      {"gfx942", 128, 20, 0, 256, 4, "vgprs"},
      {"gfx942", 129, 20, 0, 256, 3, "vgprs"},
      {"gfx942", 256, 20, 0, 256, 2, "vgprs"},
      {"gfx942", 512, 20, 0, 256, 1, "vgprs"},
      {"gfx942", 125, 20, 0, 256, 4, "vgprs"}, // 21 arch (-> 24) + 101 AGPR
      {"gfx90a", 129, 20, 0, 256, 3, "vgprs"},
      {"gfx950", 65, 20, 0, 256, 7, "vgprs"},
      // SGPRs: next_free + extra.
      {"gfx942", 32, 100, 0, 256, 8, "none"},
      {"gfx942", 32, 95 + 6, 0, 256, 7, "sgprs"},
      {"gfx90a", 32, 102 + 6, 0, 256, 7, "sgprs"},
      // LDS and workgroup limits.
      {"gfx942", 32, 20, 65536, 1024, 4, "lds"},
      {"gfx950", 32, 20, 65536, 1024, 8, "none"},
      {"gfx950", 32, 20, 163840, 1024, 4, "lds"},
      {"gfx90a", 32, 20, 65536, 1024, 4, "lds"},
      {"gfx942", 32, 20, 32768, 256, 2, "lds"},   // 2 WG x 4 waves / 4 SIMDs
      {"gfx942", 32, 20, 16384, 256, 4, "lds"},
      {"gfx942", 32, 20, 8192, 256, 8, "none"},
      {"gfx950", 32, 20, 32000, 256, 5, "lds"},   // 25 granules of 1280: 163840 / 32000 = 5 WG x 4 waves / 4
      {"gfx950", 32, 20, 32768, 256, 4, "lds"},   // rounds up to 33280: 4 WG
      {"gfx950", 32, 20, 33000, 256, 4, "lds"},   // rounds up to 33280 (granule 1280): 4 WG
      {"gfx942", 32, 20, 100, 64, 8, "none"},     // 512-byte granule: 128 WGs would fit, 32 wave slots
      {"gfx942", 32, 20, 65536, 64, 1, "lds"},    // one 1-wave WG per CU still runs one wave
      {"gfx942", 32, 20, 0, 192, 7, "workgroup"}, // 3 waves per WG: 10 WGs -> 30 waves / 4 SIMDs
      {"gfx942", 32, 20, 0, 64, 8, "none"},
      {"gfx942", 200, 108, 65536, 1024, 2, "vgprs"},
  };
  for (const Row& r : rows) {
    Occupancy o = amd_occupancy(target(r.isa), r.vgprs, r.sgprs, r.lds, r.wg);
    EXPECT_EQ(o.waves_per_simd, r.waves) << r.isa << " vgprs " << r.vgprs << " sgprs " << r.sgprs << " lds "
                                         << r.lds << " wg " << r.wg;
    EXPECT_EQ(o.limiter, r.limiter) << r.isa << " vgprs " << r.vgprs << " sgprs " << r.sgprs << " lds " << r.lds
                                    << " wg " << r.wg;
    EXPECT_EQ(o.waves_per_simd, std::min({8u, o.by_vgprs, o.by_sgprs, o.by_lds}));
  }
}

TEST(Occupancy, Components) {
  Occupancy o = amd_occupancy(target("gfx942"), 129, 101, 65536, 1024);
  EXPECT_EQ(o.by_vgprs, 3u);
  EXPECT_EQ(o.by_sgprs, 7u);
  EXPECT_EQ(o.by_lds, 4u);
  EXPECT_EQ(o.workgroups_per_cu, 1u);
  EXPECT_EQ(o.waves_per_simd, 3u);
  EXPECT_EQ(o.limiter, "vgprs");
  o = amd_occupancy(target("gfx950"), 8, 20, 65536, 1024);
  EXPECT_EQ(o.workgroups_per_cu, 2u);
  o = amd_occupancy(target("gfx942"), 8, 20, 0, 1024);
  EXPECT_EQ(o.workgroups_per_cu, 2u); // 32 wave slots / 16 waves
  o = amd_occupancy(target("gfx942"), 8, 20, 0, 128);
  EXPECT_EQ(o.workgroups_per_cu, 16u); // the 16-workgroup limit for multi-wave groups
  o = amd_occupancy(target("gfx942"), 8, 20, 0, 64);
  EXPECT_EQ(o.workgroups_per_cu, 32u);
}

TEST(Occupancy, TooLargeToRun) {
  Occupancy o = amd_occupancy(target("gfx942"), 8, 20, 65537, 256);
  EXPECT_EQ(o.waves_per_simd, 0u);
  EXPECT_EQ(o.limiter, "lds");
  o = amd_occupancy(target("gfx942"), 513, 20, 0, 256);
  EXPECT_EQ(o.waves_per_simd, 0u);
  EXPECT_EQ(o.limiter, "vgprs");
  o = amd_occupancy(target("gfx942"), 8, 20, 0, 1025);
  EXPECT_EQ(o.waves_per_simd, 0u);
  EXPECT_EQ(o.limiter, "workgroup");
  // Regression (found by fuzz_codeobj): counts near UINT32_MAX from a damaged object divided by zero.
  o = amd_occupancy(target("gfx942"), UINT32_MAX, UINT32_MAX, UINT32_MAX, UINT32_MAX);
  EXPECT_EQ(o.waves_per_simd, 0u);
  o = amd_occupancy(target("gfx950"), UINT32_MAX - 3, 8, UINT32_MAX - 100, 64);
  EXPECT_EQ(o.waves_per_simd, 0u);
}

class OccupancyFromCodeObject : public ::testing::TestWithParam<const char*> {};

TEST_P(OccupancyFromCodeObject, MfmaLdsKernel) {
  using namespace isatune::codeobj::test;
  if (auto why = missing_programs(); !why.empty()) GTEST_SKIP() << why;
  const char* isa = GetParam();
  ISATUNE_SKIP_IF_LLVM_LACKS(isa);
  std::string src = kMfmaLdsSource, error;
  replace_all(src, "@TARGET@", std::string("amdgcn-amd-amdhsa--") + isa + ":sramecc+:xnack-");
  std::string path = build_code_object(std::string("occ_") + isa, src, isa, "+sramecc,-xnack,+tgsplit", error);
  ASSERT_FALSE(path.empty()) << error;
  CodeObject co = read_code_object_file(path);
  ASSERT_EQ(co.kernels.size(), 1u);
  // 125 VGPRs -> 4; 101 SGPRs -> 7; 16 KiB LDS with 1024 threads: gfx942 4 WGs -> 2 WGs (wave slots) -> 8.
  Occupancy o = amd_occupancy(co, co.kernels[0]);
  EXPECT_EQ(o.by_vgprs, 4u) << isa;
  EXPECT_EQ(o.by_sgprs, 7u) << isa;
  EXPECT_EQ(o.by_lds, 8u) << isa;
  EXPECT_EQ(o.waves_per_simd, 4u) << isa;
  EXPECT_EQ(o.limiter, "vgprs") << isa;
  // A 64-thread workgroup: 16 KiB LDS allows 4 (gfx90a/942) or 10 (gfx950) WGs -> 1 or 2 waves per SIMD.
  o = amd_occupancy(co, co.kernels[0], 64);
  EXPECT_EQ(o.waves_per_simd, std::string(isa) == "gfx950" ? 2u : 1u) << isa;
  EXPECT_EQ(o.limiter, "lds") << isa;
}

INSTANTIATE_TEST_SUITE_P(Targets, OccupancyFromCodeObject, ::testing::Values("gfx90a", "gfx942", "gfx950"));

TEST(Occupancy, MatchesLlvmOccupancyExpression) {
  using namespace isatune::codeobj::test;
  if (llvm_program("llvm-mc").empty()) GTEST_SKIP() << "llvm-mc not found";
  std::vector<std::pair<uint32_t, uint32_t>> cases;
  std::string src;
  for (uint32_t v = 1; v <= 512; v += (v < 140 ? 1 : 7))
    for (uint32_t s : {8u, 80u, 96u, 97u, 100u, 101u, 108u}) {
      src += ".set occ_" + std::to_string(cases.size()) + ", occupancy(8, 8, 512, 8, 8, " + std::to_string(s) + ", " +
             std::to_string(v) + ")\n";
      cases.push_back({v, s});
    }
  auto path = temp_dir() / "occupancy_expr.s";
  std::ofstream(path) << src;
  std::string out;
  ASSERT_EQ(run_command(shell_quote(llvm_program("llvm-mc")) + " -triple=amdgcn-amd-amdhsa -mcpu=gfx942 " +
                            shell_quote(path.string()),
                        out),
            0)
      << out;
  std::map<size_t, uint32_t> llvm_value;
  std::istringstream in(out);
  std::string line;
  while (std::getline(in, line)) {
    size_t at = line.find(".set occ_");
    if (at == std::string::npos) continue;
    size_t comma = line.find(", ", at);
    if (comma == std::string::npos) continue;
    std::string value = line.substr(comma + 2);
    if (value.empty() || !std::isdigit(static_cast<unsigned char>(value[0]))) continue;
    llvm_value[std::stoul(line.substr(at + 9, comma - at - 9))] = std::stoul(value);
  }
  if (llvm_value.size() != cases.size())
    GTEST_SKIP() << "this llvm-mc does not evaluate occupancy() with the LLVM 22 arguments";
  for (size_t i = 0; i < cases.size(); ++i) {
    Occupancy o = amd_occupancy(target("gfx942"), cases[i].first, cases[i].second, 0, 64);
    EXPECT_EQ(std::min(o.by_vgprs, o.by_sgprs), llvm_value[i])
        << "vgprs " << cases[i].first << " sgprs " << cases[i].second;
  }
}
