// The flash-attention kernel body, written as plain loops that the compiler
// vectorizes. Included by flash_attention_{scalar,avx2,avx512}.cpp inside a
// per-ISA namespace, so each copy is compiled with its own flags and the
// copies cannot be merged by the linker. No STL here (see CMakeLists.txt).
// Expects skiff::AttentionQueries, KvBlocks, AttentionPartial and
// kernel_scratch declared, and <immintrin.h> and kernels/kv_row.h included.

#include "kernels/vec_math.h"

#if defined(__AVX512F__)
// GCC 12's AVX-512 headers trip -Wmaybe-uninitialized on their own
// _mm512_undefined_* placeholders (a known false positive).
#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif

namespace flash {

constexpr int kTile = 32;  // keys per tile: K and V tiles of 128-dim heads fit L1
constexpr float kNegInf = -__builtin_inff();

inline float half_to_float(unsigned short h) {
#if defined(__F16C__)
  return _cvtsh_ss(h);
#else
  const unsigned sign = static_cast<unsigned>(h & 0x8000) << 16;
  const unsigned exp = (h >> 10) & 0x1f, mant = h & 0x3ff;
  union { unsigned u; float f; } v;
  if (exp == 0x1f) {
    v.u = sign | 0x7f800000 | (mant << 13);
  } else if (exp == 0) {
    v.f = static_cast<float>(mant) * (1.0f / 16777216.0f);
    v.u |= sign;
  } else {
    v.u = sign | ((exp + 112) << 23) | (mant << 13);
  }
  return v.f;
#endif
}

// n fp16 values as floats, with the ISA's conversion.
inline void halves_to_floats(const unsigned short* s, int n, float* dst) {
  int i = 0;
#if defined(__AVX512F__)
  for (; i + 16 <= n; i += 16)
    _mm512_storeu_ps(dst + i, _mm512_cvtph_ps(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(s + i))));
#elif defined(__F16C__)
  for (; i + 8 <= n; i += 8)
    _mm256_storeu_ps(dst + i, _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(s + i))));
#endif
  for (; i < n; ++i) dst[i] = half_to_float(s[i]);
}

// One cached row of head_dim elements as floats.
inline void load_row(const unsigned char* src, skiff::KvElement element, int head_dim, float* dst) {
  switch (element) {
    case skiff::KvElement::kF32: {
      const float* s = reinterpret_cast<const float*>(src);
#pragma omp simd
      for (int d = 0; d < head_dim; ++d) dst[d] = s[d];
      break;
    }
    case skiff::KvElement::kF16:
      halves_to_floats(reinterpret_cast<const unsigned short*>(src), head_dim, dst);
      break;
    case skiff::KvElement::kQ8_0: {
      const int group = skiff::kv_q8_group(head_dim);
      for (int b = 0; b < head_dim / group; ++b) {
        const unsigned char* block = src + b * (2 + group);
        const float scale = half_to_float(static_cast<unsigned short>(block[0] | (block[1] << 8)));
        const signed char* q = reinterpret_cast<const signed char*>(block + 2);
#pragma omp simd
        for (int i = 0; i < group; ++i) dst[b * group + i] = scale * q[i];
      }
      break;
    }
  }
}

inline unsigned long row_bytes(skiff::KvElement element, int head_dim) {
  switch (element) {
    case skiff::KvElement::kF32: return 4ul * head_dim;
    case skiff::KvElement::kF16: return 2ul * head_dim;
    case skiff::KvElement::kQ8_0: return skiff::kv_q8_row_bytes(head_dim);
  }
  return 0;
}

// Keys of positions [slot, slot + n) of one block (kv_row.h's dimension-major
// layout) as floats [head_dim][kTile], zeros past n up to a multiple of 16.
inline void load_key_columns(const unsigned char* block, skiff::KvElement element, int head_dim, int block_size,
                             int slot, int n, float* k) {
  const unsigned long b = static_cast<unsigned long>(block_size);
  const int width = (n + 15) / 16 * 16;
  for (int d = 0; d < head_dim; ++d)
    for (int j = n; j < width; ++j) k[d * kTile + j] = 0.0f;
  switch (element) {
    case skiff::KvElement::kF32: {
      const float* s = reinterpret_cast<const float*>(block) + slot;
      for (int d = 0; d < head_dim; ++d)
#pragma omp simd
        for (int j = 0; j < n; ++j) k[d * kTile + j] = s[d * b + j];
      return;
    }
    case skiff::KvElement::kF16: {
      for (int d = 0; d < head_dim; ++d)
        halves_to_floats(reinterpret_cast<const unsigned short*>(block) + d * b + slot, n, k + d * kTile);
      return;
    }
    case skiff::KvElement::kQ8_0: {
      const int group = skiff::kv_q8_group(head_dim);
      for (int g = 0; g < head_dim / group; ++g) {
        const unsigned char* region = block + g * b * (2 + group);
        float scales[kTile];
        for (int j = 0; j < n; ++j) {
          const unsigned char* h = region + 2 * (slot + j);
          scales[j] = half_to_float(static_cast<unsigned short>(h[0] | (h[1] << 8)));
        }
        for (int i = 0; i < group; ++i) {
          const signed char* q = reinterpret_cast<const signed char*>(region + 2 * b + i * b + slot);
          float* dst = k + (g * group + i) * kTile;
          int j = 0;
#if defined(__AVX512F__)
          for (; j + 16 <= n; j += 16)
            _mm512_storeu_ps(dst + j, _mm512_mul_ps(_mm512_loadu_ps(scales + j),
                                                    _mm512_cvtepi32_ps(_mm512_cvtepi8_epi32(
                                                        _mm_loadu_si128(reinterpret_cast<const __m128i*>(q + j))))));
#elif defined(__AVX2__)
          for (; j + 8 <= n; j += 8)
            _mm256_storeu_ps(dst + j, _mm256_mul_ps(_mm256_loadu_ps(scales + j),
                                                    _mm256_cvtepi32_ps(_mm256_cvtepi8_epi32(
                                                        _mm_loadl_epi64(reinterpret_cast<const __m128i*>(q + j))))));
#endif
          for (; j < n; ++j) dst[j] = scales[j] * q[j];
        }
      }
      return;
    }
  }
}

