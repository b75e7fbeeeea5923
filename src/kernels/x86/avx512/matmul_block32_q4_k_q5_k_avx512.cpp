// Integer matmul kernels for Q8_0, Q4_0, Q4_1, Q5_0, Q5_1, IQ4_NL, MXFP4, Q4_K,
// Q5_K and IQ4_XS weights on AVX-512 VNNI.
// Activations come quantized to 8 bits (quant_activation_layout.h); products
// are u8 × s8 dot products (vpdpbusd) with the weights as the unsigned operand:
// Q4 nibbles are unsigned already, packed Q8_0 weights get +128, and the
// offset comes back out through the activation block sums (Σ (w+c)·x = Σ w·x
// + c·Σx). Each unit of 32 elements (a Q8_0/Q4_0 block, a K-quant sub-block)
// has its own weight scale, so int32 sums turn into floats once per unit.
//
// Decode (1-3 tokens) streams the rows as stored (matmul_quant_rows.h, shared
// with AVX2); Q4_0 has its own decode kernel, 4 blocks per zmm
// (decode_q4_0_rows_avx512.cpp), Q4_1 / Q5_0 / Q5_1 / IQ4_NL / MXFP4 / IQ4_XS one of
// 2 blocks (or sub-blocks) per zmm (decode_block32_rows_avx512.cpp).
//
// Prefill (more tokens) repacks 16 rows at a time into a panel where each
// 64-byte vector holds 4 consecutive weights of each of the 16 rows; one
// vpdpbusd then adds 4 products into each row's lane, against the same 4
// activation bytes broadcast. A tile of 2 panels × 4 tokens keeps 8 int32 and
// 8 float accumulators in registers; each panel is packed once and reused by
// every token. The tokens' activations are interleaved per unit first
// (QuadUnit), so one pointer reaches all of a tile's.
//
// Q8_0, Q4_0, Q4_1, Q5_0, Q5_1, IQ4_NL, MXFP4, Q4_K and IQ4_XS matrices the loader repacked
// into such panels (kernels/matmul/repack.h; nibbles, fifth bits and IQ4 / E2M1 levels
// unpacked as the tile loads them, the 6-bit scales (and Q4_K's mins) per unit) skip the packing and use the same tiles for every
// token count, decode included: one panel at a time for 1-8 tokens (one memory
// stream; two measured slower), no per-row reductions.
#include <immintrin.h>

#include <cstring>

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

// vpdpbusd: 8 lanes of 4 u8 × s8 products (matmul_quant_rows.h).
[[gnu::always_inline]] inline __m256i unit_dot(__m256i w, __m256i x) {
  return _mm256_dpbusd_epi32(_mm256_setzero_si256(), w, x);
}

#include "kernels/x86/matmul_quant_rows.h"

// The weight types are matmul_quant_rows.h's: their row decode, and the unit
// access (quant_blocks_simd.h) the prefill packing reads.
using Q8_0 = RowsQ8_0;
using Q4_0 = RowsQ4_0;
using Q4_K = RowsQ4_K;
using Q5_K = RowsQ5_K;

// Packed panels hold signed weights + 128 (the u8 operand of vpdpbusd), which
// the activation block sums take back out, as they do Q4_0's + 8; with kQ8_K
// activations (IQ4_XS), whose sums are dx·Σq per unit, through a min of
// 128·scale instead.
template <class W>
constexpr int kPanelOffsetShift = W::kSigned && W::kAct == ActivationFormat::kQ8_0 ? 7 : W::kOffsetShift;
template <class W>
constexpr bool kPanelMin = W::kMinTerm || (W::kSigned && W::kAct == ActivationFormat::kQ8_K);

// ---- prefill ----------------------------------------------------------------

// One unit (32 columns) of a 16-row panel: w[g] holds columns 4g..4g+3 of
// every row (row i in bytes 4i..4i+3), then each row's scale and min.
struct alignas(64) PackedUnit {
  uint8_t w[8][64];
  float scale[kPanelRows];
  float min[kPanelRows];
};

