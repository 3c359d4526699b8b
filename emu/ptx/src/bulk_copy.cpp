// Bulk and tensor copies (#data-movement-and-conversion-instructions-cp-async-bulk, -cp-async-bulk-tensor,
// -cp-async-bulk-commit-group, -cp-async-bulk-wait-group, -cp-async-bulk-prefetch; shared/notes/
// ptx-emulation.md 2.9). The tensor map is the emulator's own encoding (isatune/ptx/tensor_map.h), whose tile
// functions give the box, strides, swizzle and out-of-bounds fill.
//
// Timing that makes bugs visible: a copy into shared memory reads its source at issue, counts its bytes
// against the mbarrier's tx-count at issue, and writes its destination when that mbarrier's phase completes;
// a reader that did not wait sees stale bytes and is reported (async_pending). Multicast writes the same
// offset in every CTA of ctaMask and completes tx on the mbarrier at the same offset in each. A bulk store
// (shared -> global) reads shared memory and writes global memory at the issuing thread's
// cp.async.bulk.wait_group(.read) that covers its group; a shared write to its source before then is
// reported.
#include <cstdio>

#include "async.h"
#include "async_proxy.h"
#include "isatune/error.h"
#include "ops_common.h"

namespace isatune::emu::ptx {

namespace ip = isatune::ptx;

namespace {

enum Kind : uint8_t { k_g2s, k_s2s, k_s2g, k_commit, k_wait, k_nothing, k_tload, k_tstore };

std::string hex(uint64_t v) {
  char b[24];
  std::snprintf(b, sizeof b, "0x%llx", (unsigned long long)v);
  return b;
}

constexpr unsigned kRankShift = 24;
constexpr uint32_t kOffsetMask = (1u << kRankShift) - 1;

// A shared address operand as a shared::cluster address (generic addresses lose their window).
uint64_t shared_addr(Warp& w, const Inst& in, const Opnd& o, unsigned l, Space& sp) {
  uint64_t a = address_of(w, o, l);
  sp = in.space;
  if (a - kSharedWindow < kWindowSize)
    a -= kSharedWindow;
  return a;
}

// Queues `data` to land at `dst` (shared::cluster address) when the mbarrier at `mbar` completes, in the CTA
// named by dst (or, for multicast, in each CTA of `mask` at the same offsets).
void issue_landing(Warp& w, unsigned l, const Inst& in, uint64_t dst, uint64_t mbar, bool multicast,
                   uint32_t mask, std::vector<uint8_t> data) {
  Cta& c = *w.cta;
  Cluster& cl = *c.cluster;
  const uint32_t n = uint32_t(cl.ctas.size());
  std::vector<uint32_t> ranks;
  if (multicast) {
    if (mask >> n)
      report(w, l, HazardKind::out_of_bounds,
             "multicast ctaMask " + hex(mask) + " names CTAs beyond the cluster's " + std::to_string(n));
    for (uint32_t r = 0; r < n; ++r)
      if (mask >> r & 1)
        ranks.push_back(r);
  } else {
    uint64_t rf = dst >> kRankShift;
    ranks.push_back(rf ? uint32_t(rf - 1) : c.rank);
  }
  const uint32_t bytes = uint32_t(data.size());
  for (uint32_t r : ranks) {
    if (r >= n) {
      report(w, l, HazardKind::out_of_bounds,
             "copy to CTA rank " + std::to_string(r) + " outside the cluster");
      continue;
    }
    // The destination and the mbarrier are in the same CTA (the ISA); take their offsets there.
    const uint64_t d_cl = (uint64_t(r + 1) << kRankShift) | (dst & kOffsetMask);
    const uint64_t m_cl = (uint64_t(r + 1) << kRankShift) | (mbar & kOffsetMask);
    uint32_t off = 0, moff = 0;
    Cta* t = shared_target(w, l, Space::shared_cluster, d_cl, bytes, off);
    if (!t)
      continue;
    Cta* mt = nullptr;
    Mbar* m = mbarrier_at(w, l, Space::shared_cluster, m_cl, 2, mt, moff);
    if (!m)
      continue;
    if (!t->shadow.empty())
      for (uint32_t i = 0; i < bytes; ++i) // the async proxy writes it: an initialised byte from now on
        t->shadow[off + i].written = true;
    Landing ld;
    ld.offset = off;
    ld.data = data;
    ld.pc = in.index;
    ld.rank = uint8_t(c.rank);
    ld.thread = uint16_t(w.index * 32 + l);
    m->landings.push_back(std::move(ld));
    t->async_ranges.push_back({off, off + bytes, false, in.index, moff});
    mbarrier_complete_tx(w, l, *mt, moff, *m, bytes);
  }
}

// The tensor map operand's 128 bytes, decoded (fails the launch for bytes that are not a tensor map).
bool read_map(Warp& w, unsigned l, const Opnd& o, ip::TensorMapTiledArgs& m) {
  Space sp = o.sym_space == Space::param && !o.has_base ? Space::param : Space::generic;
  const uint8_t* p = access(w, l, sp, address_of(w, o, l), 128, false, false, 64);
  if (!p)
    return false;
  ip::TensorMap tm;
  std::memcpy(tm.bytes.data(), p, 128);
  try {
    m = ip::decode_tensor_map(tm);
  } catch (const InputError& e) {
    fail(w, std::string("the tensor-map operand: ") + e.what());
  }
  return true;
}

std::array<int32_t, 5> read_coords(Warp& w, unsigned l, const Opnd& o, unsigned dims) {
  std::array<int32_t, 5> c{};
  const Opnd& v = o.elems[0];
  for (unsigned i = 0; i < dims; ++i)
    c[i] = int32_t(uint32_t(read(w, v.elems[i], l)));
  return c;
}

bool aligned16(Warp& w, unsigned l, uint64_t a, const char* what) {
  if (a % 16 == 0)
    return true;
  report(w, l, HazardKind::unaligned,
         std::string("bulk copy ") + what + " " + hex(a) + " is not 16-byte aligned");
  return false;
}

// Performs a bulk store now: reads the shared source, writes global memory.
void perform_store(Warp& w, unsigned l, const BulkStore& s) {
  Cta& c = *w.cta;
  const Inst* saved = w.cur;
  w.cur = &c.launch->prog->code[s.pc];
  auto& rs = c.async_ranges;
  for (size_t i = 0; i < rs.size(); ++i)
    if (rs[i].store && rs[i].pc == s.pc && rs[i].lo == s.src && rs[i].hi == s.src + s.bytes) {
      rs.erase(rs.begin() + long(i));
      break;
    }
  // (the async-proxy fence check of the source ran at issue)
  std::vector<uint8_t> src(c.shared.begin() + s.src, c.shared.begin() + s.src + s.bytes);
  if (!s.tensor) {
    if (uint8_t* p = access(w, l, Space::global, s.dst, s.bytes, true, false, 16))
      std::memcpy(p, src.data(), s.bytes);
  } else {
    try {
      ip::tma_store_tile(s.map, std::span<const int32_t>(s.coords.data(), s.map.rank), s.src, src,
                         [&](uint64_t a, std::span<const uint8_t> b) {
                           if (uint8_t* p =
                                   access(w, l, Space::global, a, unsigned(b.size()), true, false, 1))
                             std::memcpy(p, b.data(), b.size());
                         });
    } catch (const InputError& e) {
      fail(w, std::string("tensor store: ") + e.what());
    }
  }
  w.cur = saved;
}

void bulk(Warp& w, const Inst& in, uint32_t act) {
  Cta& c = *w.cta;
  for_lanes(act, [&](unsigned l) {
    switch (Kind(in.op)) {
    case k_nothing:
      return;
    case k_commit:
      w.bulk_groups[l].push_back(std::move(w.bulk_open[l]));
      w.bulk_open[l].clear();
      return;
    case k_wait: {
      const uint64_t n = read(w, in.ops[0], l);
      auto& g = w.bulk_groups[l];
      while (g.size() > n) {
        for (const BulkStore& s : g.front())
          perform_store(w, l, s);
        g.erase(g.begin());
      }
      return;
    }
    case k_g2s:
    case k_s2s: {
      Space sp;
      uint64_t dst = shared_addr(w, in, in.ops[0], l, sp);
      uint64_t src = address_of(w, in.ops[1], l);
      uint32_t size = uint32_t(read(w, in.ops[2], l));
      uint64_t mbar = shared_addr(w, in, in.ops[3], l, sp);
      if (!aligned16(w, l, dst, "destination") || !aligned16(w, l, src, "source") || size % 16) {
        if (size % 16)
          report(w, l, HazardKind::unaligned,
                 "bulk copy size " + std::to_string(size) + " is not a multiple of 16");
        return;
      }
      const uint8_t* p = in.op == k_g2s ? access(w, l, Space::global, src, size, false, false, 16)
                                        : access(w, l, Space::shared, src, size, false, false, 16);
      if (!p)
        return;
      uint32_t mask = in.op2 ? uint32_t(read(w, in.ops[4], l)) & 0xffff : 0;
      issue_landing(w, l, in, dst, mbar, in.op2, mask, std::vector<uint8_t>(p, p + size));
      return;
    }
    case k_s2g: {
      uint64_t dst = address_of(w, in.ops[0], l);
      Space sp;
      uint64_t src = shared_addr(w, in, in.ops[1], l, sp);
      uint32_t size = uint32_t(read(w, in.ops[2], l));
      if (!aligned16(w, l, dst, "destination") || !aligned16(w, l, src, "source") || size % 16) {
        if (size % 16)
          report(w, l, HazardKind::unaligned,
                 "bulk copy size " + std::to_string(size) + " is not a multiple of 16");
        return;
      }
      uint32_t off = 0;
      if (!shared_target(w, l, Space::shared, src, size, off))
        return;
      BulkStore s;
      s.pc = in.index, s.src = off, s.bytes = size, s.dst = dst;
      check_async_proxy_read(w, l, off, size, in); // the async proxy reads the source: fenced since written?
      c.async_ranges.push_back({off, off + size, true, in.index, 0});
      w.bulk_open[l].push_back(s);
      return;
    }
    case k_tload: {
      ip::TensorMapTiledArgs m;
      if (!read_map(w, l, in.ops[1], m))
        return;
      if (m.rank != in.vec)
        fail(w, "a " + std::to_string(in.vec) + "d tensor copy with a rank-" + std::to_string(m.rank) +
                    " tensor map");
      auto coords = read_coords(w, l, in.ops[1], in.vec);
      Space sp;
      uint64_t dst = shared_addr(w, in, in.ops[0], l, sp);
      uint64_t mbar = shared_addr(w, in, in.ops[2], l, sp);
      const uint32_t align = m.swizzle == ip::TensorMapSwizzle::none ? 16 : 128;
      if ((dst & kOffsetMask) % align) {
        report(w, l, HazardKind::unaligned,
               "tensor copy destination " + hex(dst) + " is not " + std::to_string(align) + "-byte aligned");
        return;
      }
      std::vector<uint8_t> data(ip::tensor_box_bytes(m));
      try {
        ip::tma_load_tile(
            m, std::span<const int32_t>(coords.data(), in.vec),
            [&](uint64_t a, std::span<uint8_t> out) {
              if (const uint8_t* p = access(w, l, Space::global, a, unsigned(out.size()), false, false, 1))
                std::memcpy(out.data(), p, out.size());
              else
                std::memset(out.data(), 0, out.size());
            },
            uint32_t(dst & kOffsetMask), data);
      } catch (const InputError& e) {
        fail(w, std::string("tensor load: ") + e.what());
      }
      uint32_t mask = in.op2 ? uint32_t(read(w, in.ops[3], l)) & 0xffff : 0;
      issue_landing(w, l, in, dst, mbar, in.op2, mask, std::move(data));
      return;
    }
    case k_tstore: {
      ip::TensorMapTiledArgs m;
      if (!read_map(w, l, in.ops[0], m))
        return;
      if (m.rank != in.vec)
        fail(w, "a " + std::to_string(in.vec) + "d tensor copy with a rank-" + std::to_string(m.rank) +
                    " tensor map");
      Space sp;
      uint64_t src = shared_addr(w, in, in.ops[1], l, sp);
      const uint32_t bytes = uint32_t(ip::tensor_box_bytes(m));
      uint32_t off = 0;
      if (!shared_target(w, l, Space::shared, src, bytes, off))
        return;
      BulkStore s;
      s.pc = in.index, s.src = off, s.bytes = bytes, s.tensor = true, s.map = m;
      s.coords = read_coords(w, l, in.ops[0], in.vec);
      check_async_proxy_read(w, l, off, bytes, in); // the async proxy reads the source: fenced since written?
      c.async_ranges.push_back({off, off + bytes, true, in.index, 0});
      w.bulk_open[l].push_back(s);
      return;
    }
    }
  });
}

} // namespace

void bulk_exit_checks(Cluster& cl) {
  for (Cta* c : cl.ctas)
    for (Warp& w : c->warps)
      for (unsigned l = 0; l < 32; ++l) {
        std::vector<BulkStore> left = std::move(w.bulk_open[l]);
        for (auto& g : w.bulk_groups[l])
          left.insert(left.end(), g.begin(), g.end());
        w.bulk_open[l].clear();
        w.bulk_groups[l].clear();
        for (const BulkStore& s : left) {
          w.cur = &c->launch->prog->code[s.pc];
          report(w, l, HazardKind::async_pending,
                 "bulk store still pending when the thread exited: no cp.async.bulk.commit_group + "
                 "wait_group(.read) covers it (performed at exit here)");
          perform_store(w, l, s);
        }
      }
}

void decode_cp_bulk(Decoder& d) {
  Inst& in = d.in;
  const auto& q = d.ai.qualifiers;
  if (d.sm < 90)
    d.error("'" + d.ai.opcode + "' needs sm_90");
  if (d.ai.opcode.rfind("cp.reduce", 0) == 0)
    d.not_yet();
  d.take("async");
  d.take("bulk");
  in.fn = &bulk;
  in.cost = 8;
  if (d.take("commit_group")) {
    in.op = k_commit;
    d.need_ops(0);
    d.finish();
    return;
  }
  if (d.take("wait_group")) {
    d.take("read");
    in.op = k_wait;
    d.need_ops(1);
    if (in.ops[0].kind != Opnd::Kind::imm)
      d.error("wait_group needs an immediate count");
    d.finish();
    return;
  }
  if (d.take("prefetch")) { // a hint: nothing to emulate
    in.op = k_nothing;
    d.take("tensor");
    for (const char* r : {"1d", "2d", "3d", "4d", "5d"})
      d.take(r);
    d.take_any({"L2", "global", "tile", "L2::cache_hint"});
    d.finish();
    return;
  }
  const bool tensor = d.take("tensor");
  if (tensor) {
    in.vec = 0;
    for (unsigned r = 1; r <= 5; ++r)
      if (d.take((std::to_string(r) + "d").c_str()))
        in.vec = uint8_t(r);
    if (!in.vec)
      d.error("cp.async.bulk.tensor needs .1d-.5d");
    if (d.take_any({"im2col", "im2col::w", "im2col::w::128", "tile::gather4", "tile::scatter4"}))
      d.not_yet();
    d.take("tile");
  }
  // The destination space comes first, then the source.
  std::vector<std::string> spaces;
  for (const auto& s : q)
    if (s == "shared::cluster" || s == "shared::cta" || s == "global" || s == "shared")
      spaces.push_back(s);
  for (const auto& s : spaces)
    d.take(s.c_str());
  if (spaces.size() != 2)
    d.error("'" + d.ai.opcode + "' needs a destination and a source state space");
  const bool dst_shared = spaces[0] != "global", src_shared = spaces[1] != "global";
  const bool mb = d.take("mbarrier::complete_tx::bytes");
  const bool group = d.take("bulk_group");
  in.op2 = d.take("multicast::cluster");
  const bool hint = d.take("L2::cache_hint");
  if (d.take_any({"cta_group::1", "cta_group::2", "cp_mask"}))
    d.not_yet();
  in.space = Space::shared_cluster;
  size_t nops;
  if (dst_shared && !src_shared) { // global -> shared, completes on an mbarrier
    if (!mb || group)
      d.error("a copy into shared memory completes through .mbarrier::complete_tx::bytes");
    in.op = tensor ? k_tload : k_g2s;
    nops = (tensor ? 3 : 4) + (in.op2 ? 1 : 0);
  } else if (dst_shared && src_shared) {
    if (tensor || !mb || in.op2 || spaces[0] != "shared::cluster" || spaces[1] != "shared::cta")
      d.error("shared -> shared bulk copies are "
              "cp.async.bulk.shared::cluster.shared::cta.mbarrier::complete_tx::bytes");
    in.op = k_s2s;
    nops = 4;
  } else if (!dst_shared && src_shared) {
    if (!group || mb || in.op2)
      d.error("a copy to global memory completes through .bulk_group");
    in.op = tensor ? k_tstore : k_s2g;
    nops = tensor ? 2 : 3;
  } else {
    d.error("no global -> global bulk copy");
  }
  d.need_ops(nops + (hint ? 1 : 0));
  for (size_t i = 0; i < in.ops.size(); ++i) {
    const bool is_addr = in.ops[i].kind == Opnd::Kind::addr;
    const bool want_addr = in.op == k_tstore ? i < 2 : (in.op == k_tload ? i < 3 : (i < 2 || (i == 3 && mb)));
    if (i < nops && is_addr != want_addr)
      d.error("operand " + std::to_string(i + 1) + " of '" + d.ai.opcode + "' must " +
              (want_addr ? "" : "not ") + "be an address");
  }
  if (tensor) {
    const Opnd& t = in.ops[in.op == k_tload ? 1 : 0];
    if (t.elems.size() != 1 || t.elems[0].kind != Opnd::Kind::vec || t.elems[0].elems.size() != in.vec)
      d.error("the tensor operand needs [map, {" + std::to_string(int(in.vec)) + " coordinates}]");
  }
  d.finish();
}

} // namespace isatune::emu::ptx
