#include "engine/step_budget.h"

#include <algorithm>
#include <cmath>

namespace skiff {

int StepBudget::prefill_tokens(int max_tokens) {
  if (max_tokens <= 0) return offered_ = 0;
  if (!limited()) return offered_ = max_tokens;
  const double tokens = std::max(std::floor(tokens_), static_cast<double>(kMinPrefillTokens));
  return offered_ = tokens >= max_tokens ? max_tokens : static_cast<int>(tokens);
}

void StepBudget::observe(int n_prefill_tokens, double seconds) {
  if (!limited() || n_prefill_tokens <= 0 || !(seconds > 0)) return;
  // A step under the target that did not use its whole budget says nothing
  // of what would fit (its prompts were short).
  if (seconds <= target_ && n_prefill_tokens < offered_) return;
  // Scaled from the tokens that ran (not from the budget, which may have
  // grown past what any step used).
  const double ratio = std::clamp(target_ / seconds, 1 / kMaxChange, kMaxChange);
  tokens_ = std::max(n_prefill_tokens * ratio, static_cast<double>(kMinPrefillTokens));
}

}  // namespace skiff