// z[i] holds rows (i, i+4) for i < 4 and (i+4, i+8) for i >= 4, 8 dwords each;
// out[g] gets dword g of rows 0..15 in order.
[[gnu::always_inline]] inline void transpose_16x8(const __m512i z[8], uint8_t out[8][64]) {
  __m512i u[8];
#pragma GCC unroll 2
  for (int h = 0; h < 8; h += 4) {
    const __m512i t0 = _mm512_unpacklo_epi32(z[h], z[h + 1]), t1 = _mm512_unpackhi_epi32(z[h], z[h + 1]);
    const __m512i t2 = _mm512_unpacklo_epi32(z[h + 2], z[h + 3]), t3 = _mm512_unpackhi_epi32(z[h + 2], z[h + 3]);
    u[h] = _mm512_unpacklo_epi64(t0, t2);      // per 128-bit lane: dword 0 of the 4 rows
    u[h + 1] = _mm512_unpackhi_epi64(t0, t2);  // dword 1
    u[h + 2] = _mm512_unpacklo_epi64(t1, t3);  // dword 2
    u[h + 3] = _mm512_unpackhi_epi64(t1, t3);  // dword 3
  }
#pragma GCC unroll 4
  for (int a = 0; a < 4; ++a) {
    _mm512_store_si512(out[a], _mm512_shuffle_i32x4(u[a], u[a + 4], 0x88));
    _mm512_store_si512(out[a + 4], _mm512_shuffle_i32x4(u[a], u[a + 4], 0xdd));
  }
}

// Packs rows[0..16) (pointers; padding rows repeat a real one) into units.
template <class W>
void pack_panel(const uint8_t* const rows[kPanelRows], int64_t units, PackedUnit* out) {
  // The 16 row streams outrun the hardware prefetcher: fetch 8 units ahead by
  // hand (measured on Zen 4: 16 and 32 units ahead were slower than none).
  // Everything below is unrolled and transpose_16x8 inlined, so z stays in
  // registers (out of line, it went through the stack and a vzeroupper).
  constexpr int64_t kUnitBytes = W::kBytesPerUnit;
  constexpr int64_t kAhead = 8 * kUnitBytes;
  for (int64_t u = 0; u < units; ++u) {
#pragma GCC unroll 16
    for (int i = 0; i < kPanelRows; ++i)
      _mm_prefetch(reinterpret_cast<const char*>(rows[i] + kUnitBytes * u + kAhead), _MM_HINT_T0);
    __m512i z[8];
#pragma GCC unroll 8
    for (int i = 0; i < 8; ++i) {
      const int a = i < 4 ? i : i + 4;
      z[i] = _mm512_inserti64x4(_mm512_castsi256_si512(W::bytes(rows[a], u)), W::bytes(rows[a + 4], u), 1);
      if constexpr (W::kSigned) z[i] = _mm512_xor_si512(z[i], _mm512_set1_epi8(static_cast<char>(0x80)));
    }
    transpose_16x8(z, out[u].w);
    if constexpr (W::kAct == ActivationFormat::kQ8_0) {  // _0 blocks: one fp16 load each
#pragma GCC unroll 16
      for (int i = 0; i < kPanelRows; ++i) W::scale_min(rows[i], u, out[u].scale[i], out[u].min[i]);
    } else {  // Q4_K: a loop: unrolled, the 16 scale/min unpackings measured slower
      // (figures: docs/notes/kernel-design-figures.md).
      for (int i = 0; i < kPanelRows; ++i) W::scale_min(rows[i], u, out[u].scale[i], out[u].min[i]);
    }
    if constexpr (W::kSigned && W::kAct == ActivationFormat::kQ8_K)
      for (int i = 0; i < kPanelRows; ++i) out[u].min[i] = 128 * out[u].scale[i];
  }
}