// Keys of positions [start, start+n) (within one block) as floats
// [head_dim][kTile] in k, and their values as float rows ([n][head_dim]): in
// place when the cache holds floats, else converted into v.
struct Tile {
  const float* k;
  const float* v;
};

inline Tile load_tile(const skiff::KvBlocks& kv, int start, int n, int head_dim, float* k, float* v) {
  const unsigned long rb = row_bytes(kv.element, head_dim);
  const unsigned long block_offset = static_cast<unsigned long>(kv.blocks[start / kv.block_size]) * kv.block_stride;
  const int first_row = start % kv.block_size;
  load_key_columns(kv.k_base + block_offset, kv.element, head_dim, kv.block_size, first_row, n, k);
  if (kv.element == skiff::KvElement::kF32)
    return {k, reinterpret_cast<const float*>(kv.v_base + block_offset + first_row * rb)};
  for (int j = 0; j < n; ++j)
    load_row(kv.v_base + block_offset + (first_row + j) * rb, kv.element, head_dim, v + j * head_dim);
  return {k, v};
}

// No software prefetch: asking for a tile's K/V lines a few tiles ahead made
// the kernels read K/V from memory at half their in-cache speed on Zen 4
// (docs/benchmarks.md), blocks in pool order or scattered; the hardware
// prefetchers follow the blocks' rows.

// Keys [hidden, visible) of a tile starting at tile_start are visible to
// query row r: those up to its position, and with a window only the last
// `window` of them.
inline int visible_keys(const skiff::AttentionQueries& qs, int r, int n, int tile_start) {
  const int visible = qs.first_pos + r / qs.group - tile_start + 1;
  return visible < 0 ? 0 : (visible > n ? n : visible);
}
inline int hidden_keys(const skiff::AttentionQueries& qs, int r, int n, int tile_start) {
  if (qs.window <= 0) return 0;
  const int hidden = qs.first_pos + r / qs.group - qs.window + 1 - tile_start;
  return hidden < 0 ? 0 : (hidden > n ? n : hidden);
}
// Where the tiles of query rows [r0, ...) start: at begin, or with a window
// at the block holding the first position any of them sees. Tiles follow
// block boundaries from there, so a key falls in the same tile, at the same
// index, whichever rows share the call (batch invariance).
inline int first_tile(const skiff::AttentionQueries& qs, int r0, int begin, int block_size) {
  if (qs.window <= 0) return begin;
  const int first = qs.first_pos + r0 / qs.group - qs.window + 1;
  const int start = first > 0 ? first / block_size * block_size : 0;
  return start > begin ? start : begin;
}

// Soft-caps a row's tile of scores (Gemma 2), then masks the keys the row
// does not see.
inline void mask_scores(const skiff::AttentionQueries& qs, int r, int n, int tile_start, float* sr) {
  if (const float cap = qs.softcap; cap > 0) {
#pragma omp simd
    for (int j = 0; j < n; ++j) sr[j] = fast_softcap(sr[j], cap);
  }
  const int hidden = hidden_keys(qs, r, n, tile_start);
  for (int j = 0; j < hidden; ++j) sr[j] = kNegInf;
  for (int j = visible_keys(qs, r, n, tile_start); j < kTile; ++j) sr[j] = kNegInf;
}

inline const float* query_row(const skiff::AttentionQueries& qs, int r, int head_dim) {
  return qs.q + (r / qs.group) * qs.q_stride + (r % qs.group) * head_dim;
}

