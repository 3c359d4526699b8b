#pragma once
// The search space lives with the generators, which declare it (DESIGN.md: generators depend on asm only, the
// tuner on generators); the tuner uses the same types under its own namespace.
#include "isatune/gen/space.h"

namespace isatune::tune {
using gen::Config;
using gen::Constraint;
using gen::Parameter;
using gen::Space;
using gen::Value;
} // namespace isatune::tune
