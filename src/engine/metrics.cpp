#include "engine/metrics.h"

#include <algorithm>

#include "base/error.h"

namespace skiff {

Histogram::Histogram(std::vector<double> upper_bounds)
    : upper_bounds_(std::move(upper_bounds)), counts_(upper_bounds_.size() + 1) {
  if (!std::is_sorted(upper_bounds_.begin(), upper_bounds_.end()))
    fail("histogram: bucket bounds must ascend");
}

void Histogram::observe(double value) {
  const auto bucket = std::lower_bound(upper_bounds_.begin(), upper_bounds_.end(), value);
  ++counts_[bucket - upper_bounds_.begin()];
  ++count_;
  sum_ += value;
}

}  // namespace skiff
