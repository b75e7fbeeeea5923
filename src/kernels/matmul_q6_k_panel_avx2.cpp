// Q6_K panels (kernels/repack.h: 16 rows interleaved per super-block, repacked
// at load) × any number of tokens on AVX2. Rows as stored (matmul_q6_k_avx2.cpp)
// ran at ~13 GB/s a core in decode and ~35 GOP/s in prefill (Zen 4), the
// slowest type of a Q4_K_M file; here one 4-byte activation broadcast serves
// 16 rows and each unpacked unit serves kTileTokens tokens.
//
// Per unit (32 columns: sub-blocks 2j and 2j+1 of 16) and token: vpmaddubsw
// of the unsigned levels q (0..63) against the token's 4 bytes, two groups
// summed in int16 (at most 2·2·63·127 = 32004); vpmaddwd by the rows' int8
// scales sc (as int16 pairs) into an int32 sum per row, less 32·sc·Σx of each
// sub-block (vpmaddwd of 16·sc pairs with the token's Σx pairs), so the sum is
// exactly Σ sc·(q - 32)·x (below 2^28 over a super-block), scaled by d·dx once
// per super-block. The same operations in the same order for any number of
// tokens: batch-invariant.
#include <immintrin.h>

#include "kernels/matmul_kernels.h"
#include "kernels/quant_activation_layout.h"
#include "kernels/quant_blocks_simd.h"
#include "kernels/repack.h"
#include "kernels/scratch.h"

namespace skiff {
namespace {

#include "kernels/matmul_panel_driver_avx2.h"

// A super-block's sub-block scales for the 16 rows, unpacked once for all
// tokens: sc and 16·sc as int16 pairs per dword lane.
struct alignas(32) Q6KFactors {
  __m256i scale_words[16][kHalves];
  __m256i offset_words[16][kHalves];
  __m256 d[kHalves];
};

[[gnu::always_inline]] inline void unpack_q6_k_factors(const uint8_t* sb, Q6KFactors& f) {
#pragma GCC unroll 2
  for (int h = 0; h < kHalves; ++h) {
    f.d[h] = _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(sb + kQ6KPanelD + 16 * h)));
#pragma GCC unroll 16
    for (int s = 0; s < 16; ++s) {
      const __m256i sc = _mm256_cvtepi8_epi32(
          _mm_loadl_epi64(reinterpret_cast<const __m128i*>(sb + kQ6KPanelScales + 16 * s + 8 * h)));
      const __m256i words = _mm256_or_si256(_mm256_and_si256(sc, _mm256_set1_epi32(0xffff)), _mm256_slli_epi32(sc, 16));
      f.scale_words[s][h] = words;
      f.offset_words[s][h] = _mm256_slli_epi16(words, 4);
    }
  }
}

// Bits 2g, 2g+1 of each byte moved to bits 4, 5 (the levels' top two bits).
[[gnu::always_inline]] inline __m256i top_bits(__m256i v, int g) {
  const __m256i moved = g < 2 ? _mm256_slli_epi16(v, 4 - 2 * g) : g == 2 ? v : _mm256_srli_epi16(v, 2);
  return _mm256_and_si256(moved, _mm256_set1_epi8(0x30));
}

