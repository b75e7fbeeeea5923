// Float-weight (F32, F16, BF16) matmul kernels for AVX2 + FMA + F16C.
//
// The same two paths as matmul_float_avx512.cpp, sized for 16 ymm registers:
// - decode (under kGemmMinTokens tokens) streams the weight rows once per 4
//   tokens, converting in registers;
// - prefill is a cache-blocked GEMM over weight blocks converted once to f32
//   and packed [k][kNR], with a 6-token x 16-output microkernel.
// The three weight types share all of this through a converter (load8).
//
// No STL here: see the note on *_avx2.cpp files in CMakeLists.txt.
#include <immintrin.h>

#include "kernels/matmul/matmul_kernels.h"
#include "kernels/scratch.h"
#include "kernels/x86/avx2/matmul_avx2.h"

namespace skiff {
namespace {

// ---- converters: 8 weights of a row at element i, as f32 --------------------

struct F32W {
  static constexpr int kBytes = 4;
  static __m256 load8(const uint8_t* row, int64_t i) {
    return _mm256_loadu_ps(reinterpret_cast<const float*>(row) + i);
  }
};

struct F16W {
  static constexpr int kBytes = 2;
  static __m256 load8(const uint8_t* row, int64_t i) {
    return _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(row + 2 * i)));
  }
};

// bfloat16 is the top half of an f32: widen to 32 bits and shift into place.
struct BF16W {
  static constexpr int kBytes = 2;
  static __m256 load8(const uint8_t* row, int64_t i) {
    const __m128i h = _mm_loadu_si128(reinterpret_cast<const __m128i*>(row + 2 * i));
    return _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_cvtepu16_epi32(h), 16));
  }
};

// The first n (< 8) elements at i, the other lanes zero. AVX2 has no masked
// 16-bit loads, so the tail goes through a zeroed copy.
template <class W>
__m256 load_part(const uint8_t* row, int64_t i, int64_t n) {
  alignas(32) uint8_t buf[32] = {};
  __builtin_memcpy(buf, row + i * W::kBytes, n * W::kBytes);
  return W::load8(buf, 0);
}

template <class W>
__m256 load_upto8(const uint8_t* row, int64_t i, int64_t n) {
  return n >= 8 ? W::load8(row, i) : load_part<W>(row, i, n);
}

int64_t round_up(int64_t n, int64_t m) { return (n + m - 1) / m * m; }

// ---- decode: a few tokens, weights streamed once -----------------------------

// Rows in flight: 8 independent accumulator chains hide the FMA latency and 8
// streams keep enough misses outstanding; fewer rows when more tokens would
// overflow the 16 registers.
template <int T>
constexpr int kDecodeRows = 8 / T;
template <class W>
constexpr int kDecodeTokens = 4;

// acc[j][t] += row j (8 elements at i, n of them valid) * token t.
template <class W, int T>
inline void decode_step(const uint8_t* const* rows, const uint8_t* x, int64_t cols, int64_t i,
                        int64_t n, __m256 (&acc)[kDecodeRows<T>][T]) {
  __m256 xv[T];
#pragma GCC unroll 16
  for (int t = 0; t < T; ++t) xv[t] = load_upto8<F32W>(x + 4 * t * cols, i, n);
#pragma GCC unroll 16
  for (int j = 0; j < kDecodeRows<T>; ++j) {
    const __m256 wv = load_upto8<W>(rows[j], i, n);
#pragma GCC unroll 16
    for (int t = 0; t < T; ++t) acc[j][t] = _mm256_fmadd_ps(wv, xv[t], acc[j][t]);
  }
}

float reduce_add(__m256 v) {
  __m128 s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
  s = _mm_add_ps(s, _mm_movehl_ps(s, s));
  return _mm_cvtss_f32(_mm_add_ss(s, _mm_movehdup_ps(s)));
}

