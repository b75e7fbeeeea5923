// The blocks of 32 (Q8_0, Q4_0, Q4_1, Q5_0, Q5_1, IQ4_NL, MXFP4, IQ4_XS) on the AVX2
// panels repacked at load (kernels/matmul/repack.h), through the tiles the rows
// kernels use (matmul_quant_tiles_avx2.h).
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

// The blocks of 32 (Q8_0, Q4_0, Q4_1, Q5_0, Q5_1, IQ4_NL, MXFP4) on the load-time
// panels (repack.h: per unit of 32 columns, 16 rows' levels as 4 vectors of
// nibbles, Q5's fifth bits as a fifth, or 8 vectors of Q8_0 bytes + 128; then
// their fp16 d (MXFP4: E8M0 bytes), and the _1 types' fp16 m). Rows as stored left Q5_0 decode
// compute-bound (figures: docs/notes/kernel-design-figures.md): per block of 22
// bytes a row spent a nibble unpack, a fifth-bit spread, an fp16 scale and a
// horizontal sum. On panels each unpack serves 8 rows a vector and the sums
// need no reduction. Decode (1-3 tokens) reads the panels; more tokens unpack
// each half panel once into the packed units the row types' tiles read. Both
// paths add the same int32 unit dots in the same order (level_dots, add_unit),
// so a token's outputs do not depend on its batch.

// Unit u's levels of rows 8h..8h+7 of a panel of W's blocks: levels[g] columns
// 4g..4g+3 of each row (row i in dword lane i); for the nibble types g < 4
// from the low nibbles, g >= 4 columns 16 + 4(g - 4).. from the high ones.
template <class Rows>
struct Block32Panels {
  using W = Rows;
  static constexpr DType kType = W::kType;
  static constexpr int64_t kUnitBytes = panel_unit_bytes(kType);
  [[gnu::always_inline]] static const uint8_t* unit(const uint8_t* panel, int64_t u) { return panel + kUnitBytes * u; }
  [[gnu::always_inline]] static void prefetch(const uint8_t* panel, int64_t u) { prefetch_unit<kUnitBytes>(panel, u); }
  // Rows 8h..8h+7's d of unit u, and the _1 types' mins as the row types
  // take them (x = d·q + m: the min is -m).
  [[gnu::always_inline]] static __m256 scales(const uint8_t* panel, int64_t u, int h) {
    const uint8_t* at = unit(panel, u) + panel_weight_bytes(kType) + panel_scale_bytes(kType) * kPanelRows * h;
    if constexpr (kType == DType::MXFP4) return e8m0_half(_mm256_cvtepu8_epi32(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(at))));
    return _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(at)));
  }
  [[gnu::always_inline]] static __m256 mins(const uint8_t* panel, int64_t u, int h) {
    if constexpr (!W::kMinTerm) return _mm256_setzero_ps();
    const __m128i m = _mm_loadu_si128(reinterpret_cast<const __m128i*>(unit(panel, u) + panel_weight_bytes(kType) +
                                                                         2 * kPanelRowCount + 16 * h));
    return _mm256_sub_ps(_mm256_setzero_ps(), _mm256_cvtph_ps(m));
  }
  [[gnu::always_inline]] static void levels(const uint8_t* unit, int h, __m256i levels[8]) {
    if constexpr (kType == DType::Q8_0) {
      // The stored bytes are the weights + 128 (the u8 operand of AVX-512's
      // vpdpbusd); an xor gives back the signed weights the sign trick reads.
#pragma GCC unroll 8
      for (int g = 0; g < 8; ++g)
        levels[g] = _mm256_xor_si256(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(unit + 64 * g + 32 * h)),
                                     _mm256_set1_epi8(static_cast<char>(0x80)));
    } else {
      const __m256i low4 = _mm256_set1_epi8(0x0f);
#pragma GCC unroll 4
      for (int g = 0; g < 4; ++g) {
        const __m256i q = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(unit + 64 * g + 32 * h));
        levels[g] = finish(_mm256_and_si256(q, low4), unit, h, g);
        levels[4 + g] = finish(_mm256_and_si256(_mm256_srli_epi16(q, 4), low4), unit, h, 4 + g);
      }
    }
  }
  // Group j's nibbles made levels: Q5's fifth bits are bit j of the qh bytes
  // (repack.h), moved to bit 4 by a 16-bit shift (what crosses from the
  // neighbouring byte lands below bit 4 or above it) and kept by a mask;
  // IQ4_NL's and MXFP4's are their table's values.
  [[gnu::always_inline]] static __m256i finish(__m256i nibbles, const uint8_t* unit, int h, int j) {
    if constexpr (is_table(W::kLevelKind))
      return _mm256_shuffle_epi8(_mm256_broadcastsi128_si256(level_table(W::kLevelKind)), nibbles);
    if constexpr (W::kLevelKind == Block32Levels::kFiveBits) {
      const __m256i qh = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(unit + kPanelQhAt + 32 * h));
      const __m256i at4 = j < 4 ? _mm256_slli_epi16(qh, 4 - j) : j > 4 ? _mm256_srli_epi16(qh, j - 4) : qh;
      return _mm256_or_si256(nibbles, _mm256_and_si256(at4, _mm256_set1_epi8(0x10)));
    }
    return nibbles;
  }
};

