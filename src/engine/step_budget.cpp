#include "engine/step_budget.h"

#include <algorithm>
#include <cmath>

namespace skiff {
namespace {

// Steps that only decode come every few milliseconds: a slow average
// smooths their noise.
constexpr double kRestWeight = 0.2;

}  // namespace

double StepBudget::step_seconds(double wall_s, double thread_cpu_s) {
  return std::clamp(thread_cpu_s, wall_s / kMostStretch, wall_s);
}

int StepBudget::prefill_tokens(int max_tokens) {
  if (max_tokens <= 0) return offered_ = 0;
  // Unmeasured, the first prefill of all: nothing is running yet to wait for it.
  if (!limited() || tokens_ < 0) return offered_ = max_tokens;
  const double tokens = std::floor(std::max(tokens_, floor_));
  return offered_ = tokens >= max_tokens ? max_tokens : static_cast<int>(tokens);
}

void StepBudget::observe(int n_prefill_tokens, double seconds) {
  if (!limited() || n_prefill_tokens < 0 || !(seconds > 0)) return;
  if (n_prefill_tokens == 0) {
    rest_s_ = rest_s_ < 0 ? seconds : rest_s_ + kRestWeight * (seconds - rest_s_);
    return;
  }
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
    const double most = std::max(n_prefill_tokens * kMaxGrowth, least);
    tokens_ = std::clamp(fits, least, most);
    // A token's cost is the step's time beyond the rest; a step no longer
    // than the rest says nothing of it.
    if (rest_s_ > 0 && seconds > rest_s_)
      floor_ = std::min(rest_s_ * n_prefill_tokens / (seconds - rest_s_), most);
  } else {
    // Short prompts under the target: their fixed cost makes `fits` low,
    // so they may raise the budget (by 2x at most) but never lower it.
    tokens_ = std::max(tokens_, std::min(fits, tokens_ * kMaxGrowth));
  }
}

}  // namespace skiff