// The Kernel of matmul_panel_driver_avx2.h.
struct Q6KPanels {
  struct Tokens {
    const Activations* x;
    ActLayout l;
    const int32_t* sums;  // per token, per 16 columns: Σx of the 16 as an int16 pair
    int64_t sums_per_token;
  };
  static Tokens prepare(const Activations& x, const ActLayout& l) { return prepare(x, l, 0, nullptr); }
  // Also `extra` bytes of this thread's scratch after the sums, 32-byte aligned.
  static Tokens prepare(const Activations& x, const ActLayout& l, size_t extra_bytes, uint8_t** extra) {
    const int64_t per_token = x.cols / 16;
    const size_t sums_bytes = (sizeof(int32_t) * per_token * x.n_tokens + 31) / 32 * 32;
    auto* sums = static_cast<int32_t*>(kernel_scratch(sums_bytes + extra_bytes));
    if (extra) *extra = reinterpret_cast<uint8_t*>(sums) + sums_bytes;
    for (int t = 0; t < x.n_tokens; ++t) {
      const int8_t* q = act_row(x, l, t).q;
      for (int64_t b = 0; b < per_token; ++b) {
        int32_t s = 0;
        for (int i = 0; i < 16; ++i) s += q[16 * b + i];
        sums[per_token * t + b] = static_cast<int32_t>((static_cast<uint32_t>(s) & 0xffff) * 0x10001u);
      }
    }
    return {&x, l, sums, per_token};
  }
  template <int T, bool kPrefetch>
  static void run(const uint8_t* panel, int64_t blocks, const Tokens& tokens, int t0, __m256 facc[kHalves][T]) {
    run_levels<T, kPrefetch, false>(panel, nullptr, blocks, tokens, t0, facc);
  }
  // kUnpacked: the levels are loaded from `unpacked` (unpack_levels' output
  // for this panel) instead of rebuilt from their low and top bits.
  template <int T, bool kPrefetch, bool kUnpacked>
  static void run_levels(const uint8_t* panel, const uint8_t* unpacked, int64_t blocks, const Tokens& tokens, int t0,
                         __m256 facc[kHalves][T]);
};

// One group's levels (4 columns of the unit's 32, both halves): the low
// nibbles' columns in lo, the high nibbles' in hi, as unsigned bytes 0..63.
[[gnu::always_inline]] inline void group_levels(const uint8_t* unit, const __m256i top[2][kHalves], int g,
                                                __m256i lo[kHalves], __m256i hi[kHalves]) {
  const __m256i low4 = _mm256_set1_epi8(0x0f);
  for (int h = 0; h < kHalves; ++h) {
    const __m256i q = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(unit + 64 * g + 32 * h));
    lo[h] = _mm256_or_si256(_mm256_and_si256(q, low4), top_bits(top[0][h], g));
    hi[h] = _mm256_or_si256(_mm256_and_si256(_mm256_srli_epi16(q, 4), low4), top_bits(top[1][h], g));
  }
}

// Bytes of a unit's unpacked levels: 4 groups of lo and hi, two halves each.
constexpr int64_t kUnpackedUnitBytes = 4 * 2 * kHalves * 32;

void load_top_bits(const uint8_t* unit, __m256i top[2][kHalves]) {
  for (int v = 0; v < 2; ++v)
    for (int h = 0; h < kHalves; ++h)
      top[v][h] = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(unit + 256 + 64 * v + 32 * h));
}

// A panel's levels unpacked once, for prefill's many passes over it.
void unpack_levels(const uint8_t* panel, int64_t blocks, uint8_t* out) {
  for (int64_t u = 0; u < 8 * blocks; ++u) {
    const uint8_t* unit = panel + (u / 8) * kQ6KPanelGroupBytes + kQ6KPanelWeights + (u % 8) * kQ6KPanelUnitBytes;
    __m256i top[2][kHalves];
    load_top_bits(unit, top);
    for (int g = 0; g < 4; ++g) {
      __m256i lo[kHalves], hi[kHalves];
      group_levels(unit, top, g, lo, hi);
      uint8_t* dst = out + u * kUnpackedUnitBytes + g * 2 * kHalves * 32;
      for (int h = 0; h < kHalves; ++h) {
        _mm256_store_si256(reinterpret_cast<__m256i*>(dst + 32 * h), lo[h]);
        _mm256_store_si256(reinterpret_cast<__m256i*>(dst + 32 * (kHalves + h)), hi[h]);
      }
    }
  }
}