template <class W, int T>
void decode(const Matrix& w, const Activations& x, float* y, int64_t ldy, int64_t r0,
            int64_t r1) {
  constexpr int R = kDecodeRows<T>;
  const int64_t cols = w.cols, body = cols & ~int64_t{7};
  const uint8_t* xb = reinterpret_cast<const uint8_t*>(x.f32);
  for (int64_t r = r0; r < r1; r += R) {
    // Past the last row, repeat it (already in cache) and drop the results.
    const uint8_t* rows[R];
#pragma GCC unroll 16
    for (int j = 0; j < R; ++j) rows[j] = w.row(r + j < r1 ? r + j : r1 - 1);
    __m256 acc[R][T];
#pragma GCC unroll 16
    for (int j = 0; j < R; ++j)
#pragma GCC unroll 16
      for (int t = 0; t < T; ++t) acc[j][t] = _mm256_setzero_ps();
    for (int64_t i = 0; i < body; i += 8) decode_step<W, T>(rows, xb, cols, i, 8, acc);
    if (body < cols) decode_step<W, T>(rows, xb, cols, body, cols - body, acc);
#pragma GCC unroll 16
    for (int j = 0; j < R; ++j)
#pragma GCC unroll 16
      for (int t = 0; t < T; ++t)
        if (r + j < r1) y[t * ldy + r + j] = reduce_add(acc[j][t]);
  }
}

// ---- prefill: cache-blocked GEMM -------------------------------------------

constexpr int kNR = 16;   // weight rows (outputs) per tile: two ymm per token
constexpr int kMR = 6;    // tokens per tile: 12 accumulators + 2 weights + 1 broadcast
constexpr int kKC = 512;  // depth of a packed block: a token micro-panel (12 KB) stays in L1
constexpr int kNC = 128;  // weight rows per packed block: 256 KB of f32, in L2
constexpr int kMC = 512;  // tokens per pass: each weight is converted once per pass

// In-register transpose of an 8x8 block: v[r] lane c becomes v[c] lane r.
__attribute__((always_inline)) inline void transpose8(__m256 (&v)[8]) {
  __m256 u[8];
  // u[4g + c]: column c (and c+4 in the upper 128-bit lane) of rows 4g..4g+3.
  for (int g = 0; g < 2; ++g) {
    const __m256 lo01 = _mm256_unpacklo_ps(v[4 * g], v[4 * g + 1]);
    const __m256 hi01 = _mm256_unpackhi_ps(v[4 * g], v[4 * g + 1]);
    const __m256 lo23 = _mm256_unpacklo_ps(v[4 * g + 2], v[4 * g + 3]);
    const __m256 hi23 = _mm256_unpackhi_ps(v[4 * g + 2], v[4 * g + 3]);
    u[4 * g + 0] = _mm256_shuffle_ps(lo01, lo23, 0x44);
    u[4 * g + 1] = _mm256_shuffle_ps(lo01, lo23, 0xEE);
    u[4 * g + 2] = _mm256_shuffle_ps(hi01, hi23, 0x44);
    u[4 * g + 3] = _mm256_shuffle_ps(hi01, hi23, 0xEE);
  }
  for (int c = 0; c < 4; ++c) {
    v[c] = _mm256_permute2f128_ps(u[c], u[c + 4], 0x20);
    v[c + 4] = _mm256_permute2f128_ps(u[c], u[c + 4], 0x31);
  }
}

// Packs weight rows [j0, j0 + n) x columns [k0, k0 + kc) as f32 panels of kNR
// rows, each laid out [kc][kNR]; rows past n (up to a multiple of kNR) are zero.
template <class W>
void pack_weights(const Matrix& w, int64_t j0, int64_t n, int64_t k0, int kc, float* wp) {
  const uint8_t* base = w.row(j0);
  const size_t stride = row_bytes(w.type, w.cols);
  for (int64_t jb = 0; jb < round_up(n, kNR); jb += 8) {
    float* panel = wp + jb / kNR * kc * kNR + jb % kNR;
    for (int kk = 0; kk < kc; kk += 8) {
      __m256 v[8];
      for (int r = 0; r < 8; ++r)
        v[r] = jb + r < n ? load_upto8<W>(base + (jb + r) * stride, k0 + kk, kc - kk)
                          : _mm256_setzero_ps();
      transpose8(v);
      for (int q = 0; q < 8 && kk + q < kc; ++q) _mm256_storeu_ps(panel + (kk + q) * kNR, v[q]);
    }
  }
}

