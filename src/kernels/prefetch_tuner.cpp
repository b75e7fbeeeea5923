#include "kernels/prefetch_tuner.h"

namespace skiff {

PrefetchLevel PrefetchTuner::choose(const void* key) {
  Times& t = times_[key];
  ++t.calls;
  if (!t.timed[0]) return PrefetchLevel::kL1;
  if (!t.timed[1]) return PrefetchLevel::kL2;
  const bool l2_faster = t.seconds[1] < t.seconds[0];
  const bool explore = t.calls % kExplore == 0;
  return l2_faster != explore ? PrefetchLevel::kL2 : PrefetchLevel::kL1;
}

void PrefetchTuner::record(const void* key, PrefetchLevel level, double seconds) {
  Times& t = times_[key];
  const int l = static_cast<int>(level);
  t.seconds[l] = t.timed[l] ? t.seconds[l] + kWeight * (seconds - t.seconds[l]) : seconds;
  t.timed[l] = true;
}

}  // namespace skiff
