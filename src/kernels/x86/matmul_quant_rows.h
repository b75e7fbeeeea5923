// Integer decode (1-3 tokens) on weight rows as GGUF stores them, the part
// shared by the AVX2 and AVX-512 files: included inside their anonymous
// namespace after quant_blocks_simd.h, once they define
//   __m256i unit_dot(__m256i w, __m256i x)
// the int32 dot of 32 unsigned weight bytes (at most 128) with 32 signed
// activation bytes, as 8 lanes of 4 products: vpdpbusd (AVX-512 VNNI) or
// vpmaddubsw + vpmaddwd (AVX2, whose int16 pairs stay below 2·128·127).
//
// A row is read in groups of 8 units (32 weights with one scale: a _0 block,
// a K-quant sub-block); each unit's 8 int32 lanes are converted and scaled as
// they are (one broadcast scale per unit) and summed across lanes once per
// row; the offset/min terms of 8 units at a time go to a second accumulator,
// as one vector product. Q8_0 weights are signed: their dot takes |w| and
// x·sign(w).

inline __m256 bytes_to_f32(uint64_t bytes) {
  return _mm256_cvtepi32_ps(_mm256_cvtepu8_epi32(_mm_cvtsi64_si128(static_cast<int64_t>(bytes))));
}

struct DecodeGroup {
  __m256i w[8];  // unit j's 32 weights as bytes (signed for Q8_0, else unsigned)
  __m256 scale;  // lane j: the float factor of unit j's int32 dot
  __m256 min;    // K-quants: lane j: dmin · m_j
  // Q2_K / Q3_K (kScales16): lane i of vector h: the factor (and Q2_K's min) of
  // the 16 weights 16·(8h + i) .. of the super-block.
  __m256 scale16[2], min16[2];
};

// Q4_K / Q5_K: the 8 sub-blocks' scales times d and mins times dmin.
[[gnu::always_inline]] inline void k_group_factors(const uint8_t* scales, uint16_t d, uint16_t dmin, DecodeGroup& G) {
  uint64_t sc, m;
  q4k_scales_mins(scales, sc, m);
  G.scale = _mm256_mul_ps(bytes_to_f32(sc), _mm256_set1_ps(half(d)));
  G.min = _mm256_mul_ps(bytes_to_f32(m), _mm256_set1_ps(half(dmin)));
}

// Per type: its Units (quant_blocks_simd.h: the type's facts and per-unit
// access), and how group g of a row loads (n units; the last group may be short).
struct RowsQ8_0 : Q8_0Units {
  [[gnu::always_inline]] static void load_group(const uint8_t* row, int64_t g, int n, DecodeGroup& G) {
    const auto* b = reinterpret_cast<const BlockQ8_0*>(row) + 8 * g;
#pragma GCC unroll 8
    for (int j = 0; j < n; ++j) G.w[j] = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(b[j].qs));
    G.scale = block_scales<34>(reinterpret_cast<const uint8_t*>(b), n);
  }
};

// Q4_0, Q4_1, Q5_0, Q5_1, IQ4_NL, MXFP4: 8 blocks; the _1 types' min is -m.
template <class Units>
struct RowsBlock32 : Units {
  [[gnu::always_inline]] static void load_group(const uint8_t* row, int64_t g, int n, DecodeGroup& G) {
    constexpr int kStride = static_cast<int>(Units::kBytesPerUnit);
#pragma GCC unroll 8
    for (int j = 0; j < n; ++j) G.w[j] = Units::bytes(row, 8 * g + j);
    const uint8_t* first = row + kStride * 8 * g;
    G.scale = Units::scales(first, n);
    if constexpr (Units::kMinTerm)
      G.min = _mm256_sub_ps(_mm256_setzero_ps(), block_scales<kStride>(first + Units::kMinOffset, n));
  }
};
using RowsQ4_0 = RowsBlock32<Q4_0Units>;
using RowsQ4_1 = RowsBlock32<Q4_1Units>;
using RowsQ5_0 = RowsBlock32<Q5_0Units>;
using RowsQ5_1 = RowsBlock32<Q5_1Units>;
using RowsIq4Nl = RowsBlock32<Iq4NlUnits>;
using RowsMxfp4 = RowsBlock32<Mxfp4Units>;

