// The semantics AITER's kernels need, each on a small assembled kernel with hand-derived expectations: the
// buffer range check (raw, stride-4 raw, structured, swizzle-free index checks, per-dword wide accesses),
// LDS-DMA (buffer_load ... lds with M0), VGPR indexing (s_set_gpr_idx_on/off), s_bfm_b64 and the gfx950
// v_permlane{16,32}_swap.
#include <gtest/gtest.h>

#include <cstring>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include "isatune/emu/emulator.h"
#include "isatune/toolchain/assembler.h"
#include "llvm_skip.h"

using namespace isatune;
using namespace isatune::emu;

namespace {

// A one-kernel code object around `body`; s[0:1] = kernarg pointer, v0 = packed thread id.
std::string kernel_text(const std::string& target, const std::string& name, const std::string& body,
                        uint32_t lds, uint32_t kernarg_bytes) {
  std::string t = target;
  return ".amdgcn_target \"amdgcn-amd-amdhsa--" + t + "\"\n.amdhsa_code_object_version 5\n.text\n.globl " +
         name + "\n.p2align 8\n.type " + name + ",@function\n" + name + ":\n" + body + "  s_endpgm\n.L" +
         name + "_end:\n.size " + name + ", .L" + name + "_end-" + name +
         "\n.p2alignl 6, 0xbf800000\n.fill 256, 4, 0xbf800000\n.rodata\n.p2align 6\n.amdhsa_kernel " + name +
         "\n  .amdhsa_user_sgpr_count 2\n  .amdhsa_user_sgpr_kernarg_segment_ptr 1\n  .amdhsa_kernarg_size " +
         std::to_string(kernarg_bytes) +
         "\n  .amdhsa_system_sgpr_workgroup_id_x 1\n  .amdhsa_next_free_vgpr 32\n  .amdhsa_next_free_sgpr "
         "40\n"
         "  .amdhsa_accum_offset 32\n  .amdhsa_group_segment_fixed_size " +
         std::to_string(lds) +
         "\n.end_amdhsa_kernel\n.amdgpu_metadata\n---\namdhsa.version: [ 1, 2 ]\n"
         "amdhsa.kernels:\n  - .name: " +
         name + "\n    .symbol: " + name +
         ".kd\n    .kernarg_segment_size: " + std::to_string(kernarg_bytes) +
         "\n    .kernarg_segment_align: 8\n    .group_segment_fixed_size: " + std::to_string(lds) +
         "\n    .private_segment_fixed_size: 0\n    .wavefront_size: 64\n    .sgpr_count: 46\n"
         "    .vgpr_count: 32\n    .agpr_count: 0\n    .max_flat_workgroup_size: "
         "64\n...\n.end_amdgpu_metadata\n";
}

CodeObject assemble(const std::string& text, const std::string& target) {
  try {
    return toolchain::make_assembler("llvm")->assemble(text, {target, "test.s"}).code;
  } catch (const std::exception& e) {
    ADD_FAILURE() << e.what() << "\n" << text;
    throw;
  }
}

std::string all_reports(const EmuDevice& dev) {
  std::string s;
  for (const auto& r : dev.reports())
    s += r.str() + "\n";
  return s;
}

struct Kernargs {
  std::vector<uint8_t> bytes;
  void u32(uint32_t v) {
    const auto* p = reinterpret_cast<const uint8_t*>(&v);
    bytes.insert(bytes.end(), p, p + 4);
  }
  void u64(uint64_t v) { u32(uint32_t(v)), u32(uint32_t(v >> 32)); }
};

constexpr uint32_t kUntouched = 0xdeadbeefu;

// Buffer probe: one wave; lane l loads (or stores) DWORDS dwords through the V# given in the kernarg,
// vaddr = base + l * step (idxen: the index; both: index in v1, offset in v2).
//   kernarg: 0 V# (4 dwords), 16 out (8), 24 soffset, 28 step, 32 vaddr base, 36 offset step (both mode)
struct Probe {
  std::string op = "buffer_load_dwordx4";
  uint32_t dwords = 4;
  std::string mode = "offen"; // offen | idxen | idxen offen
  uint32_t inst_offset = 0;
  bool store = false;
};

std::string probe_body(const Probe& p) {
  std::string data = p.dwords == 1 ? "v10" : "v[10:" + std::to_string(9 + p.dwords) + "]";
  std::string vaddr = p.mode == "idxen offen" ? "v[4:5]" : "v1";
  std::string mem = "  " + p.op + " " + data + ", " + vaddr + ", s[8:11], s12 " + p.mode +
                    (p.inst_offset ? " offset:" + std::to_string(p.inst_offset) : "") + "\n";
  std::string b = "  s_load_dwordx4 s[8:11], s[0:1], 0x0\n  s_load_dwordx2 s[16:17], s[0:1], 0x10\n"
                  "  s_load_dwordx4 s[12:15], s[0:1], 0x18\n"
                  "  v_and_b32 v0, 63, v0\n  s_waitcnt lgkmcnt(0)\n"
                  "  v_mul_lo_u32 v1, v0, s13\n  v_add_u32 v1, s14, v1\n  v_mul_lo_u32 v2, v0, s15\n"
                  "  v_mov_b32 v4, v1\n  v_mov_b32 v5, v2\n";
  // s12 soffset, s13 step, s14 vaddr base, s15 offset step, s[16:17] out
  for (uint32_t i = 0; i < 4; ++i)
    b += "  v_mov_b32 v" + std::to_string(10 + i) + ", 0x" + "deadbeef\n";
  if (p.store) {
    // stored data: lane * 16 + dword + 1 (never the untouched pattern)
    for (uint32_t i = 0; i < p.dwords; ++i)
      b += "  v_lshl_add_u32 v" + std::to_string(10 + i) + ", v0, 4, " + std::to_string(i + 1) + "\n";
    b += "  s_nop 4\n" + mem + "  s_waitcnt vmcnt(0)\n";
    return b;
  }
  b += mem +
       "  s_waitcnt vmcnt(0)\n  v_lshlrev_b32 v3, 4, v0\n  global_store_dwordx4 v3, v[10:13], s[16:17]\n";
  return b;
}

struct ProbeCase {
  const char* what;
  Probe p;
  uint32_t word1_high = 0; // stride / swizzle bits of word1 (bits 16..31)
  uint32_t num_records = 0;
  uint32_t word3 = 0x20000;
  uint32_t soffset = 0, step = 4, base = 0, offset_step = 0;
  // For lane l, dword k: the byte offset from the V# base that is read, or -1 when out of range.
  std::function<int64_t(int l, int k)> expect;
};

// Runs one probe on a fresh device; returns the number of wrong dwords (and adds failures).
void run_probe(const ProbeCase& c, uint32_t seed) {
  EmuDevice dev({.target = "gfx942"});
  const uint32_t in_bytes = 4096;
  std::mt19937 rng(seed);
  std::vector<uint32_t> in(in_bytes / 4);
  for (auto& x : in)
    x = rng() | 1; // never 0, never the untouched pattern (odd)
  uint64_t pin = dev.alloc(in_bytes);
  dev.copy_to_device(pin, in.data(), in_bytes);
  uint64_t pout = dev.alloc(64 * 16);
  std::vector<uint32_t> out(64 * 4, kUntouched);
  dev.copy_to_device(pout, out.data(), out.size() * 4);
  Kernargs ka;
  ka.u32(uint32_t(pin));
  ka.u32(uint32_t(pin >> 32) | (c.word1_high << 16));
  ka.u32(c.num_records);
  ka.u32(c.word3);
  ka.u64(c.p.store ? pin : pout);
  ka.u32(c.soffset), ka.u32(c.step), ka.u32(c.base), ka.u32(c.offset_step);
  auto code = assemble(kernel_text("gfx942", "probe", probe_body(c.p), 0, 40), "gfx942");
  dev.launch(*dev.load(code)->function("probe"), {{1, 1, 1}, {64, 1, 1}}, ka.bytes);
  int bad = 0;
  if (!c.p.store) {
    dev.copy_to_host(out.data(), pout, out.size() * 4);
    for (int l = 0; l < 64; ++l)
      for (int k = 0; k < 4; ++k) {
        uint32_t want = kUntouched;
        if (k < int(c.p.dwords)) {
          int64_t at = c.expect(l, k);
          want = at < 0 ? 0u : in[size_t(at / 4)];
        }
        if (out[size_t(l) * 4 + k] != want && bad++ < 5)
          ADD_FAILURE() << c.what << ": lane " << l << " dword " << k << " got 0x" << std::hex
                        << out[size_t(l) * 4 + k] << " want 0x" << want;
      }
  } else {
    std::vector<uint32_t> now(in.size());
    dev.copy_to_host(now.data(), pin, in_bytes);
    std::vector<uint32_t> want = in;
    for (int l = 0; l < 64; ++l)
      for (int k = 0; k < int(c.p.dwords); ++k)
        if (int64_t at = c.expect(l, k); at >= 0)
          want[size_t(at / 4)] = uint32_t(l * 16 + k + 1);
    for (size_t i = 0; i < want.size(); ++i)
      if (now[i] != want[i] && bad++ < 5)
        ADD_FAILURE() << c.what << ": dword " << i << " got 0x" << std::hex << now[i] << " want 0x"
                      << want[i];
  }
  EXPECT_EQ(bad, 0) << c.what << " seed " << seed;
  EXPECT_TRUE(dev.reports().empty()) << c.what << "\n" << all_reports(dev);
}

} // namespace

