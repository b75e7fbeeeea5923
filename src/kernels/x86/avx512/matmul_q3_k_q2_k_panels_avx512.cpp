// Q3_K and Q2_K matrices the loader repacked into 16-row panels
// (kernels/matmul/repack.h) on AVX-512 VNNI, any number of tokens; the loops over
// rows and tokens are the other panel kernels' (matmul_panel_tiles_avx512.h).
//
// Both scale each 16 weights (sc), so a unit of 32 columns is two sub-blocks,
// A (columns 0..15) and B (16..31). One vpdpbusd adds 4 columns of the 16
// rows' unsigned levels u times 4 broadcast activation bytes into each row's
// int32 lane. Q3_K: levels u - 4 (u = 0..7); six of a unit's eight vpdpbusd
// inputs are one `and` of a stored vector (A's u at bits 0..2, B's u·8 at bits
// 3..5), the other two gather their bits with two shifts, a select and an and
// (the row kernel spent about twice the operations per weight). Q2_K: levels
// u (0..3) less dmin·m per sub-block; A's u and B's u·16 are an `and` of a
// vector or of it shifted by 2.
// B's sum (Q3_K: started at -32·Σx, QuadUnit::sum, so 8·S_B; Q2_K: 16·S_B)
// shifted into the high 16 bits of the lane is S_B; A's, started 2^13 higher
// below it (Q3_K also at -4·Σx), is S_A + 2^13, always in 0..2^15 (|S| ≤
// 16·4·128), so it never borrows from the high half, and one vpdpwssd
// multiplies both halves by their rows' sc (a word pair per lane, stored
// sign-ready) into the super-block's int32 sum. That sum less the bias
// 2^13·Σ sc_A (|Σ sc·S| ≤ 16·8192·32 < 2^24) is exact in float and scaled once
// by d·dx; Q2_K's Σ m·Σx (|·| ≤ 16·15·2048) likewise by dmin·dx. This is the
// Q6_K panel kernel's scheme (matmul_q6_k_panels_avx512.cpp) with its float sum
// of 16 exact products made an exact integer sum, and every token's
// arithmetic is the same for any token count: batch invariant.
//
// Decode reads a panel as one stream, left to the hardware prefetcher: the
// software prefetch of the other panel kernels (prefetch_unit, tuned on Zen 5)
// slowed this one's decode on Zen 4 far below what it reaches without
// (figures: docs/notes/kernel-design-figures.md).
// Register pressure (an int32 sum per super-block besides the float one)
// caps one pass at kBlockTokens tokens; more go in quads over panel pairs.
#include <immintrin.h>

#include "kernels/x86/avx512/avx512_header_warnings.h"

#include "kernels/matmul/matmul_kernels.h"
#include "kernels/matmul/quant_activation_layout.h"
#include "kernels/matmul/repack.h"
#include "kernels/x86/avx512/matmul_avx512.h"
#include "kernels/x86/quant_blocks_simd.h"

