// `isatune space [KERNEL] --target T [--sig ...] [--json] [--list N]`: a generator's tuning space for a target
// and signature: signature and problem schemas, parameters with their values, constraints, and the numbers of
// points (Cartesian and valid). Without KERNEL, lists the generators.
#include <nlohmann/json.hpp>

#include <iostream>

#include "commands.h"
#include "exit_codes.h"
#include "generator_args.h"
#include "table.h"

namespace isatune::cli {

namespace {

struct SpaceOptions {
  std::string kernel;
  GeneratorArgs args;
  size_t list = 0;
  bool json = false;
};

std::string join(const std::vector<std::string>& v, const char* sep = ", ") {
  std::string s;
  for (const auto& x : v) s += (s.empty() ? "" : sep) + x;
  return s;
}

int list_generators(bool json) {
  nlohmann::json j = nlohmann::json::array();
  Table t({"generator", "targets", "description"});
  for (const gen::Generator* g : gen::all_generators()) {
    j.push_back({{"name", g->name()}, {"targets", g->targets()}, {"description", g->description()}});
    t.add({g->name(), join(g->targets(), " "), g->description()});
  }
  if (json) std::cout << j.dump(2) << "\n";
  else std::cout << t.str();
  return kExitOk;
}

int run_space(const SpaceOptions& opt) {
  if (opt.kernel.empty()) return list_generators(opt.json);
  const gen::Generator& g = gen::find_generator(opt.kernel);
  const std::string isa = generator_isa(g, opt.args.target);
  const gen::Signature sig = gen::parse_signature(g, opt.args.sig);
  const gen::Space space = g.space(isa, sig);
  const auto constraints = g.constraint_descriptions(isa, sig);

  if (opt.json) {
    nlohmann::json j = {{"generator", g.name()}, {"target", isa}, {"signature", sig}};
    nlohmann::json schema = nlohmann::json::array();
    for (const auto& f : g.signature_schema())
      schema.push_back({{"name", f.name}, {"values", f.values}, {"default", f.values.front()}, {"help", f.help}});
    j["signature_schema"] = schema;
    nlohmann::json problem = nlohmann::json::array();
    for (const auto& f : g.problem_schema())
      problem.push_back({{"name", f.name}, {"min", f.min}, {"max", f.max}, {"required", f.required}, {"help", f.help}});
    j["problem_schema"] = problem;
    nlohmann::json params = nlohmann::json::array();
    for (const auto& p : space.parameters()) {
      nlohmann::json values = nlohmann::json::array();
      for (const auto& v : p.values) values.push_back(v.is_number ? nlohmann::json(v.number) : nlohmann::json(v.text));
      params.push_back({{"name", p.name}, {"values", values}, {"ordered", p.ordered}});
    }
    j["parameters"] = params;
    j["constraints"] = constraints;
    j["cartesian_size"] = space.cartesian_size();
    j["size"] = space.size();
    if (opt.list) {
      nlohmann::json configs = nlohmann::json::array();
      for (size_t i = 0; i < std::min(opt.list, space.size()); ++i) configs.push_back(gen::format(gen::params_of(space, space.valid_config(i))));
      j["first_configurations"] = configs;
    }
    std::cout << j.dump(2) << "\n";
    return kExitOk;
  }
  std::cout << g.name() << " on " << isa << ": " << g.description() << "\n\nsignature (--sig; first value is the default)\n";
  Table st({"field", "values", "now", "meaning"});
  for (const auto& f : g.signature_schema()) st.add({f.name, join(f.values, " "), sig.at(f.name), f.help});
  std::cout << st.str() << "\nproblem (--problem)\n";
  Table pt({"dimension", "range", "required", "meaning"});
  for (const auto& f : g.problem_schema())
    pt.add({f.name, std::to_string(f.min) + ".." + std::to_string(f.max), f.required ? "yes" : "no", f.help});
  std::cout << pt.str() << "\nparameters (--param)\n";
  Table t({"parameter", "kind", "values"});
  for (const auto& p : space.parameters()) {
    std::vector<std::string> values;
    for (const auto& v : p.values) values.push_back(v.str());
    t.add({p.name, p.ordered ? "ordered" : "categorical", join(values, " ")});
  }
  std::cout << t.str();
  if (!constraints.empty()) {
    std::cout << "\nconstraints\n";
    for (const auto& c : constraints) std::cout << "  - " << c << "\n";
  }
  std::cout << "\nsize     " << space.size() << " valid of " << space.cartesian_size() << " points\n";
  for (size_t i = 0; i < std::min(opt.list, space.size()); ++i)
    std::cout << "  " << gen::format(gen::params_of(space, space.valid_config(i))) << "\n";
  return kExitOk;
}

} // namespace

void add_space_command(CLI::App& app, const GlobalOptions& global, int& status) {
  auto opt = std::make_shared<SpaceOptions>();
  auto* cmd = app.add_subcommand(
      "space", "Show a generator's tuning space: signature, problem, parameters, constraints, size (no KERNEL: list generators)");
  cmd->add_option("kernel", opt->kernel, "Generator (omit to list them)");
  add_target_and_signature_options(*cmd, opt->args);
  cmd->add_option("--list", opt->list, "Also print the first N valid configurations");
  cmd->add_flag("--json", opt->json, "Print one JSON object");
  cmd->callback([opt, &global, &status] { status = run_guarded(global, [&] { return run_space(*opt); }); });
}

} // namespace isatune::cli
