// Where a decode product's software prefetch puts its weight stream (L1, L2
// only, or nowhere), chosen per matrix by timing its calls. On Zen 4 the best
// level differs by type and shape, and by what limits the stream: with L2
// prefetches Q4_K panels read faster while each of the two cores was near its
// own streaming limit and slower while the memory shared with other tenants
// was, and the VM moved between the two about every minute; a Q6_K LM head read
// faster with none; Zen 5 was tuned with L1 prefetches (figures:
// docs/notes/kernel-design-figures.md; docs/notes/decode-bandwidth.md). So each
// matrix keeps the level its recent calls ran fastest with, and every
// kExplore-th call tries another one.
#pragma once
#include <cstdint>
#include <unordered_map>

#include "kernels/matmul/matmul_kernels.h"

namespace skiff {

class PrefetchTuner {
 public:
  static constexpr uint32_t kExplore = 16;
  static constexpr double kWeight = 0.25;  // of a new time in a level's running mean

  // The level for this call of the product keyed by `key` (its first matrix).
  PrefetchLevel choose(const void* key);
  // How long that call took.
  void record(const void* key, PrefetchLevel level, double seconds);

 private:
  struct Times {
    double seconds[kPrefetchLevels] = {};  // running means, per level
    bool timed[kPrefetchLevels] = {};
    uint32_t calls = 0;
  };
  std::unordered_map<const void*, Times> times_;
};

}  // namespace skiff
