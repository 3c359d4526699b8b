// insert_waits on builder kernels: the counts it chooses, the padding for each wait-state rule per target,
// control flow (loops with prefetch), existing waits honoured and idempotence.
#include <gtest/gtest.h>

#include <algorithm>
#include <functional>
#include <string>
#include <vector>

#include "isatune/cdna/builder.h"
#include "isatune/cdna/printer.h"
#include "isatune/cdna/waits.h"

using namespace isatune;
using namespace isatune::cdna;

namespace {

std::vector<std::string> lines(const Kernel& k) {
  std::vector<std::string> out;
  for (const auto& st : k.body) {
    if (const auto* in = std::get_if<Instruction>(&st))
      out.push_back(print_instruction(*in, k.label_names));
    else
      out.push_back(k.label_names[std::get<LabelDef>(st).label.id] + ":");
  }
  return out;
}

std::string dump(const Kernel& k) {
  std::string s;
  for (const auto& l : lines(k))
    s += l + "\n";
  return s;
}

// The line just before the n-th (0-based) line that starts with `needle`; "" if none.
std::string before(const Kernel& k, const std::string& needle, int n = 0) {
  auto ls = lines(k);
  for (size_t i = 0; i < ls.size(); ++i)
    if (ls[i].rfind(needle, 0) == 0 && n-- == 0)
      return i ? ls[i - 1] : "";
  ADD_FAILURE() << "'" << needle << "' not found in\n" << dump(k);
  return "";
}

int count_prefix(const Kernel& k, const std::string& prefix) {
  auto ls = lines(k);
  return int(
      std::count_if(ls.begin(), ls.end(), [&](const std::string& l) { return l.rfind(prefix, 0) == 0; }));
}

// Runs the pass, checks that a second run inserts nothing and leaves the body alone.
Kernel waited(const Builder& b, WaitStats* stats = nullptr) {
  Kernel k = b.kernel();
  WaitStats s = insert_waits(k);
  if (stats)
    *stats = s;
  std::string first = dump(k);
  WaitStats again = insert_waits(k);
  EXPECT_EQ(again.waitcnts_inserted, 0u) << first;
  EXPECT_EQ(again.nops_inserted, 0u) << first;
  EXPECT_EQ(dump(k), first);
  return k;
}

// Total wait states of the s_nop lines right before the first line that starts with `needle` (or contains it,
// when it starts with a space).
int nops_before(const Kernel& k, const std::string& needle) {
  auto ls = lines(k);
  for (size_t i = 0; i < ls.size(); ++i)
    if (needle[0] == ' ' ? ls[i].find(needle) != std::string::npos : ls[i].rfind(needle, 0) == 0) {
      int ws = 0;
      for (size_t j = i; j-- > 0 && ls[j].rfind("s_nop ", 0) == 0;)
        ws += std::stoi(ls[j].substr(6)) + 1;
      return ws;
    }
  ADD_FAILURE() << "'" << needle << "' not found in\n" << dump(k);
  return -1;
}

const Gfx kAll[] = {Gfx::gfx90a, Gfx::gfx942, Gfx::gfx950};
const char* name(Gfx g) {
  return g == Gfx::gfx90a ? "gfx90a" : g == Gfx::gfx942 ? "gfx942" : "gfx950";
}
Builder make(Gfx g, const char* target_suffix = ":xnack-") {
  return Builder(parse_target_id("amdgcn-amd-amdhsa--" + std::string(name(g)) + target_suffix), "k");
}

} // namespace

TEST(Waits, VmcntIsTheLargestCountThatCoversTheLoad) {
  Builder b = make(Gfx::gfx942);
  for (int i = 0; i < 3; ++i)
    b.global_load(v(10 + i), v(1), s(4, 2));
  b.emit("v_add_f32", {v(20), v(10), v(10)});
  b.emit("v_add_f32", {v(21), v(12), v(11)});
  b.global_store(v(1), v(21), s(4, 2)); // no wait: v21 is no memory result
  WaitStats st;
  Kernel k = waited(b, &st);
  EXPECT_EQ(before(k, "v_add_f32 v20"), "s_waitcnt vmcnt(2)") << dump(k);
  EXPECT_EQ(before(k, "v_add_f32 v21"), "s_waitcnt vmcnt(0)") << dump(k);
  EXPECT_EQ(st.waitcnts_inserted, 2u);
}

