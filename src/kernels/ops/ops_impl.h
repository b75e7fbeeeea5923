// Bodies of the row kernels, as plain loops the compiler vectorizes. Included
// by ops_{scalar,avx2,avx512}.cpp inside a per-ISA namespace, so each copy is
// compiled with its own flags and cannot be merged with another by the linker.
// No STL here (see CMakeLists.txt).

#include "kernels/vec_math.h"

inline void rmsnorm(const float* x, const float* weight, int n, float eps, float* out) {
  float sum_sq = 0.0f;
#pragma omp simd reduction(+ : sum_sq)
  for (int i = 0; i < n; ++i) sum_sq += x[i] * x[i];
  const float scale = 1.0f / __builtin_sqrtf(sum_sq / static_cast<float>(n) + eps);
#pragma omp simd
  for (int i = 0; i < n; ++i) out[i] = x[i] * scale * weight[i];
}

// e first, then one division: written x / (1 + exp(-x)) · up, GCC 12 gave each of
// fast_exp's clamped ranges its own division (three per vector, most of the loop's time).
inline void silu_mul(float* gate, const float* up, long n) {
#pragma omp simd
  for (long i = 0; i < n; ++i) {
    const float x = gate[i], e = fast_exp(-x);
    gate[i] = x * up[i] / (1.0f + e);
  }
}

// GELU with the tanh approximation, 0.5·x·(1 + tanh(u)), written as
// x / (1 + exp(-2u)) (the same function, without tanh's cancellation).
inline void gelu_tanh_mul(float* gate, const float* up, long n) {
#pragma omp simd
  for (long i = 0; i < n; ++i) {
    const float x = gate[i];
    const float u = 0.7978845608028654f * (x + 0.044715f * x * x * x);
    const float e = fast_exp(-2.0f * u);
    gate[i] = x * up[i] / (1.0f + e);
  }
}

inline void softcap(float* x, long n, float cap) {
#pragma omp simd
  for (long i = 0; i < n; ++i) x[i] = fast_softcap(x[i], cap);
}

inline float dot(const float* a, const float* b, int n) {
  float sum = 0.0f;
#pragma omp simd reduction(+ : sum)
  for (int i = 0; i < n; ++i) sum += a[i] * b[i];
  return sum;
}

inline void add(float* x, const float* y, long n) {
#pragma omp simd
  for (long i = 0; i < n; ++i) x[i] += y[i];
}

// The vector copies round x/d with vcvtps2dq (half to even, the default
// MXCSR mode) after a separate multiply; a plain loop would not vectorize its
// rounding, and the default -ffp-contract=fast could fuse the product into
// the magic-number add below and round differently from the other copies.
// 1/d, or 0 when d is 0 or so small (below ~3e-39) that 1/d overflows: such
// a span quantizes to zeros on every ISA (an infinite 1/d converts to
// different integers on each).
inline float inverse_scale(float d) {
  const float id = d != 0 ? 1.0f / d : 0.0f;
  return id <= __FLT_MAX__ ? id : 0.0f;
}

// A span holding NaN or ±inf (a broken model's activations) quantizes to zeros
// with the scale NaN, so every product with it is NaN, on every ISA: converted,
// such values became INT_MIN and overflowed the int sums.
inline float non_finite_q8_span(signed char* q, long n, int* sums32) {
  for (long i = 0; i < n; ++i) q[i] = 0;
  for (long i = 0; i < n / 32; ++i) sums32[i] = 0;
  return __builtin_nanf("");
}