namespace skiff {
namespace {

#include "kernels/x86/avx512/matmul_panel_tiles_avx512.h"

constexpr int32_t kLowBias = 1 << 13;  // keeps A's 16-bit half non-negative

// A Q3_K panel where the loader left it (the layout in repack.h).
struct Q3Panel {
  static constexpr int kHighShift = 13;  // B's u·8 sums to S_B in the high word
  static constexpr bool kMins = false;
  // Where sub-block h (A 0, B 1) starts its sum, from -32·Σx of its 16 activations.
  [[gnu::always_inline]] static int32_t start(int32_t minus_32_sum, int h) {
    return h ? minus_32_sum : (minus_32_sum >> 3) + kLowBias;
  }
  // Constants, not calls: see LoadPanel in matmul_block32_q4_k_q5_k_avx512.cpp.
  static constexpr int64_t kGroupBytes = kQ3KPanelGroupBytes;
  const uint8_t* groups;
  [[gnu::always_inline]] const uint8_t* group(int64_t u) const { return groups + (u / 8) * kGroupBytes; }
  [[gnu::always_inline]] __m512i v(int64_t u, int m) const {
    return _mm512_loadu_si512(group(u) + kQ3KPanelWeights + (u % 8) * kQ3KPanelUnitBytes + 64 * m);
  }
  // Columns 4g..4g+3 of unit u: u (g < 4, sub-block A) or u·8 (B) as bytes.
  [[gnu::always_inline]] __m512i w(int64_t u, int g) const {
    const __m512i low3 = _mm512_set1_epi8(0x07), high3 = _mm512_set1_epi8(0x38);
    if (g < 3) return _mm512_and_si512(v(u, g), low3);
    if (g > 3 && g < 7) return _mm512_and_si512(v(u, g - 4), high3);
    // Columns 12.. (g = 3) and 28.. (g = 7): 2 bits of vector 0 or 1 and a bit
    // of vector 2 moved under u's place (16-bit shifts leak across bytes only
    // into bits the select and the mask drop).
    const int at = g == 3 ? 0 : 3;
    const __m512i low2 = _mm512_srli_epi16(v(u, g == 3 ? 0 : 1), 6 - at);
    const __m512i third = _mm512_srli_epi16(v(u, 2), g == 3 ? 4 : 2);
    const __m512i low2_bits = _mm512_set1_epi8(static_cast<char>(3 << at));
    // vpternlogd 0xCA: a ? b : c, bit by bit
    return _mm512_and_si512(_mm512_ternarylogic_epi32(low2_bits, low2, third, 0xCA), g == 3 ? low3 : high3);
  }
  // Unit k of super-block s: the 16 rows' sc of A (low 16 bits) and B (high),
  // sign-extended from the top of each word.
  [[gnu::always_inline]] __m512i scales(int64_t s, int k) const {
    const uint8_t* at = group(s) + kQ3KPanelScales;
    if (k < 6) return _mm512_srai_epi16(_mm512_slli_epi16(_mm512_loadu_si512(at + 64 * (k / 2)), k % 2 ? 4 : 10), 10);
    const __m512i top = _mm512_loadu_si512(at + 64 * (k - 6));
    const __m512i low = _mm512_srli_epi16(_mm512_loadu_si512(at + 2 * 64), k == 6 ? 2 : 4);
    return _mm512_srai_epi16(
        _mm512_ternarylogic_epi32(_mm512_set1_epi16(static_cast<int16_t>(0xF000)), top, low, 0xCA), 10);
  }
  [[gnu::always_inline]] __m512 d(int64_t s) const {
    return _mm512_cvtph_ps(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(group(s) + kQ3KPanelD)));
  }
};

// A Q2_K panel where the loader left it (the layout in repack.h).
struct Q2Panel {
  static constexpr int kHighShift = 12;  // B's u·16 sums to S_B in the high word
  static constexpr bool kMins = true;
  [[gnu::always_inline]] static int32_t start(int32_t, int h) { return h ? 0 : kLowBias; }
  static constexpr int64_t kGroupBytes = kQ2KPanelGroupBytes;
  const uint8_t* groups;
  [[gnu::always_inline]] const uint8_t* group(int64_t u) const { return groups + (u / 8) * kGroupBytes; }
  [[gnu::always_inline]] __m512i v(int64_t u, int m) const {
    return _mm512_loadu_si512(group(u) + kQ2KPanelWeights + (u % 8) * kQ2KPanelUnitBytes + 64 * m);
  }
  // Columns 4g..4g+3 of unit u: u (g < 4, A) or u·16 (B) as bytes (16-bit
  // shifts leak across bytes only into bits the masks drop).
  [[gnu::always_inline]] __m512i w(int64_t u, int g) const {
    const __m512i bits = v(u, (g % 4) / 2);
    return _mm512_and_si512(g % 2 ? _mm512_srli_epi16(bits, 2) : bits, _mm512_set1_epi8(g < 4 ? 0x03 : 0x30));
  }
  // Unit k of super-block s: the 16 rows' sc (A low word, B high), or their m.
  [[gnu::always_inline]] __m512i byte_pair(int64_t s, int k, int nibble) const {
    const __m512i bytes = _mm512_loadu_si512(group(s) + kQ2KPanelScales + 64 * (k / 2));
    const int shift = 8 * (k % 2) + 4 * nibble;
    if (shift == 12) return _mm512_srli_epi16(bytes, 12);
    return _mm512_and_si512(shift ? _mm512_srli_epi16(bytes, shift) : bytes, _mm512_set1_epi16(0x0F));
  }
  [[gnu::always_inline]] __m512i scales(int64_t s, int k) const { return byte_pair(s, k, 0); }
  [[gnu::always_inline]] __m512i mins(int64_t s, int k) const { return byte_pair(s, k, 1); }
  [[gnu::always_inline]] __m512 d(int64_t s) const {
    return _mm512_cvtph_ps(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(group(s) + kQ2KPanelD)));
  }
  [[gnu::always_inline]] __m512 dmin(int64_t s) const {
    return _mm512_cvtph_ps(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(group(s) + kQ2KPanelDmin)));
  }
};

