#include "isatune/emu/coverage.h"

#include <algorithm>
#include <cctype>
#include <exception>
#include <set>

#include "decoder.h"
#include "isatune/cdna/target.h"

namespace isatune::emu {

namespace {

// The instructions control can reach from the entry (and entry + 256 with kernarg preload): hand-written code
// objects give no symbol size, so the decoder runs on past the last s_endpgm into whatever follows .text.
std::vector<size_t> reachable(const Program& prog, const KernelInfo& k) {
  std::vector<char> seen(prog.insts.size(), 0);
  std::vector<size_t> work{0};
  if (k.descriptor && k.descriptor->kernarg_preload_length > 0)
    if (int32_t i = prog.at(256); i >= 0)
      work.push_back(size_t(i));
  while (!work.empty()) {
    size_t i = work.back();
    work.pop_back();
    for (; i < prog.insts.size() && !seen[i]; ++i) {
      seen[i] = 1;
      const Inst& in = prog.insts[i];
      if (in.name == "S_ENDPGM" || in.name == "S_SETPC_B64")
        break;
      if (in.cat == Cat::branch && in.target >= 0)
        work.push_back(size_t(in.target));
      if (in.name == "S_BRANCH")
        break;
    }
  }
  std::vector<size_t> out;
  for (size_t i = 0; i < seen.size(); ++i)
    if (seen[i])
      out.push_back(i);
  return out;
}

} // namespace

uint64_t CoverageReport::unsupported() const {
  return uint64_t(
      std::count_if(uses.begin(), uses.end(), [](const InstructionUse& u) { return !u.supported; }));
}

void CoverageCounter::add_error(const std::string& source, const std::string& why) {
  totals_.errors.push_back(source + ": " + why);
}

void CoverageCounter::add(const CodeObject& code, const std::string& source) {
  const cdna::TargetInfo* t = code.vendor == Vendor::amd ? cdna::find_target(code.isa) : nullptr;
  if (!t)
    return add_error(source,
                     "target '" + code.isa + "' is not one the emulator runs (gfx90a, gfx942, gfx950)");
  ++totals_.code_objects;
  for (const KernelInfo& k : code.kernels) {
    Program prog;
    try {
      prog = decode_kernel(code, k, t->gfx);
    } catch (const std::exception& e) {
      add_error(source + " kernel " + k.name, e.what());
      continue;
    }
    ++totals_.kernels;
    std::set<std::string> seen;
    bool all = true;
    for (size_t i : reachable(prog, k)) {
      const Inst& in = prog.insts[i];
      std::string m = in.name.empty() ? std::string("<undecodable>") : in.name;
      std::transform(m.begin(), m.end(), m.begin(), [](unsigned char c) { return char(std::tolower(c)); });
      if (in.dpp)
        m += "_dpp";
      if (in.sdwa)
        m += "_sdwa";
      // The executor refuses instructions without a handler (executor.cpp, run_wave); the decoder gives an SDWA
      // form a handler only where one models its selects.
      const bool ok = in.fn != nullptr;
      Entry& e = entries_[m];
      ++e.count;
      if (!ok)
        e.supported = false, all = false;
      if (seen.insert(m).second)
        ++e.kernels;
      ++totals_.instructions;
    }
    if (all)
      ++totals_.fully_supported_kernels;
  }
}

CoverageReport CoverageCounter::report() const {
  CoverageReport r = totals_;
  for (const auto& [m, e] : entries_)
    r.uses.push_back({m, e.kernels, e.count, e.supported});
  std::stable_sort(r.uses.begin(), r.uses.end(), [](const InstructionUse& a, const InstructionUse& b) {
    return a.kernels != b.kernels ? a.kernels > b.kernels : a.count > b.count;
  });
  return r;
}

} // namespace isatune::emu
