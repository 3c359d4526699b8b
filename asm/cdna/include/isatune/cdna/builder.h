#pragma once
// Builds a Kernel instruction by instruction: register allocation with alignment, labels and branches,
// kernarg layout, LDS, workgroup size. Every instruction is checked against the catalogue for the target when
// it is emitted; finish() checks the kernel's limits.
//
//   Builder b(parse_target_id("gfx942"), "vadd");
//   uint32_t a_off = b.add_arg("a", 8, 8, ArgKind::global_buffer, "read_only");
//   Reg a = b.alloc_s(2);
//   b.s_load(a, b.kernarg_ptr(), a_off);
//   Label end = b.label("end");
//   b.s_cbranch("s_cbranch_execz", end);
//   b.bind(end);
//   b.s_endpgm();
//   Kernel k = b.finish();
#include <string>
#include <string_view>
#include <vector>

#include "isatune/cdna/allocator.h"
#include "isatune/cdna/kernel.h"

namespace isatune::cdna {

struct EntryOptions {
  bool kernarg_ptr = true;
  bool workgroup_id_x = true, workgroup_id_y = false, workgroup_id_z = false;
  uint32_t workitem_id_dims = 1; // 1..3: v0 holds the packed ids either way
};

class Builder {
public:
  Builder(TargetId target, std::string name, EntryOptions entry = {});

  const TargetInfo& info() const { return *kernel_.target.info; }
  Gfx gfx() const { return kernel_.target.info->gfx; }
  const Kernel& kernel() const { return kernel_; }

  // Entry registers.
  Reg kernarg_ptr() const;         // s[0:1]
  Reg workgroup_id(int dim) const; // the system SGPR for dimension 0..2 (must be enabled)
  Reg workitem_ids() const;        // v0: x = bits 9:0, y = 19:10, z = 29:20

  // Kernel arguments: appended at the next offset aligned to `align`; returns the offset.
  uint32_t add_arg(std::string name, uint32_t size, uint32_t align, ArgKind kind, std::string access = "");
  void set_lds_bytes(uint32_t bytes);
  void set_workgroup_size(uint32_t threads);
  FloatModes& float_modes() { return kernel_.float_modes; }

  // Registers.
  Reg alloc_v(uint8_t count = 1, const std::string& what = "") { return vgprs_.alloc(count, 1, what); }
  Reg alloc_s(uint8_t count = 1, const std::string& what = "") { return sgprs_.alloc(count, 1, what); }
  Reg alloc_a(uint8_t count = 1, const std::string& what = "") { return agprs_.alloc(count, 1, what); }
  Reg reserve(const Reg& r) { return allocator(r.file).reserve(r); }
  void free(const Reg& r) { allocator(r.file).free(r); }
  RegisterAllocator& allocator(RegFile f);

  // Labels: create, then bind where the target instruction goes.
  Label label(const std::string& name);
  void bind(Label l);

  // Any form of the catalogue by name (canonical or target spelling).
  const Instruction& emit(std::string_view form, std::vector<Operand> operands, Modifiers modifiers = {});

  // Typed helpers for common forms.
  const Instruction& s_load(Reg dst, Reg base, Operand offset); // picks s_load_dword{,x2,x4,x8,x16} by width
  const Instruction& s_waitcnt(std::optional<uint8_t> vmcnt, std::optional<uint8_t> lgkmcnt,
                               std::optional<uint8_t> expcnt = std::nullopt);
  const Instruction& s_nop(int count) { return emit("s_nop", {count}); }
  const Instruction& s_barrier() { return emit("s_barrier", {}); }
  const Instruction& s_endpgm() { return emit("s_endpgm", {}); }
  const Instruction& s_branch(Label l) { return emit("s_branch", {l}); }
  // cond: scc0, scc1, vccz, vccnz, execz, execnz
  const Instruction& s_cbranch(std::string_view cond, Label l);
  const Instruction& s_and_saveexec_b64(Reg dst, Operand src) {
    return emit("s_and_saveexec_b64", {dst, src});
  }
  const Instruction& s_mov(Reg dst, Operand src) {
    return emit(dst.count == 2 ? "s_mov_b64" : "s_mov_b32", {dst, src});
  }
  const Instruction& v_mov(Reg dst, Operand src) {
    return emit(dst.count == 2 ? "v_mov_b64" : "v_mov_b32", {dst, src});
  }
  // Global memory: saddr is an SGPR pair (vaddr 32-bit offset) or `off` (vaddr a 64-bit address).
  const Instruction& global_load(Reg dst, Reg vaddr, Operand saddr, int32_t offset = 0, Modifiers m = {});
  const Instruction& global_store(Reg vaddr, Reg data, Operand saddr, int32_t offset = 0, Modifiers m = {});
  const Instruction& buffer_load(Reg dst, Operand vaddr, Reg srsrc, Operand soffset, Modifiers m = {});
  const Instruction& buffer_store(Reg data, Operand vaddr, Reg srsrc, Operand soffset, Modifiers m = {});
  const Instruction& ds_read(Reg dst, Reg vaddr, uint16_t offset = 0);
  const Instruction& ds_write(Reg vaddr, Reg data, uint16_t offset = 0);
  const Instruction& mfma(std::string_view form, Reg d, Reg a, Reg b, Operand c, uint8_t cbsz = 0,
                          uint8_t abid = 0, uint8_t blgp = 0);
  const Instruction& dpp(std::string_view form, std::vector<Operand> operands, DppControl ctrl,
                         uint8_t row_mask = 0xf, uint8_t bank_mask = 0xf, bool bound_ctrl = false);

  // Checks labels and limits, sets register counts; the builder keeps a copy and can continue.
  Kernel finish();

private:
  Kernel kernel_;
  RegisterAllocator sgprs_, vgprs_, agprs_;
  std::vector<bool> bound_;
};

} // namespace isatune::cdna
