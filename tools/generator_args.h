#pragma once
// The options every generator command shares (`gen`, `space`, `run KERNEL`): target, signature, parameters,
// problem; and turning them into a VariantSpec.
#include <CLI/CLI.hpp>

#include <string>
#include <vector>

#include "isatune/gen/generator.h"
#include "isatune/tune/variant_runner.h"

namespace isatune::cli {

struct GeneratorArgs {
  std::string target = "gfx942";
  std::vector<std::string> sig;     // k=v words
  std::vector<std::string> params;  // k=v words
  std::vector<std::string> problem; // k=v words
};

void add_target_and_signature_options(CLI::App& cmd, GeneratorArgs& args);
void add_param_option(CLI::App& cmd, GeneratorArgs& args);
void add_problem_option(CLI::App& cmd, GeneratorArgs& args, bool required);

// The ISA of --target (a bare ISA or a full target id), checked against the generator's targets.
std::string generator_isa(const gen::Generator& g, const std::string& target);
// The variant the options name: generator, ISA, signature and parameters, each checked with a clear error.
tune::VariantSpec variant_spec(const std::string& kernel, const GeneratorArgs& args);

} // namespace isatune::cli