// Raw buffers are checked by byte offset (inst_offset + vgpr offset, soffset excluded) against num_records,
// each dword of a wide access on its own (CDNA3 ISA "Range checking"; emu/src/buffer_resource.h).
TEST(AiterSemantics, BufferRangeCheck) {
  const uint32_t seed = std::random_device{}();
  auto raw = [](uint32_t base, uint32_t step, uint32_t inst, uint32_t nrec, uint32_t soff) {
    return [=](int l, int k) -> int64_t {
      uint64_t off = uint64_t(base) + uint64_t(l) * step + inst + 4ull * k;
      return off < nrec ? int64_t(off + soff) : -1;
    };
  };
  std::vector<ProbeCase> cases;
  // stride 0, dwordx4 at 16 B per lane: 100 bytes -> lanes 0..5 whole, lane 6 only its first dword (96).
  cases.push_back(
      {"raw stride-0 x4 straddling the end", {}, 0, 100, 0x20000, 0, 16, 0, 0, raw(0, 16, 0, 100, 0)});
  // AITER's descriptors: stride 4 in word1, OFFEN only: still raw, checked by bytes.
  cases.push_back({"stride-4 raw x4", {}, 4, 200, 0x20000, 0, 16, 0, 0, raw(0, 16, 0, 200, 0)});
  // The same with dword loads and an odd number of records per lane step.
  cases.push_back({"stride-4 raw dword",
                   {"buffer_load_dword", 1},
                   4,
                   4 * 37,
                   0x20000,
                   0,
                   4,
                   0,
                   0,
                   raw(0, 4, 0, 4 * 37, 0)});
  // inst_offset counts in the check: offset:64 with 64 bytes puts every lane out of range.
  cases.push_back({"inst offset past num_records",
                   {"buffer_load_dword", 1, "offen", 64},
                   4,
                   64,
                   0x20000,
                   0,
                   0,
                   0,
                   0,
                   raw(0, 0, 64, 64, 0)});
  // soffset does not: with soffset 256, lanes are in range while their vgpr offset is below num_records.
  cases.push_back({"soffset excluded from the check",
                   {"buffer_load_dwordx2", 2},
                   0,
                   40,
                   0x20000,
                   256,
                   8,
                   0,
                   0,
                   raw(0, 8, 0, 40, 256)});
  // A vgpr offset far past the end (CK's 0x80000000 trick) reads zeros.
  cases.push_back({"huge vgpr offset",
                   {"buffer_load_dword", 1},
                   0,
                   1024,
                   0x20000,
                   0,
                   0x01000000,
                   0,
                   0,
                   [](int l, int) -> int64_t { return l == 0 ? 0 : -1; }});
  // Structured (idxen, stride 16): the index is checked against num_records in records, not bytes.
  cases.push_back({"structured idxen stride 16",
                   {"buffer_load_dwordx4", 4, "idxen"},
                   16,
                   5,
                   0x20000,
                   0,
                   1,
                   0,
                   0,
                   [](int l, int k) -> int64_t { return l < 5 ? l * 16 + 4 * k : -1; }});
  // Structured with index and offset (both): the offset may pass the stride; only the index is checked.
  cases.push_back({"structured idxen+offen",
                   {"buffer_load_dword", 1, "idxen offen"},
                   32,
                   9,
                   0x20000,
                   0,
                   1,
                   0,
                   20,
                   [](int l, int) -> int64_t { return l < 9 ? l * 32 + l * 20 : -1; }});
  // Stores: out-of-range dwords are dropped, in-range ones of the same lane written.
  cases.push_back({"raw x4 store straddling the end",
                   {"buffer_store_dwordx4", 4, "offen", 0, true},
                   4,
                   136,
                   0x20000,
                   0,
                   16,
                   0,
                   0,
                   raw(0, 16, 0, 136, 0)});
  cases.push_back({"structured store",
                   {"buffer_store_dword", 1, "idxen", 0, true},
                   8,
                   11,
                   0x20000,
                   0,
                   1,
                   0,
                   0,
                   [](int l, int) -> int64_t { return l < 11 ? l * 8 : -1; }});
  for (const auto& c : cases)
    run_probe(c, seed);
}

