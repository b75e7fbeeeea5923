#include "kernels/matmul/prefetch_tuner.h"

namespace skiff {

PrefetchLevel PrefetchTuner::choose(const void* key) {
  Times& t = times_[key];
  ++t.calls;
  int best = 0;
  for (int l = 0; l < kPrefetchLevels; ++l) {
    if (!t.timed[l]) return static_cast<PrefetchLevel>(l);  // each level once first
    if (t.seconds[l] < t.seconds[best]) best = l;
  }
  if (t.calls % kExplore != 0) return static_cast<PrefetchLevel>(best);
  // The explorations take the other levels in turn.
  const int other = 1 + static_cast<int>(t.calls / kExplore % (kPrefetchLevels - 1));
  return static_cast<PrefetchLevel>((best + other) % kPrefetchLevels);
}

void PrefetchTuner::record(const void* key, PrefetchLevel level, double seconds) {
  Times& t = times_[key];
  const int l = static_cast<int>(level);
  t.seconds[l] = t.timed[l] ? t.seconds[l] + kWeight * (seconds - t.seconds[l]) : seconds;
  t.timed[l] = true;
}

}  // namespace skiff