TEST(Waits, SgprPendingFromSmemBeforeVmem) {
  Builder b = make(Gfx::gfx942);
  b.s_load(s(4, 2), s(0, 2), 0);
  b.s_load(s(6, 2), s(0, 2), 8);
  b.global_load(v(2), v(1), s(4, 2)); // needs s[4:5]: SMEM is out of order -> lgkmcnt(0)
  Kernel k = waited(b);
  EXPECT_EQ(before(k, "global_load_dword"), "s_waitcnt lgkmcnt(0)") << dump(k);
}

TEST(Waits, LdsInOrderButSmemForcesZero) {
  {
    Builder b = make(Gfx::gfx942);
    b.ds_read(v(2), v(1));
    b.ds_read(v(3), v(1), 4);
    b.ds_write(v(1), v(9), 8); // an LDS write: counts, has no result
    b.emit("v_mov_b32", {v(4), v(2)});
    Kernel k = waited(b);
    EXPECT_EQ(before(k, "v_mov_b32"), "s_waitcnt lgkmcnt(2)") << dump(k);
  }
  {
    Builder b = make(Gfx::gfx942);
    b.ds_read(v(2), v(1));
    b.s_load(s(4, 2), s(0, 2), 0);
    b.ds_read(v(3), v(1), 4);
    b.emit("v_mov_b32", {v(4), v(2)});
    Kernel k = waited(b);
    EXPECT_EQ(before(k, "v_mov_b32"), "s_waitcnt lgkmcnt(0)") << dump(k);
  }
}

TEST(Waits, SaturatedCountersWaitOneBelowTheMaximum) {
  Builder b = make(Gfx::gfx942);
  for (int i = 0; i < 70; ++i)
    b.global_load(v(100 + i), v(1), s(4, 2));
  for (int i = 0; i < 20; ++i)
    b.ds_read(v(200 + i), v(1), uint16_t(4 * i));
  b.emit("v_mov_b32", {v(2), v(100)});
  b.emit("v_mov_b32", {v(3), v(200)});
  Kernel k = waited(b);
  EXPECT_EQ(before(k, "v_mov_b32 v2"), "s_waitcnt vmcnt(62)") << dump(k);
  EXPECT_EQ(before(k, "v_mov_b32 v3"), "s_waitcnt lgkmcnt(14)") << dump(k);
}

TEST(Waits, WriteAfterWrite) {
  Builder b = make(Gfx::gfx942);
  b.global_load(v(2), v(1), s(4, 2));
  b.global_load(v(2), v(1), s(4, 2), 4); // same in-order counter: lands after the first
  b.ds_read(v(3), v(1));
  b.global_load(v(3), v(1), s(4, 2), 8); // other counter: must wait for the LDS read
  b.s_load(s(8), s(0, 2), 0);
  b.s_load(s(8), s(0, 2), 4); // SMEM out of order
  b.emit("v_mov_b32", {v(2), 0});
  Kernel k = waited(b);
  EXPECT_EQ(before(k, "global_load_dword v2, v1, s[4:5] offset:4"), "global_load_dword v2, v1, s[4:5]")
      << dump(k);
  EXPECT_EQ(before(k, "global_load_dword v3"), "s_waitcnt lgkmcnt(0)") << dump(k);
  EXPECT_EQ(before(k, "s_load_dword s8, s[0:1], 0x4"), "s_waitcnt lgkmcnt(0)") << dump(k);
  EXPECT_EQ(before(k, "v_mov_b32 v2"), "s_waitcnt vmcnt(1)") << dump(k);
}

