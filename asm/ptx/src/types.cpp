// Type and space names.
#include "isatune/ptx/types.h"

namespace isatune::ptx {

const char* type_name(Type t) {
  switch (t) {
  case Type::pred: return "pred";
  case Type::b8: return "b8";
  case Type::b16: return "b16";
  case Type::b32: return "b32";
  case Type::b64: return "b64";
  case Type::u8: return "u8";
  case Type::u16: return "u16";
  case Type::u32: return "u32";
  case Type::u64: return "u64";
  case Type::s8: return "s8";
  case Type::s16: return "s16";
  case Type::s32: return "s32";
  case Type::s64: return "s64";
  case Type::f16: return "f16";
  case Type::f16x2: return "f16x2";
  case Type::bf16: return "bf16";
  case Type::bf16x2: return "bf16x2";
  case Type::f32: return "f32";
  case Type::f64: return "f64";
  }
  return "b32";
}

uint32_t type_bits(Type t) {
  switch (t) {
  case Type::pred: return 1;
  case Type::b8: case Type::u8: case Type::s8: return 8;
  case Type::b16: case Type::u16: case Type::s16: case Type::f16: case Type::bf16: return 16;
  case Type::b64: case Type::u64: case Type::s64: case Type::f64: return 64;
  default: return 32;
  }
}

RegClass reg_class_for(Type t) {
  switch (t) {
  case Type::pred: return RegClass::pred;
  case Type::b8: case Type::u8: case Type::s8:
  case Type::b16: case Type::u16: case Type::s16: case Type::f16: case Type::bf16: return RegClass::b16;
  case Type::b64: case Type::u64: case Type::s64: case Type::f64: return RegClass::b64;
  case Type::f32: return RegClass::f32;
  default: return RegClass::b32;
  }
}

const char* space_name(Space s) {
  switch (s) {
  case Space::global: return "global";
  case Space::shared: return "shared";
  case Space::param: return "param";
  case Space::local: return "local";
  }
  return "global";
}

} // namespace isatune::ptx