// Scores of the query rows against one tile of n keys (k: [head_dim][kTile])
// at positions [tile_start, tile_start + n), 16 keys at a time, one lane per
// key: each key's dot product over the dimensions dealt round-robin to four
// sums (enough independent multiply-adds to fill the pipes), added in a fixed
// order. Computed the same way for any number of rows, so a token's scores do
// not depend on the chunk it came in.
inline void tile_scores(const skiff::AttentionQueries& qs, int rows, const float* k, int n,
                               int tile_start, int head_dim, float scale, float* s) {
  constexpr int kLanes = 16;
  for (int r = 0; r < rows; ++r) {
    const float* q = query_row(qs, r, head_dim);
    float* sr = s + r * kTile;
    for (int j0 = 0; j0 < n; j0 += kLanes) {
#if defined(__AVX2__)
      // The same sums in registers (arrays of 16 went through memory at every
      // multiply-add).
      __m256 a[4][2];
      for (int i = 0; i < 4; ++i) a[i][0] = a[i][1] = _mm256_setzero_ps();
      int d = 0;
      for (; d + 4 <= head_dim; d += 4)
#pragma GCC unroll 4
        for (int i = 0; i < 4; ++i) {
          const __m256 qd = _mm256_set1_ps(q[d + i]);
          const float* kd = k + (d + i) * kTile + j0;
          a[i][0] = _mm256_fmadd_ps(qd, _mm256_loadu_ps(kd), a[i][0]);
          a[i][1] = _mm256_fmadd_ps(qd, _mm256_loadu_ps(kd + 8), a[i][1]);
        }
      for (; d < head_dim; ++d) {
        const __m256 qd = _mm256_set1_ps(q[d]);
        a[0][0] = _mm256_fmadd_ps(qd, _mm256_loadu_ps(k + d * kTile + j0), a[0][0]);
        a[0][1] = _mm256_fmadd_ps(qd, _mm256_loadu_ps(k + d * kTile + j0 + 8), a[0][1]);
      }
      const __m256 sc = _mm256_set1_ps(scale);
      for (int h = 0; h < 2; ++h)
        _mm256_storeu_ps(sr + j0 + 8 * h, _mm256_mul_ps(_mm256_add_ps(_mm256_add_ps(a[0][h], a[1][h]),
                                                                      _mm256_add_ps(a[2][h], a[3][h])), sc));
#else
      float a0[kLanes] = {}, a1[kLanes] = {}, a2[kLanes] = {}, a3[kLanes] = {};
      const float* kj = k + j0;
      int d = 0;
      for (; d + 4 <= head_dim; d += 4) {
        const float q0 = q[d], q1 = q[d + 1], q2 = q[d + 2], q3 = q[d + 3];
#pragma omp simd
        for (int j = 0; j < kLanes; ++j) {
          a0[j] += q0 * kj[d * kTile + j];
          a1[j] += q1 * kj[(d + 1) * kTile + j];
          a2[j] += q2 * kj[(d + 2) * kTile + j];
          a3[j] += q3 * kj[(d + 3) * kTile + j];
        }
      }
      for (; d < head_dim; ++d) {
        const float qd = q[d];
#pragma omp simd
        for (int j = 0; j < kLanes; ++j) a0[j] += qd * kj[d * kTile + j];
      }
#pragma omp simd
      for (int j = 0; j < kLanes; ++j) sr[j0 + j] = ((a0[j] + a1[j]) + (a2[j] + a3[j])) * scale;
#endif
    }
    mask_scores(qs, r, n, tile_start, sr);
  }
}

