// A set of Unicode code points as sorted, disjoint, non-adjacent ranges: what
// a regex character class, `.`, or a JSON string's allowed characters denote.
#pragma once
#include <cstdint>
#include <initializer_list>
#include <utility>
#include <vector>

namespace skiff::grammar {

inline constexpr uint32_t kMaxCodePoint = 0x10FFFF;

class CharSet {
 public:
  CharSet() = default;
  CharSet(std::initializer_list<std::pair<uint32_t, uint32_t>> ranges) {
    for (auto [lo, hi] : ranges) add(lo, hi);
  }
  static CharSet any() { return CharSet{{0, kMaxCodePoint}}; }

  void add(uint32_t lo, uint32_t hi);  // inclusive; keeps the ranges normalised
  void add(uint32_t c) { add(c, c); }
  void add(const CharSet& other) {
    for (auto [lo, hi] : other.ranges_) add(lo, hi);
  }
  CharSet complement() const;  // within [0, kMaxCodePoint]
  CharSet minus(const CharSet& other) const { return intersect(other.complement()); }
  CharSet intersect(const CharSet& other) const;
  bool contains(uint32_t c) const;
  bool empty() const { return ranges_.empty(); }
  uint64_t size() const;
  const std::vector<std::pair<uint32_t, uint32_t>>& ranges() const { return ranges_; }
  bool operator==(const CharSet&) const = default;

 private:
  std::vector<std::pair<uint32_t, uint32_t>> ranges_;
};

}  // namespace skiff::grammar
