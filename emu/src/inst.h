#pragma once
// A decoded instruction: what the executor needs, taken once from LLVM's MCInst at load time, so execution
// never touches LLVM. Registers are numbered in one space for the scoreboard and hazard checks:
//   0..127    scalar operand encodings (s0..s101, vcc 106/107, m0 124, exec 126/127)
//   128..383  v0..v255; 384..639 a0..a255 (the AGPRs)
//   640       SCC
#include <cstdint>
#include <string>
#include <vector>

namespace isatune::emu {

struct Wave;
struct Inst;
using Handler = void (*)(Wave&, const Inst&);

constexpr uint16_t kVgprBase = 128;
constexpr uint16_t kAgprBase = 384;
constexpr uint16_t kScc = 640;
constexpr uint16_t kNumRegs = 641;
constexpr uint16_t kVcc = 106, kM0 = 124, kExec = 126;

enum class OpKind : uint8_t { none, sgpr, vgpr, imm, bad };

// The sext modifier of an SDWA integer source as LLVM's disassembler gives it: bit 4 since LLVM 21, where
// SISrcMods::SEXT got its own value (llvm-project#147964); before, it shared bit 0 with NEG, which on an integer
// source means sext (LLVM 19 decodes `sext(v10)` as 1).
#if ISATUNE_LLVM_MAJOR >= 21
constexpr uint8_t kSextModifier = 16;
#else
constexpr uint8_t kSextModifier = 1;
#endif

struct Opnd {
  OpKind kind = OpKind::none;
  uint8_t width = 1;  // dwords
  uint8_t mods = 0;   // VOP3 source modifiers: 1 neg, 2 abs (VOP3P: 1 neg_lo, 2 neg_hi, 4 op_sel, 8 op_sel_hi);
                      // SDWA integer sources: kSextModifier
  uint16_t reg = 0;   // sgpr: encoding index; vgpr: 0..511 (a0 = 256)
  uint64_t imm = 0;   // imm: the value (inline constants arrive already expanded)
  std::string bad_name; // kind bad: the LLVM register name that is not modelled

  uint16_t unified() const { return kind == OpKind::sgpr ? reg : uint16_t(kVgprBase + reg); }
};

// Instruction classes for counters, hazards and the cost model.
enum class Cat : uint8_t { salu, smem, branch, waitcnt, barrier, nop, endpgm, valu, trans, mfma, vmem_load,
                           vmem_store, flat_load, flat_store, ds, other };

struct RegRange {
  uint16_t first = 0, count = 0;
  bool overlaps(const RegRange& o) const { return count && o.count && first < o.first + o.count && o.first < first + count; }
  bool same(const RegRange& o) const { return first == o.first && count == o.count; }
};

struct MfmaShape;

struct Inst {
  Handler fn = nullptr;
  uint32_t addr = 0;
  uint8_t size = 0;
  Cat cat = Cat::other;
  bool e64 = false, dpp = false, sdwa = false, saddr = false;
  bool lane_op = false;      // v_readlane / v_readfirstlane / v_writelane
  bool writes_exec_valu = false;
  bool dot = false;
  bool accvgpr = false;
  uint8_t buf_mode = 0;      // MUBUF: 1 offen, 2 idxen, 3 both, 0 offset only
  uint8_t ndst = 0, nsrc = 0, nimm = 0;
  Opnd dst[2];
  Opnd src[5];
  int64_t imm[10] = {};
  int32_t target = -1;       // branches: index of the destination instruction
  const MfmaShape* mfma = nullptr;
  uint8_t passes = 0;        // MFMA passes on this target
  bool xdl = false;          // MFMA counted as XDL on this target
  bool mfma_blocks_valu = false; // f32/f64 MFMA: does not co-execute with VALU (timing model)
  bool setprio = false;      // s_setprio (timing model: issue priority)
  uint32_t flops = 0;        // per active lane (VALU) or per wave (MFMA), for achieved FLOP/s
  // Hazard view, in the unified register space.
  std::vector<RegRange> reads, writes;
  std::vector<RegRange> vwrites, swrites; // writes split: VGPR/AGPR, SGPR/VCC (not EXEC)
  RegRange mfma_a, mfma_b, mfma_c, store_data;
  std::string name;          // base name: V_ADD_F32, GLOBAL_LOAD_DWORD, ...
  std::string text;          // LLVM's disassembly
};

struct Program {
  std::vector<Inst> insts;
  std::vector<int32_t> index_of_addr; // byte address / 4 -> instruction index, -1 inside an instruction
  int32_t at(uint64_t addr) const {
    if (addr % 4 || addr / 4 >= index_of_addr.size()) return -1;
    return index_of_addr[addr / 4];
  }
};

} // namespace isatune::emu
