#include "isatune/cdna/target.h"

#include "isatune/error.h"

namespace isatune::cdna {

const std::vector<TargetInfo>& all_targets() {
  static const std::vector<TargetInfo> targets = {
      {Gfx::gfx90a, "gfx90a", "MI250X, MI250, MI210",
       0x3f,        110,      65536,
       512,         512,      256,
       256,         8,        102,
       8,           4,        64,
       1024,        13,       false,
       1.7,         1.6,      1024},
      {Gfx::gfx942, "gfx942", "MI300X, MI325X, MI300A",
       0x4c,        304,      65536,
       512,         512,      256,
       256,         8,        102,
       8,           4,        64,
       1024,        17,       true,
       2.1,         5.3,      2048},
      {Gfx::gfx950, "gfx950", "MI355X, MI350X",
       0x4f,        256,      163840,
       1280,        512,      256,
       256,         8,        102,
       8,           4,        64,
       1024,        20,       true,
       2.4,         8.0,      4096},
  };
  return targets;
}

const TargetInfo* find_target(std::string_view isa) {
  for (const auto& t : all_targets())
    if (t.name == isa)
      return &t;
  return nullptr;
}

static std::string known_names() {
  std::string s;
  for (const auto& t : all_targets())
    s += (s.empty() ? "" : ", ") + std::string(t.name);
  return s;
}

TargetId parse_target_id(std::string_view text) {
  std::string_view rest = text;
  constexpr std::string_view prefix = "amdgcn-amd-amdhsa--";
  if (rest.substr(0, prefix.size()) == prefix)
    rest.remove_prefix(prefix.size());
  auto colon = rest.find(':');
  std::string_view isa = rest.substr(0, colon);
  TargetId id;
  id.info = find_target(isa);
  if (!id.info)
    throw InputError("unknown AMD target '" + std::string(isa) + "' in '" + std::string(text) +
                     "' (known: " + known_names() + ")");
  while (colon != std::string_view::npos) {
    rest.remove_prefix(colon + 1);
    colon = rest.find(':');
    std::string_view feat = rest.substr(0, colon);
    if (feat.size() < 2 || (feat.back() != '+' && feat.back() != '-'))
      throw InputError("bad target feature '" + std::string(feat) + "' in '" + std::string(text) +
                       "' (expected sramecc+, sramecc-, xnack+ or xnack-)");
    FeatureState state = feat.back() == '+' ? FeatureState::on : FeatureState::off;
    std::string_view name = feat.substr(0, feat.size() - 1);
    if (name == "sramecc")
      id.sramecc = state;
    else if (name == "xnack")
      id.xnack = state;
    else
      throw InputError("unknown target feature '" + std::string(name) + "' in '" + std::string(text) + "'");
  }
  return id;
}

std::string TargetId::str() const {
  std::string s = "amdgcn-amd-amdhsa--" + isa();
  if (sramecc != FeatureState::any)
    s += sramecc == FeatureState::on ? ":sramecc+" : ":sramecc-";
  if (xnack != FeatureState::any)
    s += xnack == FeatureState::on ? ":xnack+" : ":xnack-";
  return s;
}

std::string TargetId::llvm_features() const {
  std::string s;
  auto add = [&](const char* name, FeatureState st) {
    if (st == FeatureState::any)
      return;
    if (!s.empty())
      s += ",";
    s += (st == FeatureState::on ? "+" : "-");
    s += name;
  };
  add("sramecc", sramecc);
  add("xnack", xnack);
  return s;
}

void check_llvm_knows(const TargetInfo& target, unsigned llvm_major, std::string_view llvm_version) {
  if (llvm_major >= target.min_llvm_major)
    return;
  throw InputError(std::string(target.name) + " needs LLVM >= " + std::to_string(target.min_llvm_major) +
                   "; this build uses LLVM " + std::string(llvm_version));
}

unsigned llvm_major_of(std::string_view v) {
  size_t i = 0;
  while (i < v.size() && !(v[i] >= '0' && v[i] <= '9'))
    ++i;
  unsigned m = 0;
  while (i < v.size() && v[i] >= '0' && v[i] <= '9')
    m = m * 10 + static_cast<unsigned>(v[i++] - '0');
  return m;
}

uint32_t extra_sgprs(const TargetId& target) {
  if (target.info->architected_flat_scratch)
    return 6;
  // gfx90a: VCC always; XNACK_MASK when xnack may be on. Flat scratch (kernels using scratch) is not
  // modelled here: our kernels use none.
  return target.xnack == FeatureState::off ? 2 : 4;
}

} // namespace isatune::cdna
