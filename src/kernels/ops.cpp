#include "kernels/ops.h"

#include <cmath>

namespace skiff {

void rmsnorm(const float* x, const float* weight, int n, float eps, float* out) {
  double sum_sq = 0.0;  // double: the norm of a 4k-wide row is cheap to get exactly
  for (int i = 0; i < n; ++i) sum_sq += static_cast<double>(x[i]) * x[i];
  const float scale = static_cast<float>(1.0 / std::sqrt(sum_sq / n + eps));
  for (int i = 0; i < n; ++i) out[i] = x[i] * scale * weight[i];
}

void rope_frequencies(int rope_dim, float theta, const float* factors, float* freq) {
  for (int i = 0; i < rope_dim / 2; ++i) {
    double f = std::pow(static_cast<double>(theta), -2.0 * i / rope_dim);
    if (factors) f /= factors[i];
    freq[i] = static_cast<float>(f);
  }
}

void rope(float* x, int n_heads, int head_dim, int rope_dim, const float* freq, int64_t pos,
          RopeStyle style) {
  const int half = rope_dim / 2;
  for (int i = 0; i < half; ++i) {
    const double angle = static_cast<double>(pos) * freq[i];
    const float c = static_cast<float>(std::cos(angle));
    const float s = static_cast<float>(std::sin(angle));
    const int a = style == RopeStyle::kInterleaved ? 2 * i : i;
    const int b = style == RopeStyle::kInterleaved ? 2 * i + 1 : i + half;
    for (int h = 0; h < n_heads; ++h) {
      float* v = x + static_cast<int64_t>(h) * head_dim;
      const float x0 = v[a], x1 = v[b];
      v[a] = x0 * c - x1 * s;
      v[b] = x0 * s + x1 * c;
    }
  }
}

void softmax(float* x, int n) {
  float max = x[0];
  for (int i = 1; i < n; ++i) max = std::fmax(max, x[i]);
  float sum = 0.0f;
  for (int i = 0; i < n; ++i) {
    x[i] = std::exp(x[i] - max);
    sum += x[i];
  }
  const float inv = 1.0f / sum;
  for (int i = 0; i < n; ++i) x[i] *= inv;
}

void silu_mul(float* gate, const float* up, int n) {
  for (int i = 0; i < n; ++i) {
    const float g = gate[i];
    gate[i] = g / (1.0f + std::exp(-g)) * up[i];
  }
}

float dot(const float* a, const float* b, int n) {
  // Independent lanes let the compiler use vector registers without reassociating
  // a single sum (which it may not do without -ffast-math).
  constexpr int kLanes = 16;
  float lanes[kLanes] = {};
  int i = 0;
  for (; i + kLanes <= n; i += kLanes)
    for (int j = 0; j < kLanes; ++j) lanes[j] += a[i + j] * b[i + j];
  float sum = 0.0f;
  for (int j = 0; j < kLanes; ++j) sum += lanes[j];
  for (; i < n; ++i) sum += a[i] * b[i];
  return sum;
}

}  // namespace skiff
