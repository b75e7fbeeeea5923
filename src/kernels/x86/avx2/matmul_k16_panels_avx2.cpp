// The K-quants with a scale per 16 columns (Q6_K, Q3_K, Q2_K) on their panels
// (kernels/matmul/repack.h: 16 rows interleaved per super-block, repacked at
// load) × any number of tokens on AVX2. Rows as stored made Q6_K the slowest
// type of a Q4_K_M file in decode and prefill, and Q2_K/Q3_K decode slow too
// (the AVX2-only Zen 4 VM; figures: docs/notes/kernel-design-figures.md); here
// one 4-byte activation broadcast serves 16 rows and each unpacked unit serves
// kTileTokens tokens.
//
// Per unit (32 columns: sub-blocks A = 2j and B = 2j+1 of 16) and token:
// vpmaddubsw of the unsigned levels u against the token's 4 bytes, kSumGroups
// groups summed in int16 (Q6_K: u ≤ 63, two: 2·2·63·127 = 32004; Q3_K, Q2_K:
// u ≤ 7, all four); vpmaddwd by the rows' scales sc (as int16 pairs) into an
// int32 sum per row, less offset·sc·Σx of each sub-block (the levels are the
// value + offset: Q6_K 32, Q3_K 4; vpmaddwd of offset/2·sc pairs with the
// token's Σx pairs), so the sum is exactly Σ sc·(u - offset)·x (below 2^28
// over a super-block), scaled by d·dx once per super-block. Q2_K's mins
// (value = u·sc·d - m·dmin) sum Σ m·Σx likewise, scaled by dmin·dx. The same
// operations in the same order for any number of tokens: batch-invariant.
#include <immintrin.h>

#include <type_traits>

#include "kernels/matmul/matmul_kernels.h"
#include "kernels/matmul/quant_activation_layout.h"
#include "kernels/matmul/repack.h"
#include "kernels/scratch.h"
#include "kernels/x86/avx2/matmul_avx2.h"
#include "kernels/x86/quant_blocks_simd.h"

namespace skiff {
namespace {

#include "kernels/x86/avx2/matmul_panel_driver_avx2.h"

// (w, w) for the low word w of each dword lane, and for the high one.
[[gnu::always_inline]] inline __m256i low_words(__m256i pairs) {
  return _mm256_blend_epi16(pairs, _mm256_slli_epi32(pairs, 16), 0xAA);
}
[[gnu::always_inline]] inline __m256i high_words(__m256i pairs) {
  return _mm256_blend_epi16(pairs, _mm256_srli_epi32(pairs, 16), 0x55);
}

// A super-block's factors for the 16 rows, unpacked once for all tokens:
// per sub-block sc and offset/2·sc as int16 pairs per dword lane (Q2_K: its
// m pairs), and the rows' d; Q2_K's also their dmin.
struct alignas(32) K16Factors {
  __m256i scale_words[16][kHalves];
  __m256i offset_words[16][kHalves];
  __m256 d[kHalves];
};
struct alignas(32) K16FactorsWithMins : K16Factors {
  __m256 dmin[kHalves];
};

[[gnu::always_inline]] inline __m256 load_fp16x8(const uint8_t* at) {
  return _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(at)));
}
[[gnu::always_inline]] inline __m256i load256(const uint8_t* at) {
  return _mm256_loadu_si256(reinterpret_cast<const __m256i*>(at));
}

// What a unit's groups share: kVectors of its 64-byte vectors from byte kAt, both halves.
template <int kVectors, int64_t kAt>
struct UnitVectors {
  __m256i v[kVectors][kHalves];
  void load(const uint8_t* unit) {
    for (int m = 0; m < kVectors; ++m)
      for (int h = 0; h < kHalves; ++h) v[m][h] = load256(unit + kAt + 64 * m + 32 * h);
  }
};

// A format's facts: its panel's group and unit sizes, where the units start,
// how many groups' products sum in int16, whether it has mins (Q2_K).
template <DType T, int64_t kGroup, int64_t kWeightsAt, int64_t kUnit, int kSum, bool kHasMins>
struct K16Facts {
  using Factors = std::conditional_t<kHasMins, K16FactorsWithMins, K16Factors>;
  static constexpr DType kType = T;
  static constexpr int64_t kGroupBytes = kGroup, kWeights = kWeightsAt, kUnitBytes = kUnit;
  static constexpr int kSumGroups = kSum;
  static constexpr bool kMins = kHasMins;
};