// Where a tile reads a panel: packed per call (PackedUnit), or repacked at load
// (kernels/matmul/repack.h: fp16 scales, no mins; Q4_0 nibbles unpacked here, the
// low ones of vector g as group g, the high ones as group g + 4).
struct CallPanel {
  const PackedUnit* units;
  [[gnu::always_inline]] __m512i w(int64_t u, int g) const { return _mm512_load_si512(units[u].w[g]); }
  [[gnu::always_inline]] __m512 scale(int64_t u) const { return _mm512_load_ps(units[u].scale); }
  [[gnu::always_inline]] __m512 min(int64_t u) const { return _mm512_load_ps(units[u].min); }
  [[gnu::always_inline]] void prefetch(int64_t) const {}  // packed by this call
};
template <DType kType>
struct LoadPanel {
  // Constants, not calls: an out-of-line copy of repack.h's constexpr
  // functions (at -O0) compiled here could serve generic callers.
  static constexpr int64_t kWeightBytes = panel_weight_bytes(kType), kUnitBytes = panel_unit_bytes(kType);
  // The K-quant-like panels hold super-blocks of 8 units with their scales first.
  static constexpr bool kSuperBlocks = kType == DType::Q4_K || kType == DType::IQ4_XS;
  static constexpr int64_t kGroupBytes = kType == DType::Q4_K ? kQ4KPanelGroupBytes : kIq4XsPanelGroupBytes;
  static constexpr int64_t kGroupWeights = kType == DType::Q4_K ? kQ4KPanelWeights : kIq4XsPanelWeights;
  const uint8_t* units;
  PrefetchLevel prefetch_level = PrefetchLevel::kL1;  // decode's Activations::prefetch
  [[gnu::always_inline]] const uint8_t* group(int64_t u) const { return units + (u / 8) * kGroupBytes; }
  [[gnu::always_inline]] const uint8_t* unit(int64_t u) const {
    if constexpr (kSuperBlocks) return group(u) + kGroupWeights + (u % 8) * kWeightBytes;
    return units + kUnitBytes * u;
  }
  // The decode stream fetched ahead (matmul_panel_tiles_avx512.h), one thread on Zen 5:
  // Q4_K, Q5_0, Q5_1 and IQ4_NL read faster; Q8_0, already the fastest, lost a
  // little (its 9 fetches per unit cost more than they gain; figures:
  // docs/notes/kernel-design-figures.md).
  // Decode's level is now PrefetchTuner's (prefetch_tuner.h); prefill's L1, Q8_0's none (panel_matmul).
  [[gnu::always_inline]] void prefetch(int64_t u) const {
    prefetch_unit_at<kSuperBlocks ? kGroupBytes / 8 : kUnitBytes>(prefetch_level, units, u);
  }
  // one_token_halves may read 16 × the high nibbles (matmul_panel_tiles_avx512.h).
  static constexpr bool kHighNibblesInPlace = kType == DType::Q4_K || kType == DType::Q4_1 || kType == DType::Q4_0;
  [[gnu::always_inline]] __m512i high_nibbles_in_place(int64_t u, int k) const {
    return _mm512_and_si512(vector(u, k), _mm512_set1_epi8(static_cast<char>(0xF0)));
  }
  // The unit's k-th 64-byte vector.
  [[gnu::always_inline]] __m512i vector(int64_t u, int k) const { return _mm512_loadu_si512(unit(u) + 64 * k); }
  // Columns 4g..4g+3 of the 16 rows: nibbles, with Q5's fifth bits (bit g
  // of the qh bytes, repack.h: 16 added where set), or the IQ4 / E2M1 levels
  // + 128 (the unsigned operand).
  [[gnu::always_inline]] __m512i w(int64_t u, int g) const {
    if constexpr (kType == DType::Q8_0) return vector(u, g);
    const __m512i v = vector(u, g % 4);
    const __m512i nibble = _mm512_set1_epi8(0x0F);
    __m512i q = _mm512_and_si512(g < 4 ? v : _mm512_srli_epi16(v, 4), nibble);
    if constexpr (panel_has_qh(kType)) {
      const __m512i qh = _mm512_loadu_si512(unit(u) + kPanelQhAt);
      q = _mm512_mask_add_epi8(q, _mm512_test_epi8_mask(qh, _mm512_set1_epi8(static_cast<char>(1 << g))), q,
                               _mm512_set1_epi8(0x10));
    }
    if constexpr (kType == DType::IQ4_NL || kType == DType::IQ4_XS || kType == DType::MXFP4) {
      const __m128i table = kType == DType::MXFP4 ? e2m1_table() : iq4_table();
      q = _mm512_shuffle_epi8(_mm512_xor_si512(_mm512_broadcast_i32x4(table), _mm512_set1_epi8(-128)), q);
    }
    return q;
  }
  [[gnu::always_inline]] __m512 scale(int64_t u) const {
    if constexpr (kType == DType::Q4_K) return q4_k_factor(u, kQ4KPanelD, 0);
    if constexpr (kType == DType::IQ4_XS) return iq4_xs_scale(u);
    if constexpr (kType == DType::MXFP4) {  // the 16 rows' E8M0 bytes, as quant_blocks_simd.h's e8m0_half
      const __m512i e = _mm512_cvtepu8_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(unit(u) + kWeightBytes)));
      const __m512i normal = _mm512_slli_epi32(_mm512_sub_epi32(e, _mm512_set1_epi32(1)), 23);
      const __m512i subnormal = _mm512_sllv_epi32(_mm512_set1_epi32(0x00200000), e);
      return _mm512_castsi512_ps(_mm512_mask_blend_epi32(_mm512_cmpgt_epi32_mask(e, _mm512_set1_epi32(1)), subnormal, normal));
    }
    return _mm512_cvtph_ps(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(unit(u) + kWeightBytes)));
  }
  [[gnu::always_inline]] __m512 min(int64_t u) const {  // x = d·q + m: the min is -m
    if constexpr (kType == DType::Q4_K) return q4_k_factor(u, kQ4KPanelDmin, 1);
    if constexpr (kType == DType::IQ4_XS) return _mm512_mul_ps(_mm512_set1_ps(128), iq4_xs_scale(u));  // the + 128
    if constexpr (panel_has_min(kType))
      return _mm512_sub_ps(_mm512_setzero_ps(), _mm512_cvtph_ps(_mm256_loadu_si256(
                                                    reinterpret_cast<const __m256i*>(unit(u) + kWeightBytes + 32))));
    return _mm512_setzero_ps();
  }

  // Q4_K: the 16 rows' d·sc_j (part 0) or dmin·m_j (part 1) of sub-block j = u % 8,
  // unpacked from the 12 scale bytes as ggml packs them (lane i of the dword
  // vectors v0, v1, v2 holds row i's bytes 0-3, 4-7, 8-11): j < 4: the low 6
  // bits of byte j of v0 (scales) or v1 (mins); j >= 4: byte j - 4 of v2, its
  // low (scales) or high (mins) nibble, with the top 2 bits of byte j - 4 of
  // v0 (scales) or v1 (mins) above it.
  [[gnu::always_inline]] __m512 q4_k_factor(int64_t u, int64_t factor_offset, int part) const {
    const uint8_t* group = units + (u / 8) * kQ4KPanelGroupBytes;
    const unsigned j = static_cast<unsigned>(u % 8);
    const __m512i low = _mm512_loadu_si512(group + kQ4KPanelScales + 64 * part);
    __m512i six;
    if (j < 4) {
      six = _mm512_and_si512(_mm512_srli_epi32(low, 8 * j), _mm512_set1_epi32(63));
    } else {
      const __m512i v2 = _mm512_loadu_si512(group + kQ4KPanelScales + 128);
      const __m512i nib = _mm512_and_si512(_mm512_srli_epi32(v2, 8 * (j - 4) + 4 * part), _mm512_set1_epi32(15));
      const __m512i top = _mm512_and_si512(_mm512_srli_epi32(low, 8 * (j - 4) + 2), _mm512_set1_epi32(48));
      six = _mm512_or_si512(nib, top);
    }
    const __m512 factor = _mm512_cvtph_ps(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(group + factor_offset)));
    return _mm512_mul_ps(factor, _mm512_cvtepi32_ps(six));
  }

  // IQ4_XS: the 16 rows' d·(sc_j - 32) of sub-block j = u % 8, sc_j's low 4
  // bits at bits 4j of each row's scales_l dword, its top 2 at bits 2j of its
  // 16-bit scales_h.
  [[gnu::always_inline]] __m512 iq4_xs_scale(int64_t u) const {
    const unsigned j = static_cast<unsigned>(u % 8);
    const __m512i low = _mm512_loadu_si512(group(u) + kIq4XsPanelScalesLow);
    const __m512i high = _mm512_cvtepu16_epi32(
        _mm256_loadu_si256(reinterpret_cast<const __m256i*>(group(u) + kIq4XsPanelScalesHigh)));
    const __m512i sc = _mm512_or_si512(_mm512_and_si512(_mm512_srli_epi32(low, 4 * j), _mm512_set1_epi32(15)),
                                       _mm512_and_si512(_mm512_srli_epi32(_mm512_slli_epi32(high, 4), 2 * j),
                                                        _mm512_set1_epi32(48)));
    const __m512 d = _mm512_cvtph_ps(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(group(u) + kIq4XsPanelD)));
    return _mm512_mul_ps(d, _mm512_cvtepi32_ps(_mm512_sub_epi32(sc, _mm512_set1_epi32(32))));
  }
};

