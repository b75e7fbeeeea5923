// Q4_0 decode (1-3 tokens) on AVX-512 VNNI, streaming rows as GGUF stores them
// (matrices read from a mapping, or of shapes the loader does not repack).
//
// Four blocks per zmm: the 16 nibble bytes of block k go to 128-bit lane k (one
// load and 3 vinserti32x4), one AND gives the low nibbles (elements 0-15), a
// shift and an AND the high ones (16-31). The activations are permuted to match
// once per call (block k's elements 0-15 in lane k of one vector, 16-31 of
// another), so two vpdpbusd per token add the 4 blocks' dots into 16 int32
// lanes. The 4 fp16 weight scales are read as one 64-bit word (scalar loads:
// no store-forwarding stall) and converted by one vcvtph2ps; times the 4
// activation scales they make the 4 factors dw·dx, expanded to the lanes by one
// vpermps, and one FMA per 4 blocks per token takes the ints to the float
// accumulator. The -8 offset (Σ (q-8)·x = Σ q·x - 8·Σx) is the int32
// accumulator's start, precomputed per lane (see Q4Act). One reduction per row
// and token.
// One row at a time: 2 rows in flight (R = 2) measured slower on Zen 4
// (figures: docs/notes/kernel-design-figures.md).
// No VBMI (the ISA check does not require it), so no vpermb of raw blocks; a
// vpermt2w gathering 4 blocks from two 64-byte loads was only tried with R = 2.
#include <immintrin.h>

#include "kernels/x86/avx512/avx512_header_warnings.h"

#include "kernels/matmul/matmul_kernels.h"
#include "kernels/matmul/quant_activation_layout.h"
#include "kernels/scratch.h"
#include "kernels/x86/avx512/matmul_avx512.h"
#include "kernels/x86/quant_blocks_simd.h"

