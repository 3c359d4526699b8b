#pragma once
// The two PTX backends behind compile_ptx; not installed.
#include <string>
#include <string_view>
#include <vector>

namespace isatune::toolchain::detail {

struct RawPtxCompile {
  bool ok = false;
  std::vector<uint8_t> cubin;
  std::string log; // info + error log, ptxas -v style
};

// Runs the ptxas program: ptxas -arch=<target> -O<n> -v --warn-on-spills [-maxrregcount=N] in.ptx -o out.cubin.
// Throws UnavailableError when ptxas is absent.
RawPtxCompile run_ptxas(std::string_view ptx, const std::string& target, int opt_level, uint32_t max_registers);
std::string ptxas_version();

// nvJitLink in process (dlopen). Throws UnavailableError when the library is absent.
RawPtxCompile run_nvjitlink(std::string_view ptx, const std::string& target, int opt_level, uint32_t max_registers);
std::string nvjitlink_load_error(); // "" when loaded
std::string nvjitlink_version();

} // namespace isatune::toolchain::detail