// Where a tile reads its tokens' activations: interleaved quads (QuadAct,
// matmul_panel_tiles_avx512.h), or for one token its quantized row itself (decode:
// nothing to interleave, and a sixth of the bytes to keep in L1 next to the
// weight stream).
template <ActivationFormat kFormat>
struct RowAct {
  ActRow row;
  [[gnu::always_inline]] int32_t q(int64_t u, int g, int) const { return load_i32(row.q + 32 * u + 4 * g); }
  [[gnu::always_inline]] float d(int64_t u, int) const { return row.d[kFormat == ActivationFormat::kQ8_K ? u / 8 : u]; }
  [[gnu::always_inline]] int32_t sum(int64_t u, int) const { return static_cast<const int32_t*>(row.sums)[u]; }
  [[gnu::always_inline]] float dsum(int64_t u, int t) const {
    if constexpr (kFormat == ActivationFormat::kQ8_0) return d(u, t) * static_cast<float>(sum(u, t));
    return static_cast<const float*>(row.sums)[u];
  }
};

// facc[p][t] += panel p · token t over all units, for R panels and T tokens
// (the Tile of matmul_panel_tiles_avx512.h for units of 32 with one scale).
template <class W>
struct UnitTile {
  template <int R, int T, class Panel, class Act>
  [[gnu::always_inline]] static void run(const Panel panels[R], int64_t units, const Act& a, __m512 facc[R][T]) {
    for (int64_t u = 0; u < units; ++u) {
#pragma GCC unroll 4
      for (int p = 0; p < R; ++p) panels[p].prefetch(u);
      tokens<R, T, 0>(panels, u, a, facc);
    }
  }

