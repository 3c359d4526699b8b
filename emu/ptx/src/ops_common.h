#pragma once
// Helpers shared by the instruction handlers: typed lane loops over operands.
#include <bit>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <type_traits>

#include "ops.h"

namespace isatune::emu::ptx {

template <class T> inline T as(uint64_t v) {
  if constexpr (std::is_same_v<T, float>)
    return std::bit_cast<float>(uint32_t(v));
  else if constexpr (std::is_same_v<T, double>)
    return std::bit_cast<double>(v);
  else
    return T(v);
}
template <class T> inline uint64_t bits_of(T v) {
  if constexpr (std::is_same_v<T, float>)
    return std::bit_cast<uint32_t>(v);
  else if constexpr (std::is_same_v<T, double>)
    return std::bit_cast<uint64_t>(v);
  else if constexpr (std::is_same_v<T, bool>)
    return v ? 1 : 0;
  else
    return uint64_t(std::make_unsigned_t<T>(v));
}

// d = f(a, b) over the active lanes, operands read as T.
template <class T, class F> inline void lanes2(Warp& w, const Inst& in, uint32_t act, F f) {
  const Opnd &d = in.ops[0], &a = in.ops[1], &b = in.ops[2];
  for_lanes(act, [&](unsigned l) { write(w, d, l, bits_of(f(as<T>(read(w, a, l)), as<T>(read(w, b, l))))); });
}
template <class T, class F> inline void lanes1(Warp& w, const Inst& in, uint32_t act, F f) {
  const Opnd &d = in.ops[0], &a = in.ops[1];
  for_lanes(act, [&](unsigned l) { write(w, d, l, bits_of(f(as<T>(read(w, a, l))))); });
}
template <class T, class F> inline void lanes3(Warp& w, const Inst& in, uint32_t act, F f) {
  const Opnd &d = in.ops[0], &a = in.ops[1], &b = in.ops[2], &c = in.ops[3];
  for_lanes(act, [&](unsigned l) {
    write(w, d, l, bits_of(f(as<T>(read(w, a, l)), as<T>(read(w, b, l)), as<T>(read(w, c, l)))));
  });
}

// Calls F::template run<T> with the C++ type of an integer PTX type (bit types as unsigned).
template <template <class> class H> inline Handler pick_int(Ty t) {
  switch (t) {
  case Ty::u8:
  case Ty::b8:
    return &H<uint8_t>::run;
  case Ty::s8:
    return &H<int8_t>::run;
  case Ty::u16:
  case Ty::b16:
    return &H<uint16_t>::run;
  case Ty::s16:
    return &H<int16_t>::run;
  case Ty::u32:
  case Ty::b32:
    return &H<uint32_t>::run;
  case Ty::s32:
    return &H<int32_t>::run;
  case Ty::u64:
  case Ty::b64:
    return &H<uint64_t>::run;
  case Ty::s64:
    return &H<int64_t>::run;
  default:
    return nullptr;
  }
}

} // namespace isatune::emu::ptx
