// Flash attention over paged K/V against a naive float64 attention, on every
// ISA the CPU has: random shapes, contexts 1 to 4096, lengths not a multiple of
// the block size, GQA ratios 1-8, head dims 8 to 256, query chunks starting
// mid-block, shuffled (non-contiguous) block tables, F32/F16/Q8_0 elements,
// sliding windows, soft-capping and attention sinks.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <cmath>
#include <numeric>
#include <random>
#include <vector>

#include "each_isa.h"
#include "kernels/attention/attention.h"
#include "kernels/attention/kv_row.h"
#include "kernels/dtype.h"
#include "kernels/fp16.h"
#include "kernels/isa.h"
#include "kernels/quant/quant.h"

namespace skiff {
namespace exp_check {
#include "kernels/vec_math.h"
}

namespace {

struct Case {
  int n_ctx_before;  // cached positions before the first query
  int n_q;
  int group;
  int head_dim;
  int block_size;
  KvElement element;
  int window = 0;      // sliding window (0: none)
  float softcap = 0;   // Gemma 2's soft-cap of scaled scores (0: none)
  bool sinks = false;  // gpt-oss's logit per query head in each softmax's denominator
};

DType dtype_of(KvElement e) { return e == KvElement::kF32 ? DType::F32 : DType::F16; }

// Reads a row in the documented int8 layout (kv_row.h), independently of the kernel.
void decode_q8_row(const uint8_t* row, int head_dim, float* out) {
  const int group = kv_q8_group(head_dim);
  for (int g = 0; g < head_dim / group; ++g, row += 2 + group) {
    uint16_t scale;
    std::memcpy(&scale, row, 2);
    for (int i = 0; i < group; ++i) out[g * group + i] = fp16_to_f32(scale) * static_cast<int8_t>(row[2 + i]);
  }
}

// Puts an encoded key row into its block in kv_row.h's dimension-major
// layout, written here from the documentation, independently of store_key.
void place_key(const Case& c, const uint8_t* encoded, int slot, uint8_t* block) {
  const size_t b = c.block_size;
  if (c.element != KvElement::kQ8_0) {
    const size_t e = c.element == KvElement::kF32 ? 4 : 2;
    for (int d = 0; d < c.head_dim; ++d) std::memcpy(block + (d * b + slot) * e, encoded + d * e, e);
    return;
  }
  const int group = kv_q8_group(c.head_dim);
  for (int g = 0; g < c.head_dim / group; ++g) {
    const uint8_t* src = encoded + g * (2 + group);
    uint8_t* region = block + g * b * (2 + group);
    std::memcpy(region + 2 * slot, src, 2);
    for (int i = 0; i < group; ++i) region[2 * b + i * b + slot] = src[2 + i];
  }
}

// K/V of one head in a shuffled pool of blocks, plus the values as stored
// (after rounding to the element type), which the reference uses.
struct PagedHead {
  std::vector<int> table;
  std::vector<uint8_t> pool;
  size_t block_stride = 0;
  std::vector<float> k, v;  // [n_ctx][head_dim] as stored
  KvBlocks view(const Case& c, int n_ctx) const {
    return {table.data(), pool.data(), pool.data() + block_stride / 2, block_stride,
            c.block_size, n_ctx, c.element};
  }
};

PagedHead make_head(const Case& c, int n_ctx, std::mt19937& rng) {
  std::normal_distribution<float> normal(0.0f, 1.0f);
  PagedHead h;
  const size_t row = c.element == KvElement::kQ8_0 ? kv_q8_row_bytes(c.head_dim)
                                                  : row_bytes(dtype_of(c.element), c.head_dim);
  const int n_blocks = (n_ctx + c.block_size - 1) / c.block_size;
  h.block_stride = 2 * row * c.block_size;  // K rows then V rows
  h.table.resize(n_blocks);
  std::iota(h.table.begin(), h.table.end(), 0);
  std::shuffle(h.table.begin(), h.table.end(), rng);
  for (int& b : h.table) b = 2 * b + 1;  // leave gaps: blocks of other sequences
  h.pool.assign(h.block_stride * (2 * n_blocks + 1), 0xAB);
  std::vector<float> raw(c.head_dim);
  std::vector<uint8_t> encoded(row);
  for (int p = 0; p < n_ctx; ++p)
    for (int kv = 0; kv < 2; ++kv) {
      for (float& x : raw) x = normal(rng);
      uint8_t* block = h.pool.data() + h.table[p / c.block_size] * h.block_stride + kv * h.block_stride / 2;
      std::vector<float> stored(c.head_dim);
      if (c.element == KvElement::kQ8_0) {
        quantize_kv_q8_row(raw.data(), c.head_dim, encoded.data());
        decode_q8_row(encoded.data(), c.head_dim, stored.data());
      } else {
        quantize_row(dtype_of(c.element), raw.data(), encoded.data(), c.head_dim);
        dequantize_row(dtype_of(c.element), encoded.data(), stored.data(), c.head_dim);
      }
      const int slot = p % c.block_size;
      if (kv == 1) std::memcpy(block + slot * row, encoded.data(), row);
      else place_key(c, encoded.data(), slot, block);
      auto& out = kv == 0 ? h.k : h.v;
      out.insert(out.end(), stored.begin(), stored.end());
    }
  return h;
}

// Naive attention in double: the reference. A query at position p sees keys
// (p - window, p] with a window, else [0, p].
// A sink (sinks non-empty: one per head of the group) adds exp(sink) to the
// denominator.
std::vector<double> reference(const std::vector<float>& q, const PagedHead& h, const Case& c,
                              const std::vector<float>& sinks) {
  std::vector<double> out(q.size(), 0.0);
  for (int t = 0; t < c.n_q; ++t)
    for (int g = 0; g < c.group; ++g) {
      const float* qr = &q[(t * c.group + g) * c.head_dim];
      const int pos = c.n_ctx_before + t, first = c.window > 0 ? std::max(0, pos - c.window + 1) : 0;
      std::vector<double> s(pos + 1 - first);
      double mx = sinks.empty() ? -1e300 : sinks[g];
      for (int j = first; j <= pos; ++j) {
        double dot = 0;
        for (int d = 0; d < c.head_dim; ++d) dot += double(qr[d]) * h.k[j * c.head_dim + d];
        double& x = s[j - first];
        x = dot / std::sqrt(double(c.head_dim));
        if (c.softcap > 0) x = c.softcap * std::tanh(x / c.softcap);
        mx = std::max(mx, x);
      }
      double sum = sinks.empty() ? 0.0 : std::exp(sinks[g] - mx);
      for (double& x : s) sum += (x = std::exp(x - mx));
      for (int j = first; j <= pos; ++j)
        for (int d = 0; d < c.head_dim; ++d)
          out[(t * c.group + g) * c.head_dim + d] += s[j - first] / sum * h.v[j * c.head_dim + d];
    }
  return out;
}

// Outputs are convex combinations of stored V entries (|v| < ~5); float
// rounding of scores and sums over up to 4096 keys stays under 2e-5.
constexpr double kTolerance = 2e-5;

void check(const Case& c, std::mt19937& rng) {
  std::normal_distribution<float> normal(0.0f, 2.0f);  // sharp enough that the max matters
  const int n_ctx = c.n_ctx_before + c.n_q;
  const PagedHead head = make_head(c, n_ctx, rng);
  std::vector<float> q(c.n_q * c.group * c.head_dim);
  for (float& x : q) x = normal(rng);
  // Sinks around the scores' scale (|s| ~ 2·sqrt(head_dim)·1/sqrt(head_dim)):
  // some take most of the mass, some little.
  std::vector<float> sinks;
  if (c.sinks)
    for (int g = 0; g < c.group; ++g) sinks.push_back(3.0f * normal(rng));
  const std::vector<double> want = reference(q, head, c, sinks);
  const float scale = 1.0f / std::sqrt(float(c.head_dim));
  const int stride = c.group * c.head_dim;
  testing::for_each_isa([&](Isa isa) {
    SCOPED_TRACE(::testing::Message() << isa_name(isa) << " ctx " << c.n_ctx_before << " q " << c.n_q
                                    << " group " << c.group << " dim " << c.head_dim << " block "
                                    << c.block_size << " element " << int(c.element) << " window " << c.window
                                    << " softcap " << c.softcap << " sinks " << c.sinks);
    std::vector<float> out(q.size(), -1.0f);
    const AttentionQueries queries{q.data(), stride,         out.data(), stride,    c.n_q,
                                   c.group,  c.n_ctx_before, c.window,   c.softcap, c.sinks ? sinks.data() : nullptr};
    flash_attention(queries, head.view(c, n_ctx), c.head_dim, scale);
    for (size_t i = 0; i < out.size(); ++i) ASSERT_NEAR(out[i], want[i], kTolerance) << i;

    // Split-KV: three uneven ranges merged must give the same result (the
    // sink counted once, at the merge).
    const int rows = c.n_q * c.group;
    std::vector<float> buf(3 * rows * (c.head_dim + 2));
    std::vector<AttentionPartial> parts;
    const int cuts[] = {0, n_ctx / 3, n_ctx / 3 + n_ctx / 5 + 1, n_ctx};
    for (int i = 0; i < 3; ++i) {
      float* base = buf.data() + i * rows * (c.head_dim + 2);
      parts.push_back({base, base + rows * c.head_dim, base + rows * c.head_dim + rows});
      flash_attention_partial(queries, head.view(c, n_ctx), cuts[i], cuts[i + 1], c.head_dim, scale, parts.back());
    }
    std::fill(out.begin(), out.end(), -1.0f);
    merge_attention_partials(queries, parts.data(), 3, c.head_dim);
    for (size_t i = 0; i < out.size(); ++i) ASSERT_NEAR(out[i], want[i], kTolerance) << "split " << i;
  });
}

TEST(FlashAttention, MatchesFloat64Reference) {
  std::mt19937 rng(5);
  const Case cases[] = {
      {0, 1, 1, 64, 16, KvElement::kF32},      {0, 5, 4, 64, 16, KvElement::kF16},
      {3, 1, 8, 128, 16, KvElement::kQ8_0},    {31, 2, 2, 64, 16, KvElement::kF32},
      {32, 1, 4, 128, 16, KvElement::kF16},    {33, 8, 4, 64, 5, KvElement::kF32},
      {100, 3, 1, 128, 48, KvElement::kQ8_0},  {0, 32, 1, 64, 16, KvElement::kF16},
      {1000, 1, 8, 128, 16, KvElement::kF16},  {500, 4, 8, 64, 32, KvElement::kF32},
      {4095, 1, 4, 128, 16, KvElement::kF16},  {7, 16, 2, 64, 64, KvElement::kQ8_0},
      {2049, 4, 2, 128, 16, KvElement::kF32},  {17, 3, 8, 64, 7, KvElement::kF16},
      {40, 2, 2, 8, 16, KvElement::kQ8_0},     {70, 1, 4, 40, 16, KvElement::kQ8_0},
  };
  for (const Case& c : cases) check(c, rng);
}

// Decode shapes (1-8 query rows, the register kernel's row blocks): every
// row count, every head size with a register kernel instance and some
// without, contexts not a multiple of the tile, tiles cut short by small
// blocks and by blocks of 12, 20 and 24 (a whole tile then a partial one in
// each block on AVX2, 16 + 8 keys on AVX-512), causal masking inside a tile
// (n_q > 1).
TEST(FlashAttention, DecodeRowsMatchFloat64Reference) {
  std::mt19937 rng(11);
  const KvElement elements[] = {KvElement::kF32, KvElement::kF16, KvElement::kQ8_0};
  const int blocks[] = {16, 48, 12, 20, 24};
  int i = 0;
  for (const KvElement e : elements) {
    for (const int head_dim : {64, 128, 256})
      for (const int group : {1, 2, 3, 4, 5, 6, 7, 8})
        check({i % 2 ? 201 : 37 + group, 1, group, head_dim, blocks[i % 5], e}, rng), ++i;
    for (const int head_dim : {16, 32, 48, 80, 96, 112})
      for (const int group : {1, 2, 4, 7}) check({130, 1, group, head_dim, blocks[i++ % 5], e}, rng);
    check({57, 2, 3, 64, 16, e}, rng);   // 6 rows, two positions
    check({20, 8, 1, 128, 5, e}, rng);   // blocks of 5: tiles of 1-5 keys
    check({0, 1, 1, 64, 16, e}, rng);    // a single key
  }
}

// Prefill shapes (9-32 query rows: the register kernel in blocks of rows):
// blocks splitting a token's group heads, causal masking inside a tile,
// chunks starting mid-block, whole and partial blocks of keys.
TEST(FlashAttention, PrefillRowsMatchFloat64Reference) {
  std::mt19937 rng(13);
  const KvElement elements[] = {KvElement::kF32, KvElement::kF16, KvElement::kQ8_0};
  struct Shape { int n_q, group; };
  const Shape shapes[] = {{9, 1}, {12, 1}, {32, 1}, {8, 4}, {5, 3}, {16, 2}, {3, 8}, {2, 16}, {11, 2}};
  const int blocks[] = {5, 16, 20, 16};
  int i = 0;
  for (const KvElement e : elements) {
    for (const int head_dim : {64, 128, 256})
      for (const Shape s : shapes) {
        check({(i % 3) * 37, s.n_q, s.group, head_dim, blocks[i % 4], e}, rng), ++i;
      }
    for (const int head_dim : {16, 48, 80, 96, 112})
      check({(i % 3) * 37, shapes[i % 9].n_q, shapes[i % 9].group, head_dim, blocks[i % 4], e}, rng), ++i;
  }
  for (const KvElement e : elements) check({300, 32, 1, 32, 16, e}, rng);  // long context, head dim 32
}

// Sliding windows (Mistral, Gemma 2/3 local layers) and Gemma 2's
// soft-capping against the reference: windows shorter and longer than a
// block, starting mid-tile, decode and prefill rows.
TEST(FlashAttention, WindowsAndSoftcapMatchFloat64Reference) {
  std::mt19937 rng(19);
  int i = 0;
  for (const KvElement e : {KvElement::kF32, KvElement::kF16, KvElement::kQ8_0})
    for (const int head_dim : {64, 128, 256}) {
      check({300, 1, 4, head_dim, 16, e, 37}, rng);
      check({300, 1, 2, head_dim, 20, e, 0, 30.0f}, rng);
      check({200, 4, 2, head_dim, 24, e, 9, 50.0f}, rng);
      check({90, 12, 1, head_dim, (i++ % 2) ? 16 : 12, e, 100}, rng);
      check({0, 20, 1, head_dim, 16, e, 5, 20.0f}, rng);
    }
}

// Attention sinks (gpt-oss) against the reference: decode and prefill rows
// (the register kernel's row blocks and the generic tiles), split ranges,
// GQA groups (a sink per query head), with sliding windows and short
// contexts where a sink outweighs every key.
TEST(FlashAttention, SinksMatchFloat64Reference) {
  std::mt19937 rng(23);
  int i = 0;
  for (const KvElement e : {KvElement::kF32, KvElement::kF16, KvElement::kQ8_0})
    for (const int head_dim : {16, 64, 128}) {
      check({300, 1, 4, head_dim, 16, e, 0, 0, true}, rng);       // decode
      check({1000, 1, 8, head_dim, 20, e, 0, 0, true}, rng);      // decode, long context
      check({0, 1, 2, head_dim, 16, e, 0, 0, true}, rng);         // one key and the sink
      check({200, 4, 2, head_dim, 24, e, 9, 0, true}, rng);       // window
      check({90, 12, 1, head_dim, (i++ % 2) ? 16 : 12, e, 32, 0, true}, rng);
      check({37, 32, 1, head_dim, 16, e, 0, 0, true}, rng);       // prefill, 32 rows
      check({5, 8, 4, head_dim, 5, e, 0, 0, true}, rng);          // prefill, grouped
    }
}

// out for query rows of positions [first, first + n_q) as the engine asks for
// them: from the block holding the first row's window start, cut at position
// `cut` (a range boundary) when it falls inside, the parts merged.
std::vector<float> attend_ranges(const std::vector<float>& q, const PagedHead& h, const Case& c, int first,
                                 int n_q, int window, float softcap, int cut) {
  const int stride = c.group * c.head_dim, rows = n_q * c.group, n_ctx = first + n_q;
  std::vector<float> out(rows * c.head_dim);
  const AttentionQueries queries{&q[first * stride], stride, out.data(), stride, n_q, c.group, first, window, softcap};
  const int begin = window > 0 ? std::max(0, first - window + 1) / c.block_size * c.block_size : 0;
  std::vector<int> cuts = {begin};
  if (cut > begin && cut < n_ctx) cuts.push_back(cut);
  cuts.push_back(n_ctx);
  std::vector<float> buf((cuts.size() - 1) * rows * (c.head_dim + 2));
  std::vector<AttentionPartial> parts;
  for (size_t i = 0; i + 1 < cuts.size(); ++i) {
    float* base = buf.data() + i * rows * (c.head_dim + 2);
    parts.push_back({base, base + rows * c.head_dim, base + rows * c.head_dim + rows});
    flash_attention_partial(queries, h.view(c, n_ctx), cuts[i], cuts[i + 1], c.head_dim, 1.0f / std::sqrt(float(c.head_dim)),
                            parts.back());
  }
  merge_attention_partials(queries, parts.data(), static_cast<int>(parts.size()), c.head_dim);
  return out;
}

// Batch invariance: every token of a prefill chunk gets bit for bit the
// output it gets decoded alone, on every ISA, for head dims on every kernel
// path (8 takes the generic one), grouped and not, with a sliding
// window and soft-capping, and split at a range boundary.
TEST(FlashAttention, ChunkRowsAreBitIdenticalToDecodedRows) {
  std::mt19937 rng(17);
  struct Shape { int head_dim, group, window; float softcap; };
  const Shape shapes[] = {{8, 1, 0, 0},    {16, 2, 0, 0},   {32, 1, 37, 0},  {48, 3, 0, 30}, {64, 1, 0, 0},
                          {64, 2, 0, 30},  {64, 7, 0, 0},   {80, 2, 20, 0},  {128, 1, 0, 0}, {128, 4, 50, 0},
                          {256, 1, 0, 50}, {256, 2, 45, 0}};
  int i = 0;
  for (const KvElement e : {KvElement::kF32, KvElement::kF16, KvElement::kQ8_0})
    for (const Shape s : shapes) {
      const int n_q = std::max(1, kAttentionMaxRows / s.group), first = 60 + 13 * (i++ % 5);
      const Case c{first, n_q, s.group, s.head_dim, (i % 4 + 1) * 8, e};  // blocks of 16, 24, 32, 8
      const PagedHead head = make_head(c, first + n_q, rng);
      std::normal_distribution<float> normal(0.0f, 2.0f);
      std::vector<float> q((first + n_q) * s.group * s.head_dim);
      for (float& x : q) x = normal(rng);
      const int cut = 64;
      testing::for_each_isa([&](Isa isa) {
        SCOPED_TRACE(::testing::Message() << isa_name(isa) << " dim " << s.head_dim << " group " << s.group << " window "
                                        << s.window << " element " << int(e));
        const std::vector<float> chunk = attend_ranges(q, head, c, first, n_q, s.window, s.softcap, cut);
        for (int t = 0; t < n_q; ++t) {
          const std::vector<float> alone = attend_ranges(q, head, c, first + t, 1, s.window, s.softcap, cut);
          ASSERT_EQ(std::memcmp(alone.data(), &chunk[t * s.group * s.head_dim], alone.size() * sizeof(float)), 0)
              << "token " << t;
        }
      });
    }
}

TEST(FlashAttention, RejectsTooManyRowsOrHeadDim) {
  std::vector<float> buf(64 * 64);
  const int table[] = {0, 1, 2};
  const KvBlocks kv{table, nullptr, nullptr, 0, 16, 33, KvElement::kF32};
  EXPECT_ANY_THROW(flash_attention(AttentionQueries{buf.data(), 64, buf.data(), 64, 33, 1, 0}, kv, 64, 1.0f));
  EXPECT_ANY_THROW(flash_attention(AttentionQueries{buf.data(), 512, buf.data(), 512, 1, 1, 0}, kv, 512, 1.0f));
}

TEST(VecMath, ExpIsAccurate) {
  double worst = 0;
  for (float x = -87.0f; x <= 88.0f; x += 0.001f) {
    const double want = std::exp(double(x));
    worst = std::max(worst, std::abs(exp_check::fast_exp(x) - want) / want);
  }
  EXPECT_LT(worst, 4e-7);  // a few float ulps
  EXPECT_EQ(exp_check::fast_exp(0.0f), 1.0f);
  EXPECT_GT(exp_check::fast_exp(1000.0f), 1e38f);  // clamped, finite
  EXPECT_LT(exp_check::fast_exp(-1000.0f), 1e-37f);
}

}  // namespace
}  // namespace skiff