// Σx of sub-blocks A (low 16 bits) and B (high) of unit u, from -32·Σx of each.
[[gnu::always_inline]] inline int32_t sum_pair(int32_t minus_32_a, int32_t minus_32_b) {
  return static_cast<int32_t>(static_cast<uint16_t>(-minus_32_a / 32) | static_cast<uint32_t>(-minus_32_b / 32) << 16);
}

// One token's quantized row (its Σx per 16 in qsums16).
struct K16RowAct {
  ActRow row;
  [[gnu::always_inline]] int32_t q(int64_t u, int g, int) const { return load_i32(row.q + 32 * u + 4 * g); }
  [[gnu::always_inline]] float d(int64_t u, int) const { return row.d[u / 8]; }
};

// Where sub-block h (A 0, B 1) of unit u starts its sum for token t, and the unit's Σx pair.
template <class Panel>
[[gnu::always_inline]] inline int32_t start(const QuadAct& a, int64_t u, int h, int t) {
  return Panel::start(a.sum16(u, h, t), h);
}
template <class Panel>
[[gnu::always_inline]] inline int32_t start(const K16RowAct& a, int64_t u, int h, int) {
  return Panel::start(-32 * a.row.qsums16[2 * u + h], h);
}
[[gnu::always_inline]] inline int32_t sums(const QuadAct& a, int64_t u, int t) {
  return sum_pair(a.sum16(u, 0, t), a.sum16(u, 1, t));
}
// The two int16 sums side by side are the pair (A low, B high).
[[gnu::always_inline]] inline int32_t sums(const K16RowAct& a, int64_t u, int) {
  return load_i32(a.row.qsums16 + 2 * u);
}

