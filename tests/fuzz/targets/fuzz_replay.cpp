// Kernel Tuner caches, T4 results and KTT files (tuner/src/read_*.cpp) from arbitrary text, format detected from
// content as `isatune tune --replay` does; a file that reads is then turned into its space. Only
// isatune::Error may escape.
#include <string>

#include "fuzz_target.h"
#include "isatune/error.h"
#include "isatune/tune/replay.h"

ISATUNE_FUZZ_TARGET(replay) {
  using namespace isatune;
  std::string text(reinterpret_cast<const char*>(data), size);
  try {
    tune::ReplayData d = tune::parse_replay_text(text, "fuzz.json");
    if (d.indices.size() != d.entries.size())
      fuzz::fail(std::to_string(d.indices.size()) + " indices for " + std::to_string(d.entries.size()) + " entries");
    tune::ReplayEvaluator evaluator(d);
    if (evaluator.space().size() > 0) (void)evaluator.evaluate(evaluator.space().valid_config(0));
  } catch (const Error&) {
  }
}
