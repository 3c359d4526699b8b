#pragma once
// Internal to isatune_toolchain: MCInst templates for builder instructions, learned through LLVM's assembly
// parser, for the kernel fast path (kernel_assembler.cpp).
//
// An instruction's shape is everything that can change which MCInst the parser makes, apart from register
// numbers, constants within one value class and memory offsets: the form and target; per operand its kind,
// register file and width, which earlier operand it equals, the value class of a constant (inline or literal,
// sign; constants of small-range fields and floats are part of the shape); the modifiers, with offsets as
// classes (absent / zero / positive / negative). A shape is learned by printing the instruction twice with
// different probe registers and constants (same equalities, same classes), parsing both, and matching the two
// MCInsts operand by operand: an operand that is the same in both is fixed; one that differs must be the probe
// value of exactly one instruction operand (registers through McRegisterMap, constants as they are or as their
// low 32 bits); a symbol reference is the label. Anything else (different opcodes, an operand that differs
// but matches nothing, an instruction operand found nowhere, a parse error) leaves the shape unusable, and its
// instructions take the text path.
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include <llvm/MC/MCInst.h>

#include "isatune/cdna/instruction.h"
#include "llvm_mc_internal.h"
#include "mc_register_map.h"

namespace isatune::toolchain::detail {

// Where a value of the instruction goes in the template's MCInst.
struct McSubst {
  enum class Kind : uint8_t { reg, imm, imm_lo32, label };
  static constexpr uint8_t kOffset = 200, kOffset0 = 201, kOffset1 = 202; // sources beyond the operands
  Kind kind = Kind::reg;
  uint8_t source = 0;   // operand index, or kOffset / kOffset0 / kOffset1
  uint16_t operand = 0; // MCInst operand index
};

struct McTemplate {
  bool ok = false;
  std::string why;  // when !ok: what made the shape unusable
  llvm::MCInst inst; // probe A's MCInst; a label operand holds a placeholder
  std::vector<McSubst> subst;
};

// The learned shapes of one target (ISA + features); shared by all threads.
class McTemplates {
public:
  explicit McTemplates(const McTarget& target);
  ~McTemplates();

  // The shape key of `inst`. False (with the reason) when the fast path never handles the shape (operands
  // that overlap without being equal).
  static bool shape_key(const cdna::Instruction& inst, std::string& key, std::string* why);

  // Lookups under one shared lock (templates are never removed: the pointers stay valid after it ends).
  class Reader {
  public:
    explicit Reader(const McTemplates& t);
    ~Reader();
    const McTemplate* find(const std::string& key) const; // nullptr when not learned yet

  private:
    const McTemplates& t_;
  };
  // Learns the shapes of `insts` (keys[i] is the key of insts[i]; duplicates allowed) with one parser run.
  // Returns how many shapes were new.
  size_t learn(const std::vector<const cdna::Instruction*>& insts, const std::vector<std::string>& keys);

  const McRegisterMap& registers() const { return regs_; }
  size_t size() const;

private:
  struct Impl;
  const McTarget& target_;
  McRegisterMap regs_;
  std::unique_ptr<Impl> impl_;
};

// The templates for a target, made on first use (thread-safe).
McTemplates& mc_templates(const ResolvedTarget& target, const McTarget& objects);
// Shapes learned in this process, all targets.
size_t mc_template_count();

} // namespace isatune::toolchain::detail
