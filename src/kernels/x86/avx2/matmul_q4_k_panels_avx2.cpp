// Q4_K panels (kernels/matmul/repack.h: 16 rows interleaved per super-block,
// repacked at load) × any number of tokens on AVX2, where rows as stored left
// decode compute-bound on the AVX2-only Zen 4 VM (figures:
// docs/notes/kernel-design-figures.md): per 32 weights a row spent a load, an
// unpack, a scale shuffle, two multiplies and an add, and each row ended in a
// horizontal sum. Here one 4-byte activation broadcast serves 16 rows (two
// vectors of 8), the scales are unpacked once per 16 rows, and there are no
// per-row reductions.
//
// Per unit j (32 columns) and token: vpmaddubsw of each group's nibbles
// (0..15) against the token's 4 bytes, 8 of them summed in int16 (at most
// 8·2·15·128 = 30720); vpmaddwd by the rows' 6-bit scales (as int16 pairs)
// adds the unit into an int32 sum per row (below 2^25 over a super-block),
// which is scaled by d·dx once per super-block; the min term dmin·m_j·dx·Σq
// is taken out per unit. Every token goes through the same operations in the
// same order whatever the number of tokens in the call, so a token's outputs
// do not depend on its batch (docs: batch invariance).
#include <immintrin.h>

#include "kernels/matmul/matmul_kernels.h"
#include "kernels/matmul/quant_activation_layout.h"
#include "kernels/matmul/repack.h"
#include "kernels/x86/avx2/matmul_avx2.h"
#include "kernels/x86/quant_blocks_simd.h"

namespace skiff {
namespace {

#include "kernels/x86/avx2/matmul_panel_driver_avx2.h"

// The 6-bit scale (part 0) or min (part 1) of unit j for 8 rows, one per dword
// lane, from the super-block's scale vectors v[0..2] (repack.h: lane i of
// vector v holds row i's scale bytes 4v..4v+3, packed as ggml packs them).
[[gnu::always_inline]] inline __m256i six_bits(const __m256i v[3], int j, int part) {
  const __m256i low = v[part];
  if (j < 4) return _mm256_and_si256(_mm256_srli_epi32(low, 8 * j), _mm256_set1_epi32(63));
  const __m256i nib = _mm256_and_si256(_mm256_srli_epi32(v[2], 8 * (j - 4) + 4 * part), _mm256_set1_epi32(15));
  const __m256i top = _mm256_and_si256(_mm256_srli_epi32(low, 8 * (j - 4) + 2), _mm256_set1_epi32(48));
  return _mm256_or_si256(nib, top);
}

// A super-block's per-unit factors for the 16 rows, unpacked once for all
// tokens: the scales as int16 pairs (s, s) per dword lane, dmin·m as floats.
struct alignas(32) Factors {
  __m256i scale_words[8][kHalves];
  __m256 min[8][kHalves];
  __m256 d[kHalves];
};

[[gnu::always_inline]] inline void unpack_factors(const uint8_t* sb, Factors& f) {
#pragma GCC unroll 2
  for (int h = 0; h < kHalves; ++h) {
    __m256i v[3];
    for (int i = 0; i < 3; ++i)
      v[i] = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(sb + kQ4KPanelScales + 64 * i + 32 * h));
    f.d[h] = _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(sb + kQ4KPanelD + 16 * h)));
    const __m256 dmin = _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(sb + kQ4KPanelDmin + 16 * h)));
#pragma GCC unroll 8
    for (int j = 0; j < 8; ++j) {
      const __m256i sc = six_bits(v, j, 0);
      f.scale_words[j][h] = _mm256_or_si256(sc, _mm256_slli_epi32(sc, 16));
      f.min[j][h] = _mm256_mul_ps(_mm256_cvtepi32_ps(six_bits(v, j, 1)), dmin);
    }
  }
}

// The Kernel of matmul_panel_driver_avx2.h.
struct Q4KPanels {
  using Tokens = RowTokens;
  template <int T, bool kPrefetch>
  static void run(const uint8_t* panel, int64_t blocks, const Tokens& tokens, int t0, __m256 facc[kHalves][T]);
};

template <int T, bool kPrefetch>
void Q4KPanels::run(const uint8_t* panel, int64_t blocks, const Tokens& tokens, int t0, __m256 facc[kHalves][T]) {
  ActRow act[T];
  for (int t = 0; t < T; ++t) act[t] = act_row(*tokens.x, tokens.l, t0 + t);
  const __m256i low4 = _mm256_set1_epi8(0x0f);
  Factors f;
  for (int64_t k = 0; k < blocks; ++k) {
    const uint8_t* sb = panel + k * kQ4KPanelGroupBytes;
    unpack_factors(sb, f);
    __m256i isum[kHalves][T];
    zero_sums<T>(isum);
#pragma GCC unroll 1
    for (int j = 0; j < 8; ++j) {
      if constexpr (kPrefetch) prefetch_unit<kQ4KPanelGroupBytes / 8>(panel, 8 * k + j);
      const uint8_t* unit = sb + kQ4KPanelWeights + j * panel_weight_bytes(DType::Q4_K);
      __m256i acc16[kHalves][T];
      zero_sums<T>(acc16);
#pragma GCC unroll 4
      for (int g = 0; g < 4; ++g) {
        __m256i lo[kHalves], hi[kHalves];
        for (int h = 0; h < kHalves; ++h) {
          const __m256i q = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(unit + 64 * g + 32 * h));
          lo[h] = _mm256_and_si256(q, low4);
          hi[h] = _mm256_and_si256(_mm256_srli_epi16(q, 4), low4);
        }
        const int8_t* x[T];
        for (int t = 0; t < T; ++t) x[t] = act[t].q + 256 * k + 32 * j + 4 * g;
        add_group_products<T>(lo, hi, x, acc16, acc16);
      }
#pragma GCC unroll 2
      for (int h = 0; h < kHalves; ++h) {
#pragma GCC unroll 4
        for (int t = 0; t < T; ++t) {
          isum[h][t] = _mm256_add_epi32(isum[h][t], _mm256_madd_epi16(acc16[h][t], f.scale_words[j][h]));
          const float dsum = static_cast<const float*>(act[t].sums)[8 * k + j];  // dx·Σq of the unit
          facc[h][t] = _mm256_fnmadd_ps(f.min[j][h], _mm256_set1_ps(dsum), facc[h][t]);
        }
      }
    }
    add_super_block<T>(isum, f.d, act, k, facc);
  }
}

}  // namespace

KernelEntry matmul_q4_k_panels_avx2(DType) { return {panel_matmul<Q4KPanels>, ActivationFormat::kQ8_K, kPanelRowCount}; }

}  // namespace skiff
