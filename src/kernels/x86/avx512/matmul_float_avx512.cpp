// Float-weight (F32, F16, BF16) matmul kernels for AVX-512.
//
// Two paths, chosen by the number of tokens (on panels both sum every
// output in one order, one FMA chain in column order, so that a token's
// outputs do not depend on the tokens beside it):
// - decode (under kGemmMinTokens tokens) is bound by memory bandwidth: the
//   weights are streamed once per 4 tokens (8 on panels), 8 rows (or one
//   16-row panel) at a time with independent accumulators, converted to f32
//   in registers;
// - prefill is bound by the FMA units: a cache-blocked GEMM packs a block of
//   weight rows, converted once to f32 and transposed to [k][kNR], into
//   thread-local scratch sized for L2 (kernel_scratch), and a register-blocked
//   microkernel computes kMR tokens x kNR outputs from it.
// The three weight types share all of this through a converter (load16).
//
// No STL here: see the note on *_avx512.cpp files in CMakeLists.txt.
#include <immintrin.h>

#include "kernels/x86/avx512/avx512_header_warnings.h"

#include "kernels/matmul/matmul_kernels.h"
#include "kernels/matmul/repack.h"
#include "kernels/scratch.h"
#include "kernels/x86/avx512/matmul_avx512.h"
#include "kernels/x86/quant_blocks_simd.h"

namespace skiff {
namespace {

// ---- converters: 16 weights of a row at element i, as f32 -------------------
// Lanes outside `mask` read nothing and are zero, so tails need no copies.

struct F32W {
  static constexpr bool kFromPanels = false;
  static constexpr int kBytes = 4;
  static __m512 load16(const uint8_t* row, int64_t i, __mmask16 mask) {
    return _mm512_maskz_loadu_ps(mask, reinterpret_cast<const float*>(row) + i);
  }
};

struct F16W {
  static constexpr bool kFromPanels = false;
  static constexpr int kBytes = 2;
  static __m512 load16(const uint8_t* row, int64_t i, __mmask16 mask) {
    return _mm512_cvtph_ps(
        _mm256_maskz_loadu_epi16(mask, reinterpret_cast<const uint16_t*>(row) + i));
  }
};

// bfloat16 is the top half of an f32: widen to 32 bits and shift into place.
struct BF16W {
  static constexpr bool kFromPanels = false;
  static constexpr int kBytes = 2;
  static __m512 load16(const uint8_t* row, int64_t i, __mmask16 mask) {
    const __m256i h = _mm256_maskz_loadu_epi16(mask, reinterpret_cast<const uint16_t*>(row) + i);
    return _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_cvtepu16_epi32(h), 16));
  }
};

// Weights of type E repacked into 16-row panels at load (kernels/matmul/repack.h):
// column k of the panel's rows is one vector.
template <class E>
struct Panels {
  static constexpr bool kFromPanels = true;
  static constexpr int kColumnBytes = 16 * E::kBytes;
  static __m512 column(const uint8_t* panel, int64_t k) { return E::load16(panel, 16 * k, 0xFFFF); }
};

// Mask of the first n lanes (none for n <= 0, all for n >= 16).
__mmask16 first_lanes(int64_t n) {
  return n >= 16 ? 0xFFFF : n <= 0 ? 0 : static_cast<__mmask16>((1u << n) - 1);
}

int64_t round_up(int64_t n, int64_t m) { return (n + m - 1) / m * m; }

// In-register transpose of a 16x16 block: v[r] lane c becomes v[c] lane r.
__attribute__((always_inline)) inline void transpose16(__m512 (&v)[16]) {
  __m512 u[16];
  // u[4g + c]: column c (and c+4, c+8, c+12 in the upper 128-bit lanes) of rows 4g..4g+3.
  for (int g = 0; g < 4; ++g) {
    const __m512 lo01 = _mm512_unpacklo_ps(v[4 * g], v[4 * g + 1]);
    const __m512 hi01 = _mm512_unpackhi_ps(v[4 * g], v[4 * g + 1]);
    const __m512 lo23 = _mm512_unpacklo_ps(v[4 * g + 2], v[4 * g + 3]);
    const __m512 hi23 = _mm512_unpackhi_ps(v[4 * g + 2], v[4 * g + 3]);
    u[4 * g + 0] = _mm512_shuffle_ps(lo01, lo23, 0x44);
    u[4 * g + 1] = _mm512_shuffle_ps(lo01, lo23, 0xEE);
    u[4 * g + 2] = _mm512_shuffle_ps(hi01, hi23, 0x44);
    u[4 * g + 3] = _mm512_shuffle_ps(hi01, hi23, 0xEE);
  }
  // Gather the four row groups' 128-bit lanes of each column.
  for (int c = 0; c < 4; ++c) {
    const __m512 a = _mm512_shuffle_f32x4(u[c], u[c + 4], 0x88);
    const __m512 b = _mm512_shuffle_f32x4(u[c], u[c + 4], 0xDD);
    const __m512 e = _mm512_shuffle_f32x4(u[c + 8], u[c + 12], 0x88);
    const __m512 f = _mm512_shuffle_f32x4(u[c + 8], u[c + 12], 0xDD);
    v[c] = _mm512_shuffle_f32x4(a, e, 0x88);
    v[c + 8] = _mm512_shuffle_f32x4(a, e, 0xDD);
    v[c + 4] = _mm512_shuffle_f32x4(b, f, 0x88);
    v[c + 12] = _mm512_shuffle_f32x4(b, f, 0xDD);
  }
}

