#include "kernels/matmul/unit_ranges.h"

#include <algorithm>

#include "base/error.h"

namespace skiff {

UnitRanges::UnitRanges(int64_t n_units, int n_threads, int64_t min_claim)
    : n_threads_(n_threads),
      min_claim_(std::max<int64_t>(1, min_claim)),
      heap_ranges_(n_threads > kInlineRanges ? new Range[n_threads] : nullptr),
      ranges_(heap_ranges_ ? heap_ranges_.get() : inline_ranges_) {
  if (n_units < 0 || n_units >= (int64_t{1} << 32) || n_threads <= 0)
    fail("cannot split {} row units over {} threads", n_units, n_threads);
  for (int t = 0; t < n_threads; ++t)
    ranges_[t].bounds.store(pack(n_units * t / n_threads, n_units * (t + 1) / n_threads), std::memory_order_relaxed);
}

bool UnitRanges::next(int id, int64_t& u0, int64_t& u1) {
  return claim_front(ranges_[id], u0, u1) || steal(id, u0, u1);
}

// The owner claims an eighth of what is left of its range at a time: few
// claims while the range is long, and near its end claims short enough that a
// thief finds most of the rest still to take. Alone, it claims all at once
// (each claim is a kernel call: 1-thread decode of a 896×896 matrix would
// take ~20).
bool UnitRanges::claim_front(Range& range, int64_t& u0, int64_t& u1) const {
  uint64_t bounds = range.bounds.load(std::memory_order_relaxed);
  int64_t end = 0;
  do {
    const int64_t f = front(bounds), b = back(bounds);
    if (f >= b) return false;
    end = n_threads_ == 1 ? b : std::min(b, f + std::max(min_claim_, (b - f) / 8));
  } while (!range.bounds.compare_exchange_weak(bounds, pack(end, back(bounds)), std::memory_order_relaxed));
  u0 = front(bounds);
  u1 = end;
  return true;
}

// Takes the back half of the fullest other range (all of it when that is no
// more than a claim), makes it this thread's range and claims its front.
bool UnitRanges::steal(int id, int64_t& u0, int64_t& u1) {
  for (;;) {
    int victim = -1;
    int64_t most = 0;
    for (int t = 0; t < n_threads_; ++t) {
      const uint64_t bounds = ranges_[t].bounds.load(std::memory_order_relaxed);
      if (t != id && back(bounds) - front(bounds) > most) {
        most = back(bounds) - front(bounds);
        victim = t;
      }
    }
    if (victim < 0) return false;
    Range& range = ranges_[victim];
    uint64_t bounds = range.bounds.load(std::memory_order_relaxed);
    const int64_t f = front(bounds), b = back(bounds);
    if (f >= b) continue;  // claimed meanwhile: look again
    const int64_t from = b - f <= min_claim_ ? f : b - (b - f) / 2;
    if (!range.bounds.compare_exchange_strong(bounds, pack(f, from), std::memory_order_relaxed)) continue;
    ranges_[id].bounds.store(pack(from, b), std::memory_order_relaxed);
    if (claim_front(ranges_[id], u0, u1)) return true;
  }
}

}  // namespace skiff