// Q6_K: the 16 rows' int8 scales per sub-block (repack.h); levels 0..63, two
// low-nibble vectors' worth of top bits per unit.
struct Q6KFormat : K16Facts<DType::Q6_K, kQ6KPanelGroupBytes, kQ6KPanelWeights, kQ6KPanelUnitBytes, 2, false> {
  static void factors(const uint8_t* sb, Factors& f) {
#pragma GCC unroll 2
    for (int h = 0; h < kHalves; ++h) {
      f.d[h] = load_fp16x8(sb + kQ6KPanelD + 16 * h);
#pragma GCC unroll 16
      for (int s = 0; s < 16; ++s) {
        const __m256i sc = _mm256_cvtepi8_epi32(
            _mm_loadl_epi64(reinterpret_cast<const __m128i*>(sb + kQ6KPanelScales + 16 * s + 8 * h)));
        f.scale_words[s][h] = low_words(sc);
        f.offset_words[s][h] = _mm256_slli_epi16(f.scale_words[s][h], 4);  // 32/2·sc
      }
    }
  }
  using Unit = UnitVectors<2, 4 * 64>;  // the top-bit vectors, after the 4 of nibbles
  // Bits 2g, 2g+1 of each byte moved to bits 4, 5 (the levels' top two bits).
  [[gnu::always_inline]] static __m256i top_bits(__m256i v, int g) {
    const __m256i moved = g < 2 ? _mm256_slli_epi16(v, 4 - 2 * g) : g == 2 ? v : _mm256_srli_epi16(v, 2);
    return _mm256_and_si256(moved, _mm256_set1_epi8(0x30));
  }
  [[gnu::always_inline]] static void group_levels(const uint8_t* unit, const Unit& s, int g, __m256i lo[kHalves],
                                                  __m256i hi[kHalves]) {
    const __m256i low4 = _mm256_set1_epi8(0x0f);
    for (int h = 0; h < kHalves; ++h) {
      const __m256i q = load256(unit + 64 * g + 32 * h);
      lo[h] = _mm256_or_si256(_mm256_and_si256(q, low4), top_bits(s.v[0][h], g));
      hi[h] = _mm256_or_si256(_mm256_and_si256(_mm256_srli_epi16(q, 4), low4), top_bits(s.v[1][h], g));
    }
  }
};

// Q3_K: signed 6-bit scales packed per unit (repack.h), 3-bit levels u with
// the value u - 4.
struct Q3KFormat : K16Facts<DType::Q3_K, kQ3KPanelGroupBytes, kQ3KPanelWeights, kQ3KPanelUnitBytes, 4, false> {
  // Unit k's sc of A (low word) and B (high) for rows 8h.., sign-extended from
  // the top of each word.
  [[gnu::always_inline]] static __m256i scale_pairs(const uint8_t* sb, int k, int h) {
    const uint8_t* at = sb + kQ3KPanelScales + 32 * h;
    if (k < 6) return _mm256_srai_epi16(_mm256_slli_epi16(load256(at + 64 * (k / 2)), k % 2 ? 4 : 10), 10);
    const __m256i top = load256(at + 64 * (k - 6));
    const __m256i low = _mm256_srli_epi16(load256(at + 2 * 64), k == 6 ? 2 : 4);
    const __m256i top_mask = _mm256_set1_epi16(static_cast<int16_t>(0xF000));
    return _mm256_srai_epi16(_mm256_or_si256(_mm256_and_si256(top_mask, top), _mm256_andnot_si256(top_mask, low)), 10);
  }
  static void factors(const uint8_t* sb, Factors& f) {
#pragma GCC unroll 2
    for (int h = 0; h < kHalves; ++h) {
      f.d[h] = load_fp16x8(sb + kQ3KPanelD + 16 * h);
#pragma GCC unroll 8
      for (int k = 0; k < 8; ++k) {
        const __m256i pairs = scale_pairs(sb, k, h);
        f.scale_words[2 * k][h] = low_words(pairs);
        f.scale_words[2 * k + 1][h] = high_words(pairs);
        f.offset_words[2 * k][h] = _mm256_slli_epi16(f.scale_words[2 * k][h], 1);  // 4/2·sc
        f.offset_words[2 * k + 1][h] = _mm256_slli_epi16(f.scale_words[2 * k + 1][h], 1);
      }
    }
  }
  using Unit = UnitVectors<3, 0>;
  // Columns 4g.. of A (bits 0..2 of vector g) and of B (bits 3..5); g = 3:
  // their low 2 bits at bits 6, 7 of vector 0 (A) or 1 (B), the third at bit
  // 6 (A) or 7 (B) of vector 2. 16-bit shifts leak across bytes only into
  // bits the masks drop.
  [[gnu::always_inline]] static void group_levels(const uint8_t*, const Unit& s, int g, __m256i lo[kHalves],
                                                  __m256i hi[kHalves]) {
    const __m256i low3 = _mm256_set1_epi8(0x07), low2 = _mm256_set1_epi8(0x03), bit2 = _mm256_set1_epi8(0x04);
    for (int h = 0; h < kHalves; ++h) {
      if (g < 3) {
        lo[h] = _mm256_and_si256(s.v[g][h], low3);
        hi[h] = _mm256_and_si256(_mm256_srli_epi16(s.v[g][h], 3), low3);
      } else {
        lo[h] = _mm256_or_si256(_mm256_and_si256(_mm256_srli_epi16(s.v[0][h], 6), low2),
                                _mm256_and_si256(_mm256_srli_epi16(s.v[2][h], 4), bit2));
        hi[h] = _mm256_or_si256(_mm256_and_si256(_mm256_srli_epi16(s.v[1][h], 6), low2),
                                _mm256_and_si256(_mm256_srli_epi16(s.v[2][h], 5), bit2));
      }
    }
  }
};

