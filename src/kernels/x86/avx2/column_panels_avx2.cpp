// panel_column's readers for the K-quant panels outlier columns come from most
// (Q4_K, Q6_K: Qwen2.5's ffn_down), on AVX2 (so for the AVX-512 kernels' panels
// too): the 16 rows of a column in two vectors of 8 lanes, where the scalar
// reader (repack.cpp) took each row's element on its own. A decode step of
// Qwen2.5-Coder-1.5B fills about one column per ffn_down call (its outlier
// columns hardly recur), and the scalar reads were the larger part of what
// outliers added to those calls.
//
// Lane i of a dword vector of a panel is row i (repack.h), so each part of an
// element is a shift and an and of a loaded vector. The float operations are
// dequantize_row's, in its order (this file is built with -ffp-contract=off),
// so the columns are bit-identical with the scalar reader's.
#include <immintrin.h>

#include "kernels/matmul/repack.h"

namespace skiff {
namespace {

__m256i load8(const uint8_t* at) { return _mm256_loadu_si256(reinterpret_cast<const __m256i*>(at)); }

// (lanes >> shift) & mask.
__m256i bits(__m256i lanes, int shift, int mask) {
  return _mm256_and_si256(_mm256_srl_epi32(lanes, _mm_cvtsi32_si128(shift)), _mm256_set1_epi32(mask));
}

// The 8 rows' fp16 values at `at` as floats.
__m256 halves(const uint8_t* at) { return _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(at))); }

// Element e (0..255) of rows 8h..8h+7 of a Q6_K group: d · sc · (level - 32).
__m256 q6_k_rows(const uint8_t* group, int e, int h) {
  const int c = e % 32, c16 = c % 16, byte = 8 * (c16 % 4);
  const uint8_t* unit = group + kQ6KPanelWeights + (e / 32) * kQ6KPanelUnitBytes + 32 * h;
  const __m256i low = bits(load8(unit + 64 * (c16 / 4)), byte + 4 * (c / 16), 0x0F);
  const __m256i high = bits(load8(unit + 4 * 64 + 64 * (c / 16)), byte + 2 * (c16 / 4), 3);
  const __m256i level = _mm256_sub_epi32(_mm256_or_si256(low, _mm256_slli_epi32(high, 4)), _mm256_set1_epi32(32));
  const __m256i scale = _mm256_cvtepi8_epi32(
      _mm_loadl_epi64(reinterpret_cast<const __m128i*>(group + kQ6KPanelScales + 16 * (e / 16) + 8 * h)));
  const __m256 d = halves(group + kQ6KPanelD + 16 * h);
  return _mm256_mul_ps(_mm256_mul_ps(d, _mm256_cvtepi32_ps(scale)), _mm256_cvtepi32_ps(level));
}

// Element e of rows 8h..8h+7 of a Q4_K group: d · sc · level - dmin · m, the
// 6-bit sc and m of sub-block j unpacked as ggml packs them (the 12 scale
// bytes of row i are lane i of the group's 3 scale vectors).
__m256 q4_k_rows(const uint8_t* group, int e, int h) {
  const int j = e / 32, l = e % 32;
  const __m256i v0 = load8(group + kQ4KPanelScales + 32 * h), v1 = load8(group + kQ4KPanelScales + 64 + 32 * h);
  __m256i sc, m;
  if (j < 4) {
    sc = bits(v0, 8 * j, 63);
    m = bits(v1, 8 * j, 63);
  } else {
    const __m256i v2 = load8(group + kQ4KPanelScales + 128 + 32 * h);
    const int byte = 8 * (j - 4);
    sc = _mm256_or_si256(bits(v2, byte, 0x0F), _mm256_slli_epi32(bits(v0, byte + 6, 3), 4));
    m = _mm256_or_si256(bits(v2, byte + 4, 0x0F), _mm256_slli_epi32(bits(v1, byte + 6, 3), 4));
  }
  const uint8_t* nibbles = group + kQ4KPanelWeights + j * panel_weight_bytes(DType::Q4_K) + 32 * h;
  const __m256i level = bits(load8(nibbles + 64 * (l % 16 / 4)), 8 * (l % 4) + (l < 16 ? 0 : 4), 0x0F);
  const __m256 d = halves(group + kQ4KPanelD + 16 * h), dmin = halves(group + kQ4KPanelDmin + 16 * h);
  return _mm256_sub_ps(_mm256_mul_ps(_mm256_mul_ps(d, _mm256_cvtepi32_ps(sc)), _mm256_cvtepi32_ps(level)),
                       _mm256_mul_ps(dmin, _mm256_cvtepi32_ps(m)));
}

}  // namespace

bool k_quant_panel_column_avx2(DType type, const uint8_t* group, int e, float* out) {
  if (type != DType::Q4_K && type != DType::Q6_K) return false;
  for (int h = 0; h < 2; ++h)
    _mm256_storeu_ps(out + 8 * h, type == DType::Q4_K ? q4_k_rows(group, e, h) : q6_k_rows(group, e, h));
  return true;
}

}  // namespace skiff