// IQ4_XS (repack.h): IQ4_NL's units in super-blocks of 8, each unit's scale
// d·(ls - 32) from the super-block's scale bits (the float the row types use).
struct Iq4XsPanels {
  using W = RowsIq4Xs;
  [[gnu::always_inline]] static const uint8_t* group(const uint8_t* panel, int64_t u) {
    return panel + (u / 8) * kIq4XsPanelGroupBytes;
  }
  [[gnu::always_inline]] static const uint8_t* unit(const uint8_t* panel, int64_t u) {
    return group(panel, u) + kIq4XsPanelWeights + (u % 8) * panel_weight_bytes(DType::IQ4_NL);
  }
  [[gnu::always_inline]] static void prefetch(const uint8_t* panel, int64_t u) {
    prefetch_unit<kIq4XsPanelGroupBytes / 8>(panel, u);
  }
  [[gnu::always_inline]] static void levels(const uint8_t* unit, int h, __m256i levels[8]) {
    Block32Panels<RowsIq4Nl>::levels(unit, h, levels);
  }
  [[gnu::always_inline]] static __m256 scales(const uint8_t* panel, int64_t u, int h) {
    const uint8_t* g = group(panel, u);
    const int j = static_cast<int>(u % 8);
    const __m256i low = _mm256_and_si256(
        _mm256_srli_epi32(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(g + kIq4XsPanelScalesLow + 32 * h)), 4 * j),
        _mm256_set1_epi32(0xF));
    const __m256i high = _mm256_and_si256(
        _mm256_srli_epi32(_mm256_cvtepu16_epi32(_mm_loadu_si128(
                              reinterpret_cast<const __m128i*>(g + kIq4XsPanelScalesHigh + 16 * h))), 2 * j),
        _mm256_set1_epi32(3));
    const __m256i ls = _mm256_or_si256(low, _mm256_slli_epi32(high, 4));
    const __m256 d = _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(g + kIq4XsPanelD + 16 * h)));
    return _mm256_mul_ps(d, _mm256_cvtepi32_ps(_mm256_sub_epi32(ls, _mm256_set1_epi32(32))));
  }
  [[gnu::always_inline]] static __m256 mins(const uint8_t*, int64_t, int) { return _mm256_setzero_ps(); }
};

constexpr int kPanelHalves = kPanelRowCount / kPanelRows;  // a 16-row panel is two of the tiles' 8 rows

