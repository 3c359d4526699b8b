#pragma once
// PTX targets the builder knows, and what an instruction form needs from them (shared/notes/ptx.md section 1).
#include <string>
#include <string_view>
#include <vector>

namespace isatune::ptx {

// A PTX .target: sm_80 or sm_90a (sm_90 is accepted too; it has the cluster and TMA forms but not wgmma).
struct Target {
  std::string name;          // "sm_90a"
  int sm = 0;                // 80, 90
  bool arch_specific = false; // the "a" suffix: wgmma, setmaxnreg
  int min_ptx_version = 70;  // x10: 70 = PTX 7.0; the lowest .version that accepts this .target
};

// Throws InputError for a target the builder does not know.
Target find_target(std::string_view name);
// Every target the builder can emit for.
std::vector<Target> ptx_targets();

// What one instruction form needs: the lowest PTX ISA version and the lowest target.
struct Requirement {
  int ptx_version = 70;      // x10
  int sm = 80;
  bool arch_specific = false;
  const char* feature = "";  // named in the builder error when the target lacks it
};

// "8.0" from 80.
std::string ptx_version_string(int version_x10);

} // namespace isatune::ptx