TEST(Waits, StoreDataNeedsNoWaitCountButWideDataNeedsWaitStates) {
  for (Gfx g : kAll) {
    Builder b = make(g);
    b.global_store(v(1), v(2), s(4, 2));
    b.emit("v_mov_b32", {v(2), 0}); // 4-byte store: read at issue
    b.global_store(v(1), v(4, 4), s(4, 2));
    b.emit("v_mov_b32", {v(5), 0});
    Kernel k = waited(b);
    EXPECT_EQ(count_prefix(k, "s_waitcnt"), 0) << dump(k);
    EXPECT_EQ(nops_before(k, "v_mov_b32 v2"), 0) << dump(k);
    EXPECT_EQ(nops_before(k, "v_mov_b32 v5"), g == Gfx::gfx90a ? 1 : 2) << name(g) << "\n" << dump(k);
  }
}

TEST(Waits, BarrierWaitsForLdsOnly) {
  Builder b = make(Gfx::gfx942);
  b.global_store(v(1), v(2), s(4, 2));
  b.ds_write(v(1), v(3));
  b.s_barrier();
  b.ds_read(v(5), v(1));
  b.global_load(v(6), v(1), s(4, 2));
  b.s_barrier(); // the LDS read is outstanding: another wave may overwrite the location after the barrier
  b.global_store(v(1), v(7), s(4, 2));
  b.s_barrier(); // nothing: global memory is not ordered by s_barrier at workgroup scope
  Kernel k = waited(b);
  EXPECT_EQ(before(k, "s_barrier", 0), "s_waitcnt lgkmcnt(0)") << dump(k);
  EXPECT_EQ(before(k, "s_barrier", 1), "s_waitcnt lgkmcnt(0)") << dump(k);
  EXPECT_EQ(before(k, "s_barrier", 2), "global_store_dword v1, v7, s[4:5]") << dump(k);
  EXPECT_EQ(count_prefix(k, "s_waitcnt vmcnt"), 0) << dump(k);
}

// LDS-DMA loads write the LDS, not a register: LDS accesses and s_barrier wait for them on vmcnt (the
// largest count that covers the newest one), lane-exchange DS ops do not; M0 written by SALU needs 1 wait
// state before the load; the load waits for this wave's outstanding LDS reads.
TEST(Waits, LdsDmaLoadsAreWaitedBeforeLdsAccessAndBarrier) {
  for (Gfx g : {Gfx::gfx942, Gfx::gfx950}) {
    SCOPED_TRACE(name(g));
    Builder b = make(g);
    Modifiers offen;
    offen.offen = true;
    b.s_mov(m0(), s(8));
    b.emit("buffer_load_dword_lds", {v(2), s(4, 4), 0}, offen);
    b.buffer_load(v(10), v(1), s(4, 4), 0, offen);  // a register load after it
    b.emit("ds_bpermute_b32", {v(11), v(3), v(4)}); // no LDS memory: no wait
    b.ds_read(v(12), v(5));
    b.emit("buffer_load_dword_lds", {v(2), s(4, 4), 0}, offen);
    b.global_load(v(13), v(1), s(6, 2));
    b.s_barrier();
    Kernel k = waited(b);
    EXPECT_EQ(before(k, "buffer_load_dword v2"), "s_nop 0") << dump(k); // M0 -> LDS-DMA
    EXPECT_EQ(before(k, "ds_bpermute_b32"), "buffer_load_dword v10, v1, s[4:7], 0 offen") << dump(k);
    EXPECT_EQ(before(k, "ds_read_b32 v12"), "s_waitcnt vmcnt(1)") << dump(k);
    EXPECT_EQ(before(k, "buffer_load_dword v2", 1), "s_waitcnt lgkmcnt(0)") << dump(k);
    EXPECT_EQ(before(k, "s_barrier"), "s_waitcnt vmcnt(1)") << dump(k);
  }
}

