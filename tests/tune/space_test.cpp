#include <gtest/gtest.h>

#include "isatune/error.h"
#include "isatune/tune/budget.h"
#include "isatune/tune/status.h"
#include "synthetic.h"

using namespace isatune::tune;

TEST(Space, EnumeratesConstrainedConfigurations) {
  Space s = test::synthetic_space();
  EXPECT_EQ(s.cartesian_size(), 240u);
  // a*b > 64: (5,16),(6,16),(7,16),(8,16) x 3 x 2 = 24 removed
  EXPECT_EQ(s.size(), 216u);
  for (size_t i = 0; i < s.size(); ++i) {
    Config c = s.valid_config(i);
    EXPECT_EQ(s.index_of(c), s.valid()[i]);
    EXPECT_EQ(s.position_of(c), static_cast<int64_t>(i));
  }
  EXPECT_FALSE(s.is_valid(Config{7, 4, 0, 0}));
  EXPECT_FALSE(s.is_valid(Config{9, 0, 0, 0}));
}

TEST(Space, NeighboursOrderedAdjacentCategoricalAny) {
  Space s = test::synthetic_space();
  Config c{3, 2, 0, 0}; // a=4, b=4, c=x, d=0
  auto n = s.neighbours(c);
  // a: 3 and 5 ; b: 2 and 8 ; c: y, z ; d: 1  => 7
  EXPECT_EQ(n.size(), 7u);
  auto h = s.hamming_neighbours(c);
  EXPECT_EQ(h.size(), 14u); // a: 7 others, b: 4 others (4*16 = 64 is allowed), c: 2, d: 1
  Config edge{4, 3, 0, 0};  // a=5, b=8: b+1 = 16 -> 80 > 64 invalid
  for (const auto& x : s.neighbours(edge))
    EXPECT_TRUE(s.is_valid(x));
  EXPECT_EQ(s.format(Config{0, 0, 1, 1}), "a=1, b=1, c=y, d=1");
}

TEST(Status, NamesRoundTrip) {
  for (int i = 0; i < kStatusCount; ++i) {
    auto s = static_cast<Status>(i);
    EXPECT_EQ(parse_status(to_string(s)), s);
  }
  EXPECT_EQ(to_string(Status::wrong_answer), "wrong-answer");
  EXPECT_FALSE(parse_status("bogus"));
}

TEST(Budget, Parses) {
  EXPECT_EQ(*Budget::parse("250").evaluations, 250u);
  EXPECT_DOUBLE_EQ(*Budget::parse("10m").charged_s, 600.0);
  EXPECT_DOUBLE_EQ(*Budget::parse("90s").charged_s, 90.0);
  EXPECT_DOUBLE_EQ(*Budget::parse("2h").charged_s, 7200.0);
  EXPECT_THROW(Budget::parse("ten"), isatune::InputError);
  EXPECT_THROW(Budget::parse("5d"), isatune::InputError);
  EXPECT_THROW(Budget::parse("-3"), isatune::InputError);
}
