#include "engine/logprobs.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "base/error.h"

namespace skiff {
namespace {

constexpr float kInf = std::numeric_limits<float>::infinity();

// The largest logit, NaN counted as -inf (as the sampler counts it).
float max_logit(std::span<const float> logits) {
  float max = -kInf;
  for (const float x : logits) max = x > max ? x : max;
  if (max == -kInf) fail("logprobs: no logit is finite or +inf (all NaN or -inf)");
  return max;
}

// log(sum exp(logit - max)). Each term is at most 1 and computed in float; the
// sum runs in double so 150k small terms add up without losing the tail. With
// +inf logits each of them is one term of 1 and the finite ones are 0.
double log_sum_exp_above_max(std::span<const float> logits, float max) {
  double sum = 0;
  for (const float x : logits)
    if (x == max) sum += 1;
    else if (x > -kInf) sum += std::exp(x - max);
  return std::log(sum);
}

struct Ranked {
  float logit;
  int32_t id;
};

// Heap order with the least likely kept token on top (lower logit, or the
// higher id on a tie), so a newcomer is compared against it alone.
bool ranks_higher(const Ranked& a, const Ranked& b) {
  return a.logit > b.logit || (a.logit == b.logit && a.id < b.id);
}

// The n highest-ranked tokens, most likely first. Ids arrive in increasing
// order, so a newcomer tying the heap's worst ranks below it and stays out.
std::vector<Ranked> top_tokens(std::span<const float> logits, size_t n) {
  std::vector<Ranked> heap;
  heap.reserve(n);
  for (size_t i = 0; i < logits.size(); ++i) {
    const float logit = std::isnan(logits[i]) ? -kInf : logits[i];  // keeps the heap ordered
    const Ranked candidate{logit, static_cast<int32_t>(i)};
    if (heap.size() < n) {
      heap.push_back(candidate);
      std::push_heap(heap.begin(), heap.end(), ranks_higher);
    } else if (candidate.logit > heap.front().logit) {
      std::pop_heap(heap.begin(), heap.end(), ranks_higher);
      heap.back() = candidate;
      std::push_heap(heap.begin(), heap.end(), ranks_higher);
    }
  }
  std::sort_heap(heap.begin(), heap.end(), ranks_higher);
  return heap;
}

}  // namespace

TokenLogprob token_logprob(std::span<const float> logits, int32_t token, int top_n) {
  if (token < 0 || static_cast<size_t>(token) >= logits.size()) {
    fail("logprobs: token {} is outside the vocabulary of {}", token, logits.size());
  }
  if (top_n < 0) fail("logprobs: top_n {} is negative", top_n);
  const float max = max_logit(logits);
  const double log_norm = log_sum_exp_above_max(logits, max);
  // -inf (and NaN) logits are -inf; the maxima are -log_norm, also when +inf.
  const auto logprob = [&](float logit) {
    if (logit == max) return static_cast<float>(-log_norm);
    if (!(logit > -kInf)) return -kInf;
    return static_cast<float>(double(logit) - max - log_norm);
  };

  TokenLogprob result;
  result.token = token;
  result.logprob = logprob(logits[token]);
  if (top_n > 0) {
    for (const Ranked& r : top_tokens(logits, std::min<size_t>(top_n, logits.size()))) {
      result.top.emplace_back(r.id, logprob(r.logit));
    }
  }
  return result;
}

}  // namespace skiff