TEST(Waits, ExistingWaitsAreHonoured) {
  Builder b = make(Gfx::gfx942);
  b.global_load(v(2), v(1), s(4, 2));
  b.global_load(v(3), v(1), s(4, 2));
  b.s_waitcnt(1, std::nullopt);
  b.emit("v_mov_b32", {v(4), v(2)});
  b.emit("v_mfma_f32_16x16x16_f16", {v(10, 4), v(4, 2), v(6, 2), 0});
  b.s_nop(6);
  b.emit("v_mov_b32", {v(20), v(10)}); // 4-pass XDL: 7 wait states, already there
  WaitStats st;
  Kernel k = waited(b, &st);
  EXPECT_EQ(st.waitcnts_inserted, 0u) << dump(k);
  EXPECT_EQ(st.nops_inserted, 1u) << dump(k); // the MFMA reads v4, written by a VALU: 2
}

// GEMM-style prefetch: the loads issued at the end of iteration i are used in iteration i+1. The loop head
// must not wait for everything; the merge keeps one load in flight.
TEST(Waits, LoopWithPrefetchKeepsLoadsInFlight) {
  Builder b = make(Gfx::gfx942);
  Label loop = b.label("loop");
  b.global_load(v(4), v(2), s(4, 2));
  b.bind(loop);
  b.global_load(v(5), v(2), s(4, 2), 4);
  b.emit("v_add_f32", {v(3), v(3), v(4)});
  b.global_load(v(4), v(2), s(4, 2), 8);
  b.emit("v_add_f32", {v(3), v(3), v(5)});
  b.emit("s_sub_u32", {s(7), s(7), 1});
  b.emit("s_cmp_lg_u32", {s(7), 0});
  b.s_cbranch("scc1", loop);
  b.global_store(v(1), v(3), s(4, 2));
  b.s_endpgm();
  Kernel k = waited(b);
  EXPECT_EQ(before(k, "v_add_f32 v3, v3, v4"), "s_waitcnt vmcnt(1)") << dump(k);
  EXPECT_EQ(before(k, "v_add_f32 v3, v3, v5"), "s_waitcnt vmcnt(1)") << dump(k);
  EXPECT_EQ(count_prefix(k, "s_waitcnt"), 2) << dump(k);
}

TEST(Waits, LoopBackEdgeBringsPendingLoadsAndHazards) {
  Builder b = make(Gfx::gfx942);
  Label loop = b.label("loop"), done = b.label("done");
  b.bind(loop);
  b.emit("v_mov_b32_dpp", {v(3), v(2)}, [] {
    Modifiers m;
    m.dpp = DppControl::row_shr(1);
    return m;
  }());
  b.emit("v_add_u32", {v(2), 1, v(2)}); // written at the end of the body, read by the DPP at the head
  b.ds_read(v(6), v(1));
  b.s_cbranch("execz", done);
  b.s_branch(loop);
  b.bind(done);
  b.emit("v_mov_b32", {v(7), v(6)});
  b.s_endpgm();
  Kernel k = waited(b);
  // At the head from the back edge: v_add, ds_read, s_cbranch, s_branch = 3 wait states after the VALU:
  // none needed. The entry path has nothing. The v_mov after the loop waits for the LDS read.
  EXPECT_EQ(nops_before(k, "v_mov_b32_dpp"), 0) << dump(k);
  EXPECT_EQ(before(k, "v_mov_b32 v7"), "s_waitcnt lgkmcnt(0)") << dump(k);
  // Without the instructions in between the DPP needs padding on the back edge.
  Builder c = make(Gfx::gfx942);
  Label l2 = c.label("l2");
  c.bind(l2);
  c.emit("v_mov_b32_dpp", {v(3), v(2)}, [] {
    Modifiers m;
    m.dpp = DppControl::row_shr(1);
    return m;
  }());
  c.emit("v_add_u32", {v(2), 1, v(2)});
  c.s_branch(l2);
  Kernel k2 = waited(c);
  EXPECT_EQ(nops_before(k2, "v_mov_b32_dpp"), 1) << dump(k2);
}

