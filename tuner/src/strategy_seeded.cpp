// Transfer: a search that starts from configurations known to be good elsewhere (the best ones of the nearest
// tuned problems: same generator, signature and device, or the same space on another device). They are
// evaluated first, then the inner strategy runs on a context that already holds them, so a model-based
// strategy (bayes) fits its model to them from its first step and takes them as its initial design.
#include "isatune/tune/strategy.h"

#include "isatune/tune/search_context.h"

namespace isatune::tune {

namespace {
class Seeded : public Strategy {
public:
  Seeded(std::vector<Config> seeds, std::unique_ptr<Strategy> inner)
      : seeds_(std::move(seeds)), inner_(std::move(inner)) {}
  void run(SearchContext& ctx) override {
    for (const auto& c : seeds_)
      if (ctx.space().position_of(c) >= 0) // a seed the space does not hold is skipped
        ctx.evaluate(c);
    inner_->run(ctx);
  }

private:
  std::vector<Config> seeds_;
  std::unique_ptr<Strategy> inner_;
};
} // namespace

std::unique_ptr<Strategy> make_seeded(std::vector<Config> seeds, std::unique_ptr<Strategy> inner) {
  return std::make_unique<Seeded>(std::move(seeds), std::move(inner));
}

} // namespace isatune::tune
