#pragma once
// Pieces shared by the sm_90a (wgmma + TMA + mbarrier) kernels of several families
// (gemm/gemm_sm90a_kernel.cpp, attention/attention_sm90a.cpp): the 128B-swizzle wgmma descriptor, the
// mbarrier parity wait, the stage ring, the 1024-aligned dynamic shared base, the setmaxnreg split rules, and
// 128B-swizzled TMA tensor maps. Instruction facts: shared/notes/ptx.md section 4.
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "isatune/gen/generator.h"
#include "isatune/ptx/kernel.h"

namespace isatune::gen::sm90a {

// 64-bit wgmma descriptor of a 128B-swizzled operand at shared address `addr` (start address, LBO and SBO
// in 16-byte units, layout type 1 = 128B swizzle).
ptx::Reg descriptor_128b(ptx::Kernel& k, ptx::Reg addr, uint32_t lbo, uint32_t sbo);

// Spins on mbarrier.try_wait.parity [bar + offset] until the phase with `parity` has completed.
void wait_parity(ptx::Kernel& k, ptx::Reg bar, uint32_t offset, ptx::Operand parity);

// The next slot of a ring of `stages`: stage + 1, wrapping to 0 and flipping the phase bit.
void advance_ring(ptx::Kernel& k, ptx::Reg stage, ptx::Reg phase, int stages);

// The dynamic shared variable `symbol`'s address rounded up to the 1024-byte swizzle repeat (the declared
// alignment of a dynamic buffer is not assured; callers reserve 1024 bytes of slack).
ptx::Reg aligned_dynamic_base(ptx::Kernel& k, const std::string& symbol);

// "40/232" -> {40, 232}; InputError naming `who` and the text otherwise.
std::pair<int, int> parse_reg_split(const std::string& text, const std::string& who);
// The entry .maxnreg of a CTA of `threads`: at most 168, and threads * regs <= 65536.
int entry_registers(int threads);
// "" when producer/consumer setmaxnreg counts are valid for `consumers` consumer warpgroups beside one
// producer warpgroup (multiples of 8 in 24..256, producer <= entry <= consumer, 128 * (p + c * n) <= 65536).
std::string reg_split_invalid(int producer, int consumer, int consumers, int entry_regs);

// A tiled TMA map of `rank` dimensions (innermost first, strides of dimensions 1.. in bytes) with a box whose
// inner extent is 128 bytes, 128B swizzle, out-of-bound elements zero.
TensorMapTiledArgs tma_map_128b(TensorMapDataType type, uint64_t address, const std::vector<uint64_t>& dims,
                                const std::vector<uint64_t>& strides_bytes, const std::vector<uint32_t>& box);

} // namespace isatune::gen::sm90a