// Packs columns [k0, k0 + kc) of tokens [t0, t0 + m) as micro-panels of kMR
// tokens, each laid out [kc][kMR]; tokens past m (up to a multiple of kMR) are zero.
void pack_tokens(const Activations& x, int t0, int m, int64_t k0, int kc, float* xp) {
  for (int g = 0; g < m; g += kMR, xp += kc * kMR)
    for (int i = 0; i < kMR; ++i) {
      if (g + i < m) {
        const float* src = x.f32 + (t0 + g + i) * x.cols + k0;
        for (int k = 0; k < kc; ++k) xp[k * kMR + i] = src[k];
      } else {
        for (int k = 0; k < kc; ++k) xp[k * kMR + i] = 0.0f;
      }
    }
}

// Mask of the first n (1..7) lanes, for maskload/maskstore.
__m256i first_lanes(int64_t n) {
  return _mm256_cmpgt_epi32(_mm256_set1_epi32(static_cast<int>(n)), _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
}

// Stores the first n (all if n >= 8) lanes of v to y.
void store_upto8(float* y, __m256 v, int64_t n) {
  if (n >= 8) _mm256_storeu_ps(y, v);
  else if (n > 0) _mm256_maskstore_ps(y, first_lanes(n), v);
}

// The first n (all if n >= 8) lanes of y, the others zero.
__m256 load_first_lanes(const float* y, int64_t n) {
  return n >= 8 ? _mm256_loadu_ps(y) : n > 0 ? _mm256_maskload_ps(y, first_lanes(n)) : _mm256_setzero_ps();
}

// y[i][j] = (y[i][j] if accumulate, else 0) + sum over k of xp[k][i] *
// wp[k][j], for tokens i < m and outputs j < min(n, kNR). The accumulators
// start from y, so each output is one chain of FMAs in column order across
// depth blocks.
void tile(const float* xp, const float* wp, int kc, float* y, int64_t ldy, int m, int64_t n,
          bool accumulate) {
  __m256 c[kMR][2];
#pragma GCC unroll 6
  for (int i = 0; i < kMR; ++i) {
    const bool load = accumulate && i < m;
    c[i][0] = load ? load_first_lanes(y + i * ldy, n) : _mm256_setzero_ps();
    c[i][1] = load ? load_first_lanes(y + i * ldy + 8, n - 8) : _mm256_setzero_ps();
  }
  for (int k = 0; k < kc; ++k, xp += kMR, wp += kNR) {
    const __m256 w0 = _mm256_loadu_ps(wp), w1 = _mm256_loadu_ps(wp + 8);
#pragma GCC unroll 6
    for (int i = 0; i < kMR; ++i) {
      const __m256 b = _mm256_broadcast_ss(xp + i);
      c[i][0] = _mm256_fmadd_ps(b, w0, c[i][0]);
      c[i][1] = _mm256_fmadd_ps(b, w1, c[i][1]);
    }
  }
  // Unrolled like the loop above so the accumulators stay in registers.
#pragma GCC unroll 6
  for (int i = 0; i < kMR; ++i, y += ldy) {
    if (i >= m) break;
    store_upto8(y, c[i][0], n);
    store_upto8(y + 8, c[i][1], n - 8);
  }
}

#include "kernels/x86/matmul_float_driver.h"

}  // namespace

KernelEntry matmul_float_rows_avx2(DType type) { return float_kernel_for(type); }

}  // namespace skiff
