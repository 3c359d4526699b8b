// Kernels written with the builder and no waits, completed by insert_waits, assembled in process and run on
// the emulator with random inputs: the results must be right and the emulator must report nothing. Without
// the pass the same kernels must be reported, so these tests can fail.
#include <gtest/gtest.h>

#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "isatune/cdna/builder.h"
#include "isatune/cdna/printer.h"
#include "isatune/cdna/waits.h"
#include "isatune/emu/emulator.h"
#include "isatune/toolchain/assembler.h"
#include "llvm_skip.h"

using namespace isatune;
using namespace isatune::cdna;
using isatune::emu::EmuDevice;
using isatune::emu::HazardKind;

namespace {

const char* const kTargets[] = {"gfx90a", "gfx942", "gfx950"};

CodeObject assemble(const Kernel& k) {
  static auto as = toolchain::make_assembler("llvm");
  toolchain::AssembleOptions o;
  o.target = k.target.str();
  o.file_name = k.name + ".s";
  return as->assemble(print(k), o).code;
}

struct Args {
  std::vector<uint8_t> bytes;
  void ptr(uint64_t p) { put(&p, 8); }
  void u32(uint32_t v) { put(&v, 4); }
  void put(const void* p, size_t n) {
    while (bytes.size() % n)
      bytes.push_back(0);
    const uint8_t* b = static_cast<const uint8_t*>(p);
    bytes.insert(bytes.end(), b, b + n);
  }
};

template <class T> uint64_t upload(EmuDevice& dev, const std::vector<T>& v) {
  uint64_t p = dev.alloc(v.size() * sizeof(T));
  dev.copy_to_device(p, v.data(), v.size() * sizeof(T));
  return p;
}
template <class T> std::vector<T> download(EmuDevice& dev, uint64_t p, size_t n) {
  std::vector<T> v(n);
  dev.copy_to_host(v.data(), p, n * sizeof(T));
  return v;
}

std::string reports(const EmuDevice& dev) {
  std::string s;
  for (const auto& r : dev.reports())
    s += r.str() + "\n";
  return s;
}
bool has(const EmuDevice& dev, HazardKind kind) {
  for (const auto& r : dev.reports())
    if (r.kind == kind)
      return true;
  return false;
}

// Non-zero small integers: every sum below is exact in f32 and f16.
float nonzero(std::mt19937& rng, int range) {
  int x = int(rng() % uint32_t(2 * range)) - range;
  return float(x >= 0 ? x + 1 : x);
}

uint32_t fresh_seed() {
  return std::random_device{}();
}

// Runs a kernel with and without the pass: `check(dev, kernel)` launches it and returns mismatches.
template <class Build, class Check>
void with_and_without(const std::string& target, Build build, Check check, HazardKind expect_without,
                      uint32_t seed) {
  Kernel raw = build(target);
  Kernel k = raw;
  WaitStats st = insert_waits(k);
  EXPECT_GT(st.waitcnts_inserted + st.nops_inserted, 0u);
  WaitStats again = insert_waits(k); // idempotent
  EXPECT_EQ(again.waitcnts_inserted + again.nops_inserted, 0u) << target;
  {
    EmuDevice dev({.target = target});
    EXPECT_EQ(check(dev, assemble(k), raw.name), 0) << target << " seed " << seed << "\n" << print(k);
    EXPECT_TRUE(dev.reports().empty()) << target << "\n" << reports(dev) << print(k);
  }
  {
    EmuDevice dev({.target = target});
    check(dev, assemble(raw), raw.name);
    EXPECT_TRUE(has(dev, expect_without)) << target << ": without insert_waits the emulator must report\n"
                                          << reports(dev);
  }
}

// out[g] = 2 * in[partner] + in[g]: global load -> VALU -> LDS write, barrier, LDS read of the other wave's
// element.
Kernel lds_exchange(const std::string& target) {
  Builder b(parse_target_id(target), "lds_exchange");
  b.add_arg("in", 8, 8, ArgKind::global_buffer, "read_only");
  b.add_arg("out", 8, 8, ArgKind::global_buffer, "write_only");
  b.set_workgroup_size(128);
  b.set_lds_bytes(512);
  Reg pin = b.alloc_s(2), pout = b.alloc_s(2), base = b.alloc_s(1);
  Reg tid = b.alloc_v(), gid = b.alloc_v(), off = b.alloc_v(), x = b.alloc_v(), y = b.alloc_v();
  Reg laddr = b.alloc_v(), other = b.alloc_v(), z = b.alloc_v(), r = b.alloc_v();
  b.s_load(pin, b.kernarg_ptr(), 0);
  b.s_load(pout, b.kernarg_ptr(), 8);
  b.emit("v_and_b32", {tid, 0x3ff, b.workitem_ids()});
  b.emit("s_lshl_b32", {base, b.workgroup_id(0), 7});
  b.emit("v_add_u32", {gid, base, tid});
  b.emit("v_lshlrev_b32", {off, 2, gid});
  b.global_load(x, off, pin);
  b.emit("v_lshlrev_b32", {laddr, 2, tid});
  b.emit("v_add_f32", {y, x, x});
  b.ds_write(laddr, y);
  b.s_barrier();
  b.emit("v_add_u32", {other, 64, tid});
  b.emit("v_and_b32", {other, 127, other});
  b.emit("v_lshlrev_b32", {other, 2, other});
  b.ds_read(z, other);
  b.emit("v_add_f32", {r, z, x});
  b.global_store(off, r, pout);
  b.s_endpgm();
  return b.finish();
}

TEST(WaitsEmu, GlobalToLdsThroughBarrier) {
  uint32_t seed = fresh_seed();
  for (const char* t : kTargets) {
    ISATUNE_CONTINUE_IF_LLVM_LACKS(t); // gfx950 on LLVM 19
    with_and_without(
        t, lds_exchange,
        [&](EmuDevice& dev, const CodeObject& code, const std::string& name) {
          std::mt19937 rng(seed);
          const uint32_t groups = 3 + rng() % 4, n = groups * 128;
          std::vector<float> in(n), out(n, 0.5f);
          for (auto& v : in)
            v = nonzero(rng, 1000);
          uint64_t pin = upload(dev, in), pout = upload(dev, out);
          Args args;
          args.ptr(pin), args.ptr(pout);
          dev.launch(*dev.load(code)->function(name), {{groups, 1, 1}, {128, 1, 1}}, args.bytes);
          auto got = download<float>(dev, pout, n);
          int bad = 0;
          for (uint32_t i = 0; i < n; ++i) {
            uint32_t g = i / 128, l = i % 128;
            bad += got[i] != 2 * in[g * 128 + (l + 64) % 128] + in[i];
          }
          return bad;
        },
        HazardKind::pending_read, seed);
  }
}

// D = A * B (16x16x16 f16) accumulated twice into the same registers, doubled by a VALU, stored lane-major:
// out[4 * lane + r] = 4 * (A*B)[4 * (lane / 16) + r][lane % 16]. With `manual_waits` the memory waits are
// written by hand and only the wait states are missing.
Kernel mfma_chain(const std::string& target, bool manual_waits) {
  Builder b(parse_target_id(target), "mfma_chain");
  b.add_arg("a", 8, 8, ArgKind::global_buffer, "read_only");
  b.add_arg("bt", 8, 8, ArgKind::global_buffer, "read_only");
  b.add_arg("out", 8, 8, ArgKind::global_buffer, "write_only");
  b.set_workgroup_size(64);
  Reg pa = b.alloc_s(2), pb = b.alloc_s(2), po = b.alloc_s(2);
  Reg lane = b.alloc_v(), row = b.alloc_v(), quad = b.alloc_v(), off = b.alloc_v(), t = b.alloc_v();
  Reg av = b.alloc_v(2), bv = b.alloc_v(2), d = b.alloc_v(4), e = b.alloc_v(4), oo = b.alloc_v();
  b.s_load(pa, b.kernarg_ptr(), 0);
  b.s_load(pb, b.kernarg_ptr(), 8);
  b.s_load(po, b.kernarg_ptr(), 16);
  b.emit("v_and_b32", {lane, 63, b.workitem_ids()});
  b.emit("v_and_b32", {row, 15, lane});
  b.emit("v_lshrrev_b32", {quad, 4, lane});
  // A[i][k] -> lane 16 * (k / 4) + i: each lane reads 4 consecutive halves of row i at k = 4 * quad.
  b.emit("v_lshlrev_b32", {off, 5, row});
  b.emit("v_lshlrev_b32", {t, 3, quad});
  b.emit("v_add_u32", {off, off, t});
  if (manual_waits)
    b.s_waitcnt(std::nullopt, 0);
  b.global_load(av, off, pa);
  b.global_load(bv, off, pb);
  if (manual_waits)
    b.s_waitcnt(0, std::nullopt);
  b.mfma("v_mfma_f32_16x16x16_f16", d, av, bv, 0);
  b.mfma("v_mfma_f32_16x16x16_f16", d, av, bv, d);
  for (uint8_t r = 0; r < 4; ++r)
    b.emit("v_add_f32", {e.sub(r), d.sub(r), d.sub(r)});
  b.emit("v_lshlrev_b32", {oo, 4, lane});
  b.global_store(oo, e, po);
  b.emit("v_mov_b32", {e.sub(1), 0}); // overwrites store data of 16 bytes
  b.s_endpgm();
  return b.finish();
}

int check_mfma(EmuDevice& dev, const CodeObject& code, const std::string& name, uint32_t seed) {
  std::mt19937 rng(seed);
  auto half = [](float f) {
    uint32_t x;
    std::memcpy(&x, &f, 4);
    uint32_t sign = (x >> 16) & 0x8000, exp = (x >> 23) & 0xff, man = x & 0x7fffff;
    return uint16_t(sign | ((exp - 112) << 10) | (man >> 13));
  };
  std::vector<float> A(256), Bt(256); // Bt[j][k] = B[k][j]
  std::vector<uint16_t> a16(256), b16(256);
  for (int i = 0; i < 256; ++i) {
    A[size_t(i)] = nonzero(rng, 8), Bt[size_t(i)] = nonzero(rng, 8);
    a16[size_t(i)] = half(A[size_t(i)]), b16[size_t(i)] = half(Bt[size_t(i)]);
  }
  std::vector<float> out(256, 0.25f);
  uint64_t pa = upload(dev, a16), pb = upload(dev, b16), po = upload(dev, out);
  Args args;
  args.ptr(pa), args.ptr(pb), args.ptr(po);
  dev.launch(*dev.load(code)->function(name), {{1, 1, 1}, {64, 1, 1}}, args.bytes);
  auto got = download<float>(dev, po, 256);
  int bad = 0;
  for (int l = 0; l < 64; ++l)
    for (int r = 0; r < 4; ++r) {
      int i = 4 * (l / 16) + r, j = l % 16;
      float want = 0;
      for (int k = 0; k < 16; ++k)
        want += A[size_t(i * 16 + k)] * Bt[size_t(j * 16 + k)];
      bad += got[size_t(4 * l + r)] != 4 * want;
    }
  return bad;
}

TEST(WaitsEmu, MfmaChainFeedsValuAndStore) {
  uint32_t seed = fresh_seed();
  for (const char* t : kTargets) {
    ISATUNE_CONTINUE_IF_LLVM_LACKS(t); // gfx950 on LLVM 19
    with_and_without(
        t, [](const std::string& target) { return mfma_chain(target, false); },
        [&](EmuDevice& dev, const CodeObject& code, const std::string& name) {
          return check_mfma(dev, code, name, seed);
        },
        HazardKind::pending_read, seed);
    // Memory waits by hand, wait states missing: only the wait-state check can fire.
    EmuDevice dev({.target = t});
    Kernel k = mfma_chain(t, true);
    check_mfma(dev, assemble(k), k.name, seed);
    EXPECT_TRUE(has(dev, HazardKind::wait_states)) << t << "\n" << reports(dev);
    EXPECT_FALSE(has(dev, HazardKind::pending_read)) << t << "\n" << reports(dev);
    WaitStats st = insert_waits(k);
    EXPECT_EQ(st.waitcnts_inserted, 0u) << t; // the hand-written waits are honoured
    EmuDevice dev2({.target = t});
    EXPECT_EQ(check_mfma(dev2, assemble(k), k.name, seed), 0) << t;
    EXPECT_TRUE(dev2.reports().empty()) << t << "\n" << reports(dev2);
  }
}

// out[c] = sum over rows of a[r][c], two rows per iteration; the load of the next even row is issued in one
// iteration and used in the next (a padding row past the end is read and never used).
Kernel prefetch_sum(const std::string& target) {
  Builder b(parse_target_id(target), "prefetch_sum");
  b.add_arg("a", 8, 8, ArgKind::global_buffer, "read_only");
  b.add_arg("out", 8, 8, ArgKind::global_buffer, "write_only");
  b.add_arg("cols", 4, 4, ArgKind::by_value);
  b.add_arg("pairs", 4, 4, ArgKind::by_value);
  b.set_workgroup_size(64);
  Reg pa = b.alloc_s(2), po = b.alloc_s(2), cp = b.alloc_s(2), base = b.alloc_s(1), stride = b.alloc_s(1);
  Reg col = b.alloc_v(), addr = b.alloc_v(), oaddr = b.alloc_v(), acc = b.alloc_v(), x0 = b.alloc_v(),
      x1 = b.alloc_v();
  Reg cols = cp.sub(0), pairs = cp.sub(1);
  b.s_load(pa, b.kernarg_ptr(), 0);
  b.s_load(po, b.kernarg_ptr(), 8);
  b.s_load(cp, b.kernarg_ptr(), 16);
  b.emit("s_lshl_b32", {base, b.workgroup_id(0), 6});
  b.emit("v_and_b32", {col, 63, b.workitem_ids()});
  b.emit("v_add_u32", {col, base, col});
  b.emit("v_lshlrev_b32", {addr, 2, col});
  b.emit("v_mov_b32", {oaddr, addr});
  b.emit("s_lshl_b32", {stride, cols, 2});
  b.emit("v_mov_b32", {acc, 0});
  b.global_load(x0, addr, pa);
  b.emit("v_add_u32", {addr, stride, addr});
  Label loop = b.label("loop");
  b.bind(loop);
  b.global_load(x1, addr, pa);
  b.emit("v_add_u32", {addr, stride, addr});
  b.emit("v_add_f32", {acc, acc, x0});
  b.global_load(x0, addr, pa);
  b.emit("v_add_u32", {addr, stride, addr});
  b.emit("v_add_f32", {acc, acc, x1});
  b.emit("s_sub_u32", {pairs, pairs, 1});
  b.emit("s_cmp_lg_u32", {pairs, 0});
  b.s_cbranch("scc1", loop);
  b.global_store(oaddr, acc, po);
  b.s_endpgm();
  return b.finish();
}

TEST(WaitsEmu, LoopWithPrefetch) {
  uint32_t seed = fresh_seed();
  for (const char* t : kTargets) {
    ISATUNE_CONTINUE_IF_LLVM_LACKS(t); // gfx950 on LLVM 19
    Kernel k = prefetch_sum(t);
    insert_waits(k);
    std::string text = print(k);
    EXPECT_EQ(text.find("vmcnt(0)"), std::string::npos) << "the loop keeps a load in flight\n" << text;
    with_and_without(
        t, prefetch_sum,
        [&](EmuDevice& dev, const CodeObject& code, const std::string& name) {
          std::mt19937 rng(seed);
          const uint32_t groups = 1 + rng() % 4, cols = 64 * groups, pairs = 1 + rng() % 6;
          const uint32_t rows = 2 * pairs;
          std::vector<float> a(size_t(rows + 1) * cols), out(cols, 0.5f);
          for (auto& v : a)
            v = nonzero(rng, 1000);
          uint64_t pa = upload(dev, a), po = upload(dev, out);
          Args args;
          args.ptr(pa), args.ptr(po), args.u32(cols), args.u32(pairs);
          dev.launch(*dev.load(code)->function(name), {{groups, 1, 1}, {64, 1, 1}}, args.bytes);
          auto got = download<float>(dev, po, cols);
          int bad = 0;
          for (uint32_t c = 0; c < cols; ++c) {
            float want = 0;
            for (uint32_t r = 0; r < rows; ++r)
              want += a[size_t(r) * cols + c];
            bad += got[c] != want;
          }
          return bad;
        },
        HazardKind::pending_read, seed);
  }
}

// out[l] = y[l] + (l % 16 ? y[l - 1] : 0) with y = 2 * in: a DPP row shift right after the VALU that
// writes its source, then v_readfirstlane into an SGPR used as a store base (VALU SGPR -> VMEM).
Kernel dpp_shift(const std::string& target) {
  Builder b(parse_target_id(target), "dpp_shift");
  b.add_arg("in", 8, 8, ArgKind::global_buffer, "read_only");
  b.add_arg("out", 8, 8, ArgKind::global_buffer, "write_only");
  b.set_workgroup_size(64);
  Reg pin = b.alloc_s(2), po = b.alloc_s(2), lo = b.alloc_s(2);
  Reg lane = b.alloc_v(), off = b.alloc_v(), x = b.alloc_v(), y = b.alloc_v(), z = b.alloc_v(),
      plo = b.alloc_v(), phi = b.alloc_v();
  b.s_load(pin, b.kernarg_ptr(), 0);
  b.s_load(po, b.kernarg_ptr(), 8);
  b.emit("v_and_b32", {lane, 63, b.workitem_ids()});
  b.emit("v_lshlrev_b32", {off, 2, lane});
  b.global_load(x, off, pin);
  b.emit("v_add_f32", {y, x, x});
  b.dpp("v_add_f32_dpp", {z, y, y}, DppControl::row_shr(1), 0xf, 0xf, true);
  // The output pointer goes through VGPRs and back (uniform): VALU writes the SGPRs the store then reads.
  b.emit("v_mov_b32", {plo, po.sub(0)});
  b.emit("v_mov_b32", {phi, po.sub(1)});
  b.emit("v_readfirstlane_b32", {lo.sub(0), plo});
  b.emit("v_readfirstlane_b32", {lo.sub(1), phi});
  b.global_store(off, z, lo);
  b.s_endpgm();
  return b.finish();
}

TEST(WaitsEmu, DppAfterValuAndLaneToVmem) {
  uint32_t seed = fresh_seed();
  for (const char* t : kTargets) {
    ISATUNE_CONTINUE_IF_LLVM_LACKS(t); // gfx950 on LLVM 19
    with_and_without(
        t, dpp_shift,
        [&](EmuDevice& dev, const CodeObject& code, const std::string& name) {
          std::mt19937 rng(seed);
          std::vector<float> in(64), out(64, 0.5f);
          for (auto& v : in)
            v = nonzero(rng, 1000);
          uint64_t pin = upload(dev, in), po = upload(dev, out);
          Args args;
          args.ptr(pin), args.ptr(po);
          dev.launch(*dev.load(code)->function(name), {{1, 1, 1}, {64, 1, 1}}, args.bytes);
          auto got = download<float>(dev, po, 64);
          int bad = 0;
          for (int l = 0; l < 64; ++l)
            bad += got[size_t(l)] != 2 * in[size_t(l)] + (l % 16 ? 2 * in[size_t(l - 1)] : 0.0f);
          return bad;
        },
        HazardKind::pending_read, seed);
    // The wait states alone: with memory waits in place the DPP and the store SGPRs are still reported.
    Kernel k = dpp_shift(t);
    Kernel waited = k;
    insert_waits(waited);
    std::vector<Statement> no_nops;
    for (const auto& s : waited.body)
      if (!std::holds_alternative<Instruction>(s) || std::get<Instruction>(s).category() != Category::nop)
        no_nops.push_back(s);
    waited.body = no_nops;
    EmuDevice dev({.target = t});
    std::vector<float> in(64, 1.0f), out(64);
    uint64_t pin = upload(dev, in), po = upload(dev, out);
    Args args;
    args.ptr(pin), args.ptr(po);
    dev.launch(*dev.load(assemble(waited))->function(k.name), {{1, 1, 1}, {64, 1, 1}}, args.bytes);
    EXPECT_TRUE(has(dev, HazardKind::wait_states)) << t << "\n" << reports(dev);
    EXPECT_FALSE(has(dev, HazardKind::pending_read)) << t << "\n" << reports(dev);
  }
}

} // namespace