template <class P, int T>
void block32_panel_decode(const Matrix& w, const Activations& x, float* y, int64_t ldy, int64_t r0, int64_t r1) {
  const ActLayout l = act_layout(P::W::kAct, w.cols);
  ActRow act[T];
  for (int t = 0; t < T; ++t) act[t] = act_row(x, l, t);
  const int64_t units = w.cols / 32;
  for (int64_t r = r0; r < r1; r += kPanelRowCount) {
    const uint8_t* panel = panel_start(w, r / kPanelRowCount);
    __m256 facc[kPanelHalves][T];
    for (int h = 0; h < kPanelHalves; ++h)
      for (int t = 0; t < T; ++t) facc[h][t] = _mm256_setzero_ps();
    for (int64_t u = 0; u < units; ++u) {
      P::prefetch(panel, u);
      const uint8_t* unit = P::unit(panel, u);
#pragma GCC unroll 2
      for (int h = 0; h < kPanelHalves; ++h) {
        __m256i levels[8], dots[T];
        P::levels(unit, h, levels);
        level_dots<typename P::W, T>(levels, act, u, dots);
        add_unit<typename P::W, T>(dots, P::scales(panel, u, h), P::mins(panel, u, h), act, u, facc[h]);
      }
    }
    for (int h = 0; h < kPanelHalves; ++h)
      for (int t = 0; t < T; ++t) _mm256_storeu_ps(y + t * ldy + r + kPanelRows * h, facc[h][t]);
  }
}

template <class P>
void block32_panel_matmul(const Matrix& w, const Activations& x, float* y, int64_t ldy, int64_t r0, int64_t r1) {
  switch (x.n_tokens) {
    case 1: return block32_panel_decode<P, 1>(w, x, y, ldy, r0, r1);
    case 2: return block32_panel_decode<P, 2>(w, x, y, ldy, r0, r1);
    case 3: return block32_panel_decode<P, 3>(w, x, y, ldy, r0, r1);
    default: break;
  }
  static_assert(kMaxDecodeTokens == 3, "the switch covers 1..kMaxDecodeTokens");
  const ActLayout l = act_layout(P::W::kAct, w.cols);
  const int64_t units = w.cols / 32;
  auto* packed = static_cast<PackedUnit*>(kernel_scratch(units * sizeof(PackedUnit)));
  for (int64_t r = r0; r < r1; r += kPanelRowCount) {
    const uint8_t* panel = panel_start(w, r / kPanelRowCount);
    for (int h = 0; h < kPanelHalves; ++h) {
      for (int64_t u = 0; u < units; ++u) {
        __m256i levels[8];
        P::levels(P::unit(panel, u), h, levels);
        for (int g = 0; g < 8; ++g) _mm256_store_si256(reinterpret_cast<__m256i*>(packed[u].w[g]), levels[g]);
        _mm256_store_ps(packed[u].scale, P::scales(panel, u, h));
        _mm256_store_ps(packed[u].min, P::mins(panel, u, h));
      }
      all_tiles<typename P::W>(packed, units, x, l, y, ldy, r + kPanelRows * h, kPanelRows);
    }
  }
}

}  // namespace

KernelEntry matmul_block32_panels_avx2(DType type) {
  switch (type) {
    case DType::Q8_0: return {block32_panel_matmul<Block32Panels<Q8_0>>, ActivationFormat::kQ8_0, kPanelRowCount};
    case DType::Q4_0: return {block32_panel_matmul<Block32Panels<Q4_0>>, ActivationFormat::kQ8_0, kPanelRowCount};
    case DType::Q4_1: return {block32_panel_matmul<Block32Panels<RowsQ4_1>>, ActivationFormat::kQ8_0, kPanelRowCount};
    case DType::Q5_0: return {block32_panel_matmul<Block32Panels<RowsQ5_0>>, ActivationFormat::kQ8_0, kPanelRowCount};
    case DType::Q5_1: return {block32_panel_matmul<Block32Panels<RowsQ5_1>>, ActivationFormat::kQ8_0, kPanelRowCount};
    case DType::IQ4_NL:
      return {block32_panel_matmul<Block32Panels<RowsIq4Nl>>, ActivationFormat::kQ8_0, kPanelRowCount};
    case DType::MXFP4:
      return {block32_panel_matmul<Block32Panels<RowsMxfp4>>, ActivationFormat::kQ8_0, kPanelRowCount};
    case DType::IQ4_XS: return {block32_panel_matmul<Iq4XsPanels>, ActivationFormat::kQ8_K, kPanelRowCount};
    default: return {};
  }
}


}  // namespace skiff