// Q2_K: 4-bit scales and mins packed per unit (repack.h), 2-bit levels u with
// the value u·sc·d - m·dmin.
struct Q2KFormat : K16Facts<DType::Q2_K, kQ2KPanelGroupBytes, kQ2KPanelWeights, kQ2KPanelUnitBytes, 4, true> {
  // Unit k's sc (nibble 0) or m (1) of A (low word) and B (high) for rows 8h...
  [[gnu::always_inline]] static __m256i nibble_pairs(const uint8_t* sb, int k, int h, int nibble) {
    const __m256i bytes = load256(sb + kQ2KPanelScales + 64 * (k / 2) + 32 * h);
    const int shift = 8 * (k % 2) + 4 * nibble;
    if (shift == 12) return _mm256_srli_epi16(bytes, 12);
    return _mm256_and_si256(shift ? _mm256_srli_epi16(bytes, shift) : bytes, _mm256_set1_epi16(0x0F));
  }
  static void factors(const uint8_t* sb, Factors& f) {
#pragma GCC unroll 2
    for (int h = 0; h < kHalves; ++h) {
      f.d[h] = load_fp16x8(sb + kQ2KPanelD + 16 * h);
      // (m, m) pairs against (Σx, Σx) give 2·m·Σx: dmin halved (exact).
      f.dmin[h] = _mm256_mul_ps(load_fp16x8(sb + kQ2KPanelDmin + 16 * h), _mm256_set1_ps(0.5f));
#pragma GCC unroll 8
      for (int k = 0; k < 8; ++k) {
        const __m256i sc = nibble_pairs(sb, k, h, 0), m = nibble_pairs(sb, k, h, 1);
        f.scale_words[2 * k][h] = low_words(sc);
        f.scale_words[2 * k + 1][h] = high_words(sc);
        f.offset_words[2 * k][h] = low_words(m);
        f.offset_words[2 * k + 1][h] = high_words(m);
      }
    }
  }
  using Unit = UnitVectors<2, 0>;
  // Columns 4g.. of A at bits 2·(g % 2) of vector g / 2, of B 4 bits higher.
  [[gnu::always_inline]] static void group_levels(const uint8_t*, const Unit& s, int g, __m256i lo[kHalves],
                                                  __m256i hi[kHalves]) {
    const __m256i low2 = _mm256_set1_epi8(0x03);
    for (int h = 0; h < kHalves; ++h) {
      const __m256i v = s.v[g / 2][h];
      lo[h] = _mm256_and_si256(g % 2 ? _mm256_srli_epi16(v, 2) : v, low2);
      hi[h] = _mm256_and_si256(_mm256_srli_epi16(v, 4 + 2 * (g % 2)), low2);
    }
  }
};

