// Decode (1-3 tokens) of Q4_1, Q5_0, Q5_1, IQ4_NL, MXFP4 and IQ4_XS rows as GGUF
// stores them, on AVX-512 VNNI: two blocks of 32 per zmm, where the shared row
// decoder (matmul_quant_rows.h) spends a ymm per block and ran out of vector
// issue slots on Zen 5 well below a core's bandwidth (figures:
// docs/notes/kernel-design-figures.md).
//
// Blocks 2k and 2k+1 fill one zmm as [lo(2k), hi(2k), lo(2k+1), hi(2k+1)]:
// each block's 16 nibble bytes broadcast into two 128-bit lanes (the second
// block's by a masked broadcast), the upper lane of each shifted right by 4,
// and the nibbles masked, so the vector's bytes are the two blocks' elements
// in order, against one 64-byte load of the activations. Q5 fifth bits are
// the two 32-bit qh words as one 64-bit mask: a masked add of 16. IQ4_NL and
// MXFP4 levels come from a 16-entry table shuffle (signed: |w| against
// x·sign(w)); MXFP4's scales are its E8M0 bytes. Q5_0's
// +16 and the _1 mins come back out through the block sums, 8 blocks at a time
// as in the shared decoder.
// One vpdpbusd gives 16 int32 lanes, 8 per block; one vpermps spreads the two
// blocks' scales (dw·dx) over them, one FMA per pair per token accumulates.
#include <immintrin.h>

#include <cstring>

#include "kernels/x86/avx512/avx512_header_warnings.h"

#include "kernels/matmul/matmul_kernels.h"
#include "kernels/matmul/quant_activation_layout.h"
#include "kernels/x86/avx512/matmul_avx512.h"
#include "kernels/x86/quant_blocks_simd.h"

namespace skiff {
namespace {

// Lanes of the pair k (0..3) of a group of 8 blocks: blocks 2k, 2k+1 each over 8 lanes.
[[gnu::always_inline]] inline __m512i pair_lanes(int k) {
  return _mm512_add_epi32(_mm512_srli_epi32(_mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15), 3),
                          _mm512_set1_epi32(2 * k));
}

// The two blocks at a and b as 64 unsigned level bytes (see the top).
template <class U>
[[gnu::always_inline]] inline __m512i pair_levels(const uint8_t* a, const uint8_t* b) {
  const __m512i both = _mm512_mask_broadcast_i32x4(
      _mm512_broadcast_i32x4(_mm_loadu_si128(reinterpret_cast<const __m128i*>(a + U::kQsOffset))), 0xFF00,
      _mm_loadu_si128(reinterpret_cast<const __m128i*>(b + U::kQsOffset)));
  const __m512i shifted = _mm512_mask_srli_epi16(both, 0xFF00FF00u, both, 4);  // lanes 1 and 3
  __m512i q = _mm512_and_si512(shifted, _mm512_set1_epi8(0x0f));
  if constexpr (U::kLevelKind == Block32Levels::kFiveBits) {
    uint32_t ha, hb;
    std::memcpy(&ha, a + U::kQhOffset, 4);
    std::memcpy(&hb, b + U::kQhOffset, 4);
    q = _mm512_mask_add_epi8(q, _cvtu64_mask64(static_cast<uint64_t>(hb) << 32 | ha), q, _mm512_set1_epi8(0x10));
  }
  if constexpr (is_table(U::kLevelKind))
    q = _mm512_shuffle_epi8(_mm512_broadcast_i32x4(level_table(U::kLevelKind)), q);
  return q;
}

// Signed levels (IQ4_NL, MXFP4) go in as |w| against x·sign(w): exact in int32, where
// an offset of 128 taken out in float would cancel away bits of the dot.
template <class U>
[[gnu::always_inline]] inline __m512i pair_dot(__m512i q, __m512i x) {
  if constexpr (U::kSigned)
    return _mm512_dpbusd_epi32(_mm512_setzero_si512(), _mm512_abs_epi8(q),
                               _mm512_mask_sub_epi8(x, _mm512_movepi8_mask(q), _mm512_setzero_si512(), x));
  return _mm512_dpbusd_epi32(_mm512_setzero_si512(), q, x);
}

// Adds the pair k of a group (its levels q) times each token's activations
// (x[t]: the group's 256) to acc, each block's lanes scaled by its lane of s16[t].
template <class U, int NT>
[[gnu::always_inline]] inline void add_pair(__m512i q, int k, const int8_t* const x[NT], const __m512 s16[NT],
                                            __m512 acc[NT]) {
  const __m512i lanes = pair_lanes(k);
#pragma GCC unroll 4
  for (int t = 0; t < NT; ++t) {
    const __m512i dot = pair_dot<U>(q, _mm512_loadu_si512(x[t] + 64 * k));
    acc[t] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(dot), _mm512_permutexvar_ps(lanes, s16[t]), acc[t]);
  }
}

