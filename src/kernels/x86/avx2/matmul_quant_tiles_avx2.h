// The AVX2 integer tiles over packed units, shared by the rows kernels
// (matmul_quant_rows_avx2.cpp) and the blocks-of-32 panels
// (matmul_block32_panels_avx2.cpp): 8 rows are packed so that each 32-byte
// vector holds 4 consecutive weights of each row; one multiply then serves
// all 8 rows against 4 activation bytes broadcast, and a tile of 8 rows × 4
// tokens reuses each packed panel for every token. Included inside an
// anonymous namespace of skiff (as matmul_quant_rows.h, which it includes),
// so each file has its own copy compiled for AVX2.
#pragma once

constexpr int kPanelRows = 8;
constexpr int kTileTokens = 4;

// vpmaddubsw then vpmaddwd: 8 lanes of 4 u8 × s8 products (matmul_quant_rows.h).
inline __m256i unit_dot(__m256i w, __m256i x) {
  return _mm256_madd_epi16(_mm256_maddubs_epi16(w, x), _mm256_set1_epi16(1));
}

#include "kernels/x86/matmul_quant_rows.h"

// The weight types are matmul_quant_rows.h's: their row decode, and the unit
// access (quant_blocks_simd.h) the panel packing reads.
using Q8_0 = RowsQ8_0;
using Q4_0 = RowsQ4_0;
using Q4_K = RowsQ4_K;
using Q5_K = RowsQ5_K;

// Steps (4 weights each) summed in int16 before widening to int32: a
// vpmaddubsw pair is at most 2·kMaxByte·127 (Q8_0 through the sign trick, |w|
// up to 128: every step; Q4 and MXFP4: 8, a whole unit; Q5_K: 4). A unit has
// 8 steps: kWiden divides it.
template <class W>
constexpr int kWiden = 32767 / (2 * W::kMaxByte * 127) < 8 ? 32767 / (2 * W::kMaxByte * 127) : 8;
static_assert(kWiden<Q8_0> == 1 && kWiden<Q4_0> == 8 && kWiden<Q4_K> == 8 && kWiden<Q5_K> == 4 &&
              kWiden<RowsQ5_0> == 4 && kWiden<RowsIq4Nl> == 1 && kWiden<RowsMxfp4> == 8);

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
