#include "kernels/ops/ops.h"

#include <cmath>

#include "kernels/isa.h"

namespace skiff {

#define SKIFF_DECLARE_OPS(isa)                                              \
  namespace isa {                                                           \
  void rmsnorm(const float* x, const float* w, int n, float eps, float* out); \
  void silu_mul(float* gate, const float* up, long n);                      \
  void gelu_tanh_mul(float* gate, const float* up, long n);                 \
  void softcap(float* x, long n, float cap);                                \
  float dot(const float* a, const float* b, int n);                         \
  void add(float* x, const float* y, long n);                               \
  float quantize_q8_span(const float* x, signed char* q, long n, int* sums32); \
  void to_fp16(const float* x, unsigned short* out, long n);                \
  }
SKIFF_DECLARE_OPS(scalar)
SKIFF_DECLARE_OPS(avx2)
SKIFF_DECLARE_OPS(avx512)
#undef SKIFF_DECLARE_OPS

// Calls the copy of `fn` compiled for the active ISA.
#define SKIFF_DISPATCH(fn, ...)                                \
  switch (active_isa()) {                                      \
    case Isa::kAvx512: return avx512::fn(__VA_ARGS__);         \
    case Isa::kAvx2: return avx2::fn(__VA_ARGS__);             \
    case Isa::kScalar: break;                                  \
  }                                                            \
  return scalar::fn(__VA_ARGS__)

void rmsnorm(const float* x, const float* weight, int n, float eps, float* out) {
  SKIFF_DISPATCH(rmsnorm, x, weight, n, eps, out);
}
void silu_mul(float* gate, const float* up, int64_t n) { SKIFF_DISPATCH(silu_mul, gate, up, n); }
void gelu_tanh_mul(float* gate, const float* up, int64_t n) { SKIFF_DISPATCH(gelu_tanh_mul, gate, up, n); }
void softcap(float* x, int64_t n, float cap) { SKIFF_DISPATCH(softcap, x, n, cap); }
float dot(const float* a, const float* b, int n) { SKIFF_DISPATCH(dot, a, b, n); }
void add(float* x, const float* y, int64_t n) { SKIFF_DISPATCH(add, x, y, n); }
float quantize_q8_span(const float* x, int8_t* q, int64_t n, int32_t* sums32) {
  SKIFF_DISPATCH(quantize_q8_span, x, reinterpret_cast<signed char*>(q), n, reinterpret_cast<int*>(sums32));
}
void to_fp16(const float* x, uint16_t* out, int64_t n) { SKIFF_DISPATCH(to_fp16, x, out, n); }

void rope_frequencies(int rope_dim, float theta, const float* factors, float* freq) {
  for (int i = 0; i < rope_dim / 2; ++i) {
    double f = std::pow(static_cast<double>(theta), -2.0 * i / rope_dim);
    if (factors) f /= factors[i];
    freq[i] = static_cast<float>(f);
  }
}

void rope_angles(const float* freq, int rope_dim, int64_t pos, float* cos, float* sin) {
  for (int i = 0; i < rope_dim / 2; ++i) {
    const double angle = static_cast<double>(pos) * freq[i];
    cos[i] = static_cast<float>(std::cos(angle));
    sin[i] = static_cast<float>(std::sin(angle));
  }
}

void rope(float* x, int n_heads, int head_dim, int rope_dim, const float* cos, const float* sin,
          RopeStyle style) {
  const int half = rope_dim / 2;
  for (int i = 0; i < half; ++i) {
    const float c = cos[i], s = sin[i];
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

}  // namespace skiff
