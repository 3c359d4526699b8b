// insert_waits: a forward dataflow over the kernel's basic blocks. The state at a point holds, per counter,
// which registers still wait for a memory result and how many operations of that counter were issued after
// it (so the wait can be the largest count that still covers it), and the recent producers with the wait
// states issued since (for the rules of wait_state_rules.cpp). At a label the states of all predecessors are
// merged conservatively: a register pending on any path stays pending with the smallest count seen, a
// producer seen on any path stays with its shortest distance. The fixed point is reached by joining into the
// block entry states until nothing changes. Each walk records the padding its block needs; a block's last
// walk saw its final entry state, so those records are the answer and the body is rebuilt from them.
// Speed (docs/performance.md "insert_waits"): every statement's registers are split by role once per run
// (detail::View), and only blocks whose entry state changed are walked again.
#include "isatune/cdna/waits.h"

#include <algorithm>
#include <array>
#include <bitset>
#include <map>
#include <optional>

#include "lds_dma_form.h"
#include "wait_counters.h"
#include "wait_state_rules.h"

namespace isatune::cdna {
namespace {

using detail::kLgkmMax;
using detail::kMaxWaitStates;
using detail::kNone;
using detail::kNumUnits;
using detail::kVmMax;
using detail::Queue;
using detail::Units;
using detail::View;

struct Producer {
  uint32_t stmt;    // index in the original body
  uint8_t distance; // wait states issued since
};

// xnack soft clauses: consecutive loads of one kind (SMEM, VMEM) whose defs overlap uses of the group.
enum ClauseKind { clause_smem, clause_vmem, clause_kinds };

struct State {
  bool reached = false;
  Queue vm{kVmMax}, lgkm{kLgkmMax};
  std::vector<Producer> window; // sorted by stmt
  std::array<std::bitset<kNumUnits>, clause_kinds> clause_defs, clause_uses;

  void advance(uint32_t ws) {
    std::erase_if(window, [&](Producer& p) {
      uint32_t d = p.distance + ws;
      p.distance = static_cast<uint8_t>(std::min<uint32_t>(d, kMaxWaitStates));
      return d >= kMaxWaitStates;
    });
  }
  void end_clause() {
    for (auto& b : clause_defs)
      b.reset();
    for (auto& b : clause_uses)
      b.reset();
  }
  bool join(const State& o) {
    if (!reached) {
      *this = o;
      reached = true;
      return true;
    }
    bool changed = vm.join(o.vm);
    changed |= lgkm.join(o.lgkm);
    std::vector<Producer> merged;
    size_t i = 0, j = 0;
    while (i < window.size() || j < o.window.size()) {
      if (j == o.window.size() || (i < window.size() && window[i].stmt < o.window[j].stmt)) {
        merged.push_back(window[i++]);
      } else if (i == window.size() || o.window[j].stmt < window[i].stmt) {
        merged.push_back(o.window[j++]);
        changed = true;
      } else {
        Producer p = window[i++];
        if (o.window[j].distance < p.distance) {
          p.distance = o.window[j].distance;
          changed = true;
        }
        ++j;
        merged.push_back(p);
      }
    }
    window = std::move(merged);
    for (int k = 0; k < clause_kinds; ++k) {
      auto d = clause_defs[k] | o.clause_defs[k], u = clause_uses[k] | o.clause_uses[k];
      changed |= d != clause_defs[k] || u != clause_uses[k];
      clause_defs[k] = d, clause_uses[k] = u;
    }
    return changed;
  }
};

void set_bits(std::bitset<kNumUnits>& b, const Units& u) {
  for (uint16_t i = u.first; i < u.first + u.count && i < kNumUnits; ++i)
    b.set(i);
}

// What a statement needs before it: an s_waitcnt (when vm or lgkm is set), then s_nops for `nop_states`.
struct Padding {
  size_t stmt = 0;
  std::optional<uint8_t> vm, lgkm;
  int nop_states = 0;
};

struct Block {
  size_t begin = 0, end = 0;
  std::vector<size_t> succs;
  std::vector<Padding> padding; // from the block's latest walk
};

class Pass {
public:
  explicit Pass(Kernel& k) : kernel_(k), body_(std::move(k.body)), gfx_(k.target.info->gfx) {
    xnack_ = k.target.xnack != FeatureState::off;
    views_.reserve(body_.size());
    for (const Statement& s : body_) {
      const auto* in = std::get_if<Instruction>(&s);
      views_.push_back(in ? detail::view_of(*in) : View{});
    }
    build_blocks();
  }