// Group g is super-block g, loaded whole (one qs and qh load per half).
template <class Block>
struct RowsK : KUnits<Block> {
  [[gnu::always_inline]] static void load_group(const uint8_t* row, int64_t g, int, DecodeGroup& G) {
    const Block& b = reinterpret_cast<const Block*>(row)[g];
    const __m256i low4 = _mm256_set1_epi8(0x0f);
#pragma GCC unroll 4
    for (int i = 0; i < 4; ++i) {
      const __m256i q = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(b.qs + 32 * i));
      G.w[2 * i] = _mm256_and_si256(q, low4);
      G.w[2 * i + 1] = _mm256_and_si256(_mm256_srli_epi16(q, 4), low4);
      if constexpr (KUnits<Block>::kFiveBits) {
        const __m256i h = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(b.qh));
        G.w[2 * i] = _mm256_or_si256(G.w[2 * i], q5_fifth_bits(h, 2 * i));
        G.w[2 * i + 1] = _mm256_or_si256(G.w[2 * i + 1], q5_fifth_bits(h, 2 * i + 1));
      }
    }
    k_group_factors(b.scales, b.d, b.dmin, G);
  }
};
using RowsQ4_K = RowsK<BlockQ4_K>;
using RowsQ5_K = RowsK<BlockQ5_K>;

// IQ4_XS: group g is super-block g; no min.
struct RowsIq4Xs : Iq4XsUnits {
  [[gnu::always_inline]] static void load_group(const uint8_t* row, int64_t g, int, DecodeGroup& G) {
    const uint8_t* block = row + kIq4XsBlockBytes * g;
#pragma GCC unroll 8
    for (int j = 0; j < 8; ++j) G.w[j] = iq4_levels(block_nibbles(block + 8 + 16 * j));
    G.scale = iq4_xs_scales(block);
  }
};

// Q2_K and Q3_K: 16 sub-blocks of 16 with their own scales (and Q2_K mins), so
// a unit's 8 int32 lanes (4 weights each) take two factors: lanes 0-3 the
// sub-block 2j's, 4-7 the sub-block 2j+1's. Element e = 128h + 32s + l has its
// 2 low bits at bits 2s of qs[32h + l]; unit j is (h, s) = (j / 4, j % 4).
constexpr int64_t kQ2KBytes = 84, kQ3KBytes = 110;

[[gnu::always_inline]] inline __m256i two_bit_unit(const uint8_t* qs, int j) {
  const __m256i q = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(qs + 32 * (j / 4)));
  return _mm256_and_si256(_mm256_srli_epi16(q, 2 * (j % 4)), _mm256_set1_epi8(3));
}

// 16 byte values as two vectors of 8 floats times f.
[[gnu::always_inline]] inline void bytes16_times(__m128i v, bool is_signed, float f, __m256 out[2]) {
  const __m128i high = _mm_srli_si128(v, 8);
  const __m256i lo = is_signed ? _mm256_cvtepi8_epi32(v) : _mm256_cvtepu8_epi32(v);
  const __m256i hi = is_signed ? _mm256_cvtepi8_epi32(high) : _mm256_cvtepu8_epi32(high);
  out[0] = _mm256_mul_ps(_mm256_cvtepi32_ps(lo), _mm256_set1_ps(f));
  out[1] = _mm256_mul_ps(_mm256_cvtepi32_ps(hi), _mm256_set1_ps(f));
}

