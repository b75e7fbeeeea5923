// Q2_K and Q3_K (a scale per 16 weights) times any number of tokens on AVX-512
// VNNI, rows as GGUF stores them: two units of 32 per zmm, where the shared
// row decoder (matmul_quant_rows.h) spends a ymm, a lane permute and a scale
// product per unit and token.
//
// Element e = 128h + 32s + l has its 2 low bits at bits 2s of qs[32h + l], so
// the pair of units 2k, 2k+1 is one 32-byte load of qs shifted by 2s and 2s+2
// into the two halves of a zmm; Q3_K adds its third bit (bit j of hmask[l] for
// unit j) as 4. Both are then unsigned levels against one 64-byte load of the
// activations, and one vpdpbusd gives 16 int32 lanes, four per 16-weight
// sub-block, scaled by one vpermps of the super-block's 16 factors. Q2_K's
// mins (dmin·m) and Q3_K's offset (its levels are u - 4: a "min" of 4·d·sc)
// come out per super-block as one product of 16 factors with the activations'
// 16-element sums.
#include <immintrin.h>

#include <cstring>

#include "kernels/x86/avx512/avx512_header_warnings.h"

#include "kernels/matmul/matmul_kernels.h"
#include "kernels/matmul/quant_activation_layout.h"
#include "kernels/x86/avx512/matmul_avx512.h"
#include "kernels/x86/quant_blocks_simd.h"

namespace skiff {
namespace {

constexpr int64_t kQ2Bytes = 84, kQ3Bytes = 110;

// A super-block's 16 sub-block factors and mins, and its pairs' levels.
struct K16Block {
  __m512 scale, min;
  __m512i pair[4];
};

// Units 2k, 2k+1 of the 2-bit fields at qs: (h, s) = (k / 2, 2·(k % 2)) and s + 1.
[[gnu::always_inline]] inline __m512i two_bit_pair(const uint8_t* qs, int k) {
  const __m256i q = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(qs + 32 * (k / 2)));
  const int s = 2 * (k % 2);
  const __m512i both = _mm512_inserti64x4(_mm512_castsi256_si512(_mm256_srli_epi16(q, 2 * s)),
                                          _mm256_srli_epi16(q, 2 * s + 2), 1);
  return _mm512_and_si512(both, _mm512_set1_epi8(3));
}

[[gnu::always_inline]] inline __m512 bytes16_to_f32(__m128i v, bool is_signed, float f) {
  const __m512i wide = is_signed ? _mm512_cvtepi8_epi32(v) : _mm512_cvtepu8_epi32(v);
  return _mm512_mul_ps(_mm512_cvtepi32_ps(wide), _mm512_set1_ps(f));
}

[[gnu::always_inline]] inline void load_q2_k(const uint8_t* b, K16Block& B) {
  uint16_t d, dmin;
  std::memcpy(&d, b + 80, 2);
  std::memcpy(&dmin, b + 82, 2);
  const __m128i sm = _mm_loadu_si128(reinterpret_cast<const __m128i*>(b));
  const __m128i low4 = _mm_set1_epi8(0x0f);
  B.scale = bytes16_to_f32(_mm_and_si128(sm, low4), false, half(d));
  B.min = bytes16_to_f32(_mm_and_si128(_mm_srli_epi16(sm, 4), low4), false, half(dmin));
#pragma GCC unroll 4
  for (int k = 0; k < 4; ++k) B.pair[k] = two_bit_pair(b + 16, k);
}

// Q3_K scale i (value sc - 32): the low (i < 8) or high nibble of byte i % 8 of
// the 12, and bits 2·(i / 4) of byte 8 + i % 4 above it; assembled in general
// registers (a vector of scalar results stored and reloaded stalls).
[[gnu::always_inline]] inline void load_q3_k(const uint8_t* b, K16Block& B) {
  uint64_t low8;
  uint32_t top;
  std::memcpy(&low8, b + 96, 8);
  std::memcpy(&top, b + 104, 4);
  const uint64_t nib_lo = low8 & 0x0f0f0f0f0f0f0f0full, nib_hi = (low8 >> 4) & 0x0f0f0f0f0f0f0f0full;
  const uint64_t t = top;
  const uint64_t top_lo = (t & 0x03030303ull) | ((t >> 2) & 0x03030303ull) << 32;
  const uint64_t top_hi = ((t >> 4) & 0x03030303ull) | ((t >> 6) & 0x03030303ull) << 32;
  const __m128i sc =
      _mm_set_epi64x(static_cast<int64_t>(nib_hi | top_hi << 4), static_cast<int64_t>(nib_lo | top_lo << 4));
  uint16_t d;
  std::memcpy(&d, b + 108, 2);
  B.scale = bytes16_to_f32(_mm_sub_epi8(sc, _mm_set1_epi8(32)), true, half(d));
  B.min = _mm512_mul_ps(B.scale, _mm512_set1_ps(4.0f));  // levels u - 4: Σ sc·(u - 4)·x = Σ sc·u·x - 4·sc·Σx
  const __m256i h = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(b));
#pragma GCC unroll 4
  for (int k = 0; k < 4; ++k) {  // bits 2k, 2k+1 of hmask to bit 2 (16-bit shifts leak only into masked bits)
    const __m256i h0 = 2 * k <= 2 ? _mm256_slli_epi16(h, 2 - 2 * k) : _mm256_srli_epi16(h, 2 * k - 2);
    const __m256i h1 = 2 * k + 1 <= 2 ? _mm256_slli_epi16(h, 1 - 2 * k) : _mm256_srli_epi16(h, 2 * k - 1);
    const __m512i third = _mm512_and_si512(_mm512_inserti64x4(_mm512_castsi256_si512(h0), h1, 1), _mm512_set1_epi8(4));
    B.pair[k] = _mm512_or_si512(two_bit_pair(b + 32, k), third);
  }
}

