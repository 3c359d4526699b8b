#pragma once
// Runs the isatune binary as a user would and captures its exit code, stdout and stderr.
#include <string>

struct CliResult {
  int exit_code = -1;
  std::string out;
  std::string err;
};

// args is appended to the binary path as it is (quote paths yourself).
CliResult run_isatune(const std::string& args);
// A fresh directory under the system temp dir, removed by the caller if it wants.
std::string make_temp_dir();
void write_file(const std::string& path, const std::string& bytes);
std::string read_file(const std::string& path);