// ---- decode: a few tokens, weights streamed once -----------------------------
//
// On panels every output is one chain of FMAs in column order, from zero (lane
// i of a column vector is row i): the order the GEMM's tiles keep too, so a
// token's sums do not depend on how many tokens share its pass (batch
// invariance). Rows as stored sum 16 lanes of column residues, then across
// lanes: faster to stream, but not the GEMM's order.

// Tokens per decode pass: at 8 tokens the FMAs and conversions of a panel (5
// per 32 bytes of weights per port) still keep up with memory, so a
// speculative verification of k+1 <= 8 tokens reads each weight once; rows,
// whose reductions need kDecodeRows<T> x T accumulators, take 4.
template <class W>
constexpr int kDecodeTokens = W::kFromPanels ? 8 : 4;

// Panels in flight: one token gets two independent chains from two panels
// (F32 panels with 4 ran slower than with 2, or than rows as stored)
// (figures: docs/notes/kernel-design-figures.md).
template <int T>
constexpr int kPanelGroups = T == 1 ? 2 : 1;

// acc[g][t] = fma(column k of panel g, token t's element k, acc[g][t]) for
// columns [k, k + 2).
template <class P, int T, int G>
[[gnu::always_inline]] inline void panel_step(const uint8_t* const* panels, const float* x, int64_t cols,
                                              int64_t k, __m512 (&acc)[G][T]) {
#pragma GCC unroll 4
  for (int g = 0; g < G; ++g)  // each panel is a stream
    prefetch_unit<2 * P::kColumnBytes>(panels[g] + P::kColumnBytes * k, 0);
#pragma GCC unroll 2
  for (int h = 0; h < 2; ++h)
#pragma GCC unroll 4
    for (int g = 0; g < G; ++g) {
      const __m512 wv = P::column(panels[g], k + h);
#pragma GCC unroll 8
      for (int t = 0; t < T; ++t) acc[g][t] = _mm512_fmadd_ps(wv, _mm512_set1_ps(x[t * cols + k + h]), acc[g][t]);
    }
}

// G whole panels from row r (panels have an even column count).
template <class P, int T, int G>
void decode_panel_group(const Matrix& w, const Activations& x, float* y, int64_t ldy, int64_t r) {
  const uint8_t* panels[G];
#pragma GCC unroll 4
  for (int g = 0; g < G; ++g) panels[g] = panel_start(w, r / kPanelRowCount + g);
  __m512 acc[G][T];
#pragma GCC unroll 4
  for (int g = 0; g < G; ++g)
#pragma GCC unroll 8
    for (int t = 0; t < T; ++t) acc[g][t] = _mm512_setzero_ps();
  for (int64_t k = 0; k < w.cols; k += 2) panel_step<P, T, G>(panels, x.f32, w.cols, k, acc);
#pragma GCC unroll 4
  for (int g = 0; g < G; ++g)
#pragma GCC unroll 8
    for (int t = 0; t < T; ++t) _mm512_storeu_ps(y + t * ldy + r + kPanelRowCount * g, acc[g][t]);
}

template <class P, int T>
void decode_panels(const Matrix& w, const Activations& x, float* y, int64_t ldy, int64_t r0, int64_t r1) {
  constexpr int G = kPanelGroups<T>;
  int64_t r = r0;
  for (; r + G * kPanelRowCount <= r1; r += G * kPanelRowCount) decode_panel_group<P, T, G>(w, x, y, ldy, r);
  for (; r < r1; r += kPanelRowCount) decode_panel_group<P, T, 1>(w, x, y, ldy, r);
}