// LDS-DMA: buffer_load_dword ... lds writes lane l's dword to LDS at M0 + inst_offset + 4 l; lanes that fail
// the range check write zeros.
TEST(AiterSemantics, BufferLoadToLds) {
  const uint32_t seed = std::random_device{}();
  std::mt19937 rng(seed);
  const uint32_t nrec = 4 * (5 + rng() % 50), m0 = 256 + 4 * (rng() % 16);
  std::string body = "  s_load_dwordx4 s[8:11], s[0:1], 0x0\n  s_load_dwordx2 s[16:17], s[0:1], 0x10\n"
                     "  v_and_b32 v0, 63, v0\n  v_lshlrev_b32 v1, 2, v0\n"
                     // fill the LDS window with the untouched pattern first
                     "  v_mov_b32 v5, 0xdeadbeef\n  v_add_u32 v4, " +
                     std::to_string(m0 + 8) +
                     ", v1\n"
                     "  ds_write_b32 v4, v5\n  s_waitcnt lgkmcnt(0)\n  s_barrier\n"
                     "  s_waitcnt lgkmcnt(0)\n  s_mov_b32 m0, " +
                     std::to_string(m0) +
                     "\n  s_nop 0\n"
                     "  buffer_load_dword v1, s[8:11], 0 offen offset:8 lds\n  s_waitcnt vmcnt(0)\n"
                     "  ds_read_b32 v6, v4\n  s_waitcnt lgkmcnt(0)\n"
                     "  global_store_dword v1, v6, s[16:17]\n";
  EmuDevice dev({.target = "gfx942"});
  std::vector<uint32_t> in(128);
  for (auto& x : in)
    x = rng() | 1;
  uint64_t pin = dev.alloc(in.size() * 4), pout = dev.alloc(64 * 4);
  dev.copy_to_device(pin, in.data(), in.size() * 4);
  Kernargs ka;
  ka.u32(uint32_t(pin)), ka.u32(uint32_t(pin >> 32) | (4u << 16)), ka.u32(nrec), ka.u32(0x20000);
  ka.u64(pout);
  auto code = assemble(kernel_text("gfx942", "dma", body, 1024, 24), "gfx942");
  dev.launch(*dev.load(code)->function("dma"), {{1, 1, 1}, {64, 1, 1}}, ka.bytes);
  std::vector<uint32_t> out(64);
  dev.copy_to_host(out.data(), pout, 256);
  for (uint32_t l = 0; l < 64; ++l) {
    // source byte offset 4 l + 8 (inst_offset counts in the check); LDS address m0 + 8 + 4 l
    uint32_t want = 4 * l + 8 < nrec ? in[l + 2] : 0u;
    EXPECT_EQ(out[l], want) << "lane " << l << " nrec " << nrec << " seed " << seed;
  }
  EXPECT_TRUE(dev.reports().empty()) << all_reports(dev);
}