// Online-softmax update of one row with its tile of scores (turned into
// probabilities in place), then acc = acc·correction + p·V.
inline void tile_update(float* sr, const float* v, int n, int head_dim, float& max, float& sum,
                        float* acc) {
  float tile_max = kNegInf;
  for (int j = 0; j < n; ++j) tile_max = sr[j] > tile_max ? sr[j] : tile_max;
  if (tile_max == kNegInf) return;  // every key of the tile is masked
  const float new_max = tile_max > max ? tile_max : max;
  const float correction = fast_exp(max - new_max);
  float tile_sum = 0.0f;
#pragma omp simd reduction(+ : tile_sum)
  for (int j = 0; j < kTile; ++j) {
    sr[j] = fast_exp(sr[j] - new_max);
    tile_sum += sr[j];
  }
  sum = sum * correction + tile_sum;
  max = new_max;
  // acc = acc·correction + Σ_j p_j·v_j, a register's worth of dims at a time
  // so the running sums stay in registers across the keys.
  constexpr int kChunk = 16;
  int d0 = 0;
#if defined(__AVX2__)
  // In registers, each key into sum j % 4 (four chains of multiply-adds, not
  // one), the keys padded to a multiple of 4 with the last one's values at
  // probability 0, so a key lands in the same sum whatever the tile's length.
  const int padded = (n + 3) / 4 * 4;
  for (; d0 + kChunk <= head_dim; d0 += kChunk) {
    __m256 a[4][2];
    a[0][0] = _mm256_mul_ps(_mm256_loadu_ps(acc + d0), _mm256_set1_ps(correction));
    a[0][1] = _mm256_mul_ps(_mm256_loadu_ps(acc + d0 + 8), _mm256_set1_ps(correction));
    for (int i = 1; i < 4; ++i) a[i][0] = a[i][1] = _mm256_setzero_ps();
    for (int j = 0; j < padded; j += 4)
#pragma GCC unroll 4
      for (int i = 0; i < 4; ++i) {
        const __m256 p = _mm256_set1_ps(sr[j + i]);
        const float* vj = v + (j + i < n ? j + i : n - 1) * head_dim + d0;
        a[i][0] = _mm256_fmadd_ps(p, _mm256_loadu_ps(vj), a[i][0]);
        a[i][1] = _mm256_fmadd_ps(p, _mm256_loadu_ps(vj + 8), a[i][1]);
      }
    for (int h = 0; h < 2; ++h)
      _mm256_storeu_ps(acc + d0 + 8 * h, _mm256_add_ps(_mm256_add_ps(a[0][h], a[1][h]), _mm256_add_ps(a[2][h], a[3][h])));
  }
#endif
  for (; d0 + kChunk <= head_dim; d0 += kChunk) {
    float a[kChunk];
#pragma omp simd
    for (int i = 0; i < kChunk; ++i) a[i] = acc[d0 + i] * correction;
    for (int j = 0; j < n; ++j) {
      const float p = sr[j];
      const float* vj = v + j * head_dim + d0;
#pragma omp simd
      for (int i = 0; i < kChunk; ++i) a[i] += p * vj[i];
    }
#pragma omp simd
    for (int i = 0; i < kChunk; ++i) acc[d0 + i] = a[i];
  }
  for (int d = d0; d < head_dim; ++d) {
    float a = acc[d] * correction;
    for (int j = 0; j < n; ++j) a += sr[j] * v[j * head_dim + d];
    acc[d] = a;
  }
}

#if defined(__AVX512F__)
// Decode (few query rows) with explicit vectors: a tile of up to 16 keys has
// its 16 scores per row in one register, summed over the dimensions of the
// dimension-major keys with one broadcast multiply-add each, so no horizontal
// sums; the softmax update is a handful of vector ops, and P·V keeps every
// row's accumulator chunk in a register while each V chunk is loaded (and
// converted) once for all rows. Prefill (more rows) runs in blocks of up to
// kMaxRows rows: K/V are converted again per block, cheap next to the `rows`
// FMAs each converted vector feeds.
namespace decode512 {

constexpr int kMaxRows = 8;
constexpr int kMaxChunks = 16;  // head_dim up to 256

// Head sizes (in chunks of 16) with instances of their own: 16 to 128 wide,
// and 256 (Gemma's). The (rows, chunks, sets, chains) instances are large
// unrolled bodies that compile ~20x slower under ASan + UBSan than in Release,
// so sanitized builds keep the heads of real models (64, 128 and 256 wide) and
// send the others to the generic kernel below; Release tests every size
// against the scalar reference.
constexpr bool has_instance_chunks(int chunks) {
#if defined(SKIFF_SANITIZED_BUILD)
  return chunks == 4 || chunks == 8 || chunks == 16;
#else
  return (chunks >= 1 && chunks <= 8) || chunks == 16;
#endif
}

inline bool applies(const skiff::KvBlocks& kv, int head_dim) {
  if (head_dim % 16 != 0 || head_dim > 16 * kMaxChunks || !has_instance_chunks(head_dim / 16)) return false;
  return kv.element != skiff::KvElement::kQ8_0 || head_dim % 32 == 0;  // int8 groups of 32
}

// Values [16c, 16c + 16) of a cached row as floats.
__attribute__((always_inline)) inline __m512 load_chunk(const unsigned char* row, skiff::KvElement element, int c) {
  switch (element) {
    case skiff::KvElement::kF16:
      return _mm512_cvtph_ps(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(row) + c));
    case skiff::KvElement::kQ8_0: {  // half of a 32-value group: {fp16 scale, int8[32]}
      const unsigned char* group = row + (c / 2) * 34;
      const float scale = _cvtsh_ss(static_cast<unsigned short>(group[0] | (group[1] << 8)));
      const __m128i q = _mm_loadu_si128(reinterpret_cast<const __m128i*>(group + 2 + (c % 2) * 16));
      return _mm512_mul_ps(_mm512_cvtepi32_ps(_mm512_cvtepi8_epi32(q)), _mm512_set1_ps(scale));
    }
    case skiff::KvElement::kF32:
      break;
  }
  return _mm512_loadu_ps(reinterpret_cast<const float*>(row) + 16 * c);
}