// The offset the unsigned levels carry, taken out through the block sums:
// 2^shift·dw·dx·Σq per block (-1: none).
template <class U>
constexpr int kShift = U::kOffsetShift;

// Adds group g (n blocks from `first`; n = 8 but in a row's last group) of
// one row times NT tokens to acc and corr. Inlined with n = 8 for the full
// groups, so every loop unrolls and the scale words stay in registers.
template <class U, int NT>
[[gnu::always_inline]] inline void decode_group(const uint8_t* first, int64_t g, int n, const ActRow act[NT],
                                                __m512 acc[NT], __m256 corr[NT]) {
  constexpr int S = static_cast<int>(U::kBytesPerUnit);
  const __m256 dw = U::scales(first, n);
  __m256 min = _mm256_setzero_ps();
  if constexpr (U::kMinTerm) min = block_scales<S>(first + U::kMinOffset, n);  // x = d·q + m
  __m512 s16[NT];  // lanes 0-7: dw·dx of the group's blocks
  const int8_t* x[NT];
#pragma GCC unroll 4
  for (int t = 0; t < NT; ++t) {
    x[t] = act[t].q + 256 * g;
    const __m256 dx = _mm256_loadu_ps(act[t].d + 8 * g);
    const __m256 s8 = _mm256_mul_ps(dw, dx);
    s16[t] = _mm512_castps256_ps512(s8);
    const __m256 sums = _mm256_cvtepi32_ps(_mm256_loadu_si256(static_cast<const __m256i*>(act[t].sums) + g));
    if constexpr (kShift<U> >= 0) corr[t] = _mm256_fmadd_ps(s8, sums, corr[t]);
    if constexpr (U::kMinTerm) corr[t] = _mm256_fnmadd_ps(_mm256_mul_ps(min, dx), sums, corr[t]);
  }
#pragma GCC unroll 4
  for (int k = 0; k < 4; ++k) {
    if (2 * k >= n) break;
    const uint8_t* a = first + S * 2 * k;
    const uint8_t* b = 2 * k + 1 < n ? a + S : a;  // an odd last block pairs with itself (scale 0 and x 0 above it)
    add_pair<U, NT>(pair_levels<U>(a, b), k, x, s16, acc);
  }
}

template <class U, int NT>
void decode_rows(const Matrix& w, const Activations& x, float* y, int64_t ldy, int64_t r0, int64_t r1) {
  constexpr int S = static_cast<int>(U::kBytesPerUnit);
  const ActLayout l = act_layout(ActivationFormat::kQ8_0, w.cols);
  ActRow act[NT];
  for (int t = 0; t < NT; ++t) act[t] = act_row(x, l, t);
  const int64_t units = w.cols / 32, groups = (units + 7) / 8;
  const int last = static_cast<int>(units - 8 * (groups - 1));
  const float k_corr = kShift<U> >= 0 ? static_cast<float>(1 << kShift<U>) : 1.0f;
  for (int64_t r = r0; r < r1; ++r) {
    const uint8_t* row = w.row(r);
    __m512 acc[NT];
    __m256 corr[NT];
#pragma GCC unroll 4
    for (int t = 0; t < NT; ++t) {
      acc[t] = _mm512_setzero_ps();
      corr[t] = _mm256_setzero_ps();
    }
    for (int64_t g = 0; g + 1 < groups; ++g) decode_group<U, NT>(row + S * 8 * g, g, 8, act, acc, corr);
    decode_group<U, NT>(row + S * 8 * (groups - 1), groups - 1, last, act, acc, corr);
#pragma GCC unroll 4
    for (int t = 0; t < NT; ++t) {
      const __m256 c = corr[t];
      __m128 h = _mm_add_ps(_mm256_castps256_ps128(c), _mm256_extractf128_ps(c, 1));
      h = _mm_add_ps(h, _mm_movehl_ps(h, h));
      h = _mm_add_ss(h, _mm_movehdup_ps(h));
      y[t * ldy + r] = _mm512_reduce_add_ps(acc[t]) - k_corr * _mm_cvtss_f32(h);
    }
  }
}