  // Unit u for tokens [T0, T) in blocks (matmul_panel_tiles_avx512.h).
  template <int R, int T, int T0, class Panel, class Act>
  [[gnu::always_inline]] static void tokens(const Panel panels[R], int64_t u, const Act& a, __m512 facc[R][T]) {
    constexpr int TB = kBlockSize<T, T0>;
    __m512i iacc[R][TB];
#pragma GCC unroll 8
    for (int t = 0; t < TB; ++t) {
      __m512i init = _mm512_setzero_si512();
      if constexpr (kPanelOffsetShift<W> >= 0) init = _mm512_set1_epi32(-(a.sum(u, T0 + t) << kPanelOffsetShift<W>));
#pragma GCC unroll 4
      for (int p = 0; p < R; ++p) iacc[p][t] = init;
    }
    if constexpr (T == 1) {
#pragma GCC unroll 4
      for (int p = 0; p < R; ++p) {
        const __m512i init[2] = {iacc[p][0], _mm512_setzero_si512()};
        __m512i half[2];
        one_token_halves(panels[p], u, a, init, half);
        iacc[p][0] = _mm512_add_epi32(half[0], half[1]);
      }
    } else {
      group_dots<8, R, TB>(panels, u, 0, a, T0, iacc);
    }
#pragma GCC unroll 4
    for (int p = 0; p < R; ++p) {
      const __m512 scale = panels[p].scale(u);
      const __m512 min = kPanelMin<W> ? panels[p].min(u) : _mm512_setzero_ps();
#pragma GCC unroll 8
      for (int t = 0; t < TB; ++t) {
        const __m512 s = _mm512_mul_ps(scale, _mm512_set1_ps(a.d(u, T0 + t)));
        facc[p][T0 + t] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(iacc[p][t]), s, facc[p][T0 + t]);
        if constexpr (kPanelMin<W>)
          facc[p][T0 + t] = _mm512_fnmadd_ps(min, _mm512_set1_ps(a.dsum(u, T0 + t)), facc[p][T0 + t]);
      }
    }
    if constexpr (T0 + TB < T) tokens<R, T, T0 + TB>(panels, u, a, facc);
  }
};