// exp of 16 values (x <= 0, or -inf for 0), as fast_exp: x = n·ln2 + r, a
// polynomial for exp(r), and 2^n applied by vscalefps.
__attribute__((always_inline)) inline __m512 exp16(__m512 x) {
  x = _mm512_max_ps(x, _mm512_set1_ps(-87.0f));
  const __m512 n = _mm512_roundscale_ps(_mm512_mul_ps(x, _mm512_set1_ps(1.44269504088896341f)),
                                        _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  __m512 r = _mm512_fnmadd_ps(n, _mm512_set1_ps(0.693359375f), x);
  r = _mm512_fnmadd_ps(n, _mm512_set1_ps(-2.12194440e-4f), r);
  __m512 p = _mm512_set1_ps(1.3751408180410973e-3f);
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(8.368919081647757e-3f));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(4.1669533395562855e-2f));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.6666518437203998e-1f));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(4.9999988592958267e-1f));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.0f));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.0f));
  return _mm512_scalef_ps(p, n);
}

// `count` chunks [first, first + count) of a cached row: one switch on the
// element type per row rather than per chunk.
template <int count>
__attribute__((always_inline)) inline void load_chunks(const unsigned char* row, skiff::KvElement element, int first, __m512* out) {
  switch (element) {
    case skiff::KvElement::kF16:
#pragma GCC unroll 8
      for (int i = 0; i < count; ++i)
        out[i] = _mm512_cvtph_ps(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(row) + first + i));
      return;
    case skiff::KvElement::kQ8_0:
#pragma GCC unroll 8
      for (int i = 0; i < count; ++i) out[i] = load_chunk(row, element, first + i);
      return;
    case skiff::KvElement::kF32:
      break;
  }
#pragma GCC unroll 8
  for (int i = 0; i < count; ++i) out[i] = _mm512_loadu_ps(reinterpret_cast<const float*>(row) + 16 * (first + i));
}

// cap · tanh(x / cap) of 16 scores: tanh|y| = (1 - e) / (1 + e) with
// e = exp(-2|y|) (an argument exp16 takes), the sign put back.
__attribute__((always_inline)) inline __m512 softcap16(__m512 x, float cap) {
  const __m512 y = _mm512_mul_ps(x, _mm512_set1_ps(1.0f / cap));
  const __m512 e = exp16(_mm512_mul_ps(_mm512_abs_ps(y), _mm512_set1_ps(-2.0f)));
  const __m512 magnitude = _mm512_div_ps(_mm512_sub_ps(_mm512_set1_ps(1.0f), e), _mm512_add_ps(_mm512_set1_ps(1.0f), e));
  const __m512 sign = _mm512_and_ps(y, _mm512_castsi512_ps(_mm512_set1_epi32(static_cast<int>(0x80000000u))));
  return _mm512_mul_ps(_mm512_or_ps(magnitude, sign), _mm512_set1_ps(cap));
}

// The max of the 16 lanes, in every lane: stays in a vector, where the
// softmax update uses it, instead of a round trip through a scalar.
__attribute__((always_inline)) inline __m512 max16(__m512 x) {
  x = _mm512_max_ps(x, _mm512_shuffle_f32x4(x, x, 0x4E));  // swap 256-bit halves
  x = _mm512_max_ps(x, _mm512_shuffle_f32x4(x, x, 0xB1));  // swap 128-bit lanes in pairs
  x = _mm512_max_ps(x, _mm512_permute_ps(x, 0x4E));        // swap float pairs in each lane
  return _mm512_max_ps(x, _mm512_permute_ps(x, 0xB1));     // swap neighbours
}

// P·V register plan. An FMA waits ~4 cycles for the previous one into the
// same register, so with few group heads × chunks the keys are dealt
// round-robin to `sets` accumulator sets (summed at the end) until a decoded
// token runs about 8 chains at once. Sets depend on the group and head size,
// never on the rows of a call, so a token's sum is the same decoded alone or
// in a prefill chunk (batch invariance). Rows go in blocks of at most
// max_rows and chunks in blocks of `block`, so that rows × block × sets
// accumulators fit in 16 registers.
constexpr int pv_sets(int group, int chunks) {
  return group * chunks >= 8 ? 1 : group * chunks >= 4 ? 2 : 4;
}
// Q·K the same way: a row's dimensions are dealt round-robin to `chains`
// accumulators, enough with the group's rows for ~8 chains at once.
constexpr int qk_chains(int group) { return group >= 4 ? 2 : 4; }
// Rows a call takes at once: rows × chains Q·K accumulators in 16 registers.
constexpr int max_rows(int sets, int chains) {
  return (sets == 4 ? 4 : kMaxRows) < 16 / chains ? (sets == 4 ? 4 : kMaxRows) : 16 / chains;
}
constexpr int pv_block(int rows, int chunks, int sets) {
  for (int b = chunks; b > 1; --b)
    if (chunks % b == 0 && rows * b * sets <= 16) return b;
  return 1;
}
// Whether some group has this plan (only those are instantiated).
constexpr bool has_plan(int chunks, int sets, int chains) {
  for (int group = 1; group <= skiff::kAttentionMaxRows; ++group)
    if (pv_sets(group, chunks) == sets && qk_chains(group) == chains) return true;
  return false;
}