// Q2_K (84 bytes): scales[16] (low nibble scale, high min), qs[64], fp16 d, dmin.
struct RowsQ2K {
  static constexpr DType kType = DType::Q2_K;
  static constexpr ActivationFormat kAct = ActivationFormat::kQ8_K;
  static constexpr bool kSigned = false, kMinTerm = true, kScales16 = true;
  static constexpr int kOffsetShift = -1;
  [[gnu::always_inline]] static void load_group(const uint8_t* row, int64_t g, int, DecodeGroup& G) {
    const uint8_t* b = row + kQ2KBytes * g;
#pragma GCC unroll 8
    for (int j = 0; j < 8; ++j) G.w[j] = two_bit_unit(b + 16, j);
    uint16_t d, dmin;
    std::memcpy(&d, b + 80, 2);
    std::memcpy(&dmin, b + 82, 2);
    const __m128i sm = _mm_loadu_si128(reinterpret_cast<const __m128i*>(b));
    const __m128i low4 = _mm_set1_epi8(0x0f);
    bytes16_times(_mm_and_si128(sm, low4), false, half(d), G.scale16);
    bytes16_times(_mm_and_si128(_mm_srli_epi16(sm, 4), low4), false, half(dmin), G.min16);
  }
};

// Q3_K (110 bytes): hmask[32], qs[64], 16 six-bit scales in 12 bytes (value
// sc - 32), fp16 d. Levels -4..3 as signed bytes: the 2 low bits, minus 4 where
// bit j of hmask[l] is clear.
struct RowsQ3K {
  static constexpr DType kType = DType::Q3_K;
  static constexpr ActivationFormat kAct = ActivationFormat::kQ8_K;
  static constexpr bool kSigned = true, kMinTerm = false, kScales16 = true;
  static constexpr int kOffsetShift = -1;
  [[gnu::always_inline]] static void load_group(const uint8_t* row, int64_t g, int, DecodeGroup& G) {
    const uint8_t* b = row + kQ3KBytes * g;
    const __m256i h = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(b));
#pragma GCC unroll 8
    for (int j = 0; j < 8; ++j) {  // bit j of h to bit 2 (the 16-bit shifts leak only into masked bits)
      const __m256i moved = j <= 2 ? _mm256_slli_epi16(h, 2 - j) : _mm256_srli_epi16(h, j - 2);
      const __m256i level = _mm256_or_si256(two_bit_unit(b + 32, j), _mm256_and_si256(moved, _mm256_set1_epi8(4)));
      G.w[j] = _mm256_sub_epi8(level, _mm256_set1_epi8(4));
    }
    // Scale i: the low (i < 8) or high nibble of byte i % 8, and bits 2·(i / 4) of byte 8 + i % 4 above it.
    uint64_t low8;
    uint32_t top;
    std::memcpy(&low8, b + 96, 8);
    std::memcpy(&top, b + 104, 4);
    const uint64_t nib_lo = low8 & 0x0f0f0f0f0f0f0f0full, nib_hi = (low8 >> 4) & 0x0f0f0f0f0f0f0f0full;
    // top 2 bits of scales 0-7: bits 0-1 (i < 4) or 2-3 (4 <= i < 8) of byte 8 + i % 4; 8-15: bits 4-5 / 6-7.
    const uint64_t t = static_cast<uint64_t>(top);
    const uint64_t top_lo = (t & 0x03030303ull) | ((t >> 2) & 0x03030303ull) << 32;
    const uint64_t top_hi = ((t >> 4) & 0x03030303ull) | ((t >> 6) & 0x03030303ull) << 32;
    const __m128i sc = _mm_set_epi64x(static_cast<int64_t>(nib_hi | top_hi << 4), static_cast<int64_t>(nib_lo | top_lo << 4));
    uint16_t d;
    std::memcpy(&d, b + 108, 2);
    bytes16_times(_mm_sub_epi8(sc, _mm_set1_epi8(32)), true, half(d), G.scale16);
  }
};

// Independent accumulators per token, so the FMA latency does not serialize units.
constexpr int kDecodeChains = 4;

// Adds group g of one row · one token: the unit dots to acc, the offset
// (units of 2^kOffsetShift·dw·dx·Σx) or min (min·dsum, dsum = dx·Σq) terms to corr.
template <class W>
constexpr bool kScales16 = requires { W::kScales16; };