// A Q4_K or IQ4_XS panel whose units' scales and mins were unpacked once per
// call (factors: [units] pairs), not once per token quad of a prefill.
template <DType kType>
struct FactorPanel {
  LoadPanel<kType> weights;
  const __m512* factors;
  [[gnu::always_inline]] __m512i w(int64_t u, int g) const { return weights.w(u, g); }
  [[gnu::always_inline]] __m512 scale(int64_t u) const { return factors[2 * u]; }
  [[gnu::always_inline]] __m512 min(int64_t u) const { return factors[2 * u + 1]; }
  [[gnu::always_inline]] void prefetch(int64_t) const {}  // read again by each token quad: from L2
};

// Rows [r0, r1) of rows as stored, 4+ tokens: each panel of 16 rows packed
// per call (the last repeating the last row), then tiled as repacked ones.
template <class W>
void gemm(const Matrix& w, const Activations& x, float* y, int64_t ldy, int64_t r0, int64_t r1) {
  const int64_t units = w.cols / 32;
  auto* buf = static_cast<PackedUnit*>(kernel_scratch(2 * units * sizeof(PackedUnit)));
  auto packed = [&](int64_t r, int k) {
    const uint8_t* row_ptrs[kPanelRows];
    for (int i = 0; i < kPanelRows; ++i) row_ptrs[i] = w.row(r + i < r1 ? r + i : r1 - 1);
    pack_panel<W>(row_ptrs, units, buf + k * units);
    return CallPanel{buf + k * units};
  };
  panel_rows<UnitTile<W>>(packed, x, units, y, ldy, r0, r1);
}

// Rows [r0, r1) (whole panels) of a matrix repacked at load, for any number
// of tokens: the panels are read where they lie, one at a time for decode.
template <class W>
void panel_matmul(const Matrix& w, const Activations& x, float* y, int64_t ldy, int64_t r0, int64_t r1) {
  using Panel = LoadPanel<W::kType>;
  const int64_t units = w.cols / 32;
  // Q8_0 fetches ahead only as decode's tuner asks (9 fetches a unit cost more than they gained on Zen 5).
  const PrefetchLevel level = W::kType == DType::Q8_0 && x.n_tokens > 1 ? PrefetchLevel::kNone : x.prefetch;
  auto panel = [&](int64_t r, int) { return Panel{panel_start(w, r / kPanelRows), level}; };
  if (x.n_tokens == 1) {  // decode: the row as quantized, one panel at a time
    const RowAct<W::kAct> act{act_row(x, act_layout(W::kAct, x.cols), 0)};
    return panel_decode<UnitTile<W>>(panel, act, units, y, ldy, r0, r1);
  }
  if constexpr (Panel::kSuperBlocks) {
    if (x.n_tokens > kPassTokens) {
      auto* factors = static_cast<__m512*>(kernel_scratch(2 * 2 * units * sizeof(__m512)));
      auto unpacked = [&](int64_t r, int k) {
        const Panel p = panel(r, k);
        __m512* f = factors + 2 * units * k;
        for (int64_t u = 0; u < units; ++u) {
          f[2 * u] = p.scale(u);
          f[2 * u + 1] = p.min(u);
        }
        return FactorPanel<W::kType>{p, f};
      };
      return panel_rows<UnitTile<W>>(unpacked, x, units, y, ldy, r0, r1);
    }
  }
  // Q8_0 weights need no unpacking: past 8 tokens, a panel pair's quads beat a second token block.
  panel_rows<UnitTile<W>, W::kType == DType::Q8_0 ? kBlockTokens : kPassTokens>(panel, x, units, y, ldy, r0, r1);
}

