// Q6_K weights × kQ8_K activations on AVX2 (no VNNI), rows as GGUF stores
// them, any number of tokens (see matmul_q6_k_rows_avx512.cpp for the format).
//
// Per 32 weights and token: vpmaddubsw of the unsigned 6-bit q against x
// gives pairs q0·x0 + q1·x1 (at most 2·63·127: no saturation); minus
// 32·(x0 + x1), precomputed per token and call, each pair is Σ (q - 32)·x;
// vpmaddwd by the pair's sub-block scale adds two pairs into an int32 lane.
// The lanes sum exactly over a block (at most 8·2·128·8128 < 2^31), and each
// block's sum is scaled by d·dx in float. The loops over rows and tokens:
// matmul_q6_k_driver.h.
#include <immintrin.h>

#include "kernels/matmul/matmul_kernels.h"
#include "kernels/matmul/quant_activation_layout.h"
#include "kernels/scratch.h"
#include "kernels/x86/avx2/matmul_avx2.h"
#include "kernels/x86/quant_blocks_simd.h"

namespace skiff {
namespace {

using OffsetVec = __m256i;
constexpr int64_t kColsPerOffset = 32;  // one OffsetVec (16 int16 pair offsets) per 32 activations

// Weights 32k + l (k = 0..3) of a 128-weight half: the low (k < 2) or high
// nibble of ql[l + 32·(k % 2)] and bits 2k, 2k+1 of qh[l]. The 16-bit shifts
// leak bits across bytes only into the bits the masks drop.
inline void unpack_half(const uint8_t* ql, const uint8_t* qh, __m256i q[4]) {
  const __m256i a0 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(ql));
  const __m256i a1 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(ql + 32));
  const __m256i h = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(qh));
  const __m256i low4 = _mm256_set1_epi8(0x0f), high2 = _mm256_set1_epi8(0x30);
  q[0] = _mm256_or_si256(_mm256_and_si256(a0, low4), _mm256_and_si256(_mm256_slli_epi16(h, 4), high2));
  q[1] = _mm256_or_si256(_mm256_and_si256(a1, low4), _mm256_and_si256(_mm256_slli_epi16(h, 2), high2));
  q[2] = _mm256_or_si256(_mm256_and_si256(_mm256_srli_epi16(a0, 4), low4), _mm256_and_si256(h, high2));
  q[3] = _mm256_or_si256(_mm256_and_si256(_mm256_srli_epi16(a1, 4), low4),
                         _mm256_and_si256(_mm256_srli_epi16(h, 2), high2));
}

// offsets[c] = 32·(x0 + x1) for each pair of the 32-element vectors c.
void prepare_offsets(const ActRow& a, int64_t cols, __m256i* offsets) {
  const __m256i k32 = _mm256_set1_epi8(32);
  for (int64_t c = 0; c < cols / 32; ++c)
    offsets[c] = _mm256_maddubs_epi16(k32, _mm256_loadu_si256(reinterpret_cast<const __m256i*>(a.q + 32 * c)));
}

// The 16 sub-block scales as int16 pairs (s, s) in dwords: scales 0-7, 8-15.
inline void scale_pairs(const int8_t* scales, __m256i pairs[2]) {
  for (int i = 0; i < 2; ++i) {
    const __m256i s = _mm256_cvtepi8_epi32(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(scales + 8 * i)));
    pairs[i] = _mm256_or_si256(_mm256_and_si256(s, _mm256_set1_epi32(0xffff)), _mm256_slli_epi32(s, 16));
  }
}

template <int NT>
void rows_times_group(const Matrix& w, const ActRow* act, const __m256i* const* offsets, float* y, int64_t ldy,
                      int64_t r0, int64_t r1) {
  const int64_t blocks = w.cols / 256;
  for (int64_t r = r0; r < r1; ++r) {
    const auto* b = reinterpret_cast<const BlockQ6_K*>(w.row(r));
    __m256 acc[NT];
    for (int t = 0; t < NT; ++t) acc[t] = _mm256_setzero_ps();
    for (int64_t k = 0; k < blocks; ++k, ++b) {
      __m256i pairs[2];
      scale_pairs(b->scales, pairs);
      __m256i isum[NT];
      for (int t = 0; t < NT; ++t) isum[t] = _mm256_setzero_si256();
      for (int h = 0; h < 2; ++h) {
        __m256i q[4];
        unpack_half(b->ql + 64 * h, b->qh + 32 * h, q);
        for (int j = 0; j < 4; ++j) {
          // Vector c = 4h + j holds sub-blocks 2c (its first 16 weights) and 2c + 1.
          const int s0 = 2 * j;
          const __m256i scale =
              _mm256_permutevar8x32_epi32(pairs[h], _mm256_setr_epi32(s0, s0, s0, s0, s0 + 1, s0 + 1, s0 + 1, s0 + 1));
          const int64_t c = 8 * k + 4 * h + j;
          for (int t = 0; t < NT; ++t) {
            const __m256i x = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(act[t].q + 32 * c));
            const __m256i p = _mm256_sub_epi16(_mm256_maddubs_epi16(q[j], x), offsets[t][c]);
            isum[t] = _mm256_add_epi32(isum[t], _mm256_madd_epi16(p, scale));
          }
        }
      }
      const float dw = half(b->d);
      for (int t = 0; t < NT; ++t)
        acc[t] = _mm256_fmadd_ps(_mm256_cvtepi32_ps(isum[t]), _mm256_set1_ps(dw * act[t].d[k]), acc[t]);
    }
    for (int t = 0; t < NT; ++t) y[t * ldy + r] = hsum(acc[t]);
  }
}

#include "kernels/x86/matmul_q6_k_driver.h"

}  // namespace

KernelEntry matmul_q6_k_rows_avx2(DType) { return {q6_k_matmul, ActivationFormat::kQ8_K, 1}; }

}  // namespace skiff
