#include "emu_profile.h"

#include <algorithm>
#include <cstdio>
#include <map>

#include "isatune/cdna/target.h"

namespace isatune::cli {

namespace {

struct Summary {
  double ms = 0, cycles = 0;
  double valu = 0, mfma = 0, lds = 0, vmem = 0; // busy fractions of the chip's units
  double flops_per_s = 0, matrix_peak = 0, vector_peak = 0, bytes_per_s = 0, hbm_peak = 0;
};

Summary summarize(const emu::EmuDevice& dev) {
  const auto& s = dev.last_launch();
  const cdna::TargetInfo* t = cdna::find_target(dev.properties().isa);
  Summary m;
  m.cycles = double(s.estimated_cycles);
  m.ms = s.estimated_ms;
  const double simds = double(t->compute_units) * t->simds_per_cu, cus = t->compute_units;
  if (m.cycles > 0) {
    m.valu = s.valu_busy / (m.cycles * simds);
    m.mfma = s.mfma_busy / (m.cycles * simds);
    m.lds = s.lds_busy / (m.cycles * cus);
    m.vmem = s.vmem_busy / (m.cycles * cus);
  }
  const double clk = t->peak_clock_ghz * 1e9;
  if (m.ms > 0) m.flops_per_s = s.flops / (m.ms * 1e-3), m.bytes_per_s = s.dram_bytes / (m.ms * 1e-3);
  m.matrix_peak = double(t->matrix_flops_per_clk_cu_f16) * cus * clk; // shared/notes/cdna.md section 7
  m.vector_peak = (t->gfx == cdna::Gfx::gfx90a ? 128.0 : 256.0) * cus * clk;
  m.hbm_peak = t->peak_hbm_tbps * 1e12;
  return m;
}

uint64_t total(const emu::InstructionProfile& p) {
  uint64_t c = p.issue_cycles;
  for (const auto& [cause, cycles] : p.stalls) c += cycles;
  return c;
}

struct Loop {
  int32_t first = 0, last = 0; // instruction indices: the branch target and the backward branch
  uint64_t issue = 0, trips = 0;
  std::map<std::string, uint64_t> stalls;
};

std::vector<Loop> loops_of(const std::vector<emu::InstructionProfile>& prof) {
  std::vector<Loop> loops;
  for (size_t i = 0; i < prof.size(); ++i) {
    const int32_t t = prof[i].branch_target;
    if (t < 0 || size_t(t) > i) continue;
    Loop l;
    l.first = t, l.last = int32_t(i);
    l.trips = prof[i].issued;
    for (int32_t k = t; k <= int32_t(i); ++k) {
      l.issue += prof[size_t(k)].issue_cycles;
      for (const auto& [cause, cycles] : prof[size_t(k)].stalls) l.stalls[cause] += cycles;
    }
    loops.push_back(std::move(l));
  }
  return loops;
}

const char* kNote = "timing model: each workgroup simulated on its CU (4 SIMDs, issue, dependencies, MFMA/VALU "
                    "pipes, LDS banks, vector L1); HBM and L2 bandwidth shared by all CUs modelled analytically; "
                    "an estimate, not a measurement";

} // namespace

nlohmann::json emu_profile_json(const emu::EmuDevice& dev) {
  const auto& s = dev.last_launch();
  const Summary m = summarize(dev);
  nlohmann::json j;
  j["note"] = kNote;
  j["estimated_cycles"] = s.estimated_cycles;
  j["estimated_ms"] = s.estimated_ms;
  j["limiter"] = s.limiter;
  j["cycles"] = {{"cu", s.cu_cycles}, {"dram", s.dram_cycles}, {"l2", s.l2_cycles}, {"launch", s.launch_cycles}};
  j["workgroups"] = s.workgroups;
  j["workgroups_per_cu"] = s.workgroups_per_cu;
  j["compute_units"] = s.compute_units;
  j["busy_fraction"] = {{"valu", m.valu}, {"mfma", m.mfma}, {"lds", m.lds}, {"vector_memory", m.vmem}};
  j["flops"] = s.flops;
  j["achieved_flops_per_s"] = m.flops_per_s;
  j["peak_matrix_flops_per_s"] = m.matrix_peak;
  j["peak_vector_flops_per_s"] = m.vector_peak;
  j["dram_bytes"] = s.dram_bytes;
  j["l2_bytes"] = s.l2_bytes;
  j["requested_bytes"] = s.requested_bytes;
  j["achieved_dram_bytes_per_s"] = m.bytes_per_s;
  j["peak_hbm_bytes_per_s"] = m.hbm_peak;
  j["stall_causes"] = emu::EmuDevice::stall_causes();
  const auto prof = dev.profile();
  nlohmann::json insts = nlohmann::json::array();
  for (size_t i = 0; i < prof.size(); ++i) {
    const auto& p = prof[i];
    nlohmann::json st = nlohmann::json::object();
    for (const auto& [cause, cycles] : p.stalls) st[cause] = cycles;
    insts.push_back({{"index", i}, {"address", p.address}, {"text", p.text}, {"issued", p.issued},
                     {"issue_cycles", p.issue_cycles}, {"stall_cycles", st}});
  }
  j["instructions"] = insts;
  nlohmann::json loops = nlohmann::json::array();
  for (const Loop& l : loops_of(prof))
    loops.push_back({{"first", l.first}, {"last", l.last}, {"first_address", prof[size_t(l.first)].address},
                     {"branch_address", prof[size_t(l.last)].address}, {"back_edges", l.trips},
                     {"issue_cycles", l.issue}, {"stall_cycles", l.stalls}});
  j["loops"] = loops;
  return j;
}

void print_emu_profile(std::ostream& out, const emu::EmuDevice& dev, size_t top) {
  const auto& s = dev.last_launch();
  const Summary m = summarize(dev);
  char buf[512];
  out << "profile  " << kNote << "\n";
  std::snprintf(buf, sizeof buf,
                "model    %llu cycles = max(busiest CU %llu, HBM %llu, L2 %llu) + launch %llu: %s-bound; %llu "
                "workgroups over %u CUs, %u resident per CU\n",
                (unsigned long long)s.estimated_cycles, (unsigned long long)s.cu_cycles,
                (unsigned long long)s.dram_cycles, (unsigned long long)s.l2_cycles,
                (unsigned long long)s.launch_cycles, s.limiter.c_str(), (unsigned long long)s.workgroups,
                s.compute_units, s.workgroups_per_cu);
  out << buf;
  std::snprintf(buf, sizeof buf, "busy     VALU %.1f%%  MFMA %.1f%%  LDS %.1f%%  vector memory %.1f%% (of the chip)\n",
                100 * m.valu, 100 * m.mfma, 100 * m.lds, 100 * m.vmem);
  out << buf;
  std::snprintf(buf, sizeof buf,
                "achieved %.4g TFLOP/s (peak matrix f16/bf16 %.4g, vector f32 %.4g); HBM %.4g TB/s of %.4g "
                "(%.4g MB distinct lines, %.4g MB requested)\n",
                m.flops_per_s / 1e12, m.matrix_peak / 1e12, m.vector_peak / 1e12, m.bytes_per_s / 1e12,
                m.hbm_peak / 1e12, s.dram_bytes / 1e6, s.requested_bytes / 1e6);
  out << buf;
  const auto prof = dev.profile();
  const auto causes = emu::EmuDevice::stall_causes();
  auto stall_text = [&](const std::map<std::string, uint64_t>& st) {
    std::string t;
    for (const auto& c : causes)
      if (auto it = st.find(c); it != st.end() && it->second)
        t += (t.empty() ? "" : ", ") + c + " " + std::to_string(it->second);
    return t.empty() ? std::string("-") : t;
  };
  for (const Loop& l : loops_of(prof)) {
    std::snprintf(buf, sizeof buf, "loop     0x%x..0x%x: %llu back edges, issue %llu cycles, stalls: ",
                  prof[size_t(l.first)].address, prof[size_t(l.last)].address, (unsigned long long)l.trips,
                  (unsigned long long)l.issue);
    out << buf << stall_text(l.stalls) << "\n";
  }
  std::vector<size_t> order(prof.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return total(prof[a]) > total(prof[b]); });
  out << "top      instructions by cycles summed over waves (issue + stalls by cause):\n";
  for (size_t k = 0; k < std::min(top, order.size()); ++k) {
    const auto& p = prof[order[k]];
    if (total(p) == 0) break;
    std::map<std::string, uint64_t> st(p.stalls.begin(), p.stalls.end());
    std::snprintf(buf, sizeof buf, "  0x%04x %9llu issued %11llu issue  ", p.address, (unsigned long long)p.issued,
                  (unsigned long long)p.issue_cycles);
    out << buf << stall_text(st) << "  | " << p.text << "\n";
  }
}

} // namespace isatune::cli
