// isatune: the command line. Each subcommand lives in its own file and registers itself here.
#include <CLI/CLI.hpp>

#include <cstdio>

int main(int argc, char** argv) {
  CLI::App app{"isatune: write GPU kernels at the instruction level and tune them"};
  app.require_subcommand(1);
  CLI11_PARSE(app, argc, argv);
  return 0;
}