// Bytes of a unit's unpacked levels: 4 groups of lo and hi, two halves each.
constexpr int64_t kUnpackedUnitBytes = 4 * 2 * kHalves * 32;

// The Kernel of matmul_panel_driver_avx2.h, for format F.
template <class F>
struct K16Panels {
  using Tokens = RowTokens;  // Σx of each 16 activations: ActRow::qsums16
  template <int T, bool kPrefetch>
  static void run(const uint8_t* panel, int64_t blocks, const Tokens& tokens, int t0, __m256 facc[kHalves][T]) {
    run_levels<T, kPrefetch, false>(panel, nullptr, blocks, tokens, t0, facc);
  }
  static const uint8_t* unit_at(const uint8_t* panel, int64_t u) {
    return panel + (u / 8) * F::kGroupBytes + F::kWeights + (u % 8) * F::kUnitBytes;
  }
  // A panel's levels unpacked once, for prefill's many passes over it.
  static void unpack_levels(const uint8_t* panel, int64_t blocks, uint8_t* out) {
    for (int64_t u = 0; u < 8 * blocks; ++u) {
      const uint8_t* unit = unit_at(panel, u);
      typename F::Unit s;
      s.load(unit);
      for (int g = 0; g < 4; ++g) {
        __m256i lo[kHalves], hi[kHalves];
        F::group_levels(unit, s, g, lo, hi);
        uint8_t* dst = out + u * kUnpackedUnitBytes + g * 2 * kHalves * 32;
        for (int h = 0; h < kHalves; ++h) {
          _mm256_store_si256(reinterpret_cast<__m256i*>(dst + 32 * h), lo[h]);
          _mm256_store_si256(reinterpret_cast<__m256i*>(dst + 32 * (kHalves + h)), hi[h]);
        }
      }
    }
  }
  // kUnpacked: the levels are loaded from `unpacked` (unpack_levels' output
  // for this panel) instead of rebuilt from the panel's bits.
  template <int T, bool kPrefetch, bool kUnpacked>
  static void run_levels(const uint8_t* panel, const uint8_t* unpacked, int64_t blocks, const Tokens& tokens, int t0,
                         __m256 facc[kHalves][T]);
};

template <class F>
template <int T, bool kPrefetch, bool kUnpacked>
void K16Panels<F>::run_levels(const uint8_t* panel, const uint8_t* unpacked, int64_t blocks, const Tokens& tokens,
                              int t0, __m256 facc[kHalves][T]) {
  ActRow act[T];
  for (int t = 0; t < T; ++t) act[t] = act_row(*tokens.x, tokens.l, t0 + t);
  typename F::Factors f;
  for (int64_t k = 0; k < blocks; ++k) {
    const uint8_t* sb = panel + k * F::kGroupBytes;
    F::factors(sb, f);
    __m256i isum[kHalves][T], msum[kHalves][T];
    zero_sums<T>(isum);
    if constexpr (F::kMins) zero_sums<T>(msum);
#pragma GCC unroll 1
    for (int j = 0; j < 8; ++j) {
      if constexpr (kPrefetch) prefetch_unit<F::kGroupBytes / 8>(panel, 8 * k + j);
      const uint8_t* unit = unit_at(panel, 8 * k + j);
      const uint8_t* levels = nullptr;
      if constexpr (kUnpacked) levels = unpacked + (8 * k + j) * kUnpackedUnitBytes;
      typename F::Unit s;
      if constexpr (!kUnpacked) s.load(unit);
      // Groups kSumGroups at a time: their vpmaddubsw sums fit int16 (see the top).
#pragma GCC unroll 2
      for (int g0 = 0; g0 < 4; g0 += F::kSumGroups) {
        __m256i acc_lo[kHalves][T], acc_hi[kHalves][T];
        zero_sums<T>(acc_lo);
        zero_sums<T>(acc_hi);
#pragma GCC unroll 4
        for (int g = g0; g < g0 + F::kSumGroups; ++g) {
          __m256i lo[kHalves], hi[kHalves];
          if constexpr (kUnpacked) {
            for (int h = 0; h < kHalves; ++h) {
              lo[h] = _mm256_load_si256(reinterpret_cast<const __m256i*>(levels + g * 2 * kHalves * 32 + 32 * h));
              hi[h] = _mm256_load_si256(reinterpret_cast<const __m256i*>(levels + g * 2 * kHalves * 32 + 32 * (kHalves + h)));
            }
          } else {
            F::group_levels(unit, s, g, lo, hi);
          }
          const int8_t* x[T];
          for (int t = 0; t < T; ++t) x[t] = act[t].q + 256 * k + 32 * j + 4 * g;
          add_group_products<T>(lo, hi, x, acc_lo, acc_hi);
        }
#pragma GCC unroll 2
        for (int h = 0; h < kHalves; ++h)
          for (int t = 0; t < T; ++t) {
            isum[h][t] = _mm256_add_epi32(isum[h][t], _mm256_madd_epi16(acc_lo[h][t], f.scale_words[2 * j][h]));
            isum[h][t] = _mm256_add_epi32(isum[h][t], _mm256_madd_epi16(acc_hi[h][t], f.scale_words[2 * j + 1][h]));
          }
      }
#pragma GCC unroll 2
      for (int h = 0; h < kHalves; ++h)
        for (int t = 0; t < T; ++t) {  // less offset·sc·Σx of each sub-block (Q2_K: Σ 2·m·Σx apart)
          const __m256i sx_lo = _mm256_set1_epi16(act[t].qsums16[16 * k + 2 * j]);  // (Σx, Σx) pairs
          const __m256i sx_hi = _mm256_set1_epi16(act[t].qsums16[16 * k + 2 * j + 1]);
          __m256i& target = F::kMins ? msum[h][t] : isum[h][t];
          target = _mm256_sub_epi32(target, _mm256_madd_epi16(f.offset_words[2 * j][h], sx_lo));
          target = _mm256_sub_epi32(target, _mm256_madd_epi16(f.offset_words[2 * j + 1][h], sx_hi));
        }
    }
    add_super_block<T>(isum, f.d, act, k, facc);
    if constexpr (F::kMins) add_super_block<T>(msum, f.dmin, act, k, facc);
  }
}

