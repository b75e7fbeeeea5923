// The flash-attention kernel body, written as plain loops that the compiler
// vectorizes. Included by flash_attention_{scalar,avx2,avx512}.cpp inside a
// per-ISA namespace, so each copy is compiled with its own flags and the
// copies cannot be merged by the linker. No STL here (see CMakeLists.txt).
// Expects skiff::AttentionQueries, KvBlocks, AttentionPartial and
// kernel_scratch declared, kernels/attention/kv_row.h included, and on x86
// <immintrin.h>; its x86 paths are compiled only by the files of kernels/x86/.

#include "kernels/vec_math.h"

#if defined(__AVX512F__)
#include "kernels/x86/avx512/avx512_header_warnings.h"
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
  const unsigned long rb = skiff::kv_row_bytes(kv.element, head_dim);
  const unsigned long block_offset = static_cast<unsigned long>(kv.blocks[start / kv.block_size]) * kv.block_stride;
  const int first_row = start % kv.block_size;
  load_key_columns(kv.k_base + block_offset, kv.element, head_dim, kv.block_size, first_row, n, k);
  if (kv.element == skiff::KvElement::kF32)
    return {k, reinterpret_cast<const float*>(kv.v_base + block_offset + first_row * rb)};
  for (int j = 0; j < n; ++j)
    load_row(kv.v_base + block_offset + (first_row + j) * rb, kv.element, head_dim, v + j * head_dim);
  return {k, v};
}

// No software prefetch here: asking for a tile's K/V lines a few tiles ahead
// made the kernels read K/V from memory far below their in-cache speed on Zen 4
// when a sequence's blocks lie in pool order (figures:
// docs/notes/kernel-design-figures.md). (The register kernel asks for a block
// only across a jump: lanes::prefetch_if_jump.)

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

// The register-tiled kernel exists for x86 only (its vector operations are
// the one ISA-specific part); other ISAs run the tiles above.
#if defined(__AVX2__)
#include "kernels/x86/flash_attention_vec.h"  // before the kernel that uses its Vec
#include "kernels/x86/flash_attention_lanes.h"
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
#if defined(SKIFF_LANES_KERNEL)
  if (lanes::applies(kv, head_dim)) {
    static_assert(skiff::kAttentionMaxRows <= kTile, "q_scaled fits the k scratch");
    float* q_scaled = k;      // the queries times the score scale, [rows][head_dim]
    float* partial_keys = v;  // without masked loads, a partial tile's keys
    for (int r = 0; r < rows; ++r)
      for (int d = 0; d < head_dim; ++d) q_scaled[r * head_dim + d] = query_row(qs, r, head_dim)[d] * scale;
    // More rows than registers hold (prefill) go in blocks of equal size;
    // each block stops at its own last row's position, so a causal chunk
    // skips the keys none of its rows sees.
    const int sets = lanes::pv_sets(qs.group, head_dim / lanes::kLanes), chains = lanes::qk_chains(qs.group);
    const int max_rows = lanes::max_rows(sets, chains);
    const int blocks = (rows + max_rows - 1) / max_rows;
    const int block_rows = (rows + blocks - 1) / blocks;
    for (int r0 = 0; r0 < rows; r0 += block_rows) {
      const int n = rows - r0 < block_rows ? rows - r0 : block_rows;
      const int last = qs.first_pos + (r0 + n - 1) / qs.group + 1;
      const int block_end = end < last ? end : last;
      const int block_begin = first_tile(qs, r0, pos_begin, kv.block_size);
      if (block_begin < block_end)
        lanes::pick_attend(n, head_dim / lanes::kLanes, sets, chains)(qs, r0, kv, block_begin, block_end,
                                                           q_scaled + r0 * head_dim, out.max + r0, out.sum + r0,
                                                           out.acc + r0 * head_dim, partial_keys);
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