template <class W>
[[gnu::always_inline]] inline void decode_group(const DecodeGroup& G, const ActRow& a, int64_t g, int n,
                                                __m256 acc[kDecodeChains], __m256& corr) {
  const bool q8_0_act = W::kAct == ActivationFormat::kQ8_0;
  if constexpr (kScales16<W>) {  // 8 units, two factors each (see RowsQ2K)
    const __m256 dx = _mm256_set1_ps(a.d[g]);
    const int8_t* xq = a.q + 256 * g;
#pragma GCC unroll 8
    for (int j = 0; j < 8; ++j) {
      const __m256i x = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(xq + 32 * j));
      const __m256i dot = W::kSigned ? unit_dot(_mm256_sign_epi8(G.w[j], G.w[j]), _mm256_sign_epi8(x, G.w[j]))
                                     : unit_dot(G.w[j], x);
      const __m256i pick = _mm256_setr_epi32(2 * (j % 4), 2 * (j % 4), 2 * (j % 4), 2 * (j % 4), 2 * (j % 4) + 1,
                                             2 * (j % 4) + 1, 2 * (j % 4) + 1, 2 * (j % 4) + 1);
      const __m256 lane_scale = _mm256_permutevar8x32_ps(G.scale16[j / 4], pick);
      acc[j % kDecodeChains] =
          _mm256_fmadd_ps(_mm256_cvtepi32_ps(dot), _mm256_mul_ps(lane_scale, dx), acc[j % kDecodeChains]);
    }
    if constexpr (W::kMinTerm) {
      corr = _mm256_fmadd_ps(G.min16[0], _mm256_loadu_ps(a.sums16 + 16 * g), corr);
      corr = _mm256_fmadd_ps(G.min16[1], _mm256_loadu_ps(a.sums16 + 16 * g + 8), corr);
    }
    return;
  }
  const __m256 s8 = _mm256_mul_ps(G.scale, q8_0_act ? _mm256_loadu_ps(a.d + 8 * g) : _mm256_set1_ps(a.d[g]));
  alignas(32) float s[8];
  _mm256_store_ps(s, s8);
  const int8_t* xq = a.q + 256 * g;
#pragma GCC unroll 8
  for (int j = 0; j < n; ++j) {
    const __m256i x = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(xq + 32 * j));
    const __m256i dot = W::kSigned ? unit_dot(_mm256_sign_epi8(G.w[j], G.w[j]), _mm256_sign_epi8(x, G.w[j]))
                                   : unit_dot(G.w[j], x);
    acc[j % kDecodeChains] =
        _mm256_fmadd_ps(_mm256_cvtepi32_ps(dot), _mm256_set1_ps(s[j]), acc[j % kDecodeChains]);
  }
  if constexpr (W::kOffsetShift >= 0)
    corr = _mm256_fmadd_ps(s8, _mm256_cvtepi32_ps(_mm256_loadu_si256(static_cast<const __m256i*>(a.sums) + g)), corr);
  else if constexpr (W::kMinTerm && q8_0_act)  // the sums are Σq, the scales dx
    corr = _mm256_fmadd_ps(_mm256_mul_ps(G.min, _mm256_loadu_ps(a.d + 8 * g)),
                           _mm256_cvtepi32_ps(_mm256_loadu_si256(static_cast<const __m256i*>(a.sums) + g)), corr);
  else if constexpr (W::kMinTerm)  // the sums are dx·Σq
    corr = _mm256_fmadd_ps(G.min, _mm256_loadu_ps(static_cast<const float*>(a.sums) + 8 * g), corr);
}