TEST(Waits, MfmaResultReadByValuPerTarget) {
  for (Gfx g : kAll) {
    // 32x32x8 f16: 16 passes on gfx90a (19), 8 on gfx942 (11) and gfx950 (12).
    Builder b = make(g);
    b.emit("v_mfma_f32_32x32x8_f16", {a(0, 16), v(2, 2), v(4, 2), a(0, 16)});
    b.emit("v_accvgpr_read_b32", {v(10), a(3)});
    WaitStats st;
    Kernel k = waited(b, &st);
    int want = g == Gfx::gfx90a ? 19 : g == Gfx::gfx942 ? 11 : 12;
    EXPECT_EQ(nops_before(k, "v_accvgpr_read_b32"), want) << name(g) << "\n" << dump(k);
    EXPECT_EQ(int(st.nop_states), want);
    EXPECT_EQ(st.nops_inserted, g == Gfx::gfx90a ? 2u : 1u); // s_nop 15 is the largest
    // Independent instructions in between count.
    Builder c = make(g);
    c.emit("v_mfma_f32_32x32x8_f16", {a(0, 16), v(2, 2), v(4, 2), a(0, 16)});
    for (int i = 0; i < 5; ++i)
      c.emit("v_mov_b32", {v(20 + i), 0});
    c.emit("v_accvgpr_read_b32", {v(10), a(3)});
    Kernel k2 = waited(c);
    EXPECT_EQ(nops_before(k2, "v_accvgpr_read_b32"), want - 5) << name(g) << "\n" << dump(k2);
  }
}

TEST(Waits, MfmaToMfmaRules) {
  for (Gfx g : kAll) {
    const int n = g == Gfx::gfx90a ? 8 : 4; // 16x16x16 f16 passes
    {                                       // accumulate into identical registers: no padding
      Builder b = make(g);
      b.emit("v_mfma_f32_16x16x16_f16", {v(8, 4), v(2, 2), v(4, 2), v(8, 4)});
      b.emit("v_mfma_f32_16x16x16_f16", {v(8, 4), v(2, 2), v(4, 2), v(8, 4)});
      Kernel k = waited(b);
      EXPECT_EQ(count_prefix(k, "s_nop"), 0) << name(g) << "\n" << dump(k);
    }
    { // result read as SrcA
      Builder b = make(g);
      b.emit("v_mfma_f32_16x16x16_f16", {v(8, 4), v(2, 2), v(4, 2), 0});
      b.emit("v_mfma_f32_16x16x16_f16", {v(12, 4), v(8, 2), v(4, 2), 0});
      Kernel k = waited(b);
      EXPECT_EQ(nops_before(k, " v[12:15], v[8:9]"), g == Gfx::gfx950 ? n + 4 : n + 3) << name(g) << "\n"
                                                                                       << dump(k);
    }
    { // result overlapping, not identical SrcC of an XDL
      Builder b = make(g);
      b.emit("v_mfma_f32_16x16x16_f16", {v(8, 4), v(2, 2), v(4, 2), 0});
      b.emit("v_mfma_f32_16x16x16_f16", {v(10, 4), v(2, 2), v(4, 2), v(10, 4)});
      Kernel k = waited(b);
      int want = g == Gfx::gfx90a ? n : g == Gfx::gfx942 ? n + 1 : n + 2;
      EXPECT_EQ(nops_before(k, " v[10:13], v[2:3]"), want) << name(g) << "\n" << dump(k);
    }
    { // SrcC read, then overwritten by a VALU (WAR): N - 1
      Builder b = make(g);
      b.emit("v_mfma_f32_16x16x16_f16", {v(8, 4), v(2, 2), v(4, 2), v(12, 4)});
      b.emit("v_mov_b32", {v(13), 0});
      Kernel k = waited(b);
      EXPECT_EQ(nops_before(k, "v_mov_b32 v13"), n - 1) << name(g) << "\n" << dump(k);
    }
  }
}

