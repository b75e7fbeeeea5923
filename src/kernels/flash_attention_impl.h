// The flash-attention kernel body, written as plain loops that the compiler
// vectorizes. Included by flash_attention_{scalar,avx2,avx512}.cpp inside a
// per-ISA namespace, so each copy is compiled with its own flags and the
// copies cannot be merged by the linker. No STL here (see CMakeLists.txt).
// Expects skiff::AttentionQueries, KvBlocks, AttentionPartial and
// kernel_scratch declared, and <immintrin.h> and kernels/kv_row.h included.

#include "kernels/vec_math.h"

namespace flash {

constexpr int kTile = 32;  // keys per tile: K and V tiles of 128-dim heads fit L1
constexpr int kFewRows = 8;  // up to this many query rows, keys are not transposed
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

// One cached row of head_dim elements as floats.
inline void load_row(const unsigned char* src, skiff::KvElement element, int head_dim, float* dst) {
  switch (element) {
    case skiff::KvElement::kF32: {
      const float* s = reinterpret_cast<const float*>(src);
#pragma omp simd
      for (int d = 0; d < head_dim; ++d) dst[d] = s[d];
      break;
    }
    case skiff::KvElement::kF16: {
      const unsigned short* s = reinterpret_cast<const unsigned short*>(src);
      int d = 0;
#if defined(__AVX512F__)
      for (; d + 16 <= head_dim; d += 16)
        _mm512_storeu_ps(dst + d, _mm512_cvtph_ps(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(s + d))));
#elif defined(__F16C__)
      for (; d + 8 <= head_dim; d += 8)
        _mm256_storeu_ps(dst + d, _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(s + d))));
#endif
      for (; d < head_dim; ++d) dst[d] = half_to_float(s[d]);
      break;
    }
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

// Where a tile's keys and values are read from: [n][head_dim] float rows, or
// keys transposed ([head_dim][kTile]).
struct Tile {
  const float* k;
  const float* v;
};

// Keys of positions [start, start+n) (within one block) into k and values
// into vt ([kTile][head_dim]). Keys are transposed ([head_dim][kTile], zero
// past n) when many query rows will use them, so scores come out without
// horizontal sums; few rows (decode) read them as rows — in place when the
// cache holds floats.
inline Tile load_tile(const skiff::KvBlocks& kv, int start, int n, int head_dim, bool transpose_k,
                      float* k, float* vt, float* row) {
  const unsigned long rb = row_bytes(kv.element, head_dim);
  const unsigned long block_offset = static_cast<unsigned long>(kv.blocks[start / kv.block_size]) * kv.block_stride;
  const int first_row = start % kv.block_size;
  if (kv.element == skiff::KvElement::kF32 && !transpose_k)
    return {reinterpret_cast<const float*>(kv.k_base + block_offset + first_row * rb),
            reinterpret_cast<const float*>(kv.v_base + block_offset + first_row * rb)};
  for (int j = 0; j < n; ++j) {
    const unsigned char* key = kv.k_base + block_offset + (first_row + j) * rb;
    if (transpose_k) {
      load_row(key, kv.element, head_dim, row);
      for (int d = 0; d < head_dim; ++d) k[d * kTile + j] = row[d];
    } else {
      load_row(key, kv.element, head_dim, k + j * head_dim);
    }
    load_row(kv.v_base + block_offset + (first_row + j) * rb, kv.element, head_dim, vt + j * head_dim);
  }
  if (transpose_k)
    for (int j = n; j < kTile; ++j)
      for (int d = 0; d < head_dim; ++d) k[d * kTile + j] = 0.0f;
  return {k, vt};
}

// Asks for the K and V rows of a tile a few tiles ahead: blocks are
// scattered in the pool, so the hardware prefetcher cannot see where the next
// one is, and one tile of compute is too short to hide a memory access.
constexpr int kPrefetchTiles = 4;
inline void prefetch_tile(const skiff::KvBlocks& kv, int start, int end, int head_dim) {
  if (start >= end) return;
  int n = kv.block_size - start % kv.block_size;
  n = n < kTile ? n : kTile;
  n = n < end - start ? n : end - start;
  const unsigned long rb = row_bytes(kv.element, head_dim);
  const unsigned long offset = static_cast<unsigned long>(kv.blocks[start / kv.block_size]) * kv.block_stride +
                               (start % kv.block_size) * rb;
  for (unsigned long b = 0; b < n * rb; b += 64) {
    __builtin_prefetch(kv.k_base + offset + b);
    __builtin_prefetch(kv.v_base + offset + b);
  }
}

