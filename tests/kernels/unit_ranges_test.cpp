// UnitRanges (kernels/matmul/unit_ranges.h): every unit handed out exactly once,
// whichever threads show up, with the owners' claims shrinking and a lone
// thread stealing every other range.
#include "kernels/matmul/unit_ranges.h"

#include <gtest/gtest.h>
#include <omp.h>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <vector>

#include "base/error.h"

namespace skiff {
namespace {

// Units [u0, u1) claimed by thread `id` until none is left, in claim order.
std::vector<std::pair<int64_t, int64_t>> claims_of(UnitRanges& ranges, int id) {
  std::vector<std::pair<int64_t, int64_t>> claims;
  for (int64_t u0, u1; ranges.next(id, u0, u1);) claims.emplace_back(u0, u1);
  return claims;
}

TEST(UnitRanges, OwnerClaimsAnEighthOfWhatIsLeftDownToTheMinimum) {
  UnitRanges ranges(1600, 2, 5);  // thread 0 owns [0, 800)
  int64_t u0 = 0, u1 = 0;
  ASSERT_TRUE(ranges.next(0, u0, u1));
  EXPECT_EQ(u0, 0);
  EXPECT_EQ(u1, 100);
  ASSERT_TRUE(ranges.next(0, u0, u1));
  EXPECT_EQ(u0, 100);
  EXPECT_EQ(u1, 100 + 700 / 8);
  int64_t end = u1;
  while (ranges.next(0, u0, u1) && u0 < 800) {
    EXPECT_EQ(u0, end) << "the owner streams its range in order";
    EXPECT_TRUE(u1 - u0 >= 5 || u1 == 800) << "only the range's last claim is shorter than the minimum";
    end = u1;
  }
  EXPECT_EQ(end, 800);
}

TEST(UnitRanges, OneRangeGoesInOneClaim) {
  UnitRanges ranges(1000, 1, 5);
  int64_t u0 = 0, u1 = 0;
  ASSERT_TRUE(ranges.next(0, u0, u1));
  EXPECT_EQ(u0, 0);
  EXPECT_EQ(u1, 1000);
  EXPECT_FALSE(ranges.next(0, u0, u1));
}

TEST(UnitRanges, ALoneThreadTakesEveryRangeOnce) {
  for (int id : {0, 2}) {
    UnitRanges ranges(1001, 3, 4);
    std::vector<int> hits(1001, 0);
    for (auto [u0, u1] : claims_of(ranges, id)) {
      ASSERT_LT(u0, u1);
      for (int64_t u = u0; u < u1; ++u) ++hits[u];
    }
    for (int64_t u = 0; u < 1001; ++u) ASSERT_EQ(hits[u], 1) << "unit " << u << ", thread " << id;
  }
}

TEST(UnitRanges, AThiefTakesTheBackHalfOfTheFullestRange) {
  UnitRanges ranges(400, 2, 1);  // [0, 200) and [200, 400)
  for (int64_t u0, u1; ranges.next(0, u0, u1) && u1 < 200;) {
  }
  // Thread 0's own range is done (its last claim ended at 200); it now takes
  // thread 1's back half.
  int64_t u0 = 0, u1 = 0;
  ASSERT_TRUE(ranges.next(0, u0, u1));
  EXPECT_EQ(u0, 300);
  EXPECT_EQ(u1, 300 + 100 / 8);
  ASSERT_TRUE(ranges.next(1, u0, u1));
  EXPECT_EQ(u0, 200) << "the victim keeps the front of its range";
}

// More ranges than threads, as when OpenMP gives a region fewer threads than
// asked: the threads steal the ranges nobody owns. (No team larger than the
// default: libomp's extra threads show up as leaks under LeakSanitizer.)
TEST(UnitRanges, ThreadsShareEveryUnitExactlyOnce) {
  for (int64_t n_units : {0, 1, 7, 64, 1000, 100003}) {
    for (int n_ranges : {1, 2, 3, 8, 12}) {  // 12: more than are kept inline
      UnitRanges ranges(n_units, n_ranges, n_units / (64 * n_ranges));
      std::vector<std::atomic<int>> hits(static_cast<size_t>(n_units));
      const int n_threads = std::min(n_ranges, omp_get_max_threads());
#pragma omp parallel num_threads(n_threads)
      for (int64_t u0, u1; ranges.next(omp_get_thread_num(), u0, u1);)
        for (int64_t u = u0; u < u1; ++u) hits[u].fetch_add(1, std::memory_order_relaxed);
      for (int64_t u = 0; u < n_units; ++u)
        ASSERT_EQ(hits[u].load(), 1) << "unit " << u << " of " << n_units << ", " << n_ranges << " ranges";
    }
  }
}

TEST(UnitRanges, RefusesWhatItCannotSplit) {
  EXPECT_THROW(UnitRanges(-1, 2, 1), Error);
  EXPECT_THROW(UnitRanges(int64_t{1} << 32, 2, 1), Error);
  EXPECT_THROW(UnitRanges(10, 0, 1), Error);
}

}  // namespace
}  // namespace skiff