// s_set_gpr_idx_on S, mode: VALU operands named by the mode are offset by S[7:0] until s_set_gpr_idx_off.
TEST(AiterSemantics, GprIndexing) {
  const uint32_t seed = std::random_device{}();
  std::mt19937 rng(seed);
  const uint32_t idx = 1 + rng() % 4, lane = rng() % 64;
  std::string body = "  s_load_dwordx2 s[16:17], s[0:1], 0x0\n  v_and_b32 v0, 63, v0\n";
  for (int r = 10; r < 16; ++r) // v10..v15 = lane + 100 r
    body += "  v_add_u32 v" + std::to_string(r) + ", " + std::to_string(100 * r) + ", v0\n";
  body += "  s_mov_b32 s20, " + std::to_string(idx) + "\n  s_mov_b32 s21, " + std::to_string(lane) +
          "\n"
          "  v_mov_b32 v20, 7\n"
          // DST: v_mov v10 <- v20 writes v(10+idx); SRC0: v_add v22 <- v11 + v0 reads v(11+idx)
          "  s_set_gpr_idx_on s20, gpr_idx(DST)\n  v_mov_b32 v10, v20\n  s_set_gpr_idx_off\n"
          "  s_set_gpr_idx_on s20, gpr_idx(SRC0)\n  v_add_u32 v22, v11, v0\n  s_set_gpr_idx_off\n"
          // v_writelane under DST indexing, as topksoftmax zeroes a chosen expert
          "  s_set_gpr_idx_on s20, gpr_idx(DST)\n  v_writelane_b32 v11, 0, s21\n  s_set_gpr_idx_off\n"
          "  v_add_u32 v23, v12, 0\n" // not indexed any more
          "  v_lshlrev_b32 v1, 5, v0\n"
          "  s_waitcnt lgkmcnt(0)\n"
          "  global_store_dwordx4 v1, v[10:13], s[16:17]\n  global_store_dwordx4 v1, v[14:17], s[16:17] "
          "offset:16\n"
          "  v_lshlrev_b32 v1, 3, v0\n  global_store_dwordx2 v1, v[22:23], s[16:17] offset:2048\n";
  EmuDevice dev({.target = "gfx942"});
  uint64_t pout = dev.alloc(2048 + 512);
  Kernargs ka;
  ka.u64(pout);
  auto code = assemble(kernel_text("gfx942", "gpridx", body, 0, 8), "gfx942");
  dev.launch(*dev.load(code)->function("gpridx"), {{1, 1, 1}, {64, 1, 1}}, ka.bytes);
  std::vector<uint32_t> out((2048 + 512) / 4);
  dev.copy_to_host(out.data(), pout, out.size() * 4);
  for (uint32_t l = 0; l < 64; ++l) {
    for (uint32_t r = 10; r < 16; ++r) {
      uint32_t want = 100 * r + l;
      if (r == 10 + idx)
        want = 7; // the DST-indexed v_mov
      if (r == 11 + idx && l == lane)
        want = 0; // the DST-indexed v_writelane
      EXPECT_EQ(out[l * 8 + (r - 10)], want) << "v" << r << " lane " << l << " idx " << idx;
    }
    EXPECT_EQ(out[512 + l * 2], 100 * (11 + idx) + l + l) << "SRC0-indexed read, lane " << l;
    uint32_t v12 = 10 + idx == 12 ? 7 : 1200 + l;
    if (11 + idx == 12 && l == lane)
      v12 = 0;
    EXPECT_EQ(out[512 + l * 2 + 1], v12) << "after s_set_gpr_idx_off, lane " << l;
  }
  EXPECT_TRUE(dev.reports().empty()) << all_reports(dev);
}