template <class W>
void quant_matmul(const Matrix& w, const Activations& x, float* y, int64_t ldy, int64_t r0, int64_t r1) {
  constexpr DType T = W::kType;
  if constexpr (T == DType::Q4_0) {
    if (x.n_tokens <= kMaxDecodeTokens) return decode_q4_0_rows_avx512(w, x, y, ldy, r0, r1);
  } else if constexpr (T == DType::Q4_1 || T == DType::Q5_0 || T == DType::Q5_1 || T == DType::IQ4_NL ||
                       T == DType::MXFP4 || T == DType::IQ4_XS) {
    if (x.n_tokens <= kMaxDecodeTokens) return decode_block32_rows_avx512(w, x, y, ldy, r0, r1);
  } else if (decode_few_tokens<W>(w, x, y, ldy, r0, r1)) {
    return;
  }
  gemm<W>(w, x, y, ldy, r0, r1);
}

}  // namespace

KernelEntry matmul_block32_q4_k_panels_avx512(DType type) {
  switch (type) {
    case DType::Q8_0: return {panel_matmul<Q8_0>, Q8_0::kAct, kPanelRows, 2, true};
    case DType::Q4_0: return {panel_matmul<Q4_0>, Q4_0::kAct, kPanelRows, 2, true};
    case DType::Q4_K: return {panel_matmul<Q4_K>, Q4_K::kAct, kPanelRows, 2, true};
    case DType::Q4_1: return {panel_matmul<RowsQ4_1>, RowsQ4_1::kAct, kPanelRows, 2, true};
    case DType::Q5_0: return {panel_matmul<RowsQ5_0>, RowsQ5_0::kAct, kPanelRows, 2, true};
    case DType::Q5_1: return {panel_matmul<RowsQ5_1>, RowsQ5_1::kAct, kPanelRows, 2, true};
    case DType::IQ4_NL: return {panel_matmul<RowsIq4Nl>, RowsIq4Nl::kAct, kPanelRows, 2, true};
    case DType::MXFP4: return {panel_matmul<RowsMxfp4>, RowsMxfp4::kAct, kPanelRows, 2, true};
    case DType::IQ4_XS: return {panel_matmul<RowsIq4Xs>, RowsIq4Xs::kAct, kPanelRows, 2, true};
    default: return {};
  }
}

KernelEntry matmul_block32_q4_k_q5_k_rows_avx512(DType type) {
  switch (type) {
    case DType::Q8_0: return {quant_matmul<Q8_0>, Q8_0::kAct, kPanelRows, kMaxDecodeTokens + 1};
    case DType::Q4_0: return {quant_matmul<Q4_0>, Q4_0::kAct, kPanelRows, kMaxDecodeTokens + 1};
    case DType::Q4_K: return {quant_matmul<Q4_K>, Q4_K::kAct, kPanelRows, kMaxDecodeTokens + 1};
    case DType::Q5_K: return {quant_matmul<Q5_K>, Q5_K::kAct, kPanelRows, kMaxDecodeTokens + 1};
    case DType::Q4_1: return {quant_matmul<RowsQ4_1>, RowsQ4_1::kAct, kPanelRows, kMaxDecodeTokens + 1};
    case DType::Q5_0: return {quant_matmul<RowsQ5_0>, RowsQ5_0::kAct, kPanelRows, kMaxDecodeTokens + 1};
    case DType::Q5_1: return {quant_matmul<RowsQ5_1>, RowsQ5_1::kAct, kPanelRows, kMaxDecodeTokens + 1};
    case DType::IQ4_NL: return {quant_matmul<RowsIq4Nl>, RowsIq4Nl::kAct, kPanelRows, kMaxDecodeTokens + 1};
    case DType::MXFP4: return {quant_matmul<RowsMxfp4>, RowsMxfp4::kAct, kPanelRows, kMaxDecodeTokens + 1};
    case DType::IQ4_XS: return {quant_matmul<RowsIq4Xs>, RowsIq4Xs::kAct, kPanelRows, kMaxDecodeTokens + 1};
    default: return {};
  }
}

}  // namespace skiff
