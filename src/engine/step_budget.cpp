#include "engine/step_budget.h"

#include <algorithm>
#include <cmath>

namespace skiff {

int StepBudget::prefill_tokens(int max_tokens) {
  if (max_tokens <= 0) return offered_ = 0;
  // Unmeasured, the first prefill of all: nothing is running yet to wait for it.
  if (!limited() || tokens_ < 0) return offered_ = max_tokens;
  const double tokens = std::floor(tokens_);
  return offered_ = tokens >= max_tokens ? max_tokens : static_cast<int>(tokens);
}

void StepBudget::observe(int n_prefill_tokens, double seconds) {
  if (!limited() || n_prefill_tokens <= 0 || !(seconds > 0)) return;
  const double least = kMinPrefillTokens;
  // What would have fit, had the step's time been the prompt tokens' alone:
  // an underestimate where decodes or a step's fixed cost took part of it.
  const double fits = n_prefill_tokens * target_ / seconds;
  if (tokens_ < 0) {
    tokens_ = std::max(fits, least);
  } else if (seconds > target_ || n_prefill_tokens >= offered_) {
    // Over the target, or the budget held the step: scaled from the tokens
    // that ran (not from the budget, which may exceed what any step used),
    // growing at most 2x a step.
    tokens_ = std::clamp(fits, least, std::max(n_prefill_tokens * kMaxGrowth, least));
  } else {
    // Short prompts under the target: their fixed cost makes `fits` low,
    // so they may raise the budget (by 2x at most) but never lower it.
    tokens_ = std::max(tokens_, std::min(fits, tokens_ * kMaxGrowth));
  }
}

}  // namespace skiff
