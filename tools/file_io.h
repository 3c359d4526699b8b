#pragma once
// Whole-file reads and writes with errors that name the path.
#include <cstdint>
#include <string>
#include <vector>

namespace isatune::cli {

std::string read_text_file(const std::string& path);
// Writes to path.tmp and renames, so a failed write never leaves a half file under the real name.
void write_binary_file(const std::string& path, const std::vector<uint8_t>& bytes);

} // namespace isatune::cli
