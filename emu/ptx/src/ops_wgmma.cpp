// wgmma (sm_90a; PTX ISA #asynchronous-warpgroup-level-matrix-instructions): wgmma.fence, .commit_group,
// .wait_group and .mma_async m64nNk16 (.f16/.bf16 inputs) and m64nNk32 (.e4m3/.e5m2), D .f32 or .f16.
//
// Execution is lazy, so that a missing wait changes the data as well as being reported: mma_async only
// records the operation (the accumulator input, the descriptors) and fills D with a poison NaN; the shared
// operands and register A are read and D written when the wgmma.wait_group that retires its group runs.
// Groups are per warp, in commit order; wait_group N retires the oldest until N remain. Each warp's quarter
// of D (rows 16w..16w+15) depends only on its own A rows and B, so each warp computes its part; wait_group is
// a warpgroup rendezvous (Sync::warpgroup), so the four warps retire together.
//
// Checks (ISA #asynchronous-warpgroup-level-matrix-instructions-wgmma-fence, -wgmma-mma-async):
// - wgmma.fence "must be issued by all warps of the warpgroup ... before the first wgmma.mma_async" and
//   "between a register access by a thread in the warpgroup and any wgmma.mma_async instruction that accesses
//   the same registers, either as accumulator or input register containing fragments of matrix A, except when
//   these are accumulator register accesses across multiple wgmma.mma_async instructions of the same shape";
// - "Accessing the accumulator register or the input register containing the fragments of matrix A of a
//   wgmma.mma_async instruction without first performing a wgmma.wait_group instruction that waits on a
//   wgmma-group including that wgmma.mma_async instruction is undefined behavior";
// - shared operands: bounds, the race checker (the operand bytes are read by the warp at issue), the async
//   proxy fence (async_proxy.h), and no generic write to them until the wait (async_pending).
// All of these report HazardKind::async_pending except the proxy fence (proxy_fence) and races (race).
//
// Numerics: every product is exact in double (f16, bf16 and fp8 products have at most 22 significant bits),
// the K products and the accumulator input are summed in double and the sum is rounded once to the D type
// (round to nearest even). The ISA leaves the tensor core's accumulation order and intermediate precision
// unspecified (shared/notes/ptx.md: fp8 accumulates "higher than half, lower than single precision"); the
// hardware may differ in the last bits, fp8 more so. Not yet compared with an H100/H200.
#include <algorithm>
#include <cstdio>
#include <deque>

#include "isatune/error.h"
#include "isatune/ptx/fragments.h"
#include "isatune/ptx/matrix_descriptor.h"
#include "ops_common.h"