// A tile: n <= 16 keys at positions [start, start + n), within one block:
// its keys are those at `slot` onwards of the block's dimension-major key
// array (kv_row.h), its values the rows from `values` on.
struct TileAt {
  int start, n, slot;
  const unsigned char* keys;
  const unsigned char* values;
};

__attribute__((always_inline)) inline TileAt tile_at(const skiff::KvBlocks& kv, int start, int end, unsigned long rb) {
  const int slot = start % kv.block_size;
  int n = kv.block_size - slot;
  n = n < 16 ? n : 16;
  n = n < end - start ? n : end - start;
  const unsigned long offset = static_cast<unsigned long>(kv.blocks[start / kv.block_size]) * kv.block_stride;
  return {start, n, slot, kv.k_base + offset, kv.v_base + offset + slot * rb};
}

// The tile's keys of dimensions [16c, 16c + 16): for each, a vector of the
// 16 keys' values (zeros past n), handed to use(d, vector) in order.
template <class Use>
__attribute__((always_inline)) inline void key_chunk(const TileAt& t, skiff::KvElement element, int block_size,
                                                    int head_dim, int c, Use&& use) {
  const __mmask16 live = static_cast<__mmask16>((1u << t.n) - 1);
  const unsigned long b = static_cast<unsigned long>(block_size);
  switch (element) {
    case skiff::KvElement::kF16: {
      const unsigned short* k = reinterpret_cast<const unsigned short*>(t.keys) + t.slot;
#pragma GCC unroll 16
      for (int i = 0; i < 16; ++i)
        use(16 * c + i, _mm512_cvtph_ps(_mm256_maskz_loadu_epi16(live, k + (16 * c + i) * b)));
      return;
    }
    case skiff::KvElement::kQ8_0: {  // half of a 32-dimension group
      const unsigned char* region = t.keys + (c / 2) * b * 34;
      const __m512 scales = _mm512_cvtph_ps(
          _mm256_maskz_loadu_epi16(live, reinterpret_cast<const unsigned short*>(region) + t.slot));
      const unsigned char* q = region + 2 * b + (c % 2) * 16 * b + t.slot;
#pragma GCC unroll 16
      for (int i = 0; i < 16; ++i)
        use(16 * c + i, _mm512_mul_ps(_mm512_cvtepi32_ps(_mm512_cvtepi8_epi32(_mm_maskz_loadu_epi8(live, q + i * b))),
                                      scales));
      return;
    }
    case skiff::KvElement::kF32: {
      const float* k = reinterpret_cast<const float*>(t.keys) + t.slot;
#pragma GCC unroll 16
      for (int i = 0; i < 16; ++i) use(16 * c + i, _mm512_maskz_loadu_ps(live, k + (16 * c + i) * b));
      return;
    }
  }
  (void)head_dim;
}

// Scores of a tile, one lane per key: each row's dimensions dealt round-robin
// to `chains` accumulators, summed in a fixed order at the end.
template <int rows, int chunks, int chains>
__attribute__((always_inline)) inline void tile_scores(const TileAt& t, skiff::KvElement element, int block_size,
                                                      const float* q_scaled, __m512* scores) {
  constexpr int head_dim = 16 * chunks;
  __m512 acc[chains][rows];
#pragma GCC unroll 4
  for (int c = 0; c < chains; ++c)
#pragma GCC unroll 8
    for (int r = 0; r < rows; ++r) acc[c][r] = _mm512_setzero_ps();
#pragma GCC unroll 1
  for (int c = 0; c < chunks; ++c)
    key_chunk(t, element, block_size, head_dim, c, [&](int d, __m512 k) __attribute__((always_inline)) {
#pragma GCC unroll 8
      for (int r = 0; r < rows; ++r)
        acc[d % chains][r] = _mm512_fmadd_ps(_mm512_set1_ps(q_scaled[r * head_dim + d]), k, acc[d % chains][r]);
    });
#pragma GCC unroll 8
  for (int r = 0; r < rows; ++r) {
    if constexpr (chains == 1) scores[r] = acc[0][r];
    else if constexpr (chains == 2) scores[r] = _mm512_add_ps(acc[0][r], acc[1][r]);
    else scores[r] = _mm512_add_ps(_mm512_add_ps(acc[0][r], acc[1][r]), _mm512_add_ps(acc[2][r], acc[3][r]));
  }
}

