// GGUF block structs and per-unit weight access for the integer matmul
// kernels (the matmul files of x86/avx2 and x86/avx512). Include only from
// files compiled with at least AVX2 + F16C. Everything sits in an anonymous
// namespace, so each ISA file gets its own copy and none can be linked into
// generic code (see the *_avx512.cpp note in CMakeLists.txt).
//
// A "unit" is 32 consecutive weights of a row sharing one scale (and, for
// Q4_1 / Q5_1 / Q4_K / Q5_K, one min): a block of 32 (Q8_0, Q4_0, Q4_1, Q5_0,
// Q5_1, IQ4_NL, MXFP4) or a sub-block of 256 (Q4_K, Q5_K, IQ4_XS). Q2_K / Q3_K scale
// each 16 weights (matmul_quant_rows.h), Q6_K has kernels of its own.
#pragma once
#include <immintrin.h>

#include <cstdint>
#include <cstring>
#include <type_traits>

#include "kernels/matmul/matmul_kernels.h"

namespace skiff {
namespace {

struct BlockQ8_0 {
  uint16_t d;
  int8_t qs[32];
};
struct BlockQ4_0 {
  uint16_t d;
  uint8_t qs[16];
};
struct BlockQ4_K {
  uint16_t d, dmin;
  uint8_t scales[12];
  uint8_t qs[128];
};
struct BlockQ5_K {
  uint16_t d, dmin;
  uint8_t scales[12];
  uint8_t qh[32];  // bit j of qh[l]: the fifth bit of element l of sub-block j
  uint8_t qs[128];
};
struct BlockQ6_K {
  uint8_t ql[128];  // low 4 bits
  uint8_t qh[64];   // high 2 bits
  int8_t scales[16];
  uint16_t d;
};
static_assert(sizeof(BlockQ8_0) == 34 && sizeof(BlockQ4_0) == 18 && sizeof(BlockQ4_K) == 144 &&
              sizeof(BlockQ5_K) == 176 && sizeof(BlockQ6_K) == 210);

// How far ahead of what it reads a decode kernel fetches its weight stream.
// The hardware prefetcher alone held a thread decoding Q6_K panels below rows
// as stored on Zen 5; fetching 2, 4, 8 and 16 KiB ahead all helped, 8 KiB the
// most (figures: docs/notes/kernel-design-figures.md).
constexpr int64_t kPrefetchAhead = 8192;

// Fetches the lines of the u-th piece of kBytes bytes from base (a panel's
// unit, on average: a K-quant super-block over its 8 units; a row's block),
// kPrefetchAhead on, into L1 (kIntoL1) or L2 only.
template <int64_t kBytes, bool kIntoL1 = true>
[[gnu::always_inline]] inline void prefetch_unit(const void* base, int64_t u) {
  const char* at = static_cast<const char*>(base) + kBytes * u + kPrefetchAhead;
#pragma GCC unroll 16
  for (int64_t b = 0; b < kBytes; b += 64) _mm_prefetch(at + b, kIntoL1 ? _MM_HINT_T0 : _MM_HINT_T1);
}
// prefetch_unit at the level decode's PrefetchTuner chose.
template <int64_t kBytes>
[[gnu::always_inline]] inline void prefetch_unit_at(PrefetchLevel level, const void* base, int64_t u) {
  if (level == PrefetchLevel::kL1) prefetch_unit<kBytes, true>(base, u);
  else if (level == PrefetchLevel::kL2) prefetch_unit<kBytes, false>(base, u);
}

inline float half(uint16_t h) { return _cvtsh_ss(h); }

// The sum of the 8 lanes.
inline float hsum(__m256 v) {
  __m128 s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
  s = _mm_add_ps(s, _mm_movehl_ps(s, s));
  return _mm_cvtss_f32(_mm_add_ss(s, _mm_movehdup_ps(s)));
}

inline int32_t load_i32(const void* p) {
  int32_t v;
  std::memcpy(&v, p, 4);
  return v;
}

// The 8 six-bit scales and mins of a Q4_K block, one per byte (ggml's packing:
// scales/mins 0-3 in the low 6 bits of bytes 0-3 / 4-7; 4-7 split between the
// nibbles of bytes 8-11 and the top 2 bits of bytes 0-7).
inline void q4k_scales_mins(const uint8_t* q, uint64_t& scales, uint64_t& mins) {
  uint32_t u[3];
  std::memcpy(u, q, 12);
  const uint32_t sc_lo = u[0] & 0x3f3f3f3f, m_lo = u[1] & 0x3f3f3f3f;
  const uint32_t sc_hi = (u[2] & 0x0f0f0f0f) | (((u[0] >> 6) & 0x03030303) << 4);
  const uint32_t m_hi = ((u[2] >> 4) & 0x0f0f0f0f) | (((u[1] >> 6) & 0x03030303) << 4);
  scales = static_cast<uint64_t>(sc_hi) << 32 | sc_lo;
  mins = static_cast<uint64_t>(m_hi) << 32 | m_lo;
}

// Per type: its facts for the kernels, and unit u of a row as 32 bytes (Q8_0:
// the signed weights; Q4: the unsigned nibbles 0..15; Q5_K: levels 0..31) with
// its float scale and min (value = scale·q - min, with q - 8 for Q4_0).
//   kAct          the activation format the kernels read
//   kSigned       the bytes are signed (else unsigned levels)
//   kOffsetShift  the levels carry +2^kOffsetShift, corrected through the
//                 activation block sums (-1: none; K-quants use their mins)
//   kMaxByte      the largest |byte| an unsigned-operand product sees
//   kMinTerm      the unit has a min (K-quants, Q4_1 / Q5_1), taken out
//                 through the activation sums
//   kBytesPerUnit row bytes per 32 weights
struct Q8_0Units {
  static constexpr DType kType = DType::Q8_0;
  static constexpr ActivationFormat kAct = ActivationFormat::kQ8_0;
  static constexpr bool kSigned = true;
  static constexpr int kOffsetShift = -1;
  static constexpr int kMaxByte = 128;  // |-128|
  static constexpr bool kMinTerm = false;
  static constexpr int64_t kBytesPerUnit = sizeof(BlockQ8_0);
  static __m256i bytes(const uint8_t* row, int64_t u) {
    return _mm256_loadu_si256(reinterpret_cast<const __m256i*>(reinterpret_cast<const BlockQ8_0*>(row)[u].qs));
  }
  static void scale_min(const uint8_t* row, int64_t u, float& scale, float& min) {
    scale = half(reinterpret_cast<const BlockQ8_0*>(row)[u].d);
    min = 0;
  }
};

// The 32 nibbles of a _0/_1 block's 16 bytes in element order: the low
// nibbles (elements 0-15), then the high ones (16-31).
inline __m256i block_nibbles(const uint8_t* qs) {
  const __m128i q = _mm_loadu_si128(reinterpret_cast<const __m128i*>(qs));
  return _mm256_and_si256(_mm256_setr_m128i(q, _mm_srli_epi16(q, 4)), _mm256_set1_epi8(0x0f));
}

// Bit j of the 32-bit qh at p as 16 in byte j (Q5_0 / Q5_1 fifth bits): byte
// j takes byte j / 8 of qh, then tests its bit j % 8.
inline __m256i block_fifth_bits(const uint8_t* p) {
  const __m256i which = _mm256_setr_epi8(0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1, 1, 1, 2, 2, 2, 2, 2, 2, 2, 2, 3,
                                         3, 3, 3, 3, 3, 3, 3);
  const __m256i bit = _mm256_set1_epi64x(static_cast<int64_t>(0x8040201008040201));
  const __m256i spread = _mm256_shuffle_epi8(_mm256_set1_epi32(load_i32(p)), which);
  return _mm256_and_si256(_mm256_cmpeq_epi8(_mm256_and_si256(spread, bit), bit), _mm256_set1_epi8(0x10));
}

// IQ4_NL's and IQ4_XS's 16 levels (ggml-common.h's kvalues_iq4nl) as bytes.
inline __m128i iq4_table() { return _mm_setr_epi8(-127, -104, -83, -65, -49, -35, -22, -10, 1, 13, 25, 38, 53, 69, 89, 113); }
// MXFP4's 16 E2M1 values doubled to integers (ggml-common.h's kvalues_mxfp4) as bytes.
inline __m128i e2m1_table() { return _mm_setr_epi8(0, 1, 2, 3, 4, 6, 8, 12, 0, -1, -2, -3, -4, -6, -8, -12); }

// IQ4_NL / IQ4_XS levels of 32 nibbles (a 16-entry table lookup per byte).
inline __m256i iq4_levels(__m256i nibbles) {
  return _mm256_shuffle_epi8(_mm256_broadcastsi128_si256(iq4_table()), nibbles);
}

// How a block of 32 stores its levels.
enum class Block32Levels {
  kNibbles,   // 0..15 (Q4_0, Q4_1)
  kFiveBits,  // 0..31, nibbles and a 32-bit qh (Q5_0, Q5_1)
  kIq4,       // signed table values of the nibbles (IQ4_NL)
  kE2M1,      // signed doubled E2M1 values of the nibbles (MXFP4)
};
// The 16 signed values a table kind's nibbles index.
constexpr bool is_table(Block32Levels kind) { return kind == Block32Levels::kIq4 || kind == Block32Levels::kE2M1; }
inline __m128i level_table(Block32Levels kind) { return kind == Block32Levels::kE2M1 ? e2m1_table() : iq4_table(); }

// The fp16 fields of up to 8 consecutive blocks (stride S bytes) as floats, 0
// past n. Scalar loads (a vpgatherdd costs more than the 8 loads on Zen 4)
// assembled in general registers: stored to memory and reloaded as one vector,
// they stalled store forwarding.
template <int S>
[[gnu::always_inline]] inline __m256 block_scales(const uint8_t* first, int n) {
  uint64_t h[2] = {0, 0};
#pragma GCC unroll 8
  for (int j = 0; j < n; ++j) {
    uint16_t v;
    std::memcpy(&v, first + S * j, 2);
    h[j / 4] |= static_cast<uint64_t>(v) << (16 * (j % 4));
  }
  return _mm256_cvtph_ps(_mm_set_epi64x(static_cast<int64_t>(h[1]), static_cast<int64_t>(h[0])));
}

// 8 E8M0 exponents (int32 lanes) as MXFP4's halved scales 2^(e - 128), bit for
// bit ggml's ggml_e8m0_to_fp32_half: (e - 1) << 23, or the subnormal
// 0x00200000 << e below e = 2.
[[gnu::always_inline]] inline __m256 e8m0_half(__m256i e) {
  const __m256i normal = _mm256_slli_epi32(_mm256_sub_epi32(e, _mm256_set1_epi32(1)), 23);
  const __m256i subnormal = _mm256_sllv_epi32(_mm256_set1_epi32(0x00200000), e);
  return _mm256_castsi256_ps(_mm256_blendv_epi8(subnormal, normal, _mm256_cmpgt_epi32(e, _mm256_set1_epi32(1))));
}
inline float e8m0_half(uint8_t e) { return _mm256_cvtss_f32(e8m0_half(_mm256_set1_epi32(e))); }

// The E8M0 bytes of up to 8 consecutive blocks (stride S) as scales, 0 past n.
template <int S>
[[gnu::always_inline]] inline __m256 block_e8m0_scales(const uint8_t* first, int n) {
  uint64_t bytes = 0;
#pragma GCC unroll 8
  for (int j = 0; j < n; ++j) bytes |= static_cast<uint64_t>(first[S * j]) << (8 * j);
  const __m256 scales = e8m0_half(_mm256_cvtepu8_epi32(_mm_cvtsi64_si128(static_cast<int64_t>(bytes))));
  if (n == 8) return scales;
  const __m256i live = _mm256_cmpgt_epi32(_mm256_set1_epi32(n), _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
  return _mm256_and_ps(scales, _mm256_castsi256_ps(live));
}

// A block of 32 type: the block's bytes, the offsets of its fp16 min (or -1),
// fifth bits (or -1) and nibbles after its scale at 0 (fp16 d, or MXFP4's
// E8M0 byte); its levels, and the offset its unsigned levels carry
// (kOffsetShift as above).
template <DType T, int kBlockBytes, int kMinAt, int kQhAt, int kQsAt, Block32Levels kLevels, int kOffset>
struct Block32Units {
  static constexpr DType kType = T;
  static constexpr ActivationFormat kAct = ActivationFormat::kQ8_0;
  static constexpr bool kSigned = is_table(kLevels);
  static constexpr int kOffsetShift = kOffset;
  static constexpr int kMaxByte = kLevels == Block32Levels::kE2M1 ? 12
                                  : kSigned                       ? 127
                                  : kLevels == Block32Levels::kFiveBits ? 31
                                                                  : 15;
  static constexpr bool kMinTerm = kMinAt >= 0;
  static constexpr bool kE8M0 = kLevels == Block32Levels::kE2M1;
  static constexpr int kMinOffset = kMinAt, kQhOffset = kQhAt, kQsOffset = kQsAt;
  static constexpr Block32Levels kLevelKind = kLevels;
  static constexpr int64_t kBytesPerUnit = kBlockBytes;
  static __m256i bytes(const uint8_t* row, int64_t u) {
    const uint8_t* block = row + kBlockBytes * u;
    const __m256i nibbles = block_nibbles(block + kQsAt);
    if constexpr (kLevels == Block32Levels::kFiveBits) return _mm256_or_si256(nibbles, block_fifth_bits(block + kQhAt));
    if constexpr (kSigned) return _mm256_shuffle_epi8(_mm256_broadcastsi128_si256(level_table(kLevels)), nibbles);
    return nibbles;
  }
  // x = d·q + m for the _1 types: their min is -m.
  static void scale_min(const uint8_t* row, int64_t u, float& scale, float& min) {
    const uint8_t* block = row + kBlockBytes * u;
    min = 0;
    if constexpr (kE8M0) {
      scale = e8m0_half(block[0]);
    } else {
      uint16_t h;
      std::memcpy(&h, block, 2);
      scale = half(h);
      if constexpr (kMinTerm) {
        std::memcpy(&h, block + kMinAt, 2);
        min = -half(h);
      }
    }
  }
  // The scales of up to 8 consecutive blocks from `first`, 0 past n.
  [[gnu::always_inline]] static __m256 scales(const uint8_t* first, int n) {
    if constexpr (kE8M0) return block_e8m0_scales<kBlockBytes>(first, n);
    return block_scales<kBlockBytes>(first, n);
  }
};
using Q4_0Units = Block32Units<DType::Q4_0, 18, -1, -1, 2, Block32Levels::kNibbles, 3>;  // nibbles are the value + 8
using Q4_1Units = Block32Units<DType::Q4_1, 20, 2, -1, 4, Block32Levels::kNibbles, -1>;
using Q5_0Units = Block32Units<DType::Q5_0, 22, -1, 2, 6, Block32Levels::kFiveBits, 4>;  // levels are the value + 16
using Q5_1Units = Block32Units<DType::Q5_1, 24, 2, 4, 8, Block32Levels::kFiveBits, -1>;
using Iq4NlUnits = Block32Units<DType::IQ4_NL, 18, -1, -1, 2, Block32Levels::kIq4, -1>;
using Mxfp4Units = Block32Units<DType::MXFP4, 17, -1, -1, 1, Block32Levels::kE2M1, -1>;
static_assert(Q4_0Units::kBytesPerUnit == sizeof(BlockQ4_0));

// Sub-block j's float scale d·sc_j and min dmin·m_j of a Q4_K / Q5_K block.
inline void k_scale_min(uint16_t d, uint16_t dmin, const uint8_t* scales, int j, float& scale, float& min) {
  uint64_t sc, m;
  q4k_scales_mins(scales, sc, m);
  scale = half(d) * static_cast<float>((sc >> (8 * j)) & 0xff);
  min = half(dmin) * static_cast<float>((m >> (8 * j)) & 0xff);
}

// Bit j of each byte of h moved to bit 4 (the 16s of a Q5_K level). The
// 16-bit shifts carry bits across bytes only into the bits the mask drops.
inline __m256i q5_fifth_bits(__m256i h, int j) {
  const __m256i moved = j <= 4 ? _mm256_slli_epi16(h, 4 - j) : _mm256_srli_epi16(h, j - 4);
  return _mm256_and_si256(moved, _mm256_set1_epi8(0x10));
}

// Q4_K and Q5_K: sub-blocks 2i and 2i+1 are the low and high nibbles of
// qs[32i, 32i+32), plus (Q5_K) bit j of qh[l] as 16.
template <class Block>
struct KUnits {
  static constexpr bool kFiveBits = std::is_same_v<Block, BlockQ5_K>;
  static constexpr DType kType = kFiveBits ? DType::Q5_K : DType::Q4_K;
  static constexpr ActivationFormat kAct = ActivationFormat::kQ8_K;
  static constexpr bool kSigned = false;
  static constexpr int kOffsetShift = -1;
  static constexpr int kMaxByte = kFiveBits ? 31 : 15;
  static constexpr bool kMinTerm = true;
  static constexpr int64_t kBytesPerUnit = sizeof(Block) / 8;
  static __m256i bytes(const uint8_t* row, int64_t u) {
    const Block& b = reinterpret_cast<const Block*>(row)[u / 8];
    const int j = static_cast<int>(u % 8);
    const __m256i q = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(b.qs + 32 * (j / 2)));
    const __m256i low = _mm256_and_si256(j % 2 ? _mm256_srli_epi16(q, 4) : q, _mm256_set1_epi8(0x0f));
    if constexpr (kFiveBits)
      return _mm256_or_si256(low, q5_fifth_bits(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(b.qh)), j));
    else
      return low;
  }
  static void scale_min(const uint8_t* row, int64_t u, float& scale, float& min) {
    const Block& b = reinterpret_cast<const Block*>(row)[u / 8];
    k_scale_min(b.d, b.dmin, b.scales, static_cast<int>(u % 8), scale, min);
  }
};
using Q4_KUnits = KUnits<BlockQ4_K>;
using Q5_KUnits = KUnits<BlockQ5_K>;

// IQ4_XS (136 bytes per 256): fp16 d, u16 scales_h, u8 scales_l[4], qs[128];
// sub-block j's 6-bit scale takes bits 4·(j % 2) of scales_l[j / 2] and 2j of
// scales_h as its top 2 (value ls - 32), its nibbles are qs[16j ..] as a _0 block's.
constexpr int64_t kIq4XsBlockBytes = 136;

inline float iq4_xs_scale(const uint8_t* block, int j) {
  uint16_t d, high;
  std::memcpy(&d, block, 2);
  std::memcpy(&high, block + 2, 2);
  const int ls = ((block[4 + j / 2] >> (4 * (j % 2))) & 0xF) | ((high >> (2 * j)) & 3) << 4;
  return half(d) * static_cast<float>(ls - 32);
}

// All 8 sub-block scales of an IQ4_XS block, assembled as bytes in a general
// register (8 scalar results stored and reloaded as a vector stalled store
// forwarding on the decode's critical path).
inline __m256 iq4_xs_scales(const uint8_t* block) {
  uint16_t d, high;
  uint32_t low;
  std::memcpy(&d, block, 2);
  std::memcpy(&high, block + 2, 2);
  std::memcpy(&low, block + 4, 4);
  uint64_t ls = 0;
#pragma GCC unroll 8
  for (int j = 0; j < 8; ++j)
    ls |= static_cast<uint64_t>(((low >> (4 * j)) & 0xF) | ((high >> (2 * j)) & 3) << 4) << (8 * j);
  const __m256i scales = _mm256_cvtepu8_epi32(_mm_cvtsi64_si128(static_cast<int64_t>(ls)));
  return _mm256_mul_ps(_mm256_cvtepi32_ps(_mm256_sub_epi32(scales, _mm256_set1_epi32(32))), _mm256_set1_ps(half(d)));
}

struct Iq4XsUnits {
  static constexpr DType kType = DType::IQ4_XS;
  static constexpr ActivationFormat kAct = ActivationFormat::kQ8_K;
  static constexpr bool kSigned = true;
  static constexpr int kOffsetShift = -1;
  static constexpr int kMaxByte = 127;
  static constexpr bool kMinTerm = false;
  static constexpr int64_t kBytesPerUnit = kIq4XsBlockBytes / 8;
  static __m256i bytes(const uint8_t* row, int64_t u) {
    return iq4_levels(block_nibbles(row + kIq4XsBlockBytes * (u / 8) + 8 + 16 * (u % 8)));
  }
  static void scale_min(const uint8_t* row, int64_t u, float& scale, float& min) {
    scale = iq4_xs_scale(row + kIq4XsBlockBytes * (u / 8), static_cast<int>(u % 8));
    min = 0;
  }
};

}  // namespace
}  // namespace skiff
