// Where a decode product's software prefetch puts its weight stream (L1 or L2
// only), chosen per matrix by timing its calls. On Zen 4, Q4_K panels read
// 13-16% faster with L2 prefetches when the two cores are each near their own
// streaming limit and 3-8% slower when the memory shared with other tenants
// is the limit, and the machine moved between the two every minute or so
// (docs/benchmarks.md); Zen 5 was tuned with L1 prefetches. So each matrix
// keeps the level its recent calls ran faster with, and every kExplore-th call
// tries the other one.
#pragma once
#include <cstdint>
#include <unordered_map>

#include "kernels/matmul_kernels.h"

namespace skiff {

class PrefetchTuner {
 public:
  static constexpr uint32_t kExplore = 8;
  static constexpr double kWeight = 0.25;  // of a new time in a level's running mean

  // The level for this call of the product keyed by `key` (its first matrix).
  PrefetchLevel choose(const void* key);
  // How long that call took.
  void record(const void* key, PrefetchLevel level, double seconds);

 private:
  struct Times {
    double seconds[2] = {0, 0};  // running means, per level
    bool timed[2] = {false, false};
    uint32_t calls = 0;
  };
  std::unordered_map<const void*, Times> times_;
};

}  // namespace skiff