// Online-softmax update of each row with its tile of scores: probabilities
// into probs, the factor for the old accumulator into correction, the sum of
// probabilities kept as a vector (reduced once, at the end). The rows are
// rows [row0, row0 + rows) of qs.
template <int rows>
__attribute__((always_inline)) inline void tile_softmax(const skiff::AttentionQueries& qs, int row0,
                                                       const TileAt& t, const __m512* row_scores, float* max,
                                                       __m512* sum, float (*probs)[16], __m512* correction) {
#pragma GCC unroll 8
  for (int r = 0; r < rows; ++r) {
    const int visible = visible_keys(qs, row0 + r, t.n, t.start);
    const int hidden = hidden_keys(qs, row0 + r, t.n, t.start);
    const __mmask16 live = static_cast<__mmask16>(((1u << visible) - 1) & ~((1u << hidden) - 1));
    __m512 scores = row_scores[r];
    if (qs.softcap > 0) scores = softcap16(scores, qs.softcap);
    const __m512 s = _mm512_mask_mov_ps(_mm512_set1_ps(kNegInf), live, scores);
    __m512 m = _mm512_set1_ps(max[r]);
    correction[r] = _mm512_set1_ps(1.0f);
    // Past the first tiles the running max seldom moves: find the new max
    // and rescale only when some score exceeds it.
    if (_mm512_cmp_ps_mask(s, m, _CMP_GT_OQ)) {
      const __m512 new_max = _mm512_max_ps(max16(s), m);
      correction[r] = exp16(_mm512_sub_ps(m, new_max));  // ~1e-38 from -inf, applied to zeros
      m = new_max;
      max[r] = _mm512_cvtss_f32(m);
    }
    if (max[r] == kNegInf) {  // nothing visible yet
      _mm512_store_ps(probs[r], _mm512_setzero_ps());
      continue;
    }
    const __m512 p = _mm512_maskz_mov_ps(live, exp16(_mm512_sub_ps(s, m)));
    sum[r] = _mm512_fmadd_ps(sum[r], correction[r], p);
    _mm512_store_ps(probs[r], p);
  }
}

// acc = acc·correction + P·V, keys dealt to accumulator sets. n is padded to
// a multiple of sets with the last key's values (finite) at probability 0.
template <int rows, int chunks, int sets>
__attribute__((always_inline)) inline void tile_pv(const TileAt& t, skiff::KvElement element, unsigned long rb,
                                                  const float (*probs)[16], const __m512* correction,
                                                  float* acc) {
  constexpr int head_dim = 16 * chunks, block = pv_block(rows, chunks, sets);
  const int padded = (t.n + sets - 1) / sets * sets;
  for (int c0 = 0; c0 < chunks; c0 += block) {
    __m512 a[sets][rows][block];
#pragma GCC unroll 8
    for (int r = 0; r < rows; ++r)
#pragma GCC unroll 8
      for (int i = 0; i < block; ++i) {
        a[0][r][i] = _mm512_mul_ps(_mm512_loadu_ps(acc + r * head_dim + 16 * (c0 + i)), correction[r]);
#pragma GCC unroll 4
        for (int s = 1; s < sets; ++s) a[s][r][i] = _mm512_setzero_ps();
      }
    for (int j = 0; j < padded; j += sets) {
#pragma GCC unroll 4
      for (int s = 0; s < sets; ++s) {
        __m512 v[block];
        load_chunks<block>(t.values + (j + s < t.n ? j + s : t.n - 1) * rb, element, c0, v);
#pragma GCC unroll 8
        for (int r = 0; r < rows; ++r)
#pragma GCC unroll 8
          for (int i = 0; i < block; ++i)
            a[s][r][i] = _mm512_fmadd_ps(_mm512_set1_ps(probs[r][j + s]), v[i], a[s][r][i]);
      }
    }
#pragma GCC unroll 8
    for (int r = 0; r < rows; ++r)
#pragma GCC unroll 8
      for (int i = 0; i < block; ++i) {
#pragma GCC unroll 4
        for (int s = 1; s < sets; ++s) a[0][r][i] = _mm512_add_ps(a[0][r][i], a[s][r][i]);
        _mm512_storeu_ps(acc + r * head_dim + 16 * (c0 + i), a[0][r][i]);
      }
  }
}

// Positions [begin, end) for query rows [row0, row0 + rows) of head_dim =
// 16 × chunks with `sets` P·V accumulator sets and `chains` Q·K ones
// (template arguments, so per-row and per-chunk values live in registers);
// q_scaled, max, sum and acc point at row row0.
// Software-pipelined: the next tile's scores are computed between this
// tile's softmax (a long dependency chain) and its P·V, so they fill the
// wait rather than queue behind it.
template <int rows, int chunks, int sets, int chains>
void attend(const skiff::AttentionQueries& qs, int row0, const skiff::KvBlocks& kv, int begin, int end,
            const float* q_scaled, float* max, float* sum, float* acc) {
  constexpr int head_dim = 16 * chunks;
  const unsigned long rb = row_bytes(kv.element, head_dim);
  __m512 scores[rows];
  alignas(64) float probs[rows][16];
  __m512 correction[rows];  // exp(old max - new max), in every lane
  __m512 sum_v[rows];
#pragma GCC unroll 8
  for (int r = 0; r < rows; ++r) sum_v[r] = _mm512_zextps128_ps512(_mm_set_ss(sum[r]));
  TileAt t = tile_at(kv, begin, end, rb);
  tile_scores<rows, chunks, chains>(t, kv.element, kv.block_size, q_scaled, scores);
  for (;;) {
    tile_softmax<rows>(qs, row0, t, scores, max, sum_v, probs, correction);
    const int next = t.start + t.n;
    TileAt u{};
    if (next < end) {
      u = tile_at(kv, next, end, rb);
      tile_scores<rows, chunks, chains>(u, kv.element, kv.block_size, q_scaled, scores);
    }
    tile_pv<rows, chunks, sets>(t, kv.element, rb, probs, correction, acc);
    if (next >= end) break;
    t = u;
  }
#pragma GCC unroll 8
  for (int r = 0; r < rows; ++r) sum[r] = _mm512_reduce_add_ps(sum_v[r]);
}

