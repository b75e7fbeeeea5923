// Integer matmul kernels for Q8_0, Q4_0, Q4_1, Q5_0, Q5_1, IQ4_NL, Q4_K, Q5_K and
// IQ4_XS weights on AVX2 (no VNNI).
// Activations come quantized to 8 bits (quant_activation_layout.h). The dot
// product is vpmaddubsw (u8 × s8 pairs, saturating to int16) then vpmaddwd:
//  * Q4 nibbles (0..15) are the unsigned operand; a pair is at most
//    2·15·127 = 3810, so all 8 steps of a unit add up in int16 (30480 max)
//    before one widening. Q4_0's -8 comes back as -8·Σx (activation sums).
//    Q5_0 / Q5_1 / Q5_K levels (0..31) make pairs of up to 2·31·127 = 7874:
//    widened every 4 steps. Q4_1 / Q5_1 / K-quant mins come out through the sums.
//  * Q8_0 and the IQ4 table values (signed) use the sign trick (|w| × x·sign(w),
//    at most 2·128·127 = 32512), widening every step since two such pairs could
//    overflow int16.
//
// Decode (1-3 tokens) streams the rows as stored (matmul_quant_rows.h, shared
// with AVX-512). More tokens: 8 rows at a time are packed so that each
// 32-byte vector holds 4 consecutive weights of each row; one multiply then
// serves all 8 rows against 4 activation bytes broadcast, and a tile of
// 8 rows × 4 tokens reuses each packed panel for every token.
#include <immintrin.h>

#include <cstring>
#include <type_traits>

#include "kernels/matmul_kernels.h"
#include "kernels/quant_activation_layout.h"
#include "kernels/quant_blocks_simd.h"
#include "kernels/repack.h"
#include "kernels/scratch.h"

