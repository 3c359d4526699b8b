#include <algorithm>

#include "families.h"
#include "isatune/error.h"

namespace isatune::gen {

std::vector<const Generator*> all_generators() {
  // Built once, in a fixed order; generators are stateless, so sharing them across threads is safe.
  static const std::vector<std::unique_ptr<Generator>> owned = [] {
    std::vector<std::unique_ptr<Generator>> v;
    // FAMILIES: each family adds its factory here.
    v.push_back(make_gemm_generator());
    v.push_back(make_softmax_generator());
    v.push_back(make_rmsnorm_generator());
    v.push_back(make_layernorm_generator());
    v.push_back(make_attention_generator());
    v.push_back(make_selftest_generator()); // checks the tuner's isolation: hangs, faults, wrong answers
    return v;
  }();
  std::vector<const Generator*> out;
  for (const auto& g : owned) out.push_back(g.get());
  return out;
}

const Generator& find_generator(std::string_view name) {
  std::string known;
  for (const Generator* g : all_generators()) {
    if (g->name() == name) return *g;
    known += (known.empty() ? "" : ", ") + g->name();
  }
  throw InputError("unknown generator '" + std::string(name) + "' (generators: " + known + ")");
}

} // namespace isatune::gen