#if defined(__AVX512F__)
inline float quantize_q8_span(const float* x, signed char* q, long n, int* sums32) {
  __m512 amax = _mm512_setzero_ps(), finite = _mm512_setzero_ps();  // x * 0 is NaN unless x is finite
  for (long i = 0; i < n; i += 16) {
    const __m512 v = _mm512_loadu_ps(x + i);
    amax = _mm512_max_ps(amax, _mm512_abs_ps(v));
    finite = _mm512_add_ps(finite, _mm512_mul_ps(v, _mm512_setzero_ps()));
  }
  if (_mm512_reduce_add_ps(finite) != 0) return non_finite_q8_span(q, n, sums32);
  const float d = _mm512_reduce_max_ps(amax) / 127;
  const __m512 id = _mm512_set1_ps(inverse_scale(d));
  for (long i = 0; i < n; i += 32) {
    const __m512i a = _mm512_cvtps_epi32(_mm512_mul_ps(_mm512_loadu_ps(x + i), id));
    const __m512i b = _mm512_cvtps_epi32(_mm512_mul_ps(_mm512_loadu_ps(x + i + 16), id));
    _mm_storeu_si128(reinterpret_cast<__m128i*>(q + i), _mm512_cvtepi32_epi8(a));
    _mm_storeu_si128(reinterpret_cast<__m128i*>(q + i + 16), _mm512_cvtepi32_epi8(b));
    sums32[i / 32] = _mm512_reduce_add_epi32(_mm512_add_epi32(a, b));
  }
  return d;
}
#elif defined(__AVX2__)
inline float quantize_q8_span(const float* x, signed char* q, long n, int* sums32) {
  const __m256 abs_mask = _mm256_castsi256_ps(_mm256_set1_epi32(0x7fffffff));
  __m256 amax = _mm256_setzero_ps(), finite = _mm256_setzero_ps();  // x * 0 is NaN unless x is finite
  for (long i = 0; i < n; i += 8) {
    const __m256 v = _mm256_loadu_ps(x + i);
    amax = _mm256_max_ps(amax, _mm256_and_ps(v, abs_mask));
    finite = _mm256_add_ps(finite, _mm256_mul_ps(v, _mm256_setzero_ps()));
  }
  const __m128 f4 = _mm_add_ps(_mm256_castps256_ps128(finite), _mm256_extractf128_ps(finite, 1));
  if (_mm_movemask_ps(_mm_cmpneq_ps(f4, _mm_setzero_ps())) != 0) return non_finite_q8_span(q, n, sums32);
  __m128 m4 = _mm_max_ps(_mm256_castps256_ps128(amax), _mm256_extractf128_ps(amax, 1));
  m4 = _mm_max_ps(m4, _mm_movehl_ps(m4, m4));
  m4 = _mm_max_ss(m4, _mm_movehdup_ps(m4));
  const float d = _mm_cvtss_f32(m4) / 127;
  const __m256 id = _mm256_set1_ps(inverse_scale(d));
  for (long i = 0; i < n; i += 32) {
    __m256i v[4];
    for (int k = 0; k < 4; ++k) v[k] = _mm256_cvtps_epi32(_mm256_mul_ps(_mm256_loadu_ps(x + i + 8 * k), id));
    // packs interleave the 128-bit lanes: dwords come out as 0,4,1,5,2,6,3,7
    const __m256i bytes = _mm256_packs_epi16(_mm256_packs_epi32(v[0], v[1]), _mm256_packs_epi32(v[2], v[3]));
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(q + i),
                        _mm256_permutevar8x32_epi32(bytes, _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7)));
    const __m256i sum8 = _mm256_add_epi32(_mm256_add_epi32(v[0], v[1]), _mm256_add_epi32(v[2], v[3]));
    __m128i s4 = _mm_add_epi32(_mm256_castsi256_si128(sum8), _mm256_extracti128_si256(sum8, 1));
    s4 = _mm_add_epi32(s4, _mm_shuffle_epi32(s4, 0x4E));
    s4 = _mm_add_epi32(s4, _mm_shuffle_epi32(s4, 0xB1));
    sums32[i / 32] = _mm_cvtsi128_si32(s4);
  }
  return d;
}
#else
inline float quantize_q8_span(const float* x, signed char* q, long n, int* sums32) {
  float amax = 0, finite = 0;  // x * 0 is NaN unless x is finite
  for (long i = 0; i < n; ++i) {
    const float a = __builtin_fabsf(x[i]);
    amax = a > amax ? a : amax;
    finite += x[i] * 0.0f;
  }
  if (finite != 0) return non_finite_q8_span(q, n, sums32);
  const float d = amax / 127;
  const float id = inverse_scale(d);
  constexpr float kMagic = 12582912.0f;  // 1.5 · 2^23: x + kMagic - kMagic rounds half to even
  for (long i = 0; i < n; i += 32) {
    int s = 0;
    for (long j = i; j < i + 32; ++j) {
      q[j] = static_cast<signed char>((x[j] * id + kMagic) - kMagic);
      s += q[j];
    }
    sums32[i / 32] = s;
  }
  return d;
}
#endif

// The vector copies convert with vcvtps2ph (round to nearest even, overflow
// to infinity, as f32_to_fp16); only the scalar copy, compiled for baseline
// x86-64, may call the inline f32_to_fp16 (kernels/fp16.h).
inline void to_fp16(const float* x, unsigned short* out, long n) {
  long i = 0;
#if defined(__AVX512F__)
  for (; i + 16 <= n; i += 16)
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(out + i),
                        _mm512_cvtps_ph(_mm512_loadu_ps(x + i), _MM_FROUND_TO_NEAREST_INT));
  if (i < n) {
    const __mmask16 m = static_cast<__mmask16>((1u << (n - i)) - 1);
    _mm256_mask_storeu_epi16(out + i, m, _mm512_cvtps_ph(_mm512_maskz_loadu_ps(m, x + i), _MM_FROUND_TO_NEAREST_INT));
  }
#elif defined(__F16C__)
  for (; i + 8 <= n; i += 8)
    _mm_storeu_si128(reinterpret_cast<__m128i*>(out + i),
                     _mm256_cvtps_ph(_mm256_loadu_ps(x + i), _MM_FROUND_TO_NEAREST_INT));
  if (i < n) {
    float in[8] = {};
    unsigned short half[8];
    for (long j = i; j < n; ++j) in[j - i] = x[j];
    _mm_storeu_si128(reinterpret_cast<__m128i*>(half), _mm256_cvtps_ph(_mm256_loadu_ps(in), _MM_FROUND_TO_NEAREST_INT));
    for (long j = i; j < n; ++j) out[j] = half[j - i];
  }
#else
  for (; i < n; ++i) out[i] = f32_to_fp16(x[i]);
#endif
}
