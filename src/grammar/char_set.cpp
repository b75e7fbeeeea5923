#include "grammar/char_set.h"

#include <algorithm>

namespace skiff::grammar {

void CharSet::add(uint32_t lo, uint32_t hi) {
  if (lo > hi) return;
  // Insert, then merge every range that overlaps or touches [lo, hi].
  auto it = std::lower_bound(ranges_.begin(), ranges_.end(), std::make_pair(lo, uint32_t{0}));
  if (it != ranges_.begin() && std::prev(it)->second + 1 >= lo) --it;
  auto end = it;
  while (end != ranges_.end() && end->first <= hi + 1 && hi != UINT32_MAX) {
    lo = std::min(lo, end->first);
    hi = std::max(hi, end->second);
    ++end;
  }
  it = ranges_.erase(it, end);
  ranges_.insert(it, {lo, hi});
}

CharSet CharSet::complement() const {
  CharSet out;
  uint32_t next = 0;
  for (auto [lo, hi] : ranges_) {
    if (lo > next) out.ranges_.push_back({next, lo - 1});
    next = hi + 1;
  }
  if (next <= kMaxCodePoint) out.ranges_.push_back({next, kMaxCodePoint});
  return out;
}

CharSet CharSet::intersect(const CharSet& other) const {
  CharSet out;
  size_t i = 0, j = 0;
  while (i < ranges_.size() && j < other.ranges_.size()) {
    uint32_t lo = std::max(ranges_[i].first, other.ranges_[j].first);
    uint32_t hi = std::min(ranges_[i].second, other.ranges_[j].second);
    if (lo <= hi) out.ranges_.push_back({lo, hi});
    if (ranges_[i].second < other.ranges_[j].second) ++i;
    else ++j;
  }
  return out;
}

bool CharSet::contains(uint32_t c) const {
  auto it = std::upper_bound(ranges_.begin(), ranges_.end(), std::make_pair(c, UINT32_MAX));
  return it != ranges_.begin() && std::prev(it)->second >= c;
}

uint64_t CharSet::size() const {
  uint64_t n = 0;
  for (auto [lo, hi] : ranges_) n += uint64_t{hi} - lo + 1;
  return n;
}

}  // namespace skiff::grammar