// Prefill: each panel's levels unpacked once into scratch, then every pass of
// kTileTokens tokens loads them; the same integer sums, so the same outputs.
template <class F>
struct K16UnpackedPanels {
  struct Tokens {
    RowTokens tokens;
    const uint8_t* levels;
  };
  template <int T, bool kPrefetch>
  static void run(const uint8_t* panel, int64_t blocks, const Tokens& t, int t0, __m256 facc[kHalves][T]) {
    K16Panels<F>::template run_levels<T, kPrefetch, true>(panel, t.levels, blocks, t.tokens, t0, facc);
  }
};

template <class F>
void k16_panel_matmul(const Matrix& w, const Activations& x, float* y, int64_t ldy, int64_t r0, int64_t r1) {
  if (x.n_tokens <= kTileTokens) return panel_matmul<K16Panels<F>>(w, x, y, ldy, r0, r1);
  const ActLayout l = act_layout(ActivationFormat::kQ8_K, w.cols);
  const int64_t blocks = w.cols / 256;
  auto* levels = static_cast<uint8_t*>(kernel_scratch(8 * blocks * kUnpackedUnitBytes));
  const typename K16UnpackedPanels<F>::Tokens tokens{{&x, l}, levels};
  for (int64_t r = r0; r < r1; r += kPanelRowCount) {
    const uint8_t* panel = panel_start(w, r / kPanelRowCount);
    K16Panels<F>::unpack_levels(panel, blocks, levels);
    for (int t0 = 0; t0 < x.n_tokens; t0 += kTileTokens) {
      const int n = x.n_tokens - t0 < kTileTokens ? x.n_tokens - t0 : kTileTokens;
      panel_tile_any<K16UnpackedPanels<F>, false>(panel, blocks, tokens, t0, n, y, ldy, r);
    }
  }
}

}  // namespace

KernelEntry matmul_k16_panels_avx2(DType type) {
  switch (type) {
    case DType::Q6_K: return {k16_panel_matmul<Q6KFormat>, ActivationFormat::kQ8_K, kPanelRowCount};
    case DType::Q3_K: return {k16_panel_matmul<Q3KFormat>, ActivationFormat::kQ8_K, kPanelRowCount};
    case DType::Q2_K: return {k16_panel_matmul<Q2KFormat>, ActivationFormat::kQ8_K, kPanelRowCount};
    default: return {};
  }
}

}  // namespace skiff
