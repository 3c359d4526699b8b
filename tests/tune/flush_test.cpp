// The L2 flush between timed repetitions: at least twice the last-level cache the backend read from the driver.
#include <gtest/gtest.h>

#include "isatune/tune/variant_runner.h"

namespace {

using isatune::tune::flush_bytes_for;

TEST(Flush, AtLeastTwiceTheL2TheDriverReported) {
  isatune::tune::TimingOptions t;
  isatune::loader::DeviceProperties p;
  p.l2_bytes = 0; // not known: the configured size
  EXPECT_EQ(flush_bytes_for(t, p), t.flush_bytes);
  p.l2_bytes = 50ull << 20; // H200: 50 MiB, twice of it is below the 512 MiB default
  EXPECT_EQ(flush_bytes_for(t, p), t.flush_bytes);
  t.flush_bytes = 64ull << 20; // a smaller configured flush is raised to twice the L2
  EXPECT_EQ(flush_bytes_for(t, p), 100ull << 20);
  p.l2_bytes = 300ull << 20; // a larger cache than the default flush
  t.flush_bytes = 512ull << 20;
  EXPECT_EQ(flush_bytes_for(t, p), 600ull << 20);
  t.flush_bytes = 0; // no flush asked for: none
  EXPECT_EQ(flush_bytes_for(t, p), 0u);
}

} // namespace