  WaitStats run() {
    // Sweeps in block order until one changes nothing. A block whose entry state is unchanged since its last
    // walk would give the same exit state, which its successors already hold, so it is skipped: the states
    // reached are those of walking every block in every sweep.
    std::vector<State> in(blocks_.size());
    std::vector<bool> dirty(blocks_.size(), false), walked(blocks_.size(), false);
    if (!blocks_.empty())
      in[0].reached = dirty[0] = true;
    for (bool changed = true; changed;) {
      changed = false;
      for (size_t b = 0; b < blocks_.size(); ++b) {
        if (!in[b].reached || !dirty[b])
          continue;
        dirty[b] = false;
        walked[b] = true;
        State out = walk(blocks_[b], in[b]);
        for (size_t s : blocks_[b].succs)
          if (in[s].join(out))
            dirty[s] = changed = true;
      }
    }
    for (size_t b = 0; b < blocks_.size(); ++b)
      if (!walked[b]) // unreachable: padded as if entered with nothing pending
        walk(blocks_[b], in[b]);
    rebuild_body();
    return stats_;
  }

private:
  Kernel& kernel_;
  std::vector<Statement> body_; // the original statements: producers are named by their index here
  std::vector<View> views_;     // per statement (empty for labels)
  Gfx gfx_;
  bool xnack_ = false;
  std::vector<Block> blocks_;
  WaitStats stats_;
  std::map<int, Instruction> waitcnts_; // by vm * 256 + lgkm (255: none); built once each

  void rebuild_body() {
    std::vector<Statement> out;
    out.reserve(body_.size() + body_.size() / 4);
    for (Block& blk : blocks_) {
      auto pad = blk.padding.begin();
      for (size_t i = blk.begin; i < blk.end; ++i) {
        for (; pad != blk.padding.end() && pad->stmt == i; ++pad)
          emit(*pad, out);
        out.push_back(std::move(body_[i]));
      }
    }
    kernel_.body = std::move(out);
  }

  void emit(const Padding& p, std::vector<Statement>& out) {
    if (p.vm || p.lgkm) {
      const int key = (p.vm ? *p.vm : 255) * 256 + (p.lgkm ? *p.lgkm : 255);
      auto it = waitcnts_.find(key);
      if (it == waitcnts_.end()) {
        Modifiers m;
        m.vmcnt = p.vm;
        m.lgkmcnt = p.lgkm;
        it = waitcnts_.emplace(key, make_instruction(gfx_, "s_waitcnt", {}, m)).first;
      }
      out.push_back(it->second);
      ++stats_.waitcnts_inserted;
    }
    for (int deficit = p.nop_states; deficit > 0;) {
      int n = std::min(deficit, 16); // s_nop 15 = 16 wait states at most
      deficit -= n;
      out.push_back(make_instruction(gfx_, "s_nop", {n - 1}));
      ++stats_.nops_inserted;
      stats_.nop_states += static_cast<uint32_t>(n);
    }
  }

  void build_blocks() {
    std::vector<size_t> block_of_label(kernel_.label_names.size() + 1, SIZE_MAX);
    Block cur;
    auto close = [&](size_t end) {
      cur.end = end;
      if (cur.end > cur.begin)
        blocks_.push_back(cur);
      cur = Block{end, end, {}, {}};
    };
    for (size_t i = 0; i < body_.size(); ++i) {
      if (const auto* l = std::get_if<LabelDef>(&body_[i])) {
        close(i);
        if (l->label.id >= block_of_label.size())
          block_of_label.resize(l->label.id + 1, SIZE_MAX);
        block_of_label[l->label.id] = blocks_.size();
        continue;
      }
      auto c = std::get<Instruction>(body_[i]).category();
      if (c == Category::branch || c == Category::endpgm)
        close(i + 1);
    }
    close(body_.size());
    for (size_t b = 0; b < blocks_.size(); ++b) {
      const Statement& last = body_[blocks_[b].end - 1];
      bool falls = true;
      if (const auto* in = std::get_if<Instruction>(&last)) {
        if (in->category() == Category::endpgm)
          falls = false;
        if (in->category() == Category::branch) {
          Label t = in->branch_target();
          if (t.valid() && t.id < block_of_label.size() && block_of_label[t.id] != SIZE_MAX)
            blocks_[b].succs.push_back(block_of_label[t.id]);
          falls = in->form().name != "s_branch";
        }
      }
      if (falls && b + 1 < blocks_.size())
        blocks_[b].succs.push_back(b + 1);
    }
  }

