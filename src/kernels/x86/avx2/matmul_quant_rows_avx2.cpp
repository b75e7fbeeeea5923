// Integer matmul kernels for Q8_0, Q4_0, Q4_1, Q5_0, Q5_1, IQ4_NL, MXFP4, Q4_K,
// Q5_K, IQ4_XS, Q3_K and Q2_K weights as stored on AVX2 (no VNNI); Q3_K and Q2_K
// through the decode body for any number of tokens (decode_all_tokens).
// Activations come quantized to 8 bits (quant_activation_layout.h). The dot
// product is vpmaddubsw (u8 × s8 pairs, saturating to int16) then vpmaddwd:
//  * Q4 nibbles (0..15) are the unsigned operand; a pair is at most
//    2·15·127 = 3810, so all 8 steps of a unit add up in int16 (30480 max)
//    before one widening. Q4_0's -8 comes back as -8·Σx (activation sums).
//    Q5_0 / Q5_1 / Q5_K levels (0..31) make pairs of up to 2·31·127 = 7874:
//    widened every 4 steps. Q4_1 / Q5_1 / K-quant mins come out through the sums.
//  * Q8_0 and the IQ4 table values (signed) use the sign trick (|w| × x·sign(w),
//    at most 2·128·127 = 32512), widening every step since two such pairs could
//    overflow int16. MXFP4's doubled E2M1 values (|w| ≤ 12) too, but their
//    pairs (at most 2·12·127 = 3048) add up over a whole unit.
//
// Decode (1-3 tokens) streams the rows as stored (matmul_quant_rows.h, shared
// with AVX-512). More tokens of the other types: 8 rows at a time are packed so
// that each 32-byte vector holds 4 consecutive weights of each row; one
// multiply then serves all 8 rows against 4 activation bytes broadcast, and a
// tile of 8 rows × 4 tokens reuses each packed panel for every token.
#include <immintrin.h>

#include <cstring>
#include <type_traits>

#include "kernels/matmul/matmul_kernels.h"
#include "kernels/matmul/quant_activation_layout.h"
#include "kernels/matmul/repack.h"
#include "kernels/scratch.h"
#include "kernels/x86/avx2/matmul_avx2.h"
#include "kernels/x86/quant_blocks_simd.h"


namespace skiff {
namespace {

#include "kernels/x86/avx2/matmul_quant_tiles_avx2.h"

// Q4_K / Q5_K decode (1-3 tokens) on rows as stored: vpmaddwd multiplies each
// sub-block's int16 pair sums by its 6-bit scale, so a super-block's dot sums
// exactly in int32 and costs one conversion and FMA per token, where the
// shared row decoder (matmul_quant_rows.h) converts and scales every unit.
// Pairs stay below 2·31·128, a lane's 8 units below 2^23. The mins come out
// through the activations' dx·Σq per sub-block, as there.
template <class W, int NT>
void k_decode_rows(const Matrix& w, const Activations& x, float* y, int64_t ldy, int64_t r0, int64_t r1) {
  using Block = std::conditional_t<W::kFiveBits, BlockQ5_K, BlockQ4_K>;
  const ActLayout l = act_layout(ActivationFormat::kQ8_K, w.cols);
  ActRow act[NT];
  for (int t = 0; t < NT; ++t) act[t] = act_row(x, l, t);
  const int64_t blocks = w.cols / 256;
  const __m256i low4 = _mm256_set1_epi8(0x0f);
  for (int64_t r = r0; r < r1; ++r) {
    const auto* b = reinterpret_cast<const Block*>(w.row(r));
    __m256 acc[NT][2], corr[NT];
#pragma GCC unroll 4
    for (int t = 0; t < NT; ++t) acc[t][0] = acc[t][1] = corr[t] = _mm256_setzero_ps();
    for (int64_t k = 0; k < blocks; ++k, ++b) {
      uint64_t sc, m;
      q4k_scales_mins(b->scales, sc, m);
      const __m256i scales = _mm256_broadcastsi128_si256(_mm_cvtepu8_epi16(_mm_cvtsi64_si128(static_cast<int64_t>(sc))));
      __m256i isum[NT];
#pragma GCC unroll 4
      for (int t = 0; t < NT; ++t) isum[t] = _mm256_setzero_si256();
#pragma GCC unroll 4
      for (int i = 0; i < 4; ++i) {
        const __m256i q = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(b->qs + 32 * i));
        __m256i lo = _mm256_and_si256(q, low4), hi = _mm256_and_si256(_mm256_srli_epi16(q, 4), low4);
        if constexpr (W::kFiveBits) {
          const __m256i h = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(b->qh));
          lo = _mm256_or_si256(lo, q5_fifth_bits(h, 2 * i));
          hi = _mm256_or_si256(hi, q5_fifth_bits(h, 2 * i + 1));
        }
        // Scale words 2i and 2i+1 in every int16 lane (bytes 4i..4i+3 of scales).
        const __m256i s_lo = _mm256_shuffle_epi8(scales, _mm256_set1_epi16(static_cast<int16_t>(0x0100 + 0x0404 * i)));
        const __m256i s_hi = _mm256_shuffle_epi8(scales, _mm256_set1_epi16(static_cast<int16_t>(0x0302 + 0x0404 * i)));
#pragma GCC unroll 4
        for (int t = 0; t < NT; ++t) {
          const int8_t* xq = act[t].q + 256 * k + 64 * i;
          const __m256i plo = _mm256_maddubs_epi16(lo, _mm256_loadu_si256(reinterpret_cast<const __m256i*>(xq)));
          const __m256i phi = _mm256_maddubs_epi16(hi, _mm256_loadu_si256(reinterpret_cast<const __m256i*>(xq + 32)));
          isum[t] = _mm256_add_epi32(isum[t], _mm256_add_epi32(_mm256_madd_epi16(plo, s_lo), _mm256_madd_epi16(phi, s_hi)));
        }
      }
      const float dw = half(b->d);
      const __m256 mins = _mm256_mul_ps(bytes_to_f32(m), _mm256_set1_ps(half(b->dmin)));
#pragma GCC unroll 4
      for (int t = 0; t < NT; ++t) {
        acc[t][k % 2] = _mm256_fmadd_ps(_mm256_cvtepi32_ps(isum[t]), _mm256_set1_ps(dw * act[t].d[k]), acc[t][k % 2]);
        corr[t] = _mm256_fmadd_ps(mins, _mm256_loadu_ps(static_cast<const float*>(act[t].sums) + 8 * k), corr[t]);
      }
    }
#pragma GCC unroll 4
    for (int t = 0; t < NT; ++t) y[t * ldy + r] = hsum(_mm256_sub_ps(_mm256_add_ps(acc[t][0], acc[t][1]), corr[t]));
  }
}

