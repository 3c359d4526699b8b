#pragma once
// Reading AMD code objects (ours or third-party: hipcc output, Tensile or AITER .co files) through LLVM's
// Object and MsgPack libraries.
#include <cstdint>
#include <span>
#include <string>
#include <string_view>

#include "isatune/code_object.h"
#include "isatune/error.h"

namespace isatune::codeobj {

// The file is not a readable code object; what() names the file and what is wrong.
class FormatError : public InputError {
public:
  using InputError::InputError;
};

// Parses bytes; source_name is used in error messages. Fills target, kernels (metadata + descriptor), sha256.
CodeObject read_code_object(std::span<const uint8_t> bytes, std::string_view source_name = "<memory>");
// Reads a file; missing, empty, truncated, non-ELF and non-AMDGPU files get a FormatError naming the path.
CodeObject read_code_object_file(const std::string& path);

// Hex SHA-256 of bytes, through LLVM's SHA256.
std::string sha256_hex(std::span<const uint8_t> bytes);

} // namespace isatune::codeobj