// Rows [r0, r1) times tokens [t0, t0 + NT).
template <bool kQ3, int NT>
void k16_rows(const Matrix& w, const Activations& x, int t0, float* y, int64_t ldy, int64_t r0, int64_t r1) {
  const ActLayout l = act_layout(ActivationFormat::kQ8_K, w.cols);
  ActRow act[NT];
  for (int t = 0; t < NT; ++t) act[t] = act_row(x, l, t0 + t);
  y += t0 * ldy;
  constexpr int64_t kBytes = kQ3 ? kQ3Bytes : kQ2Bytes;
  for (int64_t r = r0; r < r1; ++r) {
    const uint8_t* row = w.row(r);
    __m512 acc[NT], corr[NT];
#pragma GCC unroll 8
    for (int t = 0; t < NT; ++t) acc[t] = corr[t] = _mm512_setzero_ps();
    for (int64_t g = 0; g < w.cols / 256; ++g) {
      K16Block B;
      if constexpr (kQ3) load_q3_k(row + kBytes * g, B);
      else load_q2_k(row + kBytes * g, B);
#pragma GCC unroll 8
      for (int t = 0; t < NT; ++t) {
        const __m512 s = _mm512_mul_ps(B.scale, _mm512_set1_ps(act[t].d[g]));
        corr[t] = _mm512_fmadd_ps(B.min, _mm512_loadu_ps(act[t].sums16 + 16 * g), corr[t]);
        const int8_t* xq = act[t].q + 256 * g;
#pragma GCC unroll 4
        for (int k = 0; k < 4; ++k) {  // lanes 4i..4i+3: sub-block 4k + i
          const __m512i lanes = _mm512_add_epi32(
              _mm512_srli_epi32(_mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15), 2),
              _mm512_set1_epi32(4 * k));
          const __m512i dot = _mm512_dpbusd_epi32(_mm512_setzero_si512(), B.pair[k], _mm512_loadu_si512(xq + 64 * k));
          acc[t] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(dot), _mm512_permutexvar_ps(lanes, s), acc[t]);
        }
      }
    }
#pragma GCC unroll 8
    for (int t = 0; t < NT; ++t) y[t * ldy + r] = _mm512_reduce_add_ps(_mm512_sub_ps(acc[t], corr[t]));
  }
}

// Rows in chunks that stay in L1 while every group of 6 tokens (then 3, 2, 1) reads them.
template <bool kQ3>
void k16_matmul(const Matrix& w, const Activations& x, float* y, int64_t ldy, int64_t r0, int64_t r1) {
  constexpr int64_t kRowChunk = 8;
  for (int64_t rc = r0; rc < r1; rc += kRowChunk) {
    const int64_t rc_end = r1 - rc < kRowChunk ? r1 : rc + kRowChunk;
    int t0 = 0;
    for (; t0 + 6 <= x.n_tokens; t0 += 6) k16_rows<kQ3, 6>(w, x, t0, y, ldy, rc, rc_end);
    if (x.n_tokens - t0 >= 3) {
      k16_rows<kQ3, 3>(w, x, t0, y, ldy, rc, rc_end);
      t0 += 3;
    }
    if (x.n_tokens - t0 == 2) k16_rows<kQ3, 2>(w, x, t0, y, ldy, rc, rc_end);
    if (x.n_tokens - t0 == 1) k16_rows<kQ3, 1>(w, x, t0, y, ldy, rc, rc_end);
  }
}

}  // namespace

KernelEntry matmul_q3_k_q2_k_rows_avx512(DType type) {
  switch (type) {
    case DType::Q2_K: return {k16_matmul<false>, ActivationFormat::kQ8_K, 1};
    case DType::Q3_K: return {k16_matmul<true>, ActivationFormat::kQ8_K, 1};
    default: return {};
  }
}

}  // namespace skiff