// Rows in flight: 8 independent accumulator chains hide the FMA latency and 8
// streams keep enough misses outstanding (4 fell short of a plain read loop on
// one core, 8 reached it; figures: docs/notes/kernel-design-figures.md); fewer
// rows when more tokens would overflow the 32 registers.
template <int T>
constexpr int kDecodeRows = 24 / T < 8 ? 24 / T : 8;

// acc[j][t] += row j (16 elements at i) * token t.
template <class W, int T>
inline void decode_step(const uint8_t* const* rows, const float* x, int64_t cols, int64_t i,
                        __mmask16 mask, __m512 (&acc)[kDecodeRows<T>][T]) {
  __m512 xv[T];
#pragma GCC unroll 16
  for (int t = 0; t < T; ++t) xv[t] = _mm512_maskz_loadu_ps(mask, x + t * cols + i);
#pragma GCC unroll 16
  for (int j = 0; j < kDecodeRows<T>; ++j) {
    const __m512 wv = W::load16(rows[j], i, mask);
#pragma GCC unroll 16
    for (int t = 0; t < T; ++t) acc[j][t] = _mm512_fmadd_ps(wv, xv[t], acc[j][t]);
  }
}

template <class W, int T>
void decode_rows(const Matrix& w, const Activations& x, float* y, int64_t ldy, int64_t r0,
                 int64_t r1) {
  constexpr int R = kDecodeRows<T>;
  const int64_t cols = w.cols, body = cols & ~int64_t{15};
  for (int64_t r = r0; r < r1; r += R) {
    // Past the last row, repeat it (already in cache) and drop the results.
    const uint8_t* rows[R];
#pragma GCC unroll 16
    for (int j = 0; j < R; ++j) rows[j] = w.row(r + j < r1 ? r + j : r1 - 1);
    __m512 acc[R][T];
#pragma GCC unroll 16
    for (int j = 0; j < R; ++j)
#pragma GCC unroll 16
      for (int t = 0; t < T; ++t) acc[j][t] = _mm512_setzero_ps();
    for (int64_t i = 0; i < body; i += 16) decode_step<W, T>(rows, x.f32, cols, i, 0xFFFF, acc);
    if (body < cols) decode_step<W, T>(rows, x.f32, cols, body, first_lanes(cols - body), acc);
#pragma GCC unroll 16
    for (int j = 0; j < R; ++j)
#pragma GCC unroll 16
      for (int t = 0; t < T; ++t)
        if (r + j < r1) y[t * ldy + r + j] = _mm512_reduce_add_ps(acc[j][t]);
  }
}

template <class W, int T>
void decode(const Matrix& w, const Activations& x, float* y, int64_t ldy, int64_t r0, int64_t r1) {
  if constexpr (W::kFromPanels) decode_panels<W, T>(w, x, y, ldy, r0, r1);
  else decode_rows<W, T>(w, x, y, ldy, r0, r1);
}

// ---- prefill: cache-blocked GEMM -------------------------------------------

constexpr int kNR = 32;   // weight rows (outputs) per tile: two zmm per token
constexpr int kMR = 12;   // tokens per tile: 24 accumulators + 2 weights + 1 broadcast
constexpr int kKC = 512;  // depth of a packed block: a token micro-panel (24 KB) stays in L1
constexpr int kNC = 128;  // weight rows per packed block: 256 KB of f32, in L2
constexpr int kMC = 512;  // tokens per pass: each weight is converted once per pass

// Panels hold each column's rows together already: packing is conversion.
// Rows [j0, j0 + n) are whole panels (n a multiple of 16).
template <class P>
void pack_panel_weights(const Matrix& w, int64_t j0, int64_t n, int64_t k0, int kc, float* wp) {
  for (int64_t jb = 0; jb < round_up(n, kNR); jb += kPanelRowCount) {
    float* out = wp + jb / kNR * kc * kNR + jb % kNR;
    if (jb >= n) {
      for (int k = 0; k < kc; ++k) _mm512_storeu_ps(out + k * kNR, _mm512_setzero_ps());
      continue;
    }
    const uint8_t* panel = panel_start(w, (j0 + jb) / kPanelRowCount);
    for (int k = 0; k < kc; ++k) _mm512_storeu_ps(out + k * kNR, P::column(panel, k0 + k));
  }
}

