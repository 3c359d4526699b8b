#include "buffer_resource.h"

namespace isatune::emu {

BufferResource BufferResource::from_words(const uint32_t* w) {
  BufferResource r;
  r.base = uint64_t(w[0]) | (uint64_t(w[1] & 0xffff) << 32);
  r.stride = (w[1] >> 16) & 0x3fff;
  r.swizzle = (w[1] >> 31) & 1;
  r.num_records = w[2];
  const uint32_t data_format = (w[3] >> 15) & 0xf;
  r.element_size = 2u << ((w[3] >> 19) & 3);
  r.index_stride = 8u << ((w[3] >> 21) & 3);
  r.add_tid = (w[3] >> 23) & 1;
  if (r.add_tid)
    r.stride |= data_format << 14;
  return r;
}

BufferResource::Access BufferResource::at(bool idxen, uint32_t index, uint64_t offset, uint32_t soffset,
                                          int lane, uint32_t dword) const {
  const uint64_t idx = uint64_t(idxen ? index : 0) + (add_tid ? uint64_t(lane) : 0);
  const uint64_t off = offset + 4ull * dword;
  uint64_t buffer_offset;
  if (swizzle) {
    const uint64_t is = index_stride, es = element_size;
    buffer_offset = (idx / is * stride + off / es * es) * is + idx % is * es + off % es;
  } else {
    buffer_offset = off + uint64_t(stride) * idx;
  }
  Access a;
  a.address = base + soffset + buffer_offset;
  if (structured(idxen))
    a.in_range = idx < num_records && !(swizzle && off >= stride);
  else
    a.in_range = off < num_records;
  return a;
}

} // namespace isatune::emu
