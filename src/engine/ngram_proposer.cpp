#include "engine/ngram_proposer.h"

#include <algorithm>

#include "base/error.h"

namespace skiff {

NgramProposer::NgramProposer(int ngram_min, int ngram_max) : ngram_min_(ngram_min), ngram_max_(ngram_max) {
  if (ngram_min < 1 || ngram_max < ngram_min)
    fail("n-gram drafting: need 1 <= ngram_min <= ngram_max, not {} and {}", ngram_min, ngram_max);
}

void NgramProposer::propose(std::span<Draft* const> drafts) {
  for (Draft* draft : drafts) {
    draft->probs.clear();
    draft->tokens = lookup(draft->seq->tokens, draft->max_tokens);
  }
}

std::vector<int32_t> NgramProposer::lookup(std::span<const int32_t> tokens, int max_tokens) const {
  const int size = static_cast<int>(tokens.size());
  for (int n = std::min(ngram_max_, size - 1); n >= ngram_min_; --n) {
    const std::span<const int32_t> suffix = tokens.last(n);
    // Latest first: recent text predicts the next tokens best.
    for (int start = size - n - 1; start >= 0; --start) {
      if (!std::equal(suffix.begin(), suffix.end(), tokens.begin() + start)) continue;
      const int from = start + n;
      const int count = std::min(max_tokens, size - from);
      return {tokens.begin() + from, tokens.begin() + from + count};
    }
  }
  return {};
}

}  // namespace skiff