TEST(Waits, SmfmaAndDgemmRules) {
  // f32-input MFMA: XDL on gfx90a (16x16x4 f32, 8 passes: 11), SMFMA on gfx942/gfx950 (N+2 = 10).
  for (Gfx g : kAll) {
    Builder b = make(g);
    b.emit("v_mfma_f32_16x16x4_f32", {v(8, 4), v(2), v(3), 0});
    b.emit("v_add_f32", {v(20), v(9), v(9)});
    Kernel k = waited(b);
    EXPECT_EQ(nops_before(k, "v_add_f32"), g == Gfx::gfx90a ? 11 : 10) << name(g) << "\n" << dump(k);
  }
  // f64 16x16x4: VMEM reads of the result need 18 (notes); VALU reads 11 (gfx950: 8+... 16 passes, 20).
  for (Gfx g : kAll) {
    Builder b = make(g);
    b.emit("v_mfma_f64_16x16x4_f64", {v(8, 8), v(2, 2), v(4, 2), 0});
    b.global_store(v(1), v(8, 2), s(4, 2));
    b.emit("v_add_u32", {v(20), v(9), v(9)});
    Kernel k = waited(b);
    EXPECT_EQ(nops_before(k, "global_store_dwordx2"), g == Gfx::gfx950 ? 20 : 18) << name(g) << "\n"
                                                                                  << dump(k);
    EXPECT_EQ(nops_before(k, "v_add_u32"), 0) << name(g) << "\n" << dump(k);
  }
  // gfx90a: VALU writes a VGPR, a DGEMM issues, a VMEM reads that VGPR: 2 wait states after the VALU.
  Builder b = make(Gfx::gfx90a);
  b.emit("v_mov_b32", {v(1), 0});
  b.emit("v_mfma_f64_16x16x4_f64", {v(8, 8), v(2, 2), v(4, 2), 0});
  b.global_load(v(30), v(1), s(4, 2));
  Kernel k = waited(b);
  EXPECT_EQ(nops_before(k, "global_load_dword"), 1) << dump(k);
}