namespace isatune::emu::ptx {

namespace iptx = isatune::ptx;

// One warp's in-flight wgmma.mma_async.
struct WgmmaOp {
  const Inst* inst = nullptr;
  bool scale_d = true;
  bool chained = false; // D was in flight from an earlier mma_async of the same chain: its input is that
                        // operation's result, in the registers when this one retires
  std::vector<uint32_t> d_in; // accumulator input at issue, [reg * 32 + lane] (not chained, scale_d)
  uint64_t desc_a = 0, desc_b = 0;
  std::vector<uint32_t> chunks; // 16-byte shared chunks (byte offsets) read: begin/end_async_read
  bool bad = false;             // an operand outside shared memory (reported): D becomes poison
};

struct WgmmaWarp {
  std::deque<WgmmaOp> ops;                   // in flight, issue order
  std::deque<uint32_t> groups;               // committed groups (oldest first): their operation counts
  uint32_t uncommitted = 0;                  // the newest ops not committed yet
  bool fenced = false;                       // a wgmma.fence has run
  uint32_t fence_time = 0;                   // the last one
  std::vector<uint32_t> touched, touched_pc; // per register slot: last access by another instruction
  std::vector<uint16_t> pending;             // per register slot: in-flight ops using it as D or A
  // The ISA requires one mma_async across the warpgroup: the first warp of a warpgroup keeps the latest
  // operations issued by any of its warps (issue number -> instruction and descriptors) for the others to
  // match.
  uint64_t issued = 0; // mma_async issued by this warp
  struct Issue {
    const Inst* inst;
    uint64_t desc_a, desc_b;
  };
  std::deque<Issue> group_log; // (first warp only) issues log_base, log_base + 1, ...
  uint64_t log_base = 0;
};

namespace {

constexpr uint32_t kPoison = 0x7fff7fffu; // a NaN as .f32 and in both .f16 halves (not the canonical NaN)

enum Elem : uint8_t { e_f16, e_bf16, e_e4m3, e_e5m2 };

// The decoded form, packed into Inst::aux.
struct Form {
  uint32_t n = 0;
  Elem a = e_f16, b = e_f16;
  bool d_f16 = false, a_regs = false, neg_a = false, neg_b = false, trans_a = false, trans_b = false;
  uint32_t k() const { return a >= e_e4m3 ? 32 : 16; }
  uint32_t elem_bytes() const { return a >= e_e4m3 ? 1 : 2; }
  uint32_t d_regs() const { return d_f16 ? n / 4 : n / 2; }
  uint32_t pack() const {
    return n | uint32_t(a) << 9 | uint32_t(b) << 11 | uint32_t(d_f16) << 13 | uint32_t(a_regs) << 14 |
           uint32_t(neg_a) << 15 | uint32_t(neg_b) << 16 | uint32_t(trans_a) << 17 | uint32_t(trans_b) << 18;
  }
  static Form unpack(uint32_t x) {
    Form f;
    f.n = x & 0x1ff;
    f.a = Elem(x >> 9 & 3), f.b = Elem(x >> 11 & 3);
    f.d_f16 = x >> 13 & 1, f.a_regs = x >> 14 & 1, f.neg_a = x >> 15 & 1, f.neg_b = x >> 16 & 1;
    f.trans_a = x >> 17 & 1, f.trans_b = x >> 18 & 1;
    return f;
  }
};

// OCP FP8 (#alternate-floating-point-data-formats): e4m3 bias 7, no infinities, S.1111.111 NaN, max 448;
// e5m2 bias 15 with IEEE infinities and NaNs.
double e4m3_to_double(uint8_t v) {
  const int s = v >> 7, e = v >> 3 & 15, m = v & 7;
  if (e == 15 && m == 7)
    return std::nan("");
  double x = e ? std::ldexp(1.0 + m / 8.0, e - 7) : std::ldexp(m / 8.0, -6);
  return s ? -x : x;
}
double e5m2_to_double(uint8_t v) {
  const int s = v >> 7, e = v >> 2 & 31, m = v & 3;
  double x;
  if (e == 31)
    x = m ? std::nan("") : INFINITY;
  else
    x = e ? std::ldexp(1.0 + m / 4.0, e - 15) : std::ldexp(m / 4.0, -14);
  return s ? -x : x;
}
double elem_value(Elem t, uint32_t bits) {
  switch (t) {
  case e_f16:
    return half_to_f32(uint16_t(bits));
  case e_bf16:
    return bf16_to_f32(uint16_t(bits));
  case e_e4m3:
    return e4m3_to_double(uint8_t(bits));
  case e_e5m2:
    return e5m2_to_double(uint8_t(bits));
  }
  return 0;
}

WgmmaWarp& state(Warp& w) {
  if (!w.wgmma) {
    w.wgmma = std::make_shared<WgmmaWarp>();
    const size_t slots = w.cta->launch->prog->slots;
    w.wgmma->touched.assign(slots, 0);
    w.wgmma->touched_pc.assign(slots, 0);
    w.wgmma->pending.assign(slots, 0);
  }
  return *w.wgmma;
}

std::string lanes_hex(uint32_t m) {
  char buf[16];
  std::snprintf(buf, sizeof buf, "0x%08x", m);
  return buf;
}
std::string where(const Inst& in) {
  return "line " + std::to_string(in.line) + " '" + in.text + "'";
}

// The register slots of the D vector and (register A) the A vector of an mma_async.
void d_slots(const Inst& in, std::vector<uint32_t>& out) {
  for (const Opnd& e : in.ops[0].elems)
    out.push_back(e.slot);
}
void a_slots(const Inst& in, std::vector<uint32_t>& out) {
  if (Form::unpack(in.aux).a_regs)
    for (const Opnd& e : in.ops[1].elems)
      out.push_back(e.slot);
}

void fence(Warp& w, const Inst&, uint32_t) {
  WgmmaWarp& st = state(w);
  st.fenced = true;
  st.fence_time = w.cta->time;
}

void commit(Warp& w, const Inst&, uint32_t) {
  WgmmaWarp& st = state(w);
  st.groups.push_back(st.uncommitted); // an empty group is legal
  st.uncommitted = 0;
}

// The value of a uniform operand (descriptor, scale-d) across the warp: lane 0's; lanes that differ are
// reported (the ISA requires the same value in every thread of the warpgroup).
uint64_t uniform(Warp& w, const Opnd& o, uint32_t act, const char* what) {
  unsigned l0 = unsigned(std::countr_zero(act));
  uint64_t v = read(w, o, l0);
  uint32_t differ = 0;
  for_lanes(act, [&](unsigned l) {
    if (read(w, o, l) != v)
      differ |= 1u << l;
  });
  if (differ)
    report(w, unsigned(std::countr_zero(differ)), HazardKind::divergence,
           std::string("lanes ") + lanes_hex(differ) + " give a different " + what + " than lane " +
               std::to_string(l0) + " (it must be the same in every thread of the warpgroup)");
  return v;
}

uint32_t operand_address(const iptx::MatrixDescriptor& d, iptx::WgmmaOperand op, bool trans, uint32_t es,
                         uint32_t mn, uint32_t k, Warp& w) {
  try {
    return iptx::canonical_address(d, op, trans ? iptx::OperandMajor::mn : iptx::OperandMajor::k, es, mn, k);
  } catch (const InputError& e) {
    fail(w, std::string("wgmma.mma_async: ") + e.what());
  }
}

// The 16-byte chunks an operand reads: K-major rows of K * elem bytes (split into 16-byte chunks), MN-major
// columns of 16 bytes of MN per k. A chunk is contiguous in every swizzle mode (the swizzles move whole
// 16-byte chunks).
void operand_chunks(Warp& w, const iptx::MatrixDescriptor& d, iptx::WgmmaOperand op, bool trans,
                    const Form& f, uint32_t mn0, uint32_t mn_count, std::vector<uint32_t>& out) {
  const uint32_t es = f.elem_bytes(), t = 16 / es, k = f.k();
  if (!trans) {
    for (uint32_t mn = mn0; mn < mn0 + mn_count; ++mn)
      for (uint32_t kk = 0; kk < k; kk += t)
        out.push_back(operand_address(d, op, false, es, mn, kk, w));
  } else {
    for (uint32_t mn = mn0; mn < mn0 + mn_count; mn += t)
      for (uint32_t kk = 0; kk < k; ++kk)
        out.push_back(operand_address(d, op, true, es, mn, kk, w));
  }
}

// wgmma.fence before the first mma_async of the warp, and between another instruction's access of its D or A
// registers and the mma_async.
void check_fence(Warp& w, const WgmmaWarp& st, const std::vector<uint32_t>& ds,
                 const std::vector<uint32_t>& as) {
  if (!st.fenced) {
    report(w, 0, HazardKind::async_pending,
           "no wgmma.fence before the first wgmma.mma_async of warp " + std::to_string(w.index));
    return;
  }
  for (const auto* list : {&ds, &as})
    for (uint32_t s : *list)
      if (st.touched[s] > st.fence_time) {
        report(w, 0, HazardKind::async_pending,
               std::string("its ") + (list == &ds ? "accumulator" : "A") + " registers were accessed by " +
                   where(w.cta->launch->prog->code[st.touched_pc[s]]) +
                   " after the last wgmma.fence: a wgmma.fence is needed between them");
        return;
      }
}

// The n-th mma_async of every warp of a warpgroup must be the same instruction with the same descriptors
// (checked against a window of the latest 256 issues of the warpgroup).
void same_across_warpgroup(Warp& w, WgmmaWarp& st, const Inst& in, uint64_t desc_a, uint64_t desc_b) {
  WgmmaWarp& lead = state(w.cta->warps[w.index / 4 * 4]);
  const uint64_t n = st.issued++;
  if (n < lead.log_base)
    return; // outside the window
  if (n < lead.log_base + lead.group_log.size()) {
    const WgmmaWarp::Issue& e = lead.group_log[n - lead.log_base];
    if (e.inst != &in || e.desc_a != desc_a || e.desc_b != desc_b)
      report(w, 0, HazardKind::divergence,
             "warp " + std::to_string(w.index) + " issues this wgmma.mma_async (" + std::to_string(n + 1) +
                 "th of the warp) with " + (e.inst != &in ? "another instruction" : "other descriptors") +
                 " than another warp of its warpgroup did (" + where(*e.inst) +
                 "): all four warps must issue the same one");
    return;
  }
  if (n == lead.log_base + lead.group_log.size()) {
    lead.group_log.push_back({&in, desc_a, desc_b});
    if (lead.group_log.size() > 256) {
      lead.group_log.pop_front();
      ++lead.log_base;
    }
  }
}

void mma_async(Warp& w, const Inst& in, uint32_t act) {
  Cta& c = *w.cta;
  const Form f = Form::unpack(in.aux);
  const uint32_t group0 = w.index / 4 * 4;
  if (group0 + 3 >= c.nwarps() || c.warps[group0 + 3].lanes != 32)
    fail(w, "wgmma.mma_async needs complete warpgroups of 128 threads; the CTA has " +
                std::to_string(c.threads) + " threads");
  if (act != 0xffffffffu) {
    report(w, unsigned(std::countr_zero(act)), HazardKind::divergence,
           "executed by lanes " + lanes_hex(act) + " of warp " + std::to_string(w.index) +
               " only: every thread of the warpgroup must execute wgmma.mma_async (.aligned)");
    return;
  }
  WgmmaWarp& st = state(w);
  std::vector<uint32_t> ds, as;
  d_slots(in, ds);
  a_slots(in, as);

  check_fence(w, st, ds, as);

  // Registers in flight: D may continue a same-shape accumulator chain (the ISA orders those); anything else
  // overlapping an in-flight operation's D or A is undefined.
  bool chained = false;
  for (uint32_t s : ds)
    if (st.pending[s]) {
      const WgmmaOp* prev = nullptr;
      for (auto it = st.ops.rbegin(); it != st.ops.rend() && !prev; ++it) {
        std::vector<uint32_t> pd, pa;
        d_slots(*it->inst, pd);
        a_slots(*it->inst, pa);
        if (std::find(pd.begin(), pd.end(), s) != pd.end() || std::find(pa.begin(), pa.end(), s) != pa.end())
          prev = &*it;
      }
      std::vector<uint32_t> pd;
      if (prev)
        d_slots(*prev->inst, pd);
      const Form pf = prev ? Form::unpack(prev->inst->aux) : Form{};
      if (prev && pd == ds && pf.n == f.n && pf.d_f16 == f.d_f16 && pf.k() == f.k()) {
        chained = true;
      } else {
        report(w, 0, HazardKind::async_pending,
               "its accumulator registers overlap the registers of the in-flight " +
                   (prev ? where(*prev->inst) : std::string("wgmma.mma_async")) +
                   " other than as the same accumulator of the same shape (wait for it first)");
      }
      break;
    }
  for (uint32_t s : as)
    if (st.pending[s]) {
      bool as_d = false;
      for (const WgmmaOp& o : st.ops) {
        std::vector<uint32_t> pd;
        d_slots(*o.inst, pd);
        if (std::find(pd.begin(), pd.end(), s) != pd.end()) {
          report(w, 0, HazardKind::async_pending,
                 "its A registers are the accumulator of the in-flight " + where(*o.inst) +
                     " (wait for it first)");
          as_d = true;
          break;
        }
      }
      if (as_d)
        break;
    }

  WgmmaOp op;
  op.inst = &in;
  op.chained = chained;
  op.scale_d = uniform(w, in.ops[3], act, "scale-d") & 1;
  if (in.ops[3].kind == Opnd::Kind::imm)
    op.scale_d = in.ops[3].imm != 0;
  if (op.scale_d && !chained) {
    op.d_in.resize(ds.size() * 32);
    for (size_t i = 0; i < ds.size(); ++i)
      for (unsigned l = 0; l < 32; ++l)
        op.d_in[i * 32 + l] = uint32_t(w.reg(ds[i], l));
  }
  op.desc_b = uniform(w, in.ops[2], act, "B descriptor");
  if (!f.a_regs)
    op.desc_a = uniform(w, in.ops[1], act, "A descriptor");
  same_across_warpgroup(w, st, in, op.desc_a, op.desc_b);

  // Shared operands, checked at issue: the chunks of this warp's A rows (16w..16w+15), and B once per
  // warpgroup, by its first warp (all four read the same B; the four retire together at the wait).
  const uint32_t wr = w.index % 4;
  if (!f.a_regs)
    operand_chunks(w, iptx::decode_matrix_descriptor(op.desc_a), iptx::WgmmaOperand::a, f.trans_a, f, 16 * wr,
                   16, op.chunks);
  if (wr == 0)
    operand_chunks(w, iptx::decode_matrix_descriptor(op.desc_b), iptx::WgmmaOperand::b, f.trans_b, f, 0, f.n,
                   op.chunks);
  bool fence_reported = false;
  for (uint32_t off : op.chunks) {
    // The race and initialisation checks as a read by lane 0 (bounds too: a chunk outside shared memory is
    // reported and the result becomes poison).
    if (!access(w, 0, Space::shared, off, 16, false)) {
      op.bad = true;
      break;
    }
    if (!fence_reported)
      fence_reported = check_async_proxy_read(w, 0, off, 16, in);
  }
  if (op.bad)
    op.chunks.clear();
  for (uint32_t off : op.chunks)
    begin_async_read(w, off, 16, in);

  // A chained operation leaves D as it is: its in-flight predecessor already poisoned it, or retired into it
  // a result that the chain's next operation still in flight reads when it retires (wait_group 1 with one
  // k-block's group in flight while the next accumulates into the same D, as CUTLASS's mainloop does).
  for (uint32_t s : ds) {
    ++st.pending[s];
    if (!chained)
      for (unsigned l = 0; l < 32; ++l)
        w.reg(s, l) = kPoison & w.cta->launch->prog->slot_mask[s];
  }
  for (uint32_t s : as)
    ++st.pending[s];
  st.ops.push_back(std::move(op));
  ++st.uncommitted;
}

// Computes one operation's result into D (this warp's 16 rows).
void retire(Warp& w, WgmmaOp& op) {
  Cta& c = *w.cta;
  const Inst& in = *op.inst;
  const Form f = Form::unpack(in.aux);
  const uint32_t k = f.k(), es = f.elem_bytes(), wr = w.index % 4;
  std::vector<uint32_t> ds, as;
  d_slots(in, ds);
  a_slots(in, as);
  for (uint32_t s : ds)
    --w.wgmma->pending[s];
  for (uint32_t s : as)
    --w.wgmma->pending[s];
  for (uint32_t off : op.chunks)
    end_async_read(w, off, 16);
  if (op.bad)
    return; // D keeps the poison

  auto smem = [&](uint32_t addr) -> uint32_t {
    uint32_t v = 0;
    if (size_t(addr) + es <= c.shared.size())
      std::memcpy(&v, c.shared.data() + addr, es);
    return v;
  };
  // A: rows 16wr..16wr+15 as [row][k]; B: [n][k]; values with the imm-scale signs applied.
  std::vector<double> a(16 * k), b(size_t(f.n) * k);
  const double sa = f.neg_a ? -1 : 1, sb = f.neg_b ? -1 : 1;
  if (f.a_regs) {
    for (unsigned l = 0; l < 32; ++l)
      for (uint32_t r = 0; r < 4; ++r) {
        const uint32_t bits = uint32_t(w.reg(as[r], l));
        for (uint32_t p = 0; p < 4 / es; ++p) {
          iptx::MatrixCoord m =
              es == 2 ? iptx::wgmma_a_16bit(wr * 32 + l, r, p) : iptx::wgmma_a_8bit(wr * 32 + l, r, p);
          a[(m.row - 16 * wr) * k + m.col] =
              sa * elem_value(f.a, bits >> (8 * es * p) & ((1u << 8 * es) - 1));
        }
      }
  } else {
    const auto d = iptx::decode_matrix_descriptor(op.desc_a);
    for (uint32_t r = 0; r < 16; ++r)
      for (uint32_t kk = 0; kk < k; ++kk)
        a[r * k + kk] = sa * elem_value(f.a, smem(operand_address(d, iptx::WgmmaOperand::a, f.trans_a, es,
                                                                  16 * wr + r, kk, w)));
  }
  {
    const auto d = iptx::decode_matrix_descriptor(op.desc_b);
    for (uint32_t n = 0; n < f.n; ++n)
      for (uint32_t kk = 0; kk < k; ++kk)
        b[n * k + kk] =
            sb * elem_value(f.b, smem(operand_address(d, iptx::WgmmaOperand::b, f.trans_b, es, n, kk, w)));
  }
  auto dot = [&](uint32_t row, uint32_t col) {
    double s = 0;
    const double* pa = &a[(row - 16 * wr) * k];
    const double* pb = &b[size_t(col) * k];
    for (uint32_t kk = 0; kk < k; ++kk)
      s += pa[kk] * pb[kk];
    return s;
  };
  for (size_t i = 0; i < ds.size(); ++i)
    for (unsigned l = 0; l < 32; ++l) {
      const uint32_t t = wr * 32 + l;
      const uint32_t in_bits = !op.scale_d ? 0 : op.chained ? uint32_t(w.reg(ds[i], l)) : op.d_in[i * 32 + l];
      uint32_t out;
      if (!f.d_f16) {
        iptx::MatrixCoord m = iptx::wgmma_d_f32(f.n, t, uint32_t(i));
        double acc = dot(m.row, m.col);
        if (op.scale_d)
          acc += double(std::bit_cast<float>(in_bits));
        // The host's conversion rounds to nearest even (the default mode; rounding-mode instructions restore
        // it), as to_f32(acc, Rnd::rn) does, faster.
        out = std::isnan(acc) ? kNanF32 : std::bit_cast<uint32_t>(float(acc));
      } else {
        out = 0;
        for (uint32_t h = 0; h < 2; ++h) {
          iptx::MatrixCoord m = iptx::wgmma_d_f16(f.n, t, uint32_t(i), h);
          double acc = dot(m.row, m.col);
          if (op.scale_d)
            acc += double(half_to_f32(uint16_t(in_bits >> (16 * h))));
          out |= uint32_t(to_f16(acc, Rnd::rn)) << (16 * h);
        }
      }
      w.reg(ds[i], l) = out;
    }
}

void wait_group(Warp& w, const Inst& in, uint32_t) {
  WgmmaWarp& st = state(w);
  const uint64_t keep = in.ops[0].imm;
  const Inst* saved = w.cur;
  while (st.groups.size() > keep) {
    uint32_t n = st.groups.front();
    st.groups.pop_front();
    for (uint32_t i = 0; i < n; ++i) {
      w.cur = st.ops.front().inst; // reports while reading name the mma_async
      retire(w, st.ops.front());
      st.ops.pop_front();
    }
  }
  w.cur = saved;
}

void decode_mma_async(Decoder& d) {
  Inst& in = d.in;
  Form f;
  if (!d.take("sync") || !d.take("aligned"))
    d.error("wgmma.mma_async needs .sync.aligned");
  bool shape = false;
  for (uint32_t n = 8; n <= 256 && !shape; n += 8)
    for (uint32_t k : {16u, 32u})
      if (d.take(("m64n" + std::to_string(n) + "k" + std::to_string(k)).c_str())) {
        f.n = n;
        shape = true;
        f.a = k == 32 ? e_e4m3 : e_f16; // the K says which input family; the types below must agree
        break;
      }
  if (!shape)
    d.error("wgmma.mma_async: shape not supported (m64nNk16 for .f16/.bf16, m64nNk32 for .e4m3/.e5m2, N = "
            "8..256 step 8; .tf32, integer and .b1 forms are not supported yet)");
  const bool k32 = f.a == e_e4m3;
  // .dtype.atype.btype, in this order (take() does not keep the order of equal names: read them in place).
  std::vector<std::string> types;
  for (const auto& q : d.ai.qualifiers)
    if (q == "f32" || q == "f16" || q == "bf16" || q == "e4m3" || q == "e5m2" || q == "tf32" || q == "s32" ||
        q == "u8" || q == "s8" || q == "b1")
      types.push_back(q);
  if (types.size() != 3)
    d.error("wgmma.mma_async: needs .dtype.atype.btype");
  auto elem = [&](const std::string& q, Elem& e) {
    if (q == "f16")
      e = e_f16;
    else if (q == "bf16")
      e = e_bf16;
    else if (q == "e4m3")
      e = e_e4m3;
    else if (q == "e5m2")
      e = e_e5m2;
    else
      d.error("wgmma.mma_async: input type ." + q + " not supported (.f16, .bf16, .e4m3, .e5m2)");
  };
  if (types[0] == "f16")
    f.d_f16 = true;
  else if (types[0] != "f32")
    d.error("wgmma.mma_async: accumulator type ." + types[0] + " not supported (.f32 or .f16)");
  elem(types[1], f.a);
  elem(types[2], f.b);
  for (const auto& t : types)
    d.take(t.c_str());
  const bool fp8 = f.a >= e_e4m3;
  if (fp8 != (f.b >= e_e4m3) || (!fp8 && f.a != f.b))
    d.error("wgmma.mma_async: A and B types must both be .f16, both .bf16, or both fp8 (.e4m3/.e5m2)");
  if (fp8 != k32)
    d.error(std::string("wgmma.mma_async: ") +
            (fp8 ? "fp8 inputs need K = 32" : "16-bit inputs need K = 16"));
  if (f.a == e_bf16 && f.d_f16)
    d.error("wgmma.mma_async: .bf16 inputs accumulate in .f32 only");
  d.finish();

  // Operands: d, a-desc | {a}, b-desc, scale-d, imm-scale-a, imm-scale-b[, imm-trans-a][, imm-trans-b]. The
  // transposes exist for 16-bit types only, imm-trans-a only with a descriptor A.
  if (in.ops.size() < 2)
    d.error("wgmma.mma_async: missing operands");
  f.a_regs = in.ops[1].kind == Opnd::Kind::vec;
  const size_t want = 6 + (fp8 ? 0 : f.a_regs ? 1 : 2);
  d.need_ops(want);
  const Opnd& dv = in.ops[0];
  if (dv.kind != Opnd::Kind::vec || dv.elems.size() != f.d_regs())
    d.error("wgmma.mma_async: D must be a vector of " + std::to_string(f.d_regs()) + " registers");
  for (const Opnd& e : dv.elems)
    if (e.kind != Opnd::Kind::reg || e.rbits != 32)
      d.error("wgmma.mma_async: D registers must be 32-bit registers");
  if (f.a_regs) {
    if (in.ops[1].elems.size() != 4)
      d.error("wgmma.mma_async: register A is a vector of 4 .b32 registers");
    for (const Opnd& e : in.ops[1].elems)
      if (e.kind != Opnd::Kind::reg || e.rbits != 32)
        d.error("wgmma.mma_async: A registers must be 32-bit registers");
  } else if (!(in.ops[1].kind == Opnd::Kind::reg && in.ops[1].rbits == 64) &&
             in.ops[1].kind != Opnd::Kind::imm) {
    d.error("wgmma.mma_async: the A descriptor must be a 64-bit register");
  }
  if (!(in.ops[2].kind == Opnd::Kind::reg && in.ops[2].rbits == 64) && in.ops[2].kind != Opnd::Kind::imm)
    d.error("wgmma.mma_async: the B descriptor must be a 64-bit register");
  if (in.ops[3].kind != Opnd::Kind::imm && !(in.ops[3].kind == Opnd::Kind::reg && in.ops[3].rbits == 1))
    d.error("wgmma.mma_async: scale-d must be a predicate or an immediate");
  auto imm = [&](size_t i, std::initializer_list<int64_t> ok, const char* name) {
    if (in.ops[i].kind != Opnd::Kind::imm || in.ops[i].fimm)
      d.error(std::string("wgmma.mma_async: ") + name + " must be an integer immediate");
    int64_t v = int64_t(in.ops[i].imm);
    for (int64_t o : ok)
      if (v == o)
        return v;
    d.error(std::string("wgmma.mma_async: ") + name + " " + std::to_string(v) + " invalid");
  };
  f.neg_a = imm(4, {1, -1}, "imm-scale-a") == -1;
  f.neg_b = imm(5, {1, -1}, "imm-scale-b") == -1;
  if (!fp8) {
    if (!f.a_regs)
      f.trans_a = imm(6, {0, 1}, "imm-trans-a") == 1;
    f.trans_b = imm(in.ops.size() - 1, {0, 1}, "imm-trans-b") == 1;
  }
  in.aux = f.pack();
  in.sync = Sync::collective; // warp-level .sync: every lane of the warp at it
  in.aligned = true;
  in.fn = &mma_async;
}

} // namespace

void decode_wgmma(Decoder& d) {
  Inst& in = d.in;
  if (d.sm < 90)
    d.error("wgmma needs sm_90a");
  if (d.take("mma_async"))
    return decode_mma_async(d);
  const bool fence_ = d.take("fence"), commit_ = d.take("commit_group"), wait_ = d.take("wait_group");
  if (!d.take("sync") || !d.take("aligned"))
    d.error("wgmma needs .sync.aligned");
  d.finish();
  in.aligned = true;
  if (fence_ || commit_) {
    d.need_ops(0);
    in.sync = Sync::collective;
    in.fn = fence_ ? &fence : &commit;
  } else if (wait_) {
    d.need_ops(1);
    if (in.ops[0].kind != Opnd::Kind::imm)
      d.error("wgmma.wait_group takes an integer immediate");
    in.sync = Sync::warpgroup;
    in.fn = &wait_group;
  } else {
    d.error("unknown wgmma instruction");
  }
}

void mark_wgmma_register_users(Program& p) {
  std::vector<bool> used(p.slots, false);
  bool any = false;
  for (const Inst& in : p.code)
    if (in.fn == &mma_async) {
      std::vector<uint32_t> s;
      d_slots(in, s);
      a_slots(in, s);
      for (uint32_t x : s)
        used[x] = true;
      any = true;
    }
  if (!any)
    return;
  auto touches = [&](const Opnd& o, auto& self) -> bool {
    if ((o.kind == Opnd::Kind::reg || (o.kind == Opnd::Kind::addr && o.has_base)) && used[o.slot])
      return true;
    for (const Opnd& e : o.elems)
      if (self(e, self))
        return true;
    return false;
  };
  for (Inst& in : p.code) {
    if (in.fn == &mma_async)
      continue;
    for (const Opnd& o : in.ops)
      if (touches(o, touches))
        in.wgmma_regs = true;
  }
}

void wgmma_register_access(Warp& w, const Inst& in, uint32_t act) {
  WgmmaWarp& st = state(w);
  const uint32_t now = w.cta->time;
  bool reported = false;
  auto visit = [&](const Opnd& o, auto& self) -> void {
    if (o.kind == Opnd::Kind::reg || (o.kind == Opnd::Kind::addr && o.has_base)) {
      st.touched[o.slot] = now;
      st.touched_pc[o.slot] = in.index;
      if (st.pending[o.slot] && !reported) {
        const WgmmaOp* op = nullptr;
        for (const WgmmaOp& x : st.ops) {
          std::vector<uint32_t> s;
          d_slots(*x.inst, s);
          a_slots(*x.inst, s);
          if (std::find(s.begin(), s.end(), o.slot) != s.end())
            op = &x;
        }
        report(w, unsigned(std::countr_zero(act)), HazardKind::async_pending,
               "accesses a register of the in-flight " + (op ? where(*op->inst) : std::string("wgmma")) +
                   " (its accumulator or A) before the wgmma.wait_group that completes it");
        reported = true;
      }
    }
    for (const Opnd& e : o.elems)
      self(e, self);
  };
  for (const Opnd& o : in.ops)
    visit(o, visit);
}

} // namespace isatune::emu::ptx
