// The row kernels compiled for avx512.
#include <immintrin.h>

#include "kernels/x86/avx512/avx512_header_warnings.h"

namespace skiff::avx512::ops {
#include "kernels/ops/ops_impl.h"
}  // namespace skiff::avx512::ops

namespace skiff::avx512 {

void rmsnorm(const float* x, const float* w, int n, float eps, float* out) { ops::rmsnorm(x, w, n, eps, out); }
void silu_mul(float* gate, const float* up, long n) { ops::silu_mul(gate, up, n); }
void gelu_tanh_mul(float* gate, const float* up, long n) { ops::gelu_tanh_mul(gate, up, n); }
void softcap(float* x, long n, float cap) { ops::softcap(x, n, cap); }
float dot(const float* a, const float* b, int n) { return ops::dot(a, b, n); }
void add(float* x, const float* y, long n) { ops::add(x, y, n); }
float quantize_q8_span(const float* x, signed char* q, long n, int* sums32) {
  return ops::quantize_q8_span(x, q, n, sums32);
}
void to_fp16(const float* x, unsigned short* out, long n) { ops::to_fp16(x, out, n); }

}  // namespace skiff::avx512
