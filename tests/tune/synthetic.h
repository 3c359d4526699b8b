#pragma once
// Small synthetic spaces with a known optimum, evaluated by a formula (tests only).
#include <cmath>

#include "isatune/tune/evaluation.h"

namespace isatune::tune::test {

// 4 parameters: a {1..8} ordered, b {1,2,4,8,16} ordered, c {"x","y","z"} categorical, d {0,1} ordered:
// 8*5*3*2 = 240 points; the constraint a*b <= 64 removes a few. Optimum at a=5, b=4, c="y", d=1 (time 1.0).
// Configurations with a == 7 and b == 16 are outside the constraint; a == 2 && c == "z" fail at run time.
inline Space synthetic_space() {
  std::vector<Parameter> p = {
      {"a",
       {Value::num(1), Value::num(2), Value::num(3), Value::num(4), Value::num(5), Value::num(6),
        Value::num(7), Value::num(8)},
       true},
      {"b", {Value::num(1), Value::num(2), Value::num(4), Value::num(8), Value::num(16)}, true},
      {"c", {Value::str("x"), Value::str("y"), Value::str("z")}, false},
      {"d", {Value::num(0), Value::num(1)}, true},
  };
  std::vector<Parameter> copy = p;
  return Space(p, {[copy](const Config& c) {
                 return copy[0].values[c[0]].number * copy[1].values[c[1]].number <= 64;
               }});
}

class SyntheticEvaluator : public Evaluator {
public:
  explicit SyntheticEvaluator(const Space& s) : space_(s) {}
  Evaluation evaluate(const Config& c) override {
    double a = space_.number(c, 0), b = space_.number(c, 1);
    ++calls;
    if (a == 2 && c[2] == 2)
      return {Status::runtime, 0, 0.5};
    double t = 1.0 + 0.3 * (a - 5) * (a - 5) + 0.7 * std::fabs(std::log2(b) - 2) +
               (c[2] == 1 ? 0.0 : 0.9 + 0.1 * c[2]) + (c[3] == 1 ? 0.0 : 0.25) + 0.05 * std::sin(a * b);
    if (a == 5 && b == 4 && c[2] == 1 && c[3] == 1)
      t = 1.0;
    else
      t = std::max(t, 1.01);
    return {Status::ok, t, 1.0 + 0.01 * a};
  }
  size_t calls = 0;

private:
  const Space& space_;
};

} // namespace isatune::tune::test