  // Walks one block from its entry state, recording the padding it needs.
  State walk(Block& blk, State st) {
    blk.padding.clear();
    for (size_t i = blk.begin; i < blk.end; ++i)
      if (views_[i].inst)
        step(views_[i], static_cast<uint32_t>(i), st, blk.padding);
    return st;
  }

  // The s_waitcnt counts this instruction needs first (nullopt: none on that counter).
  void memory_needs(const View& v, const State& st, std::optional<uint8_t>& vm,
                    std::optional<uint8_t>& lgkm) const {
    const Instruction& in = *v.inst;
    auto need = [](std::optional<uint8_t>& w, uint8_t c) { w = w ? std::min(*w, c) : c; };
    auto check = [&](const Units& u, bool skip_vm, bool skip_lgkm) {
      for (uint16_t k = u.first; k < u.first + u.count && k < kNumUnits; ++k) {
        if (!skip_vm && st.vm.after[k] != kNone)
          need(vm, st.vm.count_for(st.vm.after[k]));
        if (!skip_lgkm && st.lgkm.after[k] != kNone)
          need(lgkm, st.lgkm.count_for(st.lgkm.after[k]));
      }
    };
    for (const Units& u : v.uses) // RAW
      check(u, false, false);
    // WAW. Results of one in-order counter land in issue order, so a later load of the same kind may target
    // a register an earlier one has not yet written. SMEM completes out of order: it waits.
    const bool vm_load = in.category() == Category::vmem_load && in.counter() == Counter::vm;
    const bool ds_load = in.category() == Category::ds;
    for (const Units& u : v.writes) // SGPRs and specials (VCC, M0, EXEC, SCC) number below v0
      check(u, vm_load, ds_load && !is_scalar(u));
    // s_barrier orders LDS traffic between waves only once this wave's LDS operations are complete.
    if (in.category() == Category::barrier && st.lgkm.ds_newest != kNone)
      need(lgkm, st.lgkm.count_for(st.lgkm.ds_newest));
    // LDS-DMA writes the LDS, not a register, somewhere before its vmcnt decrement: this wave's LDS accesses
    // (not ds_bpermute/permute/swizzle, which do not touch the LDS memory) wait for every outstanding one,
    // and so does s_barrier, after which the other waves may read what it wrote. An LDS-DMA in turn waits
    // for this wave's outstanding LDS operations (it may overwrite what they read).
    if (st.vm.dma_newest != kNone && (in.category() == Category::barrier || touches_lds_memory(in)))
      need(vm, st.vm.count_for(st.vm.dma_newest));
    if (detail::is_lds_dma(in.form()) && st.lgkm.ds_newest != kNone)
      need(lgkm, st.lgkm.count_for(st.lgkm.ds_newest));
  }

  int wait_state_deficit(const View& v, const State& st) const {
    const Instruction& in = *v.inst;
    int deficit = 0;
    for (const auto& p : st.window)
      deficit = std::max(deficit, detail::wait_states_needed(views_[p.stmt], v) - int(p.distance));
    // gfx90a: VALU writes a VGPR, a DGEMM issues, then a VMEM reads that VGPR: 2 wait states after the VALU.
    if (gfx_ == Gfx::gfx90a &&
        (in.category() == Category::vmem_load || in.category() == Category::vmem_store)) {
      for (const auto& p : st.window) {
        const Instruction& prod = *views_[p.stmt].inst;
        if (p.distance >= 2 || !detail::is_valu_like(prod))
          continue;
        bool dgemm_between = std::any_of(st.window.begin(), st.window.end(), [&](const Producer& q) {
          const Instruction& m = *views_[q.stmt].inst;
          return q.distance < p.distance && m.category() == Category::mfma &&
                 m.form().mfma_class == MfmaClass::f64;
        });
        bool reads = false;
        for (const Units& d : views_[p.stmt].writes)
          reads = reads || (is_vgpr(d) && v.uses.overlaps(d));
        if (dgemm_between && reads)
          deficit = std::max(deficit, 2 - int(p.distance));
      }
    }
    // xnack: a soft clause of loads must not have a def overlapping a use in the group; one wait state breaks
    // it.
    if (xnack_) {
      int k = clause_of(in);
      if (k >= 0 && st.clause_defs[k].any()) {
        auto defs = st.clause_defs[k], uses = st.clause_uses[k];
        for (const Units& u : v.writes)
          set_bits(defs, u);
        for (const Units& u : v.reads)
          set_bits(uses, u);
        if ((defs & uses).any())
          deficit = std::max(deficit, 1);
      }
    }
    return deficit;
  }

