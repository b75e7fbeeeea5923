// How the threads of one parallel product region share its row units
// (matmul.cpp): each thread streams its own contiguous range from the front,
// and a thread whose range is done steals the back half of what is left of the
// fullest other range, which then becomes its own.
//
// So each thread's weights come as one long stream, with a new one only per
// steal. The split this replaces, three quarters in fixed ranges and the last
// quarter handed out in shared chunks, spent far more than a quarter of a
// 896×896 decode product's time on that quarter (Qwen2.5-0.5B, Zen 4 VM)
// (figures: docs/notes/kernel-design-figures.md): every chunk was a cold start
// for the prefetchers, next to the other thread's.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>

namespace skiff {

class UnitRanges {
 public:
  // Units [0, n_units) in n_threads equal ranges, the owner's claims shrinking
  // to no fewer than min_claim units (one range: one claim).
  UnitRanges(int64_t n_units, int n_threads, int64_t min_claim);

  // The next units [u0, u1) for thread `id`: from the front of its range, or
  // else stolen. False when every unit has been handed out.
  bool next(int id, int64_t& u0, int64_t& u1);

 private:
  // A range's unclaimed units [front, back), packed in one word so that the
  // owner's claims and a thief's steals each take one compare-and-swap.
  struct alignas(64) Range {
    std::atomic<uint64_t> bounds;
  };
  static uint64_t pack(int64_t front, int64_t back) {
    return static_cast<uint64_t>(front) | static_cast<uint64_t>(back) << 32;
  }
  static int64_t front(uint64_t bounds) { return static_cast<int64_t>(bounds & 0xffffffffu); }
  static int64_t back(uint64_t bounds) { return static_cast<int64_t>(bounds >> 32); }

  bool claim_front(Range& range, int64_t& u0, int64_t& u1) const;
  bool steal(int id, int64_t& u0, int64_t& u1);

  static constexpr int kInlineRanges = 8;  // the usual teams: no allocation per product region

  int n_threads_;
  int64_t min_claim_;
  Range inline_ranges_[kInlineRanges];
  std::unique_ptr<Range[]> heap_ranges_;  // for larger teams
  Range* ranges_;
};

}  // namespace skiff