namespace skiff {
namespace {

// Token t's activation row as the kernel reads it, in buf: per group of 4 blocks,
// 16 dwords of the low nibbles' partners (block k's elements 0-15 in dwords
// 4k..4k+3), 16 of the high ones' (elements 16-31), and 16 int32 start values:
// -8 times the sum of the 8 activations that meet each int32 lane, so every
// lane ends up with the exact Σ (q-8)·x of its 8 elements (a per-block
// correction would leave lanes far larger than their share of the dot, and
// the float sums lose bits to the cancellation).
struct Q4Act {
  const int32_t* x;
  const float* d;  // the row's own scales (zero-padded to 16)
};

// Group g of the token lies at buf + stride·g (the tokens' groups interleaved: one stream).
inline Q4Act q4_0_prepare(const Activations& x, const ActLayout& l, int t, int64_t units, int32_t* buf,
                          int64_t stride) {
  const ActRow a = act_row(x, l, t);
  const int64_t groups = (units + 3) / 4, dwords = units * 8;
  alignas(64) static constexpr int32_t kLo[16] = {0, 1, 2, 3, 8, 9, 10, 11, 16, 17, 18, 19, 24, 25, 26, 27};
  const __m512i lo_idx = _mm512_load_si512(kLo), hi_idx = _mm512_add_epi32(lo_idx, _mm512_set1_epi32(4));
  const __m512i ones = _mm512_set1_epi8(1);
  const auto* q = reinterpret_cast<const int32_t*>(a.q);
  for (int64_t g = 0; g < groups; ++g) {
    const int64_t left = dwords - 32 * g;
    const auto m0 = static_cast<__mmask16>(left >= 16 ? 0xffff : (1u << left) - 1);
    const auto m1 = static_cast<__mmask16>(left >= 32 ? 0xffff : left <= 16 ? 0 : (1u << (left - 16)) - 1);
    const __m512i z0 = _mm512_maskz_loadu_epi32(m0, q + 32 * g), z1 = _mm512_maskz_loadu_epi32(m1, q + 32 * g + 16);
    const __m512i xl = _mm512_permutex2var_epi32(z0, lo_idx, z1), xh = _mm512_permutex2var_epi32(z0, hi_idx, z1);
    const __m512i sum = _mm512_dpbusd_epi32(_mm512_dpbusd_epi32(_mm512_setzero_si512(), ones, xl), ones, xh);
    _mm512_store_si512(buf + stride * g, xl);
    _mm512_store_si512(buf + stride * g + 16, xh);
    _mm512_store_si512(buf + stride * g + 32, _mm512_sub_epi32(_mm512_setzero_si512(), _mm512_slli_epi32(sum, 3)));
  }
  return {buf, a.d};
}

template <int R, int NT>
[[gnu::always_inline]] inline void q4_0_group(const uint8_t* const rows[R], int64_t g, int n, const Q4Act act[NT],
                                             __m512 acc[R][NT]) {
  alignas(64) static constexpr int32_t kBlk[16] = {0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2, 3, 3, 3, 3};
  __m512i lo[R], hi[R];
  __m128 sw[R];
  const __m512i nib = _mm512_set1_epi8(0x0f);
#pragma GCC unroll 4
  for (int r = 0; r < R; ++r) {
    const auto* b = reinterpret_cast<const BlockQ4_0*>(rows[r]) + 4 * g;
    __m512i q = _mm512_zextsi128_si512(_mm_loadu_si128(reinterpret_cast<const __m128i*>(b[0].qs)));
    uint64_t h = b[0].d;
    if (n > 1) {
      q = _mm512_inserti32x4(q, _mm_loadu_si128(reinterpret_cast<const __m128i*>(b[1].qs)), 1);
      h |= uint64_t{b[1].d} << 16;
    }
    if (n > 2) {
      q = _mm512_inserti32x4(q, _mm_loadu_si128(reinterpret_cast<const __m128i*>(b[2].qs)), 2);
      h |= uint64_t{b[2].d} << 32;
    }
    if (n > 3) {
      q = _mm512_inserti32x4(q, _mm_loadu_si128(reinterpret_cast<const __m128i*>(b[3].qs)), 3);
      h |= uint64_t{b[3].d} << 48;
    }
    lo[r] = _mm512_and_si512(q, nib);
    hi[r] = _mm512_and_si512(_mm512_srli_epi16(q, 4), nib);
    sw[r] = _mm_cvtph_ps(_mm_cvtsi64_si128(static_cast<int64_t>(h)));
  }
#pragma GCC unroll 4
  for (int t = 0; t < NT; ++t) {
    const int32_t* xg = act[t].x + 48 * NT * g;
    const __m512i xl = _mm512_load_si512(xg), xh = _mm512_load_si512(xg + 16);
    const __m128 dx = _mm_loadu_ps(act[t].d + 4 * g);
#pragma GCC unroll 4
    for (int r = 0; r < R; ++r) {
      const __m512i s = _mm512_dpbusd_epi32(_mm512_dpbusd_epi32(_mm512_load_si512(xg + 32), lo[r], xl), hi[r], xh);
      const __m128 s4 = _mm_mul_ps(sw[r], dx);
      acc[r][t] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(s),
                                  _mm512_permutexvar_ps(_mm512_load_si512(kBlk), _mm512_castps128_ps512(s4)), acc[r][t]);
    }
  }
}

template <int R, int NT>
[[gnu::always_inline]] inline void q4_0_rows(const Matrix& w, const Q4Act act[NT], float* y, int64_t ldy, int64_t r) {
  const int64_t units = w.cols / 32, full = units / 4;
  const int tail = static_cast<int>(units % 4);
  const uint8_t* rows[R];
  __m512 acc[R][NT];
#pragma GCC unroll 4
  for (int i = 0; i < R; ++i) {
    rows[i] = w.row(r + i);
    for (int t = 0; t < NT; ++t) acc[i][t] = _mm512_setzero_ps();
  }
  for (int64_t g = 0; g < full; ++g) q4_0_group<R, NT>(rows, g, 4, act, acc);
  if (tail) q4_0_group<R, NT>(rows, full, tail, act, acc);
#pragma GCC unroll 4
  for (int i = 0; i < R; ++i)
    for (int t = 0; t < NT; ++t) {
      const __m256 v = _mm256_add_ps(_mm512_castps512_ps256(acc[i][t]), _mm512_extractf32x8_ps(acc[i][t], 1));
      y[t * ldy + r + i] = hsum(v);
    }
}

template <int NT>
void decode_q4_0(const Matrix& w, const Activations& x, float* y, int64_t ldy, int64_t r0, int64_t r1) {
  const ActLayout l = act_layout(ActivationFormat::kQ8_0, w.cols);
  const int64_t units = w.cols / 32, groups = (units + 3) / 4;
  auto* buf = static_cast<int32_t*>(kernel_scratch(48 * NT * groups * sizeof(int32_t)));
  Q4Act act[NT];
  for (int t = 0; t < NT; ++t) act[t] = q4_0_prepare(x, l, t, units, buf + 48 * t, 48 * NT);
  for (int64_t r = r0; r < r1; ++r) q4_0_rows<1, NT>(w, act, y, ldy, r);
}

}  // namespace

void decode_q4_0_rows_avx512(const Matrix& w, const Activations& x, float* y, int64_t ldy, int64_t r0, int64_t r1) {
  switch (x.n_tokens) {
    case 1: return decode_q4_0<1>(w, x, y, ldy, r0, r1);
    case 2: return decode_q4_0<2>(w, x, y, ldy, r0, r1);
    default: return decode_q4_0<3>(w, x, y, ldy, r0, r1);
  }
}

}  // namespace skiff
