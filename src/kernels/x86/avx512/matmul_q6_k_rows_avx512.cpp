// Q6_K weights × kQ8_K activations on AVX-512 VNNI, rows as GGUF stores them,
// any number of tokens. Q6_K is the type llama.cpp's Q4_K_M and Q5_K_M files
// use for the output head and half of the attn_v / ffn_down matrices.
//
// A block of 256 weights is w = d·sc[j]·(q - 32): q has 6 bits (the low 4 in
// ql, the high 2 in qh), sc[j] is an int8 per 16 weights. Unpacked, 64 weights
// fill a vector of bytes, and one vpdpbusd adds q·x over each 4 consecutive
// weights into an int32 lane. The lane starts from -32·Σx of its 4 activations
// (precomputed per token and call), so it ends with the exact Σ (q - 32)·x.
// Lanes are scaled by their sub-block's sc in float (one vpermps per 64
// weights, shared by the tokens), and each block's sum by d·dx.
// The loops over rows and tokens: matmul_q6_k_driver.h.
#include <immintrin.h>

#include "kernels/x86/avx512/avx512_header_warnings.h"

#include "kernels/matmul/matmul_kernels.h"
#include "kernels/matmul/quant_activation_layout.h"
#include "kernels/scratch.h"
#include "kernels/x86/avx512/matmul_avx512.h"
#include "kernels/x86/quant_blocks_simd.h"

namespace skiff {
namespace {

using OffsetVec = __m512i;
constexpr int64_t kColsPerOffset = 64;  // one OffsetVec per 64 activations
constexpr int kChunks = 4;              // 64-weight vectors per block

// Weights [0, 64) and [64, 128) of a 128-weight half as unsigned bytes. Weight
// 32k + l takes the low (k < 2) or high nibble of ql[l + 32·(k % 2)] and bits
// 2k, 2k+1 of qh[l]. The 16-bit shifts leak bits across bytes only into the
// bits the masks drop.
[[gnu::always_inline]] inline void unpack_half(const uint8_t* ql, const uint8_t* qh, __m512i& lo, __m512i& hi) {
  const __m512i a = _mm512_loadu_si512(ql);
  const __m256i h = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(qh));
  const __m512i h01 = _mm512_inserti64x4(_mm512_castsi256_si512(h), _mm256_srli_epi16(h, 2), 1);  // k = 0, 1
  const __m512i h23 = _mm512_srli_epi16(h01, 4);                                                  // k = 2, 3
  const __m512i low4 = _mm512_set1_epi8(0x0f), high2 = _mm512_set1_epi8(0x30);
  // vpternlogd 0xEA: (a & b) | c
  lo = _mm512_ternarylogic_epi32(a, low4, _mm512_and_si512(_mm512_slli_epi16(h01, 4), high2), 0xEA);
  hi = _mm512_ternarylogic_epi32(_mm512_srli_epi16(a, 4), low4, _mm512_and_si512(_mm512_slli_epi16(h23, 4), high2),
                                 0xEA);
}

// offsets[c] = -32 · (the sum of each 4 activations) for the 64-element
// vectors c of one token's row: the int32 lanes' starting values.
void prepare_offsets(const ActRow& a, int64_t cols, __m512i* offsets) {
  const __m512i ones = _mm512_set1_epi8(1);
  for (int64_t c = 0; c < cols / 64; ++c) {
    const __m512i sum4 = _mm512_dpbusd_epi32(_mm512_setzero_si512(), ones, _mm512_loadu_si512(a.q + 64 * c));
    offsets[c] = _mm512_sub_epi32(_mm512_setzero_si512(), _mm512_slli_epi32(sum4, 5));
  }
}

template <int NT>
void rows_times_group(const Matrix& w, const ActRow* act, const __m512i* const* offsets, float* y, int64_t ldy,
                      int64_t r0, int64_t r1) {
  const int64_t blocks = w.cols / 256;
  // Lane i of vector c (weights 64c + 4i .. 64c + 4i + 3) belongs to sub-block 4c + i/4.
  __m512i sub_block[kChunks];
  for (int c = 0; c < kChunks; ++c)
    sub_block[c] = _mm512_add_epi32(_mm512_srli_epi32(_mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12,
                                                                        13, 14, 15), 2),
                                    _mm512_set1_epi32(4 * c));
  for (int64_t r = r0; r < r1; ++r) {
    const auto* b = reinterpret_cast<const BlockQ6_K*>(w.row(r));
    __m512 acc[NT];
#pragma GCC unroll 4
    for (int t = 0; t < NT; ++t) acc[t] = _mm512_setzero_ps();
    for (int64_t k = 0; k < blocks; ++k, ++b) {
      __m512i q[kChunks];
      // One thread's stream fetched ahead read faster on Zen 5
      // (figures: docs/notes/kernel-design-figures.md).
      if constexpr (NT == 1) prefetch_unit<sizeof(BlockQ6_K)>(b, 0);
      unpack_half(b->ql, b->qh, q[0], q[1]);
      unpack_half(b->ql + 64, b->qh + 32, q[2], q[3]);
      const __m512 sc = _mm512_cvtepi32_ps(_mm512_cvtepi8_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(b->scales))));
      const float dw = half(b->d);
      __m512 block[NT];
#pragma GCC unroll 4
      for (int t = 0; t < NT; ++t) block[t] = _mm512_setzero_ps();
#pragma GCC unroll 4
      for (int c = 0; c < kChunks; ++c) {
        const __m512 lane_scale = _mm512_permutexvar_ps(sub_block[c], sc);
#pragma GCC unroll 4
        for (int t = 0; t < NT; ++t) {
          const __m512i dot = _mm512_dpbusd_epi32(offsets[t][kChunks * k + c], q[c],
                                                  _mm512_loadu_si512(act[t].q + 256 * k + 64 * c));
          block[t] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(dot), lane_scale, block[t]);
        }
      }
#pragma GCC unroll 4
      for (int t = 0; t < NT; ++t) acc[t] = _mm512_fmadd_ps(block[t], _mm512_set1_ps(dw * act[t].d[k]), acc[t]);
    }
#pragma GCC unroll 4
    for (int t = 0; t < NT; ++t) y[t * ldy + r] = _mm512_reduce_add_ps(acc[t]);
  }
}

#include "kernels/x86/matmul_q6_k_driver.h"

}  // namespace

KernelEntry matmul_q6_k_rows_avx512(DType) { return {q6_k_matmul, ActivationFormat::kQ8_K, 1}; }

}  // namespace skiff