TEST(Waits, ValuRulesPerTarget) {
  auto dpp = [] {
    Modifiers m;
    m.dpp = DppControl::row_shr(1);
    m.bound_ctrl = true;
    return m;
  };
  for (Gfx g : kAll) {
    const bool post90a = g != Gfx::gfx90a;
    struct Case {
      const char* what;
      std::function<void(Builder&)> build;
      const char* consumer;
      int want;
    };
    std::vector<Case> cases = {
        {"VALU VGPR -> DPP",
         [&](Builder& b) {
           b.emit("v_add_u32", {v(2), 1, v(2)});
           b.emit("v_add_f32_dpp", {v(3), v(2), v(3)}, dpp());
         },
         "v_add_f32_dpp", 2},
        {"LDS load -> DPP",
         [&](Builder& b) {
           b.ds_read(v(2), v(1));
           b.emit("v_mov_b32_dpp", {v(3), v(2)}, dpp());
         },
         "v_mov_b32_dpp", 1}, // the s_waitcnt is one of the two
        {"v_cmpx EXEC -> DPP",
         [&](Builder& b) {
           b.emit("v_cmpx_eq_u32", {vcc(), 0, v(1)});
           b.emit("v_mov_b32_dpp", {v(3), v(2)}, dpp());
         },
         "v_mov_b32_dpp", 5},
        {"v_cmpx EXEC -> MFMA",
         [&](Builder& b) {
           b.emit("v_cmpx_eq_u32", {vcc(), 0, v(1)});
           b.emit("v_mfma_f32_16x16x16_f16", {v(8, 4), v(2, 2), v(4, 2), 0});
         },
         "v_mfma", 4},
        {"VALU VGPR -> MFMA SrcB",
         [&](Builder& b) {
           b.emit("v_mov_b32", {v(5), 0});
           b.emit("v_mfma_f32_16x16x16_f16", {v(8, 4), v(2, 2), v(4, 2), 0});
         },
         "v_mfma", 2},
        {"v_accvgpr_write -> MFMA SrcC",
         [&](Builder& b) {
           b.emit("v_accvgpr_write_b32", {a(1), 0});
           b.emit("v_mfma_f32_16x16x16_f16", {a(0, 4), v(2, 2), v(4, 2), a(0, 4)});
         },
         "v_mfma", 2},
        {"v_dot -> VALU read",
         [&](Builder& b) {
           b.emit("v_dot2_f32_f16", {v(5), v(1), v(2), v(3)});
           b.emit("v_mov_b32", {v(6), v(5)});
         },
         "v_mov_b32 v6", 3},
        {"VALU SGPR -> VMEM",
         [&](Builder& b) {
           b.emit("v_readfirstlane_b32", {s(5), v(1)});
           b.global_load(v(6), v(1), s(4, 2));
         },
         "global_load", 5},
        {"VALU SGPR -> lane select",
         [&](Builder& b) {
           b.emit("v_readfirstlane_b32", {s(6), v(1)});
           b.emit("v_readlane_b32", {s(7), v(2), s(6)});
         },
         "v_readlane", 4},
        {"VALU VGPR -> v_readlane",
         [&](Builder& b) {
           b.emit("v_mov_b32", {v(2), 0});
           b.emit("v_readlane_b32", {s(7), v(2), 3});
         },
         "v_readlane", post90a ? 1 : 0},
        {"VALU EXEC -> v_readfirstlane",
         [&](Builder& b) {
           b.emit("v_cmpx_eq_u32", {vcc(), 0, v(1)});
           b.emit("v_readfirstlane_b32", {s(7), v(2)});
         },
         "v_readfirstlane", post90a ? 4 : 0},
        {"VALU VCC -> VALU",
         [&](Builder& b) {
           b.emit("v_cmp_lt_u32", {vcc(), 0, v(1)});
           b.emit("v_cndmask_b32", {v(3), 0, v(2), vcc()});
         },
         "v_cndmask", post90a ? 2 : 0},
        {"trans -> VALU",
         [&](Builder& b) {
           b.emit("v_exp_f32", {v(2), v(1)});
           b.emit("v_add_f32", {v(3), v(2), v(2)});
         },
         "v_add_f32", post90a ? 1 : 0},
        {"trans -> trans",
         [&](Builder& b) {
           b.emit("v_exp_f32", {v(2), v(1)});
           b.emit("v_rcp_f32", {v(3), v(2)});
         },
         "v_rcp_f32", 0},
    };
    for (const auto& c : cases) {
      Builder b = make(g);
      c.build(b);
      Kernel k = waited(b);
      EXPECT_EQ(nops_before(k, c.consumer), c.want) << name(g) << ": " << c.what << "\n" << dump(k);
    }
  }
}

TEST(Waits, XnackSoftClause) {
  // The second load overwrites s[2:3], which the first reads: with xnack the group must be broken.
  auto build = [](const char* suffix) {
    Builder b = make(Gfx::gfx942, suffix);
    b.s_load(s(4, 2), s(2, 2), 0);
    b.s_load(s(2, 2), s(0, 2), 8);
    return waited(b);
  };
  Kernel any = build(""), off = build(":xnack-");
  EXPECT_EQ(nops_before(any, "s_load_dwordx2 s[2:3]"), 1) << dump(any);
  EXPECT_EQ(nops_before(off, "s_load_dwordx2 s[2:3]"), 0) << dump(off);
}

TEST(Waits, KernelsStillPrint) {
  Builder b = make(Gfx::gfx942);
  Reg p = b.alloc_s(2), x = b.alloc_v(1);
  b.add_arg("p", 8, 8, ArgKind::global_buffer);
  b.s_load(p, b.kernarg_ptr(), 0);
  b.emit("v_lshlrev_b32", {x, 2, b.workitem_ids()});
  b.global_load(x, x, p);
  b.emit("v_add_f32", {x, x, x});
  b.global_store(b.workitem_ids(), x, p);
  b.s_endpgm();
  Kernel k = b.finish();
  insert_waits(k);
  std::string text = print(k);
  EXPECT_NE(text.find("s_waitcnt lgkmcnt(0)"), std::string::npos) << text;
  EXPECT_NE(text.find("s_waitcnt vmcnt(0)"), std::string::npos) << text;
}
