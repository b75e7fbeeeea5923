#include "engine/step_budget.h"

#include <algorithm>
#include <cmath>

namespace skiff {
namespace {

// Halves the weight of older prefill steps each step: a prompt's cost per
// token grows with its depth, and the estimate follows within a few steps.
constexpr double kPrefillDecay = 0.5;
// Decode-only steps come every few milliseconds: a slower average smooths
// their noise.
constexpr double kDecodeWeight = 0.2;

}  // namespace

double StepBudget::seconds_per_prefill_token() const {
  return prefill_tokens_ > 0 ? prefill_seconds_ / prefill_tokens_ : -1;
}

int StepBudget::prefill_tokens(int n_decodes, int max_tokens) const {
  if (!limited() || max_tokens <= 0) return std::max(max_tokens, 0);
  const int least = std::min(kMinPrefillTokens, max_tokens);
  const double per_token = seconds_per_prefill_token();
  if (per_token <= 0) return least;
  const double left = target_ - std::max(decode_s_, 0.0) * n_decodes;
  const double tokens = std::floor(left / per_token + 1e-6);  // 0.11 / 0.001 is 109.99...
  if (!(tokens > least)) return least;  // also NaN
  return tokens >= max_tokens ? max_tokens : static_cast<int>(tokens);
}

void StepBudget::observe(int n_decodes, int n_prefill_tokens, double seconds) {
  if (!(seconds >= 0)) return;
  if (n_prefill_tokens == 0) {
    if (n_decodes == 0) return;
    const double per_decode = seconds / n_decodes;
    decode_s_ = decode_s_ < 0 ? per_decode : decode_s_ + kDecodeWeight * (per_decode - decode_s_);
    return;
  }
  // What the decodes beside them cost is the decode estimate's; the rest is the prompt tokens'.
  const double prefill_seconds = std::max(seconds - std::max(decode_s_, 0.0) * n_decodes, 0.0);
  prefill_seconds_ = kPrefillDecay * prefill_seconds_ + prefill_seconds;
  prefill_tokens_ = kPrefillDecay * prefill_tokens_ + n_prefill_tokens;
}

}  // namespace skiff
