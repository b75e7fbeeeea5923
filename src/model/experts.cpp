#include "model/experts.h"

#include <cmath>
#include <vector>

namespace skiff {
namespace {

// exp(v[i] - max) / Σ over the n values, in place.
void softmax_in_place(float* v, int n) {
  float max = v[0];
  for (int i = 1; i < n; ++i) max = std::fmax(max, v[i]);
  double sum = 0;
  for (int i = 0; i < n; ++i) sum += v[i] = std::exp(v[i] - max);
  for (int i = 0; i < n; ++i) v[i] = static_cast<float>(v[i] / sum);
}

}  // namespace

void route_token(const ExpertsSpec& spec, const float* logits, int32_t* ids, float* weights) {
  const int n = spec.n_experts, k = spec.n_used;
  // Selection by repeated maximum: k is small (2-8), and a comparison with NaN
  // is false, so no ordering is ever asked of it (std::partial_sort would be undefined).
  thread_local std::vector<char> taken;
  taken.assign(n, 0);
  for (int j = 0; j < k; ++j) {
    int best = -1;
    for (int e = 0; e < n; ++e)
      if (!taken[e] && (best < 0 || logits[e] > logits[best])) best = e;
    taken[best] = 1;
    ids[j] = best;
  }
  thread_local std::vector<float> probs;
  probs.assign(logits, logits + n);
  softmax_in_place(probs.data(), n);
  double sum = 0;
  for (int j = 0; j < k; ++j) sum += weights[j] = probs[ids[j]];
  if (spec.normalize)
    for (int j = 0; j < k; ++j) weights[j] = static_cast<float>(weights[j] / sum);
}

}  // namespace skiff