// Rows [r0, r1) times tokens [t0, t0 + NT).
template <class W, int NT>
void decode_rows(const Matrix& w, const Activations& x, int t0, float* y, int64_t ldy, int64_t r0, int64_t r1) {
  const ActLayout l = act_layout(W::kAct, w.cols);
  ActRow act[NT];
  for (int t = 0; t < NT; ++t) act[t] = act_row(x, l, t0 + t);
  y += t0 * ldy;
  const int64_t units = w.cols / 32, groups = (units + 7) / 8;
  const float k_corr = W::kOffsetShift >= 0 ? static_cast<float>(1 << W::kOffsetShift) : 1.0f;
  for (int64_t r = r0; r < r1; ++r) {
    const uint8_t* row = w.row(r);
    __m256 acc[NT][kDecodeChains], corr[NT];
#pragma GCC unroll 4
    for (int t = 0; t < NT; ++t) {
      corr[t] = _mm256_setzero_ps();
      for (int c = 0; c < kDecodeChains; ++c) acc[t][c] = _mm256_setzero_ps();
    }
    DecodeGroup G{};  // defined throughout: a short last group loads fewer units, and most types no min
    for (int64_t g = 0; g + 1 < groups; ++g) {
      W::load_group(row, g, 8, G);
#pragma GCC unroll 4
      for (int t = 0; t < NT; ++t) decode_group<W>(G, act[t], g, 8, acc[t], corr[t]);
    }
    const int n = static_cast<int>(units - 8 * (groups - 1));
    W::load_group(row, groups - 1, n, G);
#pragma GCC unroll 4
    for (int t = 0; t < NT; ++t) {
      decode_group<W>(G, act[t], groups - 1, n, acc[t], corr[t]);
      const __m256 sum = _mm256_add_ps(_mm256_add_ps(acc[t][0], acc[t][1]), _mm256_add_ps(acc[t][2], acc[t][3]));
      y[t * ldy + r] = hsum(sum) - k_corr * hsum(corr[t]);
    }
  }
}

// Up to this many tokens, streaming the rows as stored beats packing them.
constexpr int kMaxDecodeTokens = 3;

// decode_rows for 1..kMaxDecodeTokens tokens; false (nothing done) for more.
template <class W>
bool decode_few_tokens(const Matrix& w, const Activations& x, float* y, int64_t ldy, int64_t r0, int64_t r1) {
  switch (x.n_tokens) {
    case 1: decode_rows<W, 1>(w, x, 0, y, ldy, r0, r1); return true;
    case 2: decode_rows<W, 2>(w, x, 0, y, ldy, r0, r1); return true;
    case 3: decode_rows<W, 3>(w, x, 0, y, ldy, r0, r1); return true;
    default: return false;
  }
  static_assert(kMaxDecodeTokens == 3, "the switch covers 1..kMaxDecodeTokens");
}

// Any number of tokens by the decode body (Q2_K and Q3_K rows as stored, on
// AVX2: matrices the loader did not repack): rows in chunks that stay in L1
// while every group of 6 tokens (then 3, 2, 1) reads them. Groups of 6 spill a
// few registers on AVX2 but measured faster than 3 on both ISAs, when AVX-512
// ran this body too (figures: docs/notes/kernel-design-figures.md).
template <class W>
void decode_all_tokens(const Matrix& w, const Activations& x, float* y, int64_t ldy, int64_t r0, int64_t r1) {
  constexpr int64_t kRowChunk = 8;
  for (int64_t rc = r0; rc < r1; rc += kRowChunk) {
    const int64_t rc_end = r1 - rc < kRowChunk ? r1 : rc + kRowChunk;
    int t0 = 0;
    for (; t0 + 6 <= x.n_tokens; t0 += 6) decode_rows<W, 6>(w, x, t0, y, ldy, rc, rc_end);
    if (x.n_tokens - t0 >= 3) { decode_rows<W, 3>(w, x, t0, y, ldy, rc, rc_end); t0 += 3; }
    if (x.n_tokens - t0 == 2) decode_rows<W, 2>(w, x, t0, y, ldy, rc, rc_end);
    if (x.n_tokens - t0 == 1) decode_rows<W, 1>(w, x, t0, y, ldy, rc, rc_end);
  }
}