// Packs weight rows [j0, j0 + n) x columns [k0, k0 + kc) as f32 panels of kNR
// rows, each laid out [kc][kNR]; rows past n (up to a multiple of kNR) are zero.
template <class W>
void pack_row_weights(const Matrix& w, int64_t j0, int64_t n, int64_t k0, int kc, float* wp) {
  const size_t stride = row_bytes(w.type, w.cols);
  const uint8_t* base = w.row(j0);
  for (int64_t jb = 0; jb < round_up(n, kNR); jb += 16) {
    float* panel = wp + jb / kNR * kc * kNR + jb % kNR;
    for (int kk = 0; kk < kc; kk += 16) {
      const __mmask16 mask = first_lanes(kc - kk);
      __m512 v[16];
#pragma GCC unroll 16
      for (int r = 0; r < 16; ++r)
        v[r] =
            jb + r < n ? W::load16(base + (jb + r) * stride, k0 + kk, mask) : _mm512_setzero_ps();
      transpose16(v);
      for (int q = 0; q < 16 && kk + q < kc; ++q) _mm512_storeu_ps(panel + (kk + q) * kNR, v[q]);
    }
  }
}

template <class W>
void pack_weights(const Matrix& w, int64_t j0, int64_t n, int64_t k0, int kc, float* wp) {
  if constexpr (W::kFromPanels) pack_panel_weights<W>(w, j0, n, k0, kc, wp);
  else pack_row_weights<W>(w, j0, n, k0, kc, wp);
}

// Packs columns [k0, k0 + kc) of tokens [t0, t0 + m) as micro-panels of kMR
// tokens, each laid out [kc][kMR]; tokens past m (up to a multiple of kMR) are zero.
void pack_tokens(const Activations& x, int t0, int m, int64_t k0, int kc, float* xp) {
  static_assert(kMR <= 16);
  for (int g = 0; g < m; g += kMR, xp += kc * kMR)
    for (int kk = 0; kk < kc; kk += 16) {
      const __mmask16 mask = first_lanes(kc - kk);
      __m512 v[16];
      for (int i = 0; i < 16; ++i)
        v[i] = i < kMR && g + i < m
                   ? _mm512_maskz_loadu_ps(mask, x.f32 + (t0 + g + i) * x.cols + k0 + kk)
                   : _mm512_setzero_ps();
      transpose16(v);
      for (int q = 0; q < 16 && kk + q < kc; ++q)
        _mm512_mask_storeu_ps(xp + (kk + q) * kMR, first_lanes(kMR), v[q]);
    }
}

// y[i][j] = (y[i][j] if accumulate, else 0) + sum over k of xp[k][i] *
// wp[k][j], for tokens i < m and outputs j < min(n, kNR). The accumulators
// start from y: each output stays one chain of FMAs in column order across
// depth blocks, as in decode.
void tile(const float* xp, const float* wp, int kc, float* y, int64_t ldy, int m, int64_t n,
          bool accumulate) {
  const __mmask16 m0 = first_lanes(n), m1 = first_lanes(n - 16);  // outputs [0, 16) and [16, 32)
  __m512 c[kMR][2];
#pragma GCC unroll 12
  for (int i = 0; i < kMR; ++i) {
    const bool load = accumulate && i < m;
    c[i][0] = load ? _mm512_maskz_loadu_ps(m0, y + i * ldy) : _mm512_setzero_ps();
    c[i][1] = load ? _mm512_maskz_loadu_ps(m1, y + i * ldy + 16) : _mm512_setzero_ps();
  }
  for (int k = 0; k < kc; ++k, xp += kMR, wp += kNR) {
    const __m512 w0 = _mm512_loadu_ps(wp), w1 = _mm512_loadu_ps(wp + 16);
#pragma GCC unroll 12
    for (int i = 0; i < kMR; ++i) {
      const __m512 b = _mm512_set1_ps(xp[i]);
      c[i][0] = _mm512_fmadd_ps(b, w0, c[i][0]);
      c[i][1] = _mm512_fmadd_ps(b, w1, c[i][1]);
    }
  }
  // Unrolled like the loop above so the accumulators stay in registers.
#pragma GCC unroll 12
  for (int i = 0; i < kMR; ++i, y += ldy) {
    if (i >= m) break;
    _mm512_mask_storeu_ps(y, m0, c[i][0]);
    _mm512_mask_storeu_ps(y + 16, m1, c[i][1]);
  }
}

#include "kernels/x86/matmul_float_driver.h"

}  // namespace

KernelEntry matmul_float_rows_avx512(DType type) { return float_kernel_for(type); }

KernelEntry matmul_float_panels_avx512(DType type) {
  switch (type) {
    case DType::F32: return {float_matmul<Panels<F32W>>, ActivationFormat::kF32, kNR};
    case DType::F16: return {float_matmul<Panels<F16W>>, ActivationFormat::kF32, kNR};
    case DType::BF16: return {float_matmul<Panels<BF16W>>, ActivationFormat::kF32, kNR};
    default: return {};
  }
}

}  // namespace skiff
