// The AVX-512 flash-attention tiles (decode512), included by
// flash_attention_impl.h inside its per-ISA `flash` namespace after the
// helpers they use (row_bytes, visible_keys, hidden_keys, kNegInf); compiled
// only where __AVX512F__ is defined. No STL here (see CMakeLists.txt).
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
  const int pv_rows = sets == 4 ? 4 : kMaxRows;
  return pv_rows < 16 / chains ? pv_rows : 16 / chains;
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

// A tile: n <= 16 keys at positions [start, start + n), within one block of
// block_size: its keys are those at `slot` onwards of the block's
// dimension-major key array (kv_row.h), its values the rows from `values` on.
struct TileAt {
  int start, n, slot, block_size;
  const unsigned char* keys;
  const unsigned char* values;
};

__attribute__((always_inline)) inline TileAt tile_at(const skiff::KvBlocks& kv, int start, int end, unsigned long rb) {
  const int slot = start % kv.block_size;
  int n = kv.block_size - slot;
  n = n < 16 ? n : 16;
  n = n < end - start ? n : end - start;
  const unsigned long offset = static_cast<unsigned long>(kv.blocks[start / kv.block_size]) * kv.block_stride;
  return {start, n, slot, kv.block_size, kv.k_base + offset, kv.v_base + offset + slot * rb};
}

// The tile's keys of dimensions [16c, 16c + 16): for each, a vector of the
// 16 keys' values (zeros past n), handed to use(d, vector) in order.
template <class Use>
__attribute__((always_inline)) inline void key_chunk(const TileAt& t, skiff::KvElement element, int c,
                                                    Use&& use) {
  const __mmask16 live = static_cast<__mmask16>((1u << t.n) - 1);
  const unsigned long b = static_cast<unsigned long>(t.block_size);
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
}

// Scores of a tile, one lane per key: each row's dimensions dealt round-robin
// to `chains` accumulators, summed in a fixed order at the end.
template <int rows, int chunks, int chains>
__attribute__((always_inline)) inline void tile_scores(const TileAt& t, skiff::KvElement element,
                                                      const float* q_scaled, __m512* scores) {
  constexpr int head_dim = 16 * chunks;
  __m512 acc[chains][rows];
#pragma GCC unroll 4
  for (int c = 0; c < chains; ++c)
#pragma GCC unroll 8
    for (int r = 0; r < rows; ++r) acc[c][r] = _mm512_setzero_ps();
#pragma GCC unroll 1
  for (int c = 0; c < chunks; ++c)
    key_chunk(t, element, c, [&](int d, __m512 k) __attribute__((always_inline)) {
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
  tile_scores<rows, chunks, chains>(t, kv.element, q_scaled, scores);
  for (;;) {
    tile_softmax<rows>(qs, row0, t, scores, max, sum_v, probs, correction);
    const int next = t.start + t.n;
    TileAt u{};
    if (next < end) {
      u = tile_at(kv, next, end, rb);
      tile_scores<rows, chunks, chains>(u, kv.element, q_scaled, scores);
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
