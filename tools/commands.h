#pragma once
// Each subcommand registers itself on the app; its callback stores an exit code in `status`.
#include <CLI/CLI.hpp>

#include <functional>

namespace isatune::cli {

struct GlobalOptions {
  bool verbose = false;
};

// Runs fn, turning isatune exceptions into one clear line on stderr and a documented exit code.
int run_guarded(const GlobalOptions& global, const std::function<int()>& fn);

void add_targets_command(CLI::App& app, const GlobalOptions& global, int& status);
void add_asm_command(CLI::App& app, const GlobalOptions& global, int& status);
void add_inspect_command(CLI::App& app, const GlobalOptions& global, int& status);
void add_db_command(CLI::App& app, const GlobalOptions& global, int& status);
void add_devices_command(CLI::App& app, const GlobalOptions& global, int& status);
void add_run_command(CLI::App& app, const GlobalOptions& global, int& status);
void add_tune_command(CLI::App& app, const GlobalOptions& global, int& status);
void add_score_command(CLI::App& app, const GlobalOptions& global, int& status);
void add_device_worker_command(CLI::App& app, const GlobalOptions& global, int& status);
void add_gen_command(CLI::App& app, const GlobalOptions& global, int& status);
void add_space_command(CLI::App& app, const GlobalOptions& global, int& status);
void add_emu_coverage_command(CLI::App& app, const GlobalOptions& global, int& status);
void add_advise_command(CLI::App& app, const GlobalOptions& global, int& status);
void add_slurm_command(CLI::App& app, const GlobalOptions& global, int& status);
void add_report_command(CLI::App& app, const GlobalOptions& global, int& status);
void add_model_command(CLI::App& app, const GlobalOptions& global, int& status);
// `model attention` (cmd_model_attention.cpp), under `model`.
void add_model_attention_command(CLI::App& model, const GlobalOptions& global, int& status);

} // namespace isatune::cli
