#include "generator_args.h"

#include "isatune/cdna/target.h"
#include "isatune/error.h"

namespace isatune::cli {

void add_target_and_signature_options(CLI::App& cmd, GeneratorArgs& args) {
  cmd.add_option("--target", args.target, "Target ISA or target id (default gfx942)");
  cmd.add_option("--sig", args.sig,
                 "Signature fields, k=v[,k=v...] (data types, layout; see `isatune space KERNEL`); unset fields "
                 "take their defaults");
}

void add_param_option(CLI::App& cmd, GeneratorArgs& args) {
  cmd.add_option("--param", args.params,
                 "Tuning parameters, k=v[,k=v...]; unset ones take the first valid configuration that agrees with "
                 "the given ones");
}

void add_problem_option(CLI::App& cmd, GeneratorArgs& args, bool required) {
  auto* o = cmd.add_option("--problem", args.problem, "Problem sizes, k=v[,k=v...], e.g. M=128,N=96,K=64");
  if (required) o->required();
}

std::string generator_isa(const gen::Generator& g, const std::string& target) {
  std::string isa = target;
  if (target.find("gfx") != std::string::npos) isa = cdna::parse_target_id(target).isa();
  std::string known;
  for (const auto& t : g.targets()) {
    if (t == isa) return isa;
    known += (known.empty() ? "" : ", ") + t;
  }
  throw InputError("generator " + g.name() + " has no target " + target + " (targets: " + known + ")");
}

tune::VariantSpec variant_spec(const std::string& kernel, const GeneratorArgs& args) {
  tune::VariantSpec spec;
  spec.generator = &gen::find_generator(kernel);
  spec.isa = generator_isa(*spec.generator, args.target);
  spec.sig = gen::parse_signature(*spec.generator, args.sig);
  spec.params = gen::parse_params(spec.generator->space(spec.isa, spec.sig), args.params);
  return spec;
}

} // namespace isatune::cli
