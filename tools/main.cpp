// isatune: the command line. Each subcommand lives in its own file (cmd_*.cpp) and registers itself here.
#include <CLI/CLI.hpp>

#include <cstdio>
#include <exception>

#include "commands.h"
#include "exit_codes.h"
#include "help_examples.h"
#include "isatune/error.h"

namespace isatune::cli {

int run_guarded(const GlobalOptions& global, const std::function<int()>& fn) {
  try {
    return fn();
  } catch (const UnavailableError& e) {
    std::fprintf(stderr, "isatune: %s\n", e.what());
    return kExitUnavailable;
  } catch (const InputError& e) {
    std::fprintf(stderr, "isatune: %s\n", e.what());
    return kExitInputError;
  } catch (const Error& e) {
    std::fprintf(stderr, "isatune: %s\n", e.what());
    return kExitInputError;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "isatune: internal error: %s\n", e.what());
    if (global.verbose) std::fprintf(stderr, "isatune: please report this with the command line used\n");
    return kExitInternal;
  }
}

} // namespace isatune::cli

int main(int argc, char** argv) {
  using namespace isatune::cli;
  CLI::App app{"isatune: write GPU kernels at the instruction level, assemble them in process and read any\n"
               "code object back. Exit codes: 0 ok, 1 bad input, 2 bad command line, 3 toolkit missing,\n"
               "4 internal error."};
  app.name("isatune");
  app.require_subcommand(1);
  GlobalOptions global;
  app.add_flag("-v,--verbose", global.verbose, "Say more when something fails");
  int status = kExitOk;
  add_targets_command(app, global, status);
  add_asm_command(app, global, status);
  add_inspect_command(app, global, status);
  add_db_command(app, global, status);
  add_devices_command(app, global, status);
  add_run_command(app, global, status);
  add_tune_command(app, global, status);
  add_score_command(app, global, status);
  add_device_worker_command(app, global, status);
  add_gen_command(app, global, status);
  add_space_command(app, global, status);
  add_emu_coverage_command(app, global, status);
  add_advise_command(app, global, status);
  add_slurm_command(app, global, status);
  add_report_command(app, global, status);
  add_model_command(app, global, status);
  add_help_examples(app);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    int code = app.exit(e);
    return code == 0 ? kExitOk : kExitUsage;
  }
  return status;
}