// IQ4_XS: its sub-blocks are units of 32 whose nibbles lie 16 bytes apart
// from byte 8 of the super-block, so a pair reads as two blocks of IQ4_NL
// would (no fp16 d of their own: the 8 scales come per super-block, and the
// kQ8_K activations' dx per 256).
struct Iq4XsPairs {
  static constexpr int kQsOffset = 0, kQhOffset = -1;
  static constexpr Block32Levels kLevelKind = Block32Levels::kIq4;
  static constexpr bool kSigned = true;
};

template <int NT>
void decode_iq4_xs_rows(const Matrix& w, const Activations& x, float* y, int64_t ldy, int64_t r0, int64_t r1) {
  const ActLayout l = act_layout(ActivationFormat::kQ8_K, w.cols);
  ActRow act[NT];
  for (int t = 0; t < NT; ++t) act[t] = act_row(x, l, t);
  for (int64_t r = r0; r < r1; ++r) {
    const uint8_t* row = w.row(r);
    __m512 acc[NT];
#pragma GCC unroll 4
    for (int t = 0; t < NT; ++t) acc[t] = _mm512_setzero_ps();
    for (int64_t g = 0; g < w.cols / 256; ++g) {
      const uint8_t* block = row + kIq4XsBlockBytes * g;
      const __m256 scales = iq4_xs_scales(block);
      __m512 s16[NT];
      const int8_t* xq[NT];
#pragma GCC unroll 4
      for (int t = 0; t < NT; ++t) {
        s16[t] = _mm512_castps256_ps512(_mm256_mul_ps(scales, _mm256_set1_ps(act[t].d[g])));
        xq[t] = act[t].q + 256 * g;
      }
#pragma GCC unroll 4
      for (int k = 0; k < 4; ++k) {
        const uint8_t* a = block + 8 + 32 * k;
        add_pair<Iq4XsPairs, NT>(pair_levels<Iq4XsPairs>(a, a + 16), k, xq, s16, acc);
      }
    }
#pragma GCC unroll 4
    for (int t = 0; t < NT; ++t) y[t * ldy + r] = _mm512_reduce_add_ps(acc[t]);
  }
}

template <class U>
void decode_tokens(const Matrix& w, const Activations& x, float* y, int64_t ldy, int64_t r0, int64_t r1) {
  switch (x.n_tokens) {
    case 1: return decode_rows<U, 1>(w, x, y, ldy, r0, r1);
    case 2: return decode_rows<U, 2>(w, x, y, ldy, r0, r1);
    default: return decode_rows<U, 3>(w, x, y, ldy, r0, r1);
  }
}

}  // namespace

void decode_block32_rows_avx512(const Matrix& w, const Activations& x, float* y, int64_t ldy, int64_t r0, int64_t r1) {
  switch (w.type) {
    case DType::Q4_1: return decode_tokens<Q4_1Units>(w, x, y, ldy, r0, r1);
    case DType::Q5_0: return decode_tokens<Q5_0Units>(w, x, y, ldy, r0, r1);
    case DType::Q5_1: return decode_tokens<Q5_1Units>(w, x, y, ldy, r0, r1);
    case DType::IQ4_NL: return decode_tokens<Iq4NlUnits>(w, x, y, ldy, r0, r1);
    case DType::MXFP4: return decode_tokens<Mxfp4Units>(w, x, y, ldy, r0, r1);
    case DType::IQ4_XS:
      switch (x.n_tokens) {
        case 1: return decode_iq4_xs_rows<1>(w, x, y, ldy, r0, r1);
        case 2: return decode_iq4_xs_rows<2>(w, x, y, ldy, r0, r1);
        default: return decode_iq4_xs_rows<3>(w, x, y, ldy, r0, r1);
      }
    default: return;
  }
}

}  // namespace skiff