  static bool touches_lds_memory(const Instruction& in) {
    const std::string_view n = in.form().name;
    return in.category() == Category::ds && n != "ds_bpermute_b32" && n != "ds_permute_b32" &&
           n != "ds_swizzle_b32";
  }

  // Unit numbers (detail::Units): SGPRs and specials below v0 and from scc up, VGPRs v0..v255.
  static bool is_scalar(const Units& u) { return u.first < 128 || u.first >= 640; }
  static bool is_vgpr(const Units& u) { return u.first >= 128 && u.first < 384; }

  static int clause_of(const Instruction& in) {
    if (in.category() == Category::smem)
      return clause_smem;
    if (in.category() == Category::vmem_load)
      return clause_vmem;
    return -1;
  }

  void apply_wait(State& st, std::optional<uint8_t> vm, std::optional<uint8_t> lgkm) {
    if (vm)
      st.vm.wait(*vm);
    if (lgkm)
      st.lgkm.wait(*lgkm);
  }

  // Any other instruction: issue, then every remembered producer is one wait state further away.
  void issue(const View& v, uint32_t idx, State& st) {
    const Instruction& in = *v.inst;
    const Counter k = in.counter();
    const bool load = in.category() == Category::vmem_load || in.category() == Category::ds ||
                      in.category() == Category::smem;
    auto push = [&](Queue& q, bool ooo) {
      q.issue();
      if (load)
        for (const Units& u : v.writes) {
          for (uint16_t i = u.first; i < u.first + u.count && i < kNumUnits; ++i)
            q.after[i] = 0;
        }
      q.out_of_order = q.out_of_order || ooo;
    };
    if (k == Counter::vm || k == Counter::vm_lgkm)
      push(st.vm, k == Counter::vm_lgkm);
    if (k == Counter::lgkm || k == Counter::vm_lgkm) {
      push(st.lgkm, k == Counter::vm_lgkm || in.category() == Category::smem);
      if (in.category() == Category::ds)
        st.lgkm.ds_newest = 0;
    }
    if (detail::is_lds_dma(in.form()))
      st.vm.dma_newest = 0;
    st.advance(1);
    if (v.has_defs || in.category() == Category::vmem_store) {
      auto it = std::lower_bound(st.window.begin(), st.window.end(), idx,
                                 [](const Producer& p, uint32_t s) { return p.stmt < s; });
      if (it != st.window.end() && it->stmt == idx)
        it->distance = 0; // a loop brought it round again
      else
        st.window.insert(it, Producer{idx, 0});
    }
    int c = clause_of(in);
    for (int k2 = 0; k2 < clause_kinds; ++k2)
      if (k2 != c) {
        st.clause_defs[k2].reset();
        st.clause_uses[k2].reset();
      }
    if (c >= 0) {
      for (const Units& u : v.writes)
        set_bits(st.clause_defs[c], u);
      for (const Units& u : v.reads)
        set_bits(st.clause_uses[c], u);
    }
  }

  void step(const View& v, uint32_t idx, State& st, std::vector<Padding>& padding) {
    const Instruction& in = *v.inst;
    const Category cat = in.category();
    if (cat == Category::waitcnt) {
      apply_wait(st, in.modifiers().vmcnt, in.modifiers().lgkmcnt);
      st.advance(1);
      st.end_clause();
      return;
    }
    if (cat == Category::nop) {
      const auto& op = in.operands()[0];
      st.advance(static_cast<uint32_t>(op.imm & 0xf) + 1);
      st.end_clause();
      return;
    }
    Padding pad{idx, std::nullopt, std::nullopt, 0};
    memory_needs(v, st, pad.vm, pad.lgkm);
    if (pad.vm || pad.lgkm) {
      apply_wait(st, pad.vm, pad.lgkm);
      st.advance(1);
      st.end_clause();
    }
    for (int deficit = wait_state_deficit(v, st); deficit > 0;) {
      int n = std::min(deficit, 16); // s_nop 15 = 16 wait states at most
      st.advance(static_cast<uint32_t>(n));
      st.end_clause();
      deficit -= n;
      pad.nop_states += n;
    }
    if (pad.vm || pad.lgkm || pad.nop_states)
      padding.push_back(pad);
    issue(v, idx, st);
  }
};

} // namespace

WaitStats insert_waits(Kernel& kernel) {
  return Pass(kernel).run();
}

} // namespace isatune::cdna