template <int T, bool kPrefetch, bool kUnpacked>
void Q6KPanels::run_levels(const uint8_t* panel, const uint8_t* unpacked, int64_t blocks, const Tokens& tokens, int t0,
                           __m256 facc[kHalves][T]) {
  ActRow act[T];
  const int32_t* sums[T];
  for (int t = 0; t < T; ++t) {
    act[t] = act_row(*tokens.x, tokens.l, t0 + t);
    sums[t] = tokens.sums + tokens.sums_per_token * (t0 + t);
  }
  Q6KFactors f;
  for (int64_t k = 0; k < blocks; ++k) {
    const uint8_t* sb = panel + k * kQ6KPanelGroupBytes;
    unpack_q6_k_factors(sb, f);
    __m256i isum[kHalves][T];
    zero_sums<T>(isum);
#pragma GCC unroll 1
    for (int j = 0; j < 8; ++j) {
      if constexpr (kPrefetch) prefetch_unit<kQ6KPanelGroupBytes / 8>(panel, 8 * k + j);
      const uint8_t* unit = sb + kQ6KPanelWeights + j * kQ6KPanelUnitBytes;
      const uint8_t* levels = nullptr;
      if constexpr (kUnpacked) levels = unpacked + (8 * k + j) * kUnpackedUnitBytes;
      __m256i top[2][kHalves];
      if constexpr (!kUnpacked) load_top_bits(unit, top);
      // Groups in pairs: two vpmaddubsw sums fit int16 (see the top).
#pragma GCC unroll 2
      for (int pair = 0; pair < 2; ++pair) {
        __m256i acc_lo[kHalves][T], acc_hi[kHalves][T];
        zero_sums<T>(acc_lo);
        zero_sums<T>(acc_hi);
#pragma GCC unroll 2
        for (int g = 2 * pair; g < 2 * pair + 2; ++g) {
          __m256i lo[kHalves], hi[kHalves];
          if constexpr (kUnpacked) {
            for (int h = 0; h < kHalves; ++h) {
              lo[h] = _mm256_load_si256(reinterpret_cast<const __m256i*>(levels + g * 2 * kHalves * 32 + 32 * h));
              hi[h] = _mm256_load_si256(reinterpret_cast<const __m256i*>(levels + g * 2 * kHalves * 32 + 32 * (kHalves + h)));
            }
          } else {
            group_levels(unit, top, g, lo, hi);
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
        for (int t = 0; t < T; ++t) {  // less 32·sc·Σx of each sub-block
          const __m256i sx_lo = _mm256_set1_epi32(sums[t][16 * k + 2 * j]);
          const __m256i sx_hi = _mm256_set1_epi32(sums[t][16 * k + 2 * j + 1]);
          isum[h][t] = _mm256_sub_epi32(isum[h][t], _mm256_madd_epi16(f.offset_words[2 * j][h], sx_lo));
          isum[h][t] = _mm256_sub_epi32(isum[h][t], _mm256_madd_epi16(f.offset_words[2 * j + 1][h], sx_hi));
        }
    }
    add_super_block<T>(isum, f.d, act, k, facc);
  }
}

// Prefill: each panel's levels unpacked once into scratch, then every pass of
// kTileTokens tokens loads them; the same integer sums, so the same outputs.
struct Q6KUnpackedPanels {
  struct Tokens {
    Q6KPanels::Tokens tokens;
    const uint8_t* levels;
  };
  template <int T, bool kPrefetch>
  static void run(const uint8_t* panel, int64_t blocks, const Tokens& t, int t0, __m256 facc[kHalves][T]) {
    Q6KPanels::run_levels<T, kPrefetch, true>(panel, t.levels, blocks, t.tokens, t0, facc);
  }
};

void q6_k_panel_matmul(const Matrix& w, const Activations& x, float* y, int64_t ldy, int64_t r0, int64_t r1) {
  if (x.n_tokens <= kTileTokens) return panel_matmul<Q6KPanels>(w, x, y, ldy, r0, r1);
  const ActLayout l = act_layout(ActivationFormat::kQ8_K, w.cols);
  const int64_t blocks = w.cols / 256;
  uint8_t* levels;
  const Q6KUnpackedPanels::Tokens tokens{Q6KPanels::prepare(x, l, 8 * blocks * kUnpackedUnitBytes, &levels), levels};
  for (int64_t r = r0; r < r1; r += kPanelRowCount) {
    const uint8_t* panel = panel_start(w, r / kPanelRowCount);
    unpack_levels(panel, blocks, levels);
    for (int t0 = 0; t0 < x.n_tokens; t0 += kTileTokens) {
      const int n = x.n_tokens - t0 < kTileTokens ? x.n_tokens - t0 : kTileTokens;
      panel_tile_any<Q6KUnpackedPanels, false>(panel, blocks, tokens, t0, n, y, ldy, r);
    }
  }
}

}  // namespace

KernelEntry q6_k_panel_kernel_avx2() { return {q6_k_panel_matmul, ActivationFormat::kQ8_K, kPanelRowCount}; }

}  // namespace skiff
