// `isatune run --arg` values (tools/run_args.h): the input is one argument per line, parsed in order with a
// fixed random seed. Only isatune::Error may escape. Element counts of more than six digits are skipped: the
// parser allocates what it is asked for (up to its 64 GiB limit, covered by tests/cli/run_args_unit_test.cpp),
// which is not what the fuzzer should spend its memory on.
#include <string>

#include "fuzz_target.h"
#include "isatune/error.h"
#include "run_args.h"

ISATUNE_FUZZ_TARGET(run_args) {
  std::string text(reinterpret_cast<const char*>(data), size);
  size_t digits = 0;
  for (char c : text) {
    digits = (c >= '0' && c <= '9') ? digits + 1 : 0;
    if (digits > 6) return;
  }
  // file=PATH reads a file: only names of the fuzzer's own making, never a device or a directory tree.
  if (text.find("file=/") != std::string::npos || text.find("..") != std::string::npos) return;
  std::mt19937_64 rng(1);
  size_t index = 0, start = 0;
  while (start <= text.size() && index < 16) {
    size_t end = text.find('\n', start);
    if (end == std::string::npos) end = text.size();
    try {
      isatune::cli::ParsedArg a = isatune::cli::parse_arg(index, text.substr(start, end - start), rng);
      if (a.buffer && a.bytes.size() != a.count * a.type->size)
        isatune::fuzz::fail("buffer '" + a.text + "' holds " + std::to_string(a.bytes.size()) + " bytes for " +
                            std::to_string(a.count) + " elements");
    } catch (const isatune::Error&) {
    }
    ++index;
    start = end + 1;
  }
}
