#pragma once
// A buffer resource (V#, four SGPRs) and the MUBUF address and range check it implies, per lane and per
// dword.
//
// Fields (gfx9/CDNA V#): word0-1 base[47:0], stride[61:48], cache_swizzle[62], swizzle_en[63]; word2
// num_records; word3 dst_sel[11:0], num_format[14:12], data_format[18:15], element_size[20:19],
// index_stride[22:21], add_tid_enable[23].
//
// Address (CDNA3 ISA, "Buffer addressing"; the same formulas in gem5's Vega model, Inst_MUBUF::calcAddr):
//   index  = (IDXEN ? vgpr_index : 0) + (ADD_TID_ENABLE ? lane : 0)
//   offset = (OFFEN ? vgpr_offset : 0) + inst_offset
//   linear:   buffer_offset = offset + stride * index
//   swizzled: buffer_offset = (index / IS * stride + offset / ES * ES) * IS + index % IS * ES + offset % ES,
//             IS = 8 << index_stride, ES = 2 << element_size
//   address = base + soffset + buffer_offset
// ADD_TID_ENABLE widens the stride with data_format: stride = data_format << 14 | stride.
//
// Range check (CDNA3 ISA "Range checking"; num_records is in bytes for a raw buffer and in records for a
// structured one, as Mesa's radeonsi documents for GFX9: "for VMEM and IDXEN == 0 or STRIDE == 0 it is in
// bytes; for VMEM and IDXEN == 1 and STRIDE != 0 it is in units of STRIDE"):
//   raw buffer (stride == 0, or IDXEN == 0 and neither ADD_TID nor swizzle): out of range iff
//     offset >= num_records, per dword for x2/x3/x4 (dword k at offset + 4k). A nonzero stride alone does not
//     make a buffer structured: AITER's descriptors carry stride 4 with OFFEN only.
//   structured buffer: out of range iff index >= num_records, and for a swizzled one also iff offset >=
//   stride.
// soffset is not part of the check ("soffset ... excluded from bounds checking and swizzling", LLVM
// SIISelLowering.h, splitBufferOffsets). Out-of-range loads return 0, out-of-range stores write nothing.
#include <cstdint>

namespace isatune::emu {

struct BufferResource {
  uint64_t base = 0;
  uint32_t stride = 0; // bytes; widened by data_format when add_tid
  uint32_t num_records = 0;
  bool swizzle = false;
  bool add_tid = false;
  uint32_t index_stride = 8; // swizzle: 8, 16, 32 or 64 records
  uint32_t element_size = 2; // swizzle: 2, 4, 8 or 16 bytes

  static BufferResource from_words(const uint32_t* w);
  // Whether an access with this IDXEN is range-checked by index (structured) rather than by byte offset
  // (raw).
  bool structured(bool idxen) const { return stride != 0 && (idxen || add_tid || swizzle); }

  struct Access {
    uint64_t address = 0; // of this dword, soffset included
    bool in_range = false;
  };
  // One lane's dword `dword` (0 for sub-dword accesses) of an access with the given index and offset (index
  // and offset as defined above, before ADD_TID: the lane is added here).
  Access at(bool idxen, uint32_t index, uint64_t offset, uint32_t soffset, int lane, uint32_t dword) const;
};

} // namespace isatune::emu