using AttendFn = void (*)(const skiff::AttentionQueries&, int, const skiff::KvBlocks&, int, int, const float*,
                          float*, float*, float*);

// attend for rows in [1, max_rows(sets, chains)], chunks in [1, kMaxChunks]
// and the sets and chains some group gives them.
template <int rows = 1, int chunks = 1, int sets = 1, int chains = 2>
AttendFn pick_attend(int r, int c, int s, int ch) {
  if constexpr (rows <= max_rows(sets, chains) && has_plan(chunks, sets, chains) && has_instance_chunks(chunks))
    if (r == rows && c == chunks && s == sets && ch == chains) return &attend<rows, chunks, sets, chains>;
  if constexpr (chains < 4) return pick_attend<rows, chunks, sets, chains * 2>(r, c, s, ch);
  else if constexpr (sets < 4) return pick_attend<rows, chunks, sets * 2, 2>(r, c, s, ch);
  else if constexpr (chunks < kMaxChunks) return pick_attend<rows, chunks + 1, 1, 2>(r, c, s, ch);
  else if constexpr (rows < kMaxRows) return pick_attend<rows + 1, 1, 1, 2>(r, c, s, ch);
  else return nullptr;
}

}  // namespace decode512
#endif

inline void partial(const skiff::AttentionQueries& qs, const skiff::KvBlocks& kv, int pos_begin,
                    int pos_end, int head_dim, float scale, const skiff::AttentionPartial& out) {
  const int rows = qs.n_q * qs.group;
  float* k = static_cast<float*>(skiff::kernel_scratch(
      sizeof(float) * (2 * skiff::kAttentionMaxHeadDim * kTile + rows * kTile)));
  float* v = k + skiff::kAttentionMaxHeadDim * kTile;
  float* s = v + skiff::kAttentionMaxHeadDim * kTile;
  for (int i = 0; i < rows * head_dim; ++i) out.acc[i] = 0.0f;
  for (int r = 0; r < rows; ++r) {
    out.max[r] = kNegInf;
    out.sum[r] = 0.0f;
  }
  const int last_visible = qs.first_pos + qs.n_q;  // exclusive
  int end = pos_end < kv.n_ctx ? pos_end : kv.n_ctx;
  end = end < last_visible ? end : last_visible;
#if defined(__AVX512F__)
  if (decode512::applies(kv, head_dim)) {
    float* q_scaled = k;  // the queries times the score scale, [rows][head_dim]
    for (int r = 0; r < rows; ++r)
      for (int d = 0; d < head_dim; ++d) q_scaled[r * head_dim + d] = query_row(qs, r, head_dim)[d] * scale;
    // More rows than registers hold (prefill) go in blocks of equal size;
    // each block stops at its own last row's position, so a causal chunk
    // skips the keys none of its rows sees.
    const int sets = decode512::pv_sets(qs.group, head_dim / 16), chains = decode512::qk_chains(qs.group);
    const int max_rows = decode512::max_rows(sets, chains);
    const int blocks = (rows + max_rows - 1) / max_rows;
    const int block_rows = (rows + blocks - 1) / blocks;
    for (int r0 = 0; r0 < rows; r0 += block_rows) {
      const int n = rows - r0 < block_rows ? rows - r0 : block_rows;
      const int last = qs.first_pos + (r0 + n - 1) / qs.group + 1;
      const int block_end = end < last ? end : last;
      const int block_begin = first_tile(qs, r0, pos_begin, kv.block_size);
      if (block_begin < block_end)
        decode512::pick_attend(n, head_dim / 16, sets, chains)(qs, r0, kv, block_begin, block_end,
                                                               q_scaled + r0 * head_dim, out.max + r0, out.sum + r0,
                                                               out.acc + r0 * head_dim);
    }
    return;
  }
#endif
  for (int start = first_tile(qs, 0, pos_begin, kv.block_size); start < end;) {
    int n = kv.block_size - start % kv.block_size;  // a tile stays inside one block
    n = n < kTile ? n : kTile;
    n = n < end - start ? n : end - start;
    const Tile tile = load_tile(kv, start, n, head_dim, k, v);
    tile_scores(qs, rows, tile.k, n, start, head_dim, scale, s);
    for (int r = 0; r < rows; ++r)
      tile_update(s + r * kTile, tile.v, n, head_dim, out.max[r], out.sum[r], out.acc + r * head_dim);
    start += n;
  }
}

}  // namespace flash
