// The keys-in-lanes flash-attention tiles, included by flash_attention_impl.h
// inside its per-ISA `flash` namespace after the helpers they use
// (load_key_columns, visible_keys, hidden_keys, kTile, kNegInf) and
// flash_attention_vec.h's Vec; compiled where Vec exists (AVX-512: 16 lanes,
// AVX2: 8). No STL here (see CMakeLists.txt).
#if defined(SKIFF_LANES_KERNEL)
// Decode (few query rows) with explicit vectors: a tile of up to kLanes keys
// has its scores per row in one register, summed over the dimensions of the
// dimension-major keys with one broadcast multiply-add each, so no horizontal
// sums; the softmax update is a handful of vector ops, and P·V keeps every
// row's accumulator chunk in a register while each V chunk is loaded (and
// converted) once for all rows. Prefill (more rows) runs in blocks of up to
// max_rows rows: K/V are converted again per block, cheap next to the `rows`
// FMAs each converted vector feeds.
namespace lanes {

using V = Vec::T;
constexpr int kLanes = Vec::kLanes;
constexpr int kMaxRows = Vec::kAccumulators / 2;  // Q·K takes at least 2 chains a row
constexpr int kMaxChunks = skiff::kAttentionMaxHeadDim / kLanes;

// Head sizes with instances of their own. The (rows, chunks, sets, chains)
// instances are large unrolled bodies that compile many times slower under
// ASan + UBSan than in Release (figures: docs/notes/kernel-design-figures.md),
// so sanitized builds keep the heads of real models (64, 128 and 256 wide)
// and send the others to the generic kernel (flash_attention_impl.h).
// Release has instances for heads 16 to 128 wide in steps of 16, each tested
// against the float64 reference (attention_test).
constexpr bool has_instance_head(int head_dim) {
  if (head_dim == 64 || head_dim == 128 || head_dim == 256) return true;
#if defined(SKIFF_SANITIZED_BUILD)
  return false;
#else
  return head_dim % 16 == 0 && head_dim <= 128;
#endif
}
constexpr bool has_instance_chunks(int chunks) { return chunks >= 1 && has_instance_head(chunks * kLanes); }
// The next chunk count after `chunks` with instances (kMaxChunks + 1 past
// the last), so the instance search steps over the rest.
constexpr int next_instance_chunks(int chunks) {
  int c = chunks + 1;
  while (c <= kMaxChunks && !has_instance_chunks(c)) ++c;
  return c;
}

inline bool applies(const skiff::KvBlocks& kv, int head_dim) {
  if (head_dim % kLanes != 0 || head_dim > skiff::kAttentionMaxHeadDim || !has_instance_head(head_dim)) return false;
  return kv.element != skiff::KvElement::kQ8_0 || head_dim % 32 == 0;  // int8 groups of 32
}

// Values [kLanes·c, kLanes·c + kLanes) of a cached row as floats.
SKIFF_LANES_INLINE V load_chunk(const unsigned char* row, skiff::KvElement element, int c) {
  switch (element) {
    case skiff::KvElement::kF16:
      return Vec::halves(reinterpret_cast<const unsigned short*>(row) + kLanes * c);
    case skiff::KvElement::kQ8_0: {  // part of a 32-value group: {fp16 scale, int8[32]}
      const unsigned char* group = row + (kLanes * c / 32) * 34;
      const float scale = _cvtsh_ss(static_cast<unsigned short>(group[0] | (group[1] << 8)));
      return Vec::mul(Vec::int8s(reinterpret_cast<const signed char*>(group + 2 + kLanes * c % 32)),
                      Vec::set1(scale));
    }
    case skiff::KvElement::kF32:
      break;
  }
  return Vec::loadu(reinterpret_cast<const float*>(row) + kLanes * c);
}

// exp of a vector (x <= 0, or -inf for 0), as fast_exp: x = n·ln2 + r, a
// polynomial for exp(r), times 2^n.
SKIFF_LANES_INLINE V exp_lanes(V x) {
  x = Vec::max(x, Vec::set1(-87.0f));
  const V n = Vec::round(Vec::mul(x, Vec::set1(1.44269504088896341f)));
  V r = Vec::fnmadd(n, Vec::set1(0.693359375f), x);
  r = Vec::fnmadd(n, Vec::set1(-2.12194440e-4f), r);
  V p = Vec::set1(1.3751408180410973e-3f);
  p = Vec::fmadd(p, r, Vec::set1(8.368919081647757e-3f));
  p = Vec::fmadd(p, r, Vec::set1(4.1669533395562855e-2f));
  p = Vec::fmadd(p, r, Vec::set1(1.6666518437203998e-1f));
  p = Vec::fmadd(p, r, Vec::set1(4.9999988592958267e-1f));
  p = Vec::fmadd(p, r, Vec::set1(1.0f));
  p = Vec::fmadd(p, r, Vec::set1(1.0f));
  return Vec::scale_pow2(p, n);
}

// `count` chunks [first, first + count) of a cached row: one switch on the
// element type per row rather than per chunk.
template <int count>
SKIFF_LANES_INLINE void load_chunks(const unsigned char* row, skiff::KvElement element, int first, V* out) {
  switch (element) {
    case skiff::KvElement::kF16:
#pragma GCC unroll 8
      for (int i = 0; i < count; ++i)
        out[i] = Vec::halves(reinterpret_cast<const unsigned short*>(row) + kLanes * (first + i));
      return;
    case skiff::KvElement::kQ8_0:
#pragma GCC unroll 8
      for (int i = 0; i < count; ++i) out[i] = load_chunk(row, element, first + i);
      return;
    case skiff::KvElement::kF32:
      break;
  }
#pragma GCC unroll 8
  for (int i = 0; i < count; ++i) out[i] = Vec::loadu(reinterpret_cast<const float*>(row) + kLanes * (first + i));
}

// cap · tanh(x / cap) of a vector of scores: tanh|y| = (1 - e) / (1 + e) with
// e = exp(-2|y|) (an argument exp_lanes takes), the sign put back.
SKIFF_LANES_INLINE V softcap_lanes(V x, float cap) {
  const V y = Vec::mul(x, Vec::set1(1.0f / cap));
  const V e = exp_lanes(Vec::mul(Vec::abs(y), Vec::set1(-2.0f)));
  const V magnitude = Vec::div(Vec::sub(Vec::set1(1.0f), e), Vec::add(Vec::set1(1.0f), e));
  return Vec::mul(Vec::or_bits(magnitude, Vec::sign_bits(y)), Vec::set1(cap));
}

// Q·K register plan: a row's dimensions are dealt round-robin to `chains`
// accumulators, enough with the group's rows for ~8 chains at once (an FMA
// waits ~4 cycles for the previous one into the same register).
constexpr int qk_chains(int group) { return group >= 4 ? 2 : 4; }
// Rows a call takes at once: rows × chains Q·K accumulators, and rows × sets
// P·V ones, within Vec::kAccumulators.
constexpr int max_rows(int sets, int chains) {
  const int by_sets = Vec::kAccumulators / sets, by_chains = Vec::kAccumulators / chains;
  return by_sets < by_chains ? by_sets : by_chains;
}
// P·V takes chunks in blocks of `block`, so that rows × block × sets
// accumulators and the block's values fit in the registers.
constexpr int pv_block(int rows, int chunks, int sets) {
  for (int b = chunks; b > 1; --b)
    if (chunks % b == 0 && rows * b * sets <= Vec::kAccumulators && rows * b * sets + b < Vec::kRegisters) return b;
  return 1;
}
// P·V register plan: with few group heads × chunks, the keys are dealt
// round-robin to `sets` accumulator sets (summed at the end) until a decoded
// token runs about 8 chains at once. Sets depend on the group and head size,
// never on the rows of a call, so a token's sum is the same decoded alone or
// in a prefill chunk (batch invariance). (Counting the chains of the decode
// block instead, which gives AVX2's 8-lane chunks more sets, measured no
// faster: docs/notes/attention.md.)
constexpr int pv_sets(int group, int chunks) {
  return group * chunks >= 8 ? 1 : group * chunks >= 4 ? 2 : 4;
}
// Whether some group has this plan (only those are instantiated).
constexpr bool has_plan(int chunks, int sets, int chains) {
  for (int group = 1; group <= skiff::kAttentionMaxRows; ++group)
    if (pv_sets(group, chunks) == sets && qk_chains(group) == chains) return true;
  return false;
}

// A tile: n <= kLanes keys at positions [start, start + n), within one block:
// its keys are those at `slot` onwards of a dimension-major key array of
// block_size keys per dimension (kv_row.h) in key_element, its values the
// rows from `values` on.
struct TileAt {
  int start, n, slot, block_size;
  skiff::KvElement key_element;
  const unsigned char* keys;
  const unsigned char* values;
};

// Without masked loads (AVX2), a tile of fewer than kLanes keys (at a block's
// or the range's edge) has its keys copied to partial_keys as zero-padded
// floats ([head_dim][kTile], load_key_columns), so every load is whole.
SKIFF_LANES_INLINE TileAt tile_at(const skiff::KvBlocks& kv, int start, int end, int head_dim, unsigned long rb,
                                  float* partial_keys) {
  const int slot = start % kv.block_size;
  int n = kv.block_size - slot;
  n = n < kLanes ? n : kLanes;
  n = n < end - start ? n : end - start;
  const unsigned long offset = static_cast<unsigned long>(kv.blocks[start / kv.block_size]) * kv.block_stride;
  const TileAt t{start, n, slot, kv.block_size, kv.element, kv.k_base + offset, kv.v_base + offset + slot * rb};
  if constexpr (!Vec::kMaskedLoads) {
    if (n < kLanes) {
      load_key_columns(t.keys, kv.element, head_dim, kv.block_size, slot, n, partial_keys);
      return {start, n, 0, kTile, skiff::KvElement::kF32, reinterpret_cast<const unsigned char*>(partial_keys),
              t.values};
    }
  }
  return t;
}

// kLanes keys' values from p on: with masked loads only the tile's n, the
// other lanes zero; else the tile is whole (tile_at). (Templates, so that
// the branch not taken is not compiled.)
template <class VecT = Vec>
SKIFF_LANES_INLINE V key_halves(const unsigned short* p, int n) {
  if constexpr (VecT::kMaskedLoads) return VecT::halves(p, n);
  else return VecT::halves(p);
}
template <class VecT = Vec>
SKIFF_LANES_INLINE V key_int8s(const signed char* p, int n) {
  if constexpr (VecT::kMaskedLoads) return VecT::int8s(p, n);
  else return VecT::int8s(p);
}
template <class VecT = Vec>
SKIFF_LANES_INLINE V key_floats(const float* p, int n) {
  if constexpr (VecT::kMaskedLoads) return VecT::floats(p, n);
  else return VecT::loadu(p);
}

// The tile's keys of dimensions [kLanes·c, kLanes·c + kLanes): for each, a
// vector of the tile's keys' values (zeros past n), handed to use(d, vector)
// in order.
template <class Use>
SKIFF_LANES_INLINE void key_chunk(const TileAt& t, int c, Use&& use) {
  const unsigned long b = static_cast<unsigned long>(t.block_size);
  switch (t.key_element) {
    case skiff::KvElement::kF16: {
      const unsigned short* k = reinterpret_cast<const unsigned short*>(t.keys) + t.slot;
#pragma GCC unroll 16
      for (int i = 0; i < kLanes; ++i) use(kLanes * c + i, key_halves(k + (kLanes * c + i) * b, t.n));
      return;
    }
    case skiff::KvElement::kQ8_0: {  // part of a 32-dimension group
      const unsigned char* region = t.keys + (kLanes * c / 32) * b * 34;
      const V scales = key_halves(reinterpret_cast<const unsigned short*>(region) + t.slot, t.n);
      const signed char* q = reinterpret_cast<const signed char*>(region + 2 * b + (kLanes * c % 32) * b + t.slot);
#pragma GCC unroll 16
      for (int i = 0; i < kLanes; ++i) use(kLanes * c + i, Vec::mul(key_int8s(q + i * b, t.n), scales));
      return;
    }
    case skiff::KvElement::kF32: {
      const float* k = reinterpret_cast<const float*>(t.keys) + t.slot;
#pragma GCC unroll 16
      for (int i = 0; i < kLanes; ++i) use(kLanes * c + i, key_floats(k + (kLanes * c + i) * b, t.n));
      return;
    }
  }
}

// Scores of a tile, one lane per key: each row's dimensions dealt round-robin
// to `chains` accumulators, summed in a fixed order at the end.
template <int rows, int chunks, int chains>
SKIFF_LANES_INLINE void tile_scores(const TileAt& t, const float* q_scaled, V* scores) {
  constexpr int head_dim = kLanes * chunks;
  V acc[chains][rows];
#pragma GCC unroll 4
  for (int c = 0; c < chains; ++c)
#pragma GCC unroll 8
    for (int r = 0; r < rows; ++r) acc[c][r] = Vec::zero();
#pragma GCC unroll 1
  for (int c = 0; c < chunks; ++c)
    key_chunk(t, c, [&](int d, V k) __attribute__((always_inline)) {
#pragma GCC unroll 8
      for (int r = 0; r < rows; ++r)
        acc[d % chains][r] = Vec::fmadd(Vec::set1(q_scaled[r * head_dim + d]), k, acc[d % chains][r]);
    });
#pragma GCC unroll 8
  for (int r = 0; r < rows; ++r) {
    if constexpr (chains == 1) scores[r] = acc[0][r];
    else if constexpr (chains == 2) scores[r] = Vec::add(acc[0][r], acc[1][r]);
    else scores[r] = Vec::add(Vec::add(acc[0][r], acc[1][r]), Vec::add(acc[2][r], acc[3][r]));
  }
}

// Online-softmax update of each row with its tile of scores: probabilities
// into probs, the factor for the old accumulator into correction, the sum of
// probabilities kept as a vector (reduced once, at the end). The rows are
// rows [row0, row0 + rows) of qs.
template <int rows>
SKIFF_LANES_INLINE void tile_softmax(const skiff::AttentionQueries& qs, int row0, const TileAt& t,
                                     const V* row_scores, float* max, V* sum, float (*probs)[kLanes],
                                     V* correction) {
#pragma GCC unroll 8
  for (int r = 0; r < rows; ++r) {
    const Vec::Mask live =
        Vec::lanes(hidden_keys(qs, row0 + r, t.n, t.start), visible_keys(qs, row0 + r, t.n, t.start));
    V scores = row_scores[r];
    if (qs.softcap > 0) scores = softcap_lanes(scores, qs.softcap);
    const V s = Vec::select(live, scores, Vec::set1(kNegInf));
    V m = Vec::set1(max[r]);
    correction[r] = Vec::set1(1.0f);
    // Past the first tiles the running max seldom moves: find the new max
    // and rescale only when some score exceeds it.
    if (Vec::any_greater(s, m)) {
      const V new_max = Vec::max(Vec::max_lanes(s), m);
      correction[r] = exp_lanes(Vec::sub(m, new_max));  // ~1e-38 from -inf, applied to zeros
      m = new_max;
      max[r] = Vec::lane0(m);
    }
    if (max[r] == kNegInf) {  // nothing visible yet
      Vec::store(probs[r], Vec::zero());
      continue;
    }
    const V p = Vec::zero_unless(live, exp_lanes(Vec::sub(s, m)));
    sum[r] = Vec::fmadd(sum[r], correction[r], p);
    Vec::store(probs[r], p);
  }
}

// acc = acc·correction + P·V, keys dealt to accumulator sets. n is padded to
// a multiple of sets with the last key's values (finite) at probability 0.
template <int rows, int chunks, int sets>
SKIFF_LANES_INLINE void tile_pv(const TileAt& t, skiff::KvElement element, unsigned long rb,
                                const float (*probs)[kLanes], const V* correction, float* acc) {
  constexpr int head_dim = kLanes * chunks, block = pv_block(rows, chunks, sets);
  const int padded = (t.n + sets - 1) / sets * sets;
  for (int c0 = 0; c0 < chunks; c0 += block) {
    V a[sets][rows][block];
#pragma GCC unroll 8
    for (int r = 0; r < rows; ++r)
#pragma GCC unroll 8
      for (int i = 0; i < block; ++i) {
        a[0][r][i] = Vec::mul(Vec::loadu(acc + r * head_dim + kLanes * (c0 + i)), correction[r]);
#pragma GCC unroll 4
        for (int s = 1; s < sets; ++s) a[s][r][i] = Vec::zero();
      }
    for (int j = 0; j < padded; j += sets) {
#pragma GCC unroll 4
      for (int s = 0; s < sets; ++s) {
        V v[block];
        load_chunks<block>(t.values + (j + s < t.n ? j + s : t.n - 1) * rb, element, c0, v);
#pragma GCC unroll 8
        for (int r = 0; r < rows; ++r)
#pragma GCC unroll 8
          for (int i = 0; i < block; ++i)
            a[s][r][i] = Vec::fmadd(Vec::set1(probs[r][j + s]), v[i], a[s][r][i]);
      }
    }
#pragma GCC unroll 8
    for (int r = 0; r < rows; ++r)
#pragma GCC unroll 8
      for (int i = 0; i < block; ++i) {
#pragma GCC unroll 4
        for (int s = 1; s < sets; ++s) a[0][r][i] = Vec::add(a[0][r][i], a[s][r][i]);
        Vec::storeu(acc + r * head_dim + kLanes * (c0 + i), a[0][r][i]);
      }
  }
}

// Positions [begin, end) for query rows [row0, row0 + rows) of head_dim =
// kLanes × chunks with `sets` P·V accumulator sets and `chains` Q·K ones
// (template arguments, so per-row and per-chunk values live in registers);
// q_scaled, max, sum and acc point at row row0; partial_keys holds
// kAttentionMaxHeadDim × kTile floats for tile_at.
// Software-pipelined: the next tile's scores are computed between this
// tile's softmax (a long dependency chain) and its P·V, so they fill the
// wait rather than queue behind it.
// Asks for block `index`'s keys and values (bytes each) into L2 when it does
// not follow block index - 1 in the pool: the hardware prefetchers follow a
// sequence's blocks in pool order but not a jump to a block elsewhere (blocks
// of sequences that grew side by side interleave). Issued one block ahead, on
// entering a block. Into L1 it helped Q8_0 but not F16; ahead of every tile,
// in pool order too, it slowed the stream (figures:
// docs/notes/kernel-design-figures.md; docs/notes/attention.md). asm volatile:
// GCC deletes a loop of only __builtin_prefetch (-ffinite-loops).
SKIFF_LANES_INLINE void prefetch_if_jump(const skiff::KvBlocks& kv, int index, int end, unsigned long bytes) {
  if (index * kv.block_size >= end || kv.blocks[index] == kv.blocks[index - 1] + 1) return;
  const unsigned long offset = static_cast<unsigned long>(kv.blocks[index]) * kv.block_stride;
  for (unsigned long i = 0; i < bytes; i += 64) {
    asm volatile("prefetcht1 %0" ::"m"(*(kv.k_base + offset + i)));
    asm volatile("prefetcht1 %0" ::"m"(*(kv.v_base + offset + i)));
  }
}

template <int rows, int chunks, int sets, int chains>
void attend(const skiff::AttentionQueries& qs, int row0, const skiff::KvBlocks& kv, int begin, int end,
            const float* q_scaled, float* max, float* sum, float* acc, float* partial_keys) {
  constexpr int head_dim = kLanes * chunks;
  const unsigned long rb = skiff::kv_row_bytes(kv.element, head_dim);
  V scores[rows];
  alignas(64) float probs[rows][kLanes];
  V correction[rows];  // exp(old max - new max), in every lane
  V sum_v[rows];
#pragma GCC unroll 8
  for (int r = 0; r < rows; ++r) sum_v[r] = Vec::first_lane(sum[r]);
  const unsigned long block_bytes = rb * kv.block_size;  // of one head's keys, and of its values
  prefetch_if_jump(kv, begin / kv.block_size + 1, end, block_bytes);
  TileAt t = tile_at(kv, begin, end, head_dim, rb, partial_keys);
  tile_scores<rows, chunks, chains>(t, q_scaled, scores);
  for (;;) {
    tile_softmax<rows>(qs, row0, t, scores, max, sum_v, probs, correction);
    const int next = t.start + t.n;
    TileAt u{};
    if (next < end) {
      u = tile_at(kv, next, end, head_dim, rb, partial_keys);
      if (next % kv.block_size == 0) prefetch_if_jump(kv, next / kv.block_size + 1, end, block_bytes);
      tile_scores<rows, chunks, chains>(u, q_scaled, scores);
    }
    tile_pv<rows, chunks, sets>(t, kv.element, rb, probs, correction, acc);
    if (next >= end) break;
    t = u;
  }
#pragma GCC unroll 8
  for (int r = 0; r < rows; ++r) sum[r] = Vec::sum_lanes(sum_v[r]);
}

using AttendFn = void (*)(const skiff::AttentionQueries&, int, const skiff::KvBlocks&, int, int, const float*,
                          float*, float*, float*, float*);

// attend for rows in [1, max_rows(sets, chains)], chunks with instances and
// the sets and chains some group gives them.
template <int rows = 1, int chunks = next_instance_chunks(0), int sets = 1, int chains = 2>
AttendFn pick_attend(int r, int c, int s, int ch) {
  if constexpr (rows <= max_rows(sets, chains) && has_plan(chunks, sets, chains))
    if (r == rows && c == chunks && s == sets && ch == chains) return &attend<rows, chunks, sets, chains>;
  if constexpr (chains < 4) return pick_attend<rows, chunks, sets, chains * 2>(r, c, s, ch);
  else if constexpr (sets < 4) return pick_attend<rows, chunks, sets * 2, 2>(r, c, s, ch);
  else if constexpr (next_instance_chunks(chunks) <= kMaxChunks)
    return pick_attend<rows, next_instance_chunks(chunks), 1, 2>(r, c, s, ch);
  else if constexpr (rows < kMaxRows) return pick_attend<rows + 1, next_instance_chunks(0), 1, 2>(r, c, s, ch);
  else return nullptr;
}

}  // namespace lanes
#endif