template <class W>
bool decode_few_tokens_avx2(const Matrix& w, const Activations& x, float* y, int64_t ldy, int64_t r0, int64_t r1) {
  if constexpr (std::is_same_v<W, Q4_K> || std::is_same_v<W, Q5_K>) {
    switch (x.n_tokens) {
      case 1: k_decode_rows<W, 1>(w, x, y, ldy, r0, r1); return true;
      case 2: k_decode_rows<W, 2>(w, x, y, ldy, r0, r1); return true;
      case 3: k_decode_rows<W, 3>(w, x, y, ldy, r0, r1); return true;
      default: return false;
    }
    static_assert(kMaxDecodeTokens == 3, "the switch covers 1..kMaxDecodeTokens");
  }
  return decode_few_tokens<W>(w, x, y, ldy, r0, r1);
}

template <class W>
void quant_matmul(const Matrix& w, const Activations& x, float* y, int64_t ldy, int64_t r0, int64_t r1) {
  if (decode_few_tokens_avx2<W>(w, x, y, ldy, r0, r1)) return;
  const ActLayout l = act_layout(W::kAct, w.cols);
  const int64_t units = w.cols / 32;
  auto* panel = static_cast<PackedUnit*>(kernel_scratch(units * sizeof(PackedUnit)));
  for (int64_t r = r0; r < r1; r += kPanelRows) {
    const int64_t rows = r1 - r < kPanelRows ? r1 - r : kPanelRows;
    const uint8_t* row_ptrs[kPanelRows];
    for (int i = 0; i < kPanelRows; ++i) row_ptrs[i] = w.row(i < rows ? r + i : r1 - 1);
    pack_panel<W>(row_ptrs, units, panel);
    all_tiles<W>(panel, units, x, l, y, ldy, r, rows);
  }
}

}  // namespace

KernelEntry matmul_quant_rows_avx2(DType type) {
  switch (type) {
    case DType::Q8_0: return {quant_matmul<Q8_0>, Q8_0::kAct, kPanelRows};
    case DType::Q4_0: return {quant_matmul<Q4_0>, Q4_0::kAct, kPanelRows};
    case DType::Q4_K: return {quant_matmul<Q4_K>, Q4_K::kAct, kPanelRows};
    case DType::Q5_K: return {quant_matmul<Q5_K>, Q5_K::kAct, kPanelRows};
    case DType::Q4_1: return {quant_matmul<RowsQ4_1>, RowsQ4_1::kAct, kPanelRows};
    case DType::Q5_0: return {quant_matmul<RowsQ5_0>, RowsQ5_0::kAct, kPanelRows};
    case DType::Q5_1: return {quant_matmul<RowsQ5_1>, RowsQ5_1::kAct, kPanelRows};
    case DType::IQ4_NL: return {quant_matmul<RowsIq4Nl>, RowsIq4Nl::kAct, kPanelRows};
    case DType::MXFP4: return {quant_matmul<RowsMxfp4>, RowsMxfp4::kAct, kPanelRows};
    case DType::IQ4_XS: return {quant_matmul<RowsIq4Xs>, RowsIq4Xs::kAct, kPanelRows};
    case DType::Q2_K: return {decode_all_tokens<RowsQ2K>, RowsQ2K::kAct, 1};
    case DType::Q3_K: return {decode_all_tokens<RowsQ3K>, RowsQ3K::kAct, 1};
    default: return {};
  }
}

}  // namespace skiff
