#pragma once
// The generator families, one factory each (defined in generators/<family>/).
#include <memory>

#include "isatune/gen/generator.h"

namespace isatune::gen {

std::unique_ptr<Generator> make_gemm_generator();      // generators/gemm
std::unique_ptr<Generator> make_softmax_generator();   // generators/rows
std::unique_ptr<Generator> make_rmsnorm_generator();   // generators/rows
std::unique_ptr<Generator> make_layernorm_generator(); // generators/rows
std::unique_ptr<Generator> make_attention_generator(); // generators/attention
std::unique_ptr<Generator> make_selftest_generator();  // generators/selftest

} // namespace isatune::gen
