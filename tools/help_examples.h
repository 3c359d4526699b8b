#pragma once
// A worked example at the end of every command's --help (docs/cli.md), kept in one table so that each command's
// help ends the same way and a test can check that none lacks one.
#include <CLI/CLI.hpp>

namespace isatune::cli {

// Appends "Example:" and the command lines to the footer of each registered (sub)command that has an entry.
void add_help_examples(CLI::App& app);

} // namespace isatune::cli