// Masks keys past each row's position in its tile of scores.
inline void mask_scores(const skiff::AttentionQueries& qs, int r, int n, int tile_start, float* sr) {
    const int t = r / qs.group;
    int visible = qs.first_pos + t - tile_start + 1;  // keys this row may see
    visible = visible < 0 ? 0 : (visible > n ? n : visible);
    for (int j = visible; j < kTile; ++j) sr[j] = kNegInf;
}

// Dot product of two float rows. Explicit vectors where the ISA has them: the
// compiler's own reduction of an `omp simd` loop goes through memory.
inline float dot_row(const float* a, const float* b, int n) {
  int d = 0;
  float sum = 0.0f;
#if defined(__AVX512F__)
  __m512 acc = _mm512_setzero_ps();
  for (; d + 16 <= n; d += 16) acc = _mm512_fmadd_ps(_mm512_loadu_ps(a + d), _mm512_loadu_ps(b + d), acc);
  sum = _mm512_reduce_add_ps(acc);
#elif defined(__AVX2__)
  __m256 acc = _mm256_setzero_ps();
  for (; d + 8 <= n; d += 8) acc = _mm256_fmadd_ps(_mm256_loadu_ps(a + d), _mm256_loadu_ps(b + d), acc);
  __m128 s4 = _mm_add_ps(_mm256_castps256_ps128(acc), _mm256_extractf128_ps(acc, 1));
  s4 = _mm_add_ps(s4, _mm_movehl_ps(s4, s4));
  s4 = _mm_add_ss(s4, _mm_movehdup_ps(s4));
  sum = _mm_cvtss_f32(s4);
#endif
  for (; d < n; ++d) sum += a[d] * b[d];
  return sum;
}

inline const float* query_row(const skiff::AttentionQueries& qs, int r, int head_dim) {
  return qs.q + (r / qs.group) * qs.q_stride + (r % qs.group) * head_dim;
}

// Scores of the query rows against one tile of n keys at positions
// [tile_start, tile_start + n), from transposed keys kt ([head_dim][kTile]).
inline void tile_scores(const skiff::AttentionQueries& qs, int rows, const float* kt, int n,
                        int tile_start, int head_dim, float scale, float* s) {
  for (int r = 0; r < rows; ++r) {
    const float* q = query_row(qs, r, head_dim);
    float* sr = s + r * kTile;
#pragma omp simd
    for (int j = 0; j < kTile; ++j) sr[j] = 0.0f;
    for (int d = 0; d < head_dim; ++d) {
      const float qd = q[d] * scale;
      const float* ktd = kt + d * kTile;
#pragma omp simd
      for (int j = 0; j < kTile; ++j) sr[j] += qd * ktd[j];
    }
    mask_scores(qs, r, n, tile_start, sr);
  }
}

// The same from keys as rows ([kTile][head_dim]): one dot product per key.
inline void tile_scores_by_row(const skiff::AttentionQueries& qs, int rows, const float* k, int n,
                               int tile_start, int head_dim, float scale, float* s) {
  for (int r = 0; r < rows; ++r) {
    const float* q = query_row(qs, r, head_dim);
    float* sr = s + r * kTile;
    for (int j = 0; j < n; ++j) sr[j] = dot_row(q, k + j * head_dim, head_dim) * scale;
    mask_scores(qs, r, n, tile_start, sr);
  }
}

// Online-softmax update of one row with its tile of scores (turned into
// probabilities in place), then acc = acc·correction + p·V.
inline void tile_update(float* sr, const float* vt, int n, int head_dim, float& max, float& sum,
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
  for (; d0 + kChunk <= head_dim; d0 += kChunk) {
    float a[kChunk];
#pragma omp simd
    for (int i = 0; i < kChunk; ++i) a[i] = acc[d0 + i] * correction;
    for (int j = 0; j < n; ++j) {
      const float p = sr[j];
      const float* vj = vt + j * head_dim + d0;
#pragma omp simd
      for (int i = 0; i < kChunk; ++i) a[i] += p * vj[i];
    }
#pragma omp simd
    for (int i = 0; i < kChunk; ++i) acc[d0 + i] = a[i];
  }
  for (int d = d0; d < head_dim; ++d) {
    float a = acc[d] * correction;
    for (int j = 0; j < n; ++j) a += sr[j] * vt[j * head_dim + d];
    acc[d] = a;
  }
}

