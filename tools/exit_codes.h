#pragma once
// Exit codes of the isatune command, documented in docs/cli.md.
namespace isatune::cli {
constexpr int kExitOk = 0;
constexpr int kExitInputError = 1;   // bad input: malformed file, assembly error, unknown target
constexpr int kExitUsage = 2;        // bad command line (CLI11)
constexpr int kExitUnavailable = 3;  // a needed toolkit or device is absent
constexpr int kExitInternal = 4;     // a bug in isatune: please report it
} // namespace isatune::cli