// s_bfm_b64 exec, K, 0 (topksoftmax's output mask): the low K bits set.
TEST(AiterSemantics, ScalarBitfieldMask64) {
  const uint32_t seed = std::random_device{}();
  const uint32_t k = 33 + seed % 30, shift = seed % 3;
  std::string body =
      "  s_load_dwordx2 s[16:17], s[0:1], 0x0\n  s_mov_b32 s20, " + std::to_string(k) +
      "\n  s_mov_b32 s21, " + std::to_string(shift) +
      "\n  s_bfm_b64 s[22:23], s20, s21\n  v_mov_b32 v4, s22\n  v_mov_b32 v5, s23\n"
      "  v_mov_b32 v3, 0\n  s_waitcnt lgkmcnt(0)\n  global_store_dwordx2 v3, v[4:5], s[16:17]\n";
  EmuDevice dev({.target = "gfx942"});
  uint64_t pout = dev.alloc(8);
  Kernargs ka;
  ka.u64(pout);
  auto code = assemble(kernel_text("gfx942", "bfm", body, 0, 8), "gfx942");
  dev.launch(*dev.load(code)->function("bfm"), {{1, 1, 1}, {64, 1, 1}}, ka.bytes);
  uint64_t got = 0;
  dev.copy_to_host(&got, pout, 8);
  uint64_t want = 0;
  for (uint32_t i = 0; i < k; ++i)
    want |= 1ull << (i + shift);
  EXPECT_EQ(got, want) << "k " << k << " shift " << shift;
}