// The Tile (matmul_panel_tiles_avx512.h): per super-block, its units' sums times
// their sc in isum[p][t] (int32), less the bias, times the rows' d and each
// token's dx at its end (Q2_K: less Σ m·Σx times dmin·dx).
struct K16Tile {
  template <int R, int T, class Panel, class Act>
  [[gnu::always_inline]] static void run(const Panel panels[R], int64_t units, const Act& a, __m512 facc[R][T]) {
    const __m512i minus_bias = _mm512_set1_epi32(static_cast<uint16_t>(-kLowBias));  // low word -2^13, high 0
    for (int64_t s = 0; s < units; s += 8) {
      __m512i isum[R][T], bias[R];
#pragma GCC unroll 4
      for (int p = 0; p < R; ++p) {
        bias[p] = _mm512_setzero_si512();
#pragma GCC unroll 16
        for (int t = 0; t < T; ++t) isum[p][t] = _mm512_setzero_si512();
      }
#pragma GCC unroll 8
      for (int k = 0; k < 8; ++k) {
        __m512i sc[R];
#pragma GCC unroll 4
        for (int p = 0; p < R; ++p) {
          sc[p] = panels[p].scales(s, k);
          bias[p] = _mm512_dpwssd_epi32(bias[p], sc[p], minus_bias);
        }
        tokens<R, T, 0>(panels, s + k, sc, a, isum);
      }
#pragma GCC unroll 4
      for (int p = 0; p < R; ++p) {
        const __m512 d = panels[p].d(s);
#pragma GCC unroll 16
        for (int t = 0; t < T; ++t)
          facc[p][t] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(_mm512_add_epi32(isum[p][t], bias[p])),
                                       _mm512_mul_ps(d, _mm512_set1_ps(a.d(s, t))), facc[p][t]);
        if constexpr (Panel::kMins) mins<T>(panels[p], s, a, facc[p]);
      }
    }
  }

  // Q2_K: facc[t] -= Σ m·Σx of super-block s times dmin·dx (int32, exact).
  template <int T, class Panel, class Act>
  [[gnu::always_inline]] static void mins(const Panel& panel, int64_t s, const Act& a, __m512 facc[T]) {
    __m512i msum[T];
#pragma GCC unroll 16
    for (int t = 0; t < T; ++t) msum[t] = _mm512_setzero_si512();
#pragma GCC unroll 8
    for (int k = 0; k < 8; ++k) {
      const __m512i m = panel.mins(s, k);
#pragma GCC unroll 16
      for (int t = 0; t < T; ++t) msum[t] = _mm512_dpwssd_epi32(msum[t], m, _mm512_set1_epi32(sums(a, s + k, t)));
    }
    const __m512 dmin = panel.dmin(s);
#pragma GCC unroll 16
    for (int t = 0; t < T; ++t)
      facc[t] = _mm512_fnmadd_ps(_mm512_cvtepi32_ps(msum[t]), _mm512_mul_ps(dmin, _mm512_set1_ps(a.d(s, t))), facc[t]);
  }

  // Unit u for tokens [T0, T) in blocks (matmul_panel_tiles_avx512.h): B's groups,
  // then A's under them, then both halves times sc into isum.
  template <int R, int T, int T0, class Panel, class Act>
  [[gnu::always_inline]] static void tokens(const Panel panels[R], int64_t u, const __m512i sc[R], const Act& a,
                                            __m512i isum[R][T]) {
    if constexpr (R == 1 && T == 1) {
      // Decode: sub-block A's sum (groups 0..3) and B's in short chains.
      const __m512i init[2] = {_mm512_set1_epi32(start<Panel>(a, u, 0, 0)), _mm512_set1_epi32(start<Panel>(a, u, 1, 0))};
      __m512i half[2];
      one_token_halves(panels[0], u, a, init, half);
      isum[0][0] = _mm512_dpwssd_epi32(
          isum[0][0], _mm512_add_epi32(_mm512_slli_epi32(half[1], Panel::kHighShift), half[0]), sc[0]);
      return;
    }
    constexpr int TB = kBlockSize<T, T0>;
    __m512i iacc[R][TB];
#pragma GCC unroll 8
    for (int t = 0; t < TB; ++t) {
      const __m512i init = _mm512_set1_epi32(start<Panel>(a, u, 1, T0 + t));
#pragma GCC unroll 4
      for (int p = 0; p < R; ++p) iacc[p][t] = init;
    }
    group_dots<4, R, TB>(panels, u, 4, a, T0, iacc);
#pragma GCC unroll 8
    for (int t = 0; t < TB; ++t) {
      const __m512i low = _mm512_set1_epi32(start<Panel>(a, u, 0, T0 + t));
#pragma GCC unroll 4
      for (int p = 0; p < R; ++p) iacc[p][t] = _mm512_add_epi32(_mm512_slli_epi32(iacc[p][t], Panel::kHighShift), low);
    }
    group_dots<4, R, TB>(panels, u, 0, a, T0, iacc);
#pragma GCC unroll 4
    for (int p = 0; p < R; ++p)
#pragma GCC unroll 8
      for (int t = 0; t < TB; ++t) isum[p][T0 + t] = _mm512_dpwssd_epi32(isum[p][T0 + t], iacc[p][t], sc[p]);
    if constexpr (T0 + TB < T) tokens<R, T, T0 + TB>(panels, u, sc, a, isum);
  }
};

// Rows [r0, r1) (whole panels) for any number of tokens.
template <class Panel>
void k16_panel_matmul(const Matrix& w, const Activations& x, float* y, int64_t ldy, int64_t r0, int64_t r1) {
  const int64_t units = w.cols / 32;
  auto panel = [&](int64_t r, int) { return Panel{panel_start(w, r / kPanelRows)}; };
  if (x.n_tokens == 1) {
    const ActRow row = act_row(x, act_layout(ActivationFormat::kQ8_K, x.cols), 0);
    return panel_decode<K16Tile>(panel, K16RowAct{row}, units, y, ldy, r0, r1);
  }
  panel_rows<K16Tile, kBlockTokens>(panel, x, units, y, ldy, r0, r1);
}

}  // namespace

KernelEntry matmul_q3_k_q2_k_panels_avx512(DType type) {
  switch (type) {
    case DType::Q2_K: return {k16_panel_matmul<Q2Panel>, ActivationFormat::kQ8_K, kPanelRows, 2};
    case DType::Q3_K: return {k16_panel_matmul<Q3Panel>, ActivationFormat::kQ8_K, kPanelRows, 2};
    default: return {};
  }
}

}  // namespace skiff
