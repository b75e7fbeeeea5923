#include "engine/draft_length.h"

#include <algorithm>
#include <limits>

namespace skiff {

int adapt_draft_length(int length, int drafted, int accepted, int k_max) {
  if (drafted == 0) return length;  // nothing learned
  const int next = accepted == drafted ? length + 2 : length - 1;
  return std::clamp(next, 1, std::max(1, k_max));
}

int step_draft_budget(int step_tokens, int k_max, int limit) {
  if (limit <= 0) return std::numeric_limits<int>::max();
  return std::max(0, std::max(limit, k_max + 1) - step_tokens);
}

std::vector<int> share_draft_budget(std::span<const int> wanted, int budget) {
  std::vector<int> share(wanted.size(), 0);
  for (bool gave = true; budget > 0 && gave;) {
    gave = false;
    for (size_t i = 0; i < wanted.size() && budget > 0; ++i)
      if (share[i] < wanted[i]) {
        ++share[i];
        --budget;
        gave = true;
      }
  }
  return share;
}

}  // namespace skiff