#if defined(__AVX512F__)
// Decode (few query rows) with explicit vectors: a tile of up to 16 keys has
// its 16 scores per row in one register, so the softmax update is a handful
// of vector ops, and P·V keeps every row's accumulator chunk in a register
// while each V chunk is loaded (and converted) once for all rows.
namespace decode512 {

constexpr int kMaxRows = 8;
constexpr int kMaxChunks = 8;  // head_dim up to 128

inline bool applies(const skiff::KvBlocks& kv, int rows, int head_dim) {
  if (rows > kMaxRows || head_dim % 16 != 0 || head_dim > 16 * kMaxChunks) return false;
  return kv.element != skiff::KvElement::kQ8_0 || head_dim % 32 == 0;  // int8 groups of 32
}

// Values [16c, 16c + 16) of a cached row as floats.
inline __m512 load_chunk(const unsigned char* row, skiff::KvElement element, int c) {
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
inline __m512 exp16(__m512 x) {
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

// One tile of n <= 16 keys at positions [start, start + n), within one block,
// for `rows` query rows (a template argument, so per-row values live in
// registers rather than in an indexed array in memory).
template <int rows>
inline void tile_rows(const skiff::AttentionQueries& qs, const skiff::KvBlocks& kv, int start, int n,
                      int head_dim, const float* q_scaled, float* max, float* sum, float* acc) {
  const int chunks = head_dim / 16;
  const unsigned long rb = row_bytes(kv.element, head_dim);
  const unsigned long offset = static_cast<unsigned long>(kv.blocks[start / kv.block_size]) * kv.block_stride +
                               (start % kv.block_size) * rb;
  const unsigned char* keys = kv.k_base + offset;
  const unsigned char* values = kv.v_base + offset;
  alignas(64) float scores[rows][16];
  for (int j = 0; j < n; ++j) {
    __m512 k[kMaxChunks];
    k[0] = load_chunk(keys + j * rb, kv.element, 0);  // chunks >= 1: applies() checked
#pragma GCC unroll 8
    for (int c = 1; c < chunks; ++c) k[c] = load_chunk(keys + j * rb, kv.element, c);
#pragma GCC unroll 8
    for (int r = 0; r < rows; ++r) {
      const float* q = q_scaled + r * head_dim;
      __m512 t = _mm512_mul_ps(_mm512_loadu_ps(q), k[0]);
      for (int c = 1; c < chunks; ++c) t = _mm512_fmadd_ps(_mm512_loadu_ps(q + 16 * c), k[c], t);
      scores[r][j] = _mm512_reduce_add_ps(t);
    }
  }
  alignas(64) float probs[rows][16];
  float correction[rows];
  for (int r = 0; r < rows; ++r) {
    int visible = qs.first_pos + r / qs.group - start + 1;
    visible = visible < 0 ? 0 : (visible > n ? n : visible);
    const __mmask16 live = static_cast<__mmask16>((1u << visible) - 1);
    const __m512 s = _mm512_mask_loadu_ps(_mm512_set1_ps(kNegInf), live, scores[r]);
    const float tile_max = visible ? _mm512_mask_reduce_max_ps(live, s) : kNegInf;
    const float new_max = tile_max > max[r] ? tile_max : max[r];
    if (new_max == kNegInf) {  // nothing visible yet
      correction[r] = 1.0f;
      _mm512_store_ps(probs[r], _mm512_setzero_ps());
      continue;
    }
    correction[r] = fast_exp(max[r] - new_max);
    const __m512 p = _mm512_maskz_mov_ps(live, exp16(_mm512_sub_ps(s, _mm512_set1_ps(new_max))));
    sum[r] = sum[r] * correction[r] + _mm512_reduce_add_ps(p);
    max[r] = new_max;
    _mm512_store_ps(probs[r], p);
  }
  for (int c = 0; c < chunks; ++c) {
    __m512 a[rows];
#pragma GCC unroll 8
    for (int r = 0; r < rows; ++r)
      a[r] = _mm512_mul_ps(_mm512_loadu_ps(acc + r * head_dim + 16 * c), _mm512_set1_ps(correction[r]));
    for (int j = 0; j < n; ++j) {
      const __m512 v = load_chunk(values + j * rb, kv.element, c);
  #pragma GCC unroll 8
    for (int r = 0; r < rows; ++r) a[r] = _mm512_fmadd_ps(_mm512_set1_ps(probs[r][j]), v, a[r]);
    }
#pragma GCC unroll 8
    for (int r = 0; r < rows; ++r) _mm512_storeu_ps(acc + r * head_dim + 16 * c, a[r]);
  }
}

inline void tile(const skiff::AttentionQueries& qs, int rows, const skiff::KvBlocks& kv, int start,
                 int n, int head_dim, const float* q_scaled, float* max, float* sum, float* acc) {
  switch (rows) {
    case 1: return tile_rows<1>(qs, kv, start, n, head_dim, q_scaled, max, sum, acc);
    case 2: return tile_rows<2>(qs, kv, start, n, head_dim, q_scaled, max, sum, acc);
    case 3: return tile_rows<3>(qs, kv, start, n, head_dim, q_scaled, max, sum, acc);
    case 4: return tile_rows<4>(qs, kv, start, n, head_dim, q_scaled, max, sum, acc);
    case 5: return tile_rows<5>(qs, kv, start, n, head_dim, q_scaled, max, sum, acc);
    case 6: return tile_rows<6>(qs, kv, start, n, head_dim, q_scaled, max, sum, acc);
    case 7: return tile_rows<7>(qs, kv, start, n, head_dim, q_scaled, max, sum, acc);
    default: return tile_rows<8>(qs, kv, start, n, head_dim, q_scaled, max, sum, acc);
  }
}

}  // namespace decode512
#endif

inline void partial(const skiff::AttentionQueries& qs, const skiff::KvBlocks& kv, int pos_begin,
                    int pos_end, int head_dim, float scale, const skiff::AttentionPartial& out) {
  const int rows = qs.n_q * qs.group;
  float* kt = static_cast<float*>(skiff::kernel_scratch(
      sizeof(float) * (2 * skiff::kAttentionMaxHeadDim * kTile + rows * kTile + head_dim)));
  float* vt = kt + skiff::kAttentionMaxHeadDim * kTile;
  float* s = vt + skiff::kAttentionMaxHeadDim * kTile;
  float* row = s + rows * kTile;
  for (int i = 0; i < rows * head_dim; ++i) out.acc[i] = 0.0f;
  for (int r = 0; r < rows; ++r) {
    out.max[r] = kNegInf;
    out.sum[r] = 0.0f;
  }
  const int last_visible = qs.first_pos + qs.n_q;  // exclusive
  int end = pos_end < kv.n_ctx ? pos_end : kv.n_ctx;
  end = end < last_visible ? end : last_visible;
  const bool transpose_k = rows > kFewRows;
#if defined(__AVX512F__)
  if (decode512::applies(kv, rows, head_dim)) {
    float* q_scaled = kt;  // the queries times the score scale, [rows][head_dim]
    for (int r = 0; r < rows; ++r)
      for (int d = 0; d < head_dim; ++d) q_scaled[r * head_dim + d] = query_row(qs, r, head_dim)[d] * scale;
    for (int start = pos_begin; start < end;) {
      int n = kv.block_size - start % kv.block_size;
      n = n < 16 ? n : 16;
      n = n < end - start ? n : end - start;
      prefetch_tile(kv, start + kPrefetchTiles * n, end, head_dim);
      decode512::tile(qs, rows, kv, start, n, head_dim, q_scaled, out.max, out.sum, out.acc);
      start += n;
    }
    return;
  }
#endif
  for (int start = pos_begin; start < end;) {
    int n = kv.block_size - start % kv.block_size;  // a tile stays inside one block
    n = n < kTile ? n : kTile;
    n = n < end - start ? n : end - start;
    prefetch_tile(kv, start + kPrefetchTiles * n, end, head_dim);
    const Tile tile = load_tile(kv, start, n, head_dim, transpose_k, kt, vt, row);
    if (transpose_k) tile_scores(qs, rows, tile.k, n, start, head_dim, scale, s);
    else tile_scores_by_row(qs, rows, tile.k, n, start, head_dim, scale, s);
    for (int r = 0; r < rows; ++r)
      tile_update(s + r * kTile, tile.v, n, head_dim, out.max[r], out.sum[r], out.acc + r * head_dim);
    start += n;
  }
}

}  // namespace flash