// gfx950 v_permlane16_swap / v_permlane32_swap: vdst lane 32p+16+i <-> vsrc lane 32p+i; vdst lanes 32..63 <->
// vsrc lanes 0..31.
TEST(AiterSemantics, PermlaneSwap) {
  ISATUNE_SKIP_IF_LLVM_LACKS("gfx950");
  const uint32_t seed = std::random_device{}();
  for (int half : {16, 32}) {
    std::string op = half == 16 ? "v_permlane16_swap_b32" : "v_permlane32_swap_b32";
    std::string body =
        "  s_load_dwordx2 s[16:17], s[0:1], 0x0\n  v_and_b32 v0, 63, v0\n"
        "  v_add_u32 v1, " +
        std::to_string(seed % 1000) +
        ", v0\n  v_add_u32 v2, 5000, v0\n"
        "  s_nop 1\n  " +
        op +
        " v1, v2\n  s_nop 1\n  v_mov_b32 v4, v1\n  v_mov_b32 v5, v2\n"
        "  v_lshlrev_b32 v3, 3, v0\n  s_waitcnt lgkmcnt(0)\n  global_store_dwordx2 v3, v[4:5], s[16:17]\n";
    EmuDevice dev({.target = "gfx950"});
    uint64_t pout = dev.alloc(64 * 8);
    Kernargs ka;
    ka.u64(pout);
    auto code = assemble(kernel_text("gfx950", "swap", body, 0, 8), "gfx950");
    dev.launch(*dev.load(code)->function("swap"), {{1, 1, 1}, {64, 1, 1}}, ka.bytes);
    std::vector<uint32_t> out(128);
    dev.copy_to_host(out.data(), pout, 512);
    for (uint32_t l = 0; l < 64; ++l) {
      uint32_t d = seed % 1000 + l, s = 5000 + l; // before
      if (l & half)
        d = 5000 + (l - half); // vdst's odd half takes vsrc's even half
      else
        s = seed % 1000 + l + half; // vsrc's even half takes vdst's odd half
      EXPECT_EQ(out[2 * l], d) << op << " vdst lane " << l;
      EXPECT_EQ(out[2 * l + 1], s) << op << " vsrc lane " << l;
    }
    EXPECT_TRUE(dev.reports().empty()) << all_reports(dev);
  }
}
