#include "isatune/tune/tuner.h"

namespace isatune::tune {

TuneResult tune(const Space& space, Evaluator& evaluator, Strategy& strategy, const TuneOptions& options) {
  SearchContext ctx(space, evaluator, options.budget, options.seed);
  ctx.on_record = options.on_record;
  TuneResult result;
  try {
    strategy.run(ctx);
    result.stop_reason = "strategy finished";
  } catch (const SearchStopped& s) {
    result.stop_reason = s.reason;
  }
  result.history = ctx.history();
  result.best = ctx.best();
  result.wall_s = ctx.wall_s();
  return result;
}

} // namespace isatune::tune
