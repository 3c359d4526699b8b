// The fixed vocabularies of the parser: the instruction mnemonics it accepts and the fundamental types.
#include <algorithm>
#include <iterator>
#include <vector>

#include "parser_impl.h"

namespace isatune::ptx::detail {

namespace {

// Sorted, for a binary search. The covered instruction set: scalar, half/bf16 x2, bit, compare, data
// movement, atomics, warp collectives, barriers, control flow, sm_80 matrix and async copies, sm_90 Hopper
// (wgmma, TMA, mbarrier, clusters, tensormap), cache policies. multimem, tcgen05, textures and surfaces are
// not covered.
// clang-format off
constexpr std::string_view kMnemonics[] = {
    "abs", "activemask", "add", "addc", "and", "applypriority", "atom", "bar", "barrier", "bfe",
    "bfi", "bfind", "bmsk", "bra", "brev", "brkpt", "call", "clz", "cnot", "copysign",
    "cos", "cp", "createpolicy", "cvt", "cvta", "discard", "div", "dp2a", "dp4a", "elect",
    "ex2", "exit", "fence", "fma", "fns", "getctarank", "griddepcontrol", "isspacep", "ld", "ldmatrix",
    "ldu", "lg2", "lop3", "mad", "mad24", "madc", "mapa", "match", "max", "mbarrier",
    "membar", "min", "mma", "mov", "mul", "mul24", "nanosleep", "neg", "not", "or",
    "pmevent", "popc", "prefetch", "prefetchu", "prmt", "rcp", "red", "redux", "rem", "ret",
    "rsqrt", "sad", "selp", "set", "setmaxnreg", "setp", "shf", "shfl", "shl", "shr",
    "sin", "slct", "sqrt", "st", "stmatrix", "sub", "subc", "szext", "tanh", "tensormap",
    "testp", "trap", "vote", "wgmma", "xor",
};
// clang-format on

struct TypeSize {
  std::string_view name;
  int bytes;
};
// clang-format off
constexpr TypeSize kTypes[] = {
    {"b8", 1}, {"u8", 1}, {"s8", 1}, {"b16", 2}, {"u16", 2}, {"s16", 2}, {"f16", 2}, {"bf16", 2},
    {"b32", 4}, {"u32", 4}, {"s32", 4}, {"f32", 4}, {"f16x2", 4}, {"bf16x2", 4}, {"tf32", 4}, {"b64", 8},
    {"u64", 8}, {"s64", 8}, {"f64", 8}, {"b128", 16}, {"pred", 0},
};
// clang-format on

// Operand counts that do not depend on the qualifiers (a `d|p` pair counts as one operand). Mnemonics not
// listed take any number: their forms vary (ld with a cache hint, setp with a combining predicate, ...).
struct Arity {
  std::string_view name;
  uint8_t min, max;
};
// clang-format off
constexpr Arity kArity[] = {
    {"abs", 2, 2}, {"activemask", 1, 1}, {"add", 3, 3}, {"addc", 3, 3}, {"and", 3, 3}, {"bfe", 4, 4},
    {"bfi", 5, 5}, {"bfind", 2, 2}, {"bra", 1, 1}, {"brev", 2, 2}, {"brkpt", 0, 0}, {"clz", 2, 2},
    {"cnot", 2, 2}, {"copysign", 3, 3}, {"cos", 2, 2}, {"cvta", 2, 2}, {"div", 3, 3}, {"ex2", 2, 2},
    {"exit", 0, 0}, {"fma", 4, 4}, {"lg2", 2, 2}, {"lop3", 5, 6}, {"mad", 4, 4}, {"mad24", 4, 4},
    {"madc", 4, 4}, {"max", 3, 4}, {"min", 3, 4}, {"mov", 2, 2}, {"mul", 3, 3}, {"mul24", 3, 3},
    {"neg", 2, 2}, {"not", 2, 2}, {"or", 3, 3}, {"popc", 2, 2}, {"prmt", 4, 4}, {"rcp", 2, 2},
    {"rem", 3, 3}, {"ret", 0, 0}, {"rsqrt", 2, 2}, {"sad", 4, 4}, {"selp", 4, 4}, {"shf", 4, 4},
    {"shl", 3, 3}, {"shr", 3, 3}, {"sin", 2, 2}, {"slct", 4, 4}, {"sqrt", 2, 2}, {"sub", 3, 3},
    {"subc", 3, 3}, {"tanh", 2, 2}, {"testp", 2, 2}, {"trap", 0, 0}, {"xor", 3, 3},
};
// clang-format on

} // namespace

std::pair<int, int> operand_count(std::string_view m) {
  for (const Arity& a : kArity)
    if (a.name == m)
      return {a.min, a.max};
  return {0, 255};
}

bool known_mnemonic(std::string_view m) {
  static const std::vector<std::string_view> sorted = [] {
    std::vector<std::string_view> v(std::begin(kMnemonics), std::end(kMnemonics));
    std::sort(v.begin(), v.end());
    v.erase(std::unique(v.begin(), v.end()), v.end());
    return v;
  }();
  return std::binary_search(sorted.begin(), sorted.end(), m);
}

int type_bytes(std::string_view type) {
  for (const TypeSize& t : kTypes)
    if (t.name == type)
      return t.bytes;
  return -1;
}

} // namespace isatune::ptx::detail
