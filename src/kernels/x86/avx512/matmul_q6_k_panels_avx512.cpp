// Q6_K matrices the loader repacked into 16-row panels (kernels/matmul/repack.h) on
// AVX-512 VNNI, any number of tokens; the loops over rows and tokens are the
// other panel kernels' (matmul_panel_tiles_avx512.h).
//
// One vpdpbusd adds 4 columns of the 16 rows' unsigned levels q (0..63) times
// 4 broadcast activation bytes into each row's int32 lane. Q6_K scales each 16
// weights (d·sc, w = d·sc·(q - 32)), so a unit of 32 columns is two int32 sums,
// each started at -32·Σx of its 16 activations (QuadUnit::sum; decode reads
// them in the row, ActRow::qsums16), which leaves exactly Σ (q - 32)·x. As in the row
// kernel, each times its rows' sc is exact in float (|Σ| ≤ 16·32·127, |sc| ≤
// 128: under 2^24), the super-block's 16 are summed in float and scaled once
// by d·dx. Scaling each sum by a rounded d·sc instead measured no faster and
// moved the int8 perplexity of the real Qwen2.5 1.5B further from transformers'
// (tests/model/real_model_test.cpp; figures:
// docs/notes/kernel-design-figures.md): the int8 activations turn last-bit
// differences into flipped roundings downstream.
//
// Decode (1 token) and up to kPassTokens tokens read a panel as one stream and
// unpack its levels as the tile loads them; prefill (more tokens) unpacks each
// panel once per call into bytes and float scales (Q6Unit), which every token
// quad reads.
#include <immintrin.h>

#include "kernels/x86/avx512/avx512_header_warnings.h"

#include "kernels/matmul/matmul_kernels.h"
#include "kernels/matmul/quant_activation_layout.h"
#include "kernels/matmul/repack.h"
#include "kernels/scratch.h"
#include "kernels/x86/avx512/matmul_avx512.h"
#include "kernels/x86/quant_blocks_simd.h"

namespace skiff {
namespace {

#include "kernels/x86/avx512/matmul_panel_tiles_avx512.h"

// A panel where the loader left it. Columns 4g..4g+3 of unit u (g < 8) take
// the low (g < 4) or high nibbles of low-bit vector g % 4 and bits 2·(g % 4)
// of high-bit vector g / 4, moved to bits 4 and 5 (16-bit shifts leak across
// bytes only into the bits the masks drop).
struct Q6LoadPanel {
  // Constants, not calls: see LoadPanel in matmul_block32_q4_k_q5_k_avx512.cpp.
  static constexpr int64_t kGroupBytes = kQ6KPanelGroupBytes, kUnitBytes = kQ6KPanelUnitBytes;
  const uint8_t* groups;
  PrefetchLevel prefetch_level = PrefetchLevel::kL1;  // decode's: PrefetchTuner's (prefetch_tuner.h)
  [[gnu::always_inline]] const uint8_t* group(int64_t u) const { return groups + (u / 8) * kGroupBytes; }
  [[gnu::always_inline]] const uint8_t* unit(int64_t u) const {
    return group(u) + kQ6KPanelWeights + (u % 8) * kUnitBytes;
  }
  [[gnu::always_inline]] void prefetch(int64_t u) const { prefetch_unit_at<kGroupBytes / 8>(prefetch_level, groups, u); }
  [[gnu::always_inline]] __m512i w(int64_t u, int g) const {
    const __m512i low = _mm512_loadu_si512(unit(u) + 64 * (g % 4));
    const __m512i high = _mm512_loadu_si512(unit(u) + 4 * 64 + 64 * (g / 4));
    const int k = g % 4;
    const __m512i top = k <= 2 ? _mm512_slli_epi16(high, 4 - 2 * k) : _mm512_srli_epi16(high, 2 * k - 4);
    // vpternlogd 0xEA: (a & b) | c
    return _mm512_ternarylogic_epi32(g < 4 ? low : _mm512_srli_epi16(low, 4), _mm512_set1_epi8(0x0F),
                                     _mm512_and_si512(top, _mm512_set1_epi8(0x30)), 0xEA);
  }
  // The 16 rows' sc of sub-block 2·(u % 8) + h (as floats), and their d.
  [[gnu::always_inline]] __m512 scale(int64_t u, int h) const {
    return _mm512_cvtepi32_ps(_mm512_cvtepi8_epi32(
        _mm_loadu_si128(reinterpret_cast<const __m128i*>(group(u) + kQ6KPanelScales + 16 * (2 * (u % 8) + h)))));
  }
  [[gnu::always_inline]] __m512 d(int64_t u) const {
    return _mm512_cvtph_ps(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(group(u) + kQ6KPanelD)));
  }
};

// A panel unpacked for a call: unit u's levels as bytes, its two sc and d.
struct alignas(64) Q6Unit {
  uint8_t w[8][64];
  float scale[2][kPanelRows];
  float d[kPanelRows];
};
struct Q6CallPanel {
  const Q6Unit* units;
  [[gnu::always_inline]] void prefetch(int64_t) const {}  // in L2, written by this call
  [[gnu::always_inline]] __m512i w(int64_t u, int g) const { return _mm512_load_si512(units[u].w[g]); }
  [[gnu::always_inline]] __m512 scale(int64_t u, int h) const { return _mm512_load_ps(units[u].scale[h]); }
  [[gnu::always_inline]] __m512 d(int64_t u) const { return _mm512_load_ps(units[u].d); }
};

void unpack_panel(const Q6LoadPanel& p, int64_t units, Q6Unit* out) {
  for (int64_t u = 0; u < units; ++u) {
    p.prefetch(u);
#pragma GCC unroll 8
    for (int g = 0; g < 8; ++g) _mm512_store_si512(out[u].w[g], p.w(u, g));
#pragma GCC unroll 2
    for (int h = 0; h < 2; ++h) _mm512_store_ps(out[u].scale[h], p.scale(u, h));
    _mm512_store_ps(out[u].d, p.d(u));
  }
}

// One token's quantized row; its offsets are -32·Σx per 16 (the row's qsum16).
struct Q6RowAct {
  ActRow row;
  [[gnu::always_inline]] int32_t q(int64_t u, int g, int) const { return load_i32(row.q + 32 * u + 4 * g); }
  [[gnu::always_inline]] float d(int64_t u, int) const { return row.d[u / 8]; }
  [[gnu::always_inline]] int32_t sum16(int64_t u, int h, int) const { return -32 * row.qsums16[2 * u + h]; }
};

// The Tile (matmul_panel_tiles_avx512.h): per super-block, its 16 sub-blocks' sums
// times their sc in block[p][t], times the rows' d and each token's dx at its end.
struct Q6Tile {
  template <int R, int T, class Panel, class Act>
  [[gnu::always_inline]] static void run(const Panel panels[R], int64_t units, const Act& a, __m512 facc[R][T]) {
    for (int64_t s = 0; s < units; s += 8) {
      __m512 block[R][T];
#pragma GCC unroll 4
      for (int p = 0; p < R; ++p)
#pragma GCC unroll 16
        for (int t = 0; t < T; ++t) block[p][t] = _mm512_setzero_ps();
      for (int64_t u = s; u < s + 8; ++u) {
#pragma GCC unroll 4
        for (int p = 0; p < R; ++p) panels[p].prefetch(u);
#pragma GCC unroll 2
        for (int h = 0; h < 2; ++h) tokens<R, T, 0>(panels, u, h, a, block);
      }
#pragma GCC unroll 4
      for (int p = 0; p < R; ++p) {
        const __m512 d = panels[p].d(s);
#pragma GCC unroll 16
        for (int t = 0; t < T; ++t)
          facc[p][t] = _mm512_fmadd_ps(block[p][t], _mm512_mul_ps(d, _mm512_set1_ps(a.d(s, t))), facc[p][t]);
      }
    }
  }