namespace skiff {
namespace {

constexpr int kPanelRows = 8;
constexpr int kTileTokens = 4;

// vpmaddubsw then vpmaddwd: 8 lanes of 4 u8 × s8 products (matmul_quant_rows.h).
inline __m256i unit_dot(__m256i w, __m256i x) {
  return _mm256_madd_epi16(_mm256_maddubs_epi16(w, x), _mm256_set1_epi16(1));
}

#include "kernels/matmul_quant_rows.h"

// The weight types are matmul_quant_rows.h's: their row decode, and the unit
// access (quant_blocks_simd.h) the panel packing reads.
using Q8_0 = RowsQ8_0;
using Q4_0 = RowsQ4_0;
using Q4_K = RowsQ4_K;
using Q5_K = RowsQ5_K;

// Steps (4 weights each) summed in int16 before widening to int32: a
// vpmaddubsw pair is at most 2·kMaxByte·127 (Q8_0 through the sign trick, |w|
// up to 128: every step; Q4: 8, a whole unit; Q5_K: 4).
template <class W>
constexpr int kWiden = 32767 / (2 * W::kMaxByte * 127) < 8 ? 32767 / (2 * W::kMaxByte * 127) : 8;
static_assert(kWiden<Q8_0> == 1 && kWiden<Q4_0> == 8 && kWiden<Q4_K> == 8 && kWiden<Q5_K> == 4 &&
              kWiden<RowsQ5_0> == 4 && kWiden<RowsIq4Nl> == 1);

// One unit (32 columns) of an 8-row panel: w[g] holds columns 4g..4g+3 of
// every row (row i in bytes 4i..4i+3), then each row's scale and min.
struct alignas(32) PackedUnit {
  uint8_t w[8][32];
  float scale[kPanelRows];
  float min[kPanelRows];
};

// r[i] holds row i's 8 dwords; out[g] gets dword g of rows 0..7.
void transpose_8x8(const __m256i r[8], uint8_t out[8][32]) {
  __m256i u[8];
  for (int h = 0; h < 8; h += 4) {
    const __m256i t0 = _mm256_unpacklo_epi32(r[h], r[h + 1]), t1 = _mm256_unpackhi_epi32(r[h], r[h + 1]);
    const __m256i t2 = _mm256_unpacklo_epi32(r[h + 2], r[h + 3]), t3 = _mm256_unpackhi_epi32(r[h + 2], r[h + 3]);
    u[h] = _mm256_unpacklo_epi64(t0, t2);      // per 128-bit lane: dword 0 of the 4 rows
    u[h + 1] = _mm256_unpackhi_epi64(t0, t2);  // dword 1
    u[h + 2] = _mm256_unpacklo_epi64(t1, t3);  // dword 2
    u[h + 3] = _mm256_unpackhi_epi64(t1, t3);  // dword 3
  }
  for (int a = 0; a < 4; ++a) {
    _mm256_store_si256(reinterpret_cast<__m256i*>(out[a]), _mm256_permute2x128_si256(u[a], u[a + 4], 0x20));
    _mm256_store_si256(reinterpret_cast<__m256i*>(out[a + 4]), _mm256_permute2x128_si256(u[a], u[a + 4], 0x31));
  }
}

// Packs rows[0..8) (pointers; padding rows repeat a real one) into units.
template <class W>
void pack_panel(const uint8_t* const rows[kPanelRows], int64_t units, PackedUnit* out) {
  for (int64_t u = 0; u < units; ++u) {
    __m256i r[kPanelRows];
    for (int i = 0; i < kPanelRows; ++i) r[i] = W::bytes(rows[i], u);
    transpose_8x8(r, out[u].w);
    for (int i = 0; i < kPanelRows; ++i) W::scale_min(rows[i], u, out[u].scale[i], out[u].min[i]);
  }
}

// The int32 dot of each row's unit u with token t's unit u, from the unit's
// levels w[g] (columns 4g..4g+3 of 8 rows, row i in dword lane i).
template <class W, int T>
[[gnu::always_inline]] inline void level_dots(const __m256i levels[8], const ActRow act[T], int64_t u,
                                              __m256i dots[T]) {
  const __m256i ones = _mm256_set1_epi16(1);
  __m256i acc[T], wide[T];  // int16 pair sums since the last widening; int32 sums
#pragma GCC unroll 8
  for (int t = 0; t < T; ++t) acc[t] = wide[t] = _mm256_setzero_si256();
#pragma GCC unroll 8
  for (int g = 0; g < 8; ++g) {
    const __m256i w = levels[g];
    const __m256i aw = W::kSigned ? _mm256_sign_epi8(w, w) : w;
#pragma GCC unroll 8
    for (int t = 0; t < T; ++t) {
      const __m256i xb = _mm256_set1_epi32(load_i32(act[t].q + 32 * u + 4 * g));
      acc[t] = _mm256_add_epi16(acc[t], _mm256_maddubs_epi16(aw, W::kSigned ? _mm256_sign_epi8(xb, w) : xb));
      if ((g + 1) % kWiden<W> == 0) {
        wide[t] = _mm256_add_epi32(wide[t], _mm256_madd_epi16(acc[t], ones));
        acc[t] = _mm256_setzero_si256();
      }
    }
  }
#pragma GCC unroll 8
  for (int t = 0; t < T; ++t) {
    dots[t] = wide[t];
    if constexpr (W::kOffsetShift >= 0)
      dots[t] = _mm256_sub_epi32(dots[t], _mm256_set1_epi32(static_cast<const int32_t*>(act[t].sums)[u]
                                                            << W::kOffsetShift));
  }
}

template <class W, int T>
[[gnu::always_inline]] inline void unit_dots(const PackedUnit& pu, const ActRow act[T], int64_t u, __m256i dots[T]) {
  __m256i levels[8];
#pragma GCC unroll 8
  for (int g = 0; g < 8; ++g) levels[g] = _mm256_load_si256(reinterpret_cast<const __m256i*>(pu.w[g]));
  level_dots<W, T>(levels, act, u, dots);
}

// facc[t] += unit u's dots scaled by the 8 rows' scale (and min) and token t's dx.
template <class W, int T>
[[gnu::always_inline]] inline void add_unit(const __m256i dots[T], __m256 scale, __m256 min, const ActRow act[T],
                                            int64_t u, __m256 facc[T]) {
#pragma GCC unroll 8
  for (int t = 0; t < T; ++t) {
    const float dx = act[t].d[W::kAct == ActivationFormat::kQ8_0 ? u : u / 8];
    facc[t] = _mm256_fmadd_ps(_mm256_cvtepi32_ps(dots[t]), _mm256_mul_ps(scale, _mm256_set1_ps(dx)), facc[t]);
    if constexpr (W::kMinTerm) {  // min · dx·Σq of the unit (kQ8_K rows store dx·Σq, kQ8_0 rows Σq)
      const float dsum = W::kAct == ActivationFormat::kQ8_K
                             ? static_cast<const float*>(act[t].sums)[u]
                             : dx * static_cast<float>(static_cast<const int32_t*>(act[t].sums)[u]);
      facc[t] = _mm256_fnmadd_ps(min, _mm256_set1_ps(dsum), facc[t]);
    }
  }
}

// y for one panel (rows [r, r + rows), rows ≤ 8) and tokens [t0, t0 + T).
template <class W, int T>
void tile(const PackedUnit* panel, int64_t units, const Activations& x, const ActLayout& l, int t0, float* y,
          int64_t ldy, int64_t r, int64_t rows) {
  ActRow act[T];
  for (int t = 0; t < T; ++t) act[t] = act_row(x, l, t0 + t);
  __m256 facc[T];
  for (int t = 0; t < T; ++t) facc[t] = _mm256_setzero_ps();
  for (int64_t u = 0; u < units; ++u) {
    __m256i dots[T];
    unit_dots<W, T>(panel[u], act, u, dots);
    const __m256 min = W::kMinTerm ? _mm256_load_ps(panel[u].min) : _mm256_setzero_ps();
    add_unit<W, T>(dots, _mm256_load_ps(panel[u].scale), min, act, u, facc);
  }
  const __m256i lane = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
  const __m256i mask = _mm256_cmpgt_epi32(_mm256_set1_epi32(static_cast<int>(rows)), lane);
  for (int t = 0; t < T; ++t) _mm256_maskstore_ps(y + (t0 + t) * ldy + r, mask, facc[t]);
}

// Every token times one packed panel of `rows` rows at r.
template <class W>
void all_tiles(const PackedUnit* panel, int64_t units, const Activations& x, const ActLayout& l, float* y,
               int64_t ldy, int64_t r, int64_t rows) {
  int t0 = 0;
  for (; t0 + kTileTokens <= x.n_tokens; t0 += kTileTokens)
    tile<W, kTileTokens>(panel, units, x, l, t0, y, ldy, r, rows);
  switch (x.n_tokens - t0) {
    case 1: tile<W, 1>(panel, units, x, l, t0, y, ldy, r, rows); break;
    case 2: tile<W, 2>(panel, units, x, l, t0, y, ldy, r, rows); break;
    case 3: tile<W, 3>(panel, units, x, l, t0, y, ldy, r, rows); break;
    default: break;
  }
  static_assert(kTileTokens == 4, "the switch covers remainders 1..kTileTokens-1");
}

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

// The blocks of 32 (Q8_0, Q4_0, Q4_1, Q5_0, Q5_1, IQ4_NL) on the load-time
// panels (repack.h: per unit of 32 columns, 16 rows' levels as 4 vectors of
// nibbles, Q5's fifth bits as a fifth, or 8 vectors of Q8_0 bytes + 128; then
// their fp16 d, and the _1 types' fp16 m). Rows as stored left Q5_0 decode
// compute-bound at 10-12 GB/s a core: per block of 22 bytes a row spent a
// nibble unpack, a fifth-bit spread, an fp16 scale and a horizontal sum. On
// panels each unpack serves 8 rows a vector and the sums need no reduction.
// Decode (1-3 tokens) reads the panels; more tokens unpack each half panel
// once into the packed units the row types' tiles read. Both paths add the
// same int32 unit dots in the same order (level_dots, add_unit), so a token's
// outputs do not depend on its batch.

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
    return _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(unit(panel, u) + panel_weight_bytes(kType) + 16 * h)));
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
  // IQ4_NL's are its table's values.
  [[gnu::always_inline]] static __m256i finish(__m256i nibbles, const uint8_t* unit, int h, int j) {
    if constexpr (W::kLevelKind == Block32Levels::kIq4) return iq4_levels(nibbles);
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

KernelEntry block32_panel_kernel_avx2(DType type) {
  switch (type) {
    case DType::Q8_0: return {block32_panel_matmul<Block32Panels<Q8_0>>, ActivationFormat::kQ8_0, kPanelRowCount};
    case DType::Q4_0: return {block32_panel_matmul<Block32Panels<Q4_0>>, ActivationFormat::kQ8_0, kPanelRowCount};
    case DType::Q4_1: return {block32_panel_matmul<Block32Panels<RowsQ4_1>>, ActivationFormat::kQ8_0, kPanelRowCount};
    case DType::Q5_0: return {block32_panel_matmul<Block32Panels<RowsQ5_0>>, ActivationFormat::kQ8_0, kPanelRowCount};
    case DType::Q5_1: return {block32_panel_matmul<Block32Panels<RowsQ5_1>>, ActivationFormat::kQ8_0, kPanelRowCount};
    case DType::IQ4_NL:
      return {block32_panel_matmul<Block32Panels<RowsIq4Nl>>, ActivationFormat::kQ8_0, kPanelRowCount};
    case DType::IQ4_XS: return {block32_panel_matmul<Iq4XsPanels>, ActivationFormat::kQ8_K, kPanelRowCount};
    default: return {};
  }
}

KernelEntry quant_kernel_avx2(DType type) {
  switch (type) {
    case DType::Q8_0: return {quant_matmul<Q8_0>, Q8_0::kAct, kPanelRows};
    case DType::Q4_0: return {quant_matmul<Q4_0>, Q4_0::kAct, kPanelRows};
    case DType::Q4_K: return {quant_matmul<Q4_K>, Q4_K::kAct, kPanelRows};
    case DType::Q5_K: return {quant_matmul<Q5_K>, Q5_K::kAct, kPanelRows};
    case DType::Q4_1: return {quant_matmul<RowsQ4_1>, RowsQ4_1::kAct, kPanelRows};
    case DType::Q5_0: return {quant_matmul<RowsQ5_0>, RowsQ5_0::kAct, kPanelRows};
    case DType::Q5_1: return {quant_matmul<RowsQ5_1>, RowsQ5_1::kAct, kPanelRows};
    case DType::IQ4_NL: return {quant_matmul<RowsIq4Nl>, RowsIq4Nl::kAct, kPanelRows};
    case DType::IQ4_XS: return {quant_matmul<RowsIq4Xs>, RowsIq4Xs::kAct, kPanelRows};
    case DType::Q6_K: return q6_k_kernel_avx2();
    case DType::Q2_K: return {decode_all_tokens<RowsQ2K>, RowsQ2K::kAct, 1};
    case DType::Q3_K: return {decode_all_tokens<RowsQ3K>, RowsQ3K::kAct, 1};
    default: return {};
  }
}

}  // namespace skiff
