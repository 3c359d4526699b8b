// Content hash of a code object: its identity in the database.
#include "llvm/ADT/ArrayRef.h"
#include "llvm/Support/SHA256.h"

#include "isatune/codeobj/reader.h"

namespace isatune::codeobj {

std::string sha256_hex(std::span<const uint8_t> bytes) {
  auto digest = llvm::SHA256::hash(llvm::ArrayRef<uint8_t>(bytes.data(), bytes.size()));
  static constexpr char hex[] = "0123456789abcdef";
  std::string out;
  out.reserve(64);
  for (uint8_t b : digest) {
    out += hex[b >> 4];
    out += hex[b & 15];
  }
  return out;
}

} // namespace isatune::codeobj