  // Half h of unit u for tokens [T0, T) in blocks (matmul_panel_tiles_avx512.h).
  template <int R, int T, int T0, class Panel, class Act>
  [[gnu::always_inline]] static void tokens(const Panel panels[R], int64_t u, int h, const Act& a,
                                            __m512 block[R][T]) {
    constexpr int TB = kBlockSize<T, T0>;
    __m512i iacc[R][TB];
#pragma GCC unroll 8
    for (int t = 0; t < TB; ++t) {
      const __m512i init = _mm512_set1_epi32(a.sum16(u, h, T0 + t));
#pragma GCC unroll 4
      for (int p = 0; p < R; ++p) iacc[p][t] = init;
    }
    group_dots<4, R, TB>(panels, u, 4 * h, a, T0, iacc);
#pragma GCC unroll 4
    for (int p = 0; p < R; ++p) {
      const __m512 scale = panels[p].scale(u, h);
#pragma GCC unroll 8
      for (int t = 0; t < TB; ++t)
        block[p][T0 + t] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(iacc[p][t]), scale, block[p][T0 + t]);
    }
    if constexpr (T0 + TB < T) tokens<R, T, T0 + TB>(panels, u, h, a, block);
  }
};

// Rows [r0, r1) (whole panels) for any number of tokens.
void q6_k_panel_matmul(const Matrix& w, const Activations& x, float* y, int64_t ldy, int64_t r0, int64_t r1) {
  const int64_t units = w.cols / 32;
  auto panel = [&](int64_t r, int) { return Q6LoadPanel{panel_start(w, r / kPanelRows), x.prefetch}; };
  if (x.n_tokens == 1) {
    const ActRow row = act_row(x, act_layout(ActivationFormat::kQ8_K, x.cols), 0);
    return panel_decode<Q6Tile>(panel, Q6RowAct{row}, units, y, ldy, r0, r1);
  }
  if (x.n_tokens <= kPassTokens) return panel_rows<Q6Tile>(panel, x, units, y, ldy, r0, r1);
  auto* unpacked = static_cast<Q6Unit*>(kernel_scratch(2 * units * sizeof(Q6Unit)));
  auto call_panel = [&](int64_t r, int k) {
    unpack_panel(panel(r, k), units, unpacked + k * units);
    return Q6CallPanel{unpacked + k * units};
  };
  panel_rows<Q6Tile>(call_panel, x, units, y, ldy, r0, r1);
}

}  // namespace

KernelEntry matmul_q6_k_panels_avx512(DType) { return {q6_k_panel_matmul, ActivationFormat::kQ8_K, kPanelRows, 2, true}; }

}  // namespace skiff
