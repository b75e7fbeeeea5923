// The attention half of a Llama layer: project Q/K/V, rotate, append K/V to
// the paged cache, then flash attention per (sequence, KV head, query tile),
// with the context split across threads (flash decoding) when there are too
// few such items to keep every thread busy.
#include <omp.h>

#include <algorithm>
#include <cmath>

#include "kernels/attention.h"
#include "kernels/ops.h"
#include "model/model.h"
#include "model/parallel_tokens.h"

namespace skiff {
namespace {

KvElement kv_element(KvType type) {
  switch (type) {
    case KvType::kF32: return KvElement::kF32;
    case KvType::kF16: return KvElement::kF16;
    case KvType::kQ8_0: return KvElement::kQ8_0;
  }
  return KvElement::kF32;
}

constexpr int kMinPositionsPerSplit = 256;
constexpr int kMaxSplits = 64;

}  // namespace

void Model::plan_attention(const Batch& batch, const PagedKvCache& kv) {
  const ModelConfig& c = config_;
  const int group = c.n_heads / c.n_kv_heads;
  const int tile = std::max(1, kAttentionMaxRows / group);
  s_.attention_items.clear();
  s_.attention_groups.clear();
  int n_groups = 0, longest = 0;
  for (const BatchSeq& s : batch.seqs) {
    n_groups += (s.n_new + tile - 1) / tile * c.n_kv_heads;
    longest = std::max(longest, s.first_pos + s.n_new);
  }
  // Split the context only when the queries alone cannot occupy the threads.
  const int want = 2 * omp_get_max_threads();
  int splits = n_groups >= want ? 1 : (want + n_groups - 1) / n_groups;
  splits = std::max(1, std::min({splits, longest / kMinPositionsPerSplit, kMaxSplits}));
  s_.attention_split = splits > 1;
  for (int i = 0, t0 = 0; i < static_cast<int>(batch.seqs.size()); t0 += batch.seqs[i++].n_new) {
    const BatchSeq& s = batch.seqs[i];
    for (int j = 0; j < s.n_new; j += tile)
      for (int g = 0; g < c.n_kv_heads; ++g) {
        const int n_q = std::min(tile, s.n_new - j), n_ctx = s.first_pos + j + n_q;
        const int per_split = (n_ctx + splits - 1) / splits;
        const int chunk = (per_split + kv.block_size() - 1) / kv.block_size() * kv.block_size();
        const int first = static_cast<int>(s_.attention_items.size());
        for (int p = 0; p < n_ctx; p += chunk)
          s_.attention_items.push_back({i, t0 + j, n_q, g, p, std::min(n_ctx, p + chunk)});
        s_.attention_groups.push_back({first, static_cast<int>(s_.attention_items.size())});
      }
  }
  const size_t part_floats = static_cast<size_t>(kAttentionMaxRows) * (c.head_dim + 2);
  if (s_.partials.size() < s_.attention_items.size() * part_floats)
    s_.partials.resize(s_.attention_items.size() * part_floats);
}

void Model::attention_layer(const Batch& batch, PagedKvCache& kv, int l) {
  const ModelConfig& c = config_;
  const LayerWeights& L = weights_.layers[l];
  const int n_tokens = static_cast<int>(batch.tokens.size());
  norm_tokens(L.attn_norm, n_tokens);
  const MatmulProduct qkv[] = {{&L.wq, s_.q.data()}, {&L.wk, s_.k.data()}, {&L.wv, s_.v.data()}};
  matmul_many(qkv, s_.xb.data(), n_tokens);

  // Rotate q and k, then append k and v to each sequence's cache. Tokens run in
  // parallel: each writes its own cache position, and write() only reads the
  // shared block tables (copy-on-write happened in forward's reserve()).
  for_each_token(n_tokens, c.q_dim() + 2 * c.kv_dim(), [&](int t) {
    const int seq = batch.seqs[s_.token_seq[t]].seq_id, pos = s_.token_pos[t];
    const float* cos = &s_.rope_cos[t * (c.rope_dim / 2)];
    const float* sin = &s_.rope_sin[t * (c.rope_dim / 2)];
    rope(&s_.q[t * c.q_dim()], c.n_heads, c.head_dim, c.rope_dim, cos, sin, c.rope_style);
    rope(&s_.k[t * c.kv_dim()], c.n_kv_heads, c.head_dim, c.rope_dim, cos, sin, c.rope_style);
    kv.write(l, seq, pos, &s_.k[t * c.kv_dim()], &s_.v[t * c.kv_dim()]);
  });
  attend(batch, kv, l);
  matmul(L.wo, s_.att.data(), n_tokens, s_.proj.data());
  add_residual(n_tokens);
}

void Model::attend(const Batch& batch, const PagedKvCache& kv, int l) {
  const ModelConfig& c = config_;
  const int group = c.n_heads / c.n_kv_heads;
  const float scale = 1.0f / std::sqrt(static_cast<float>(c.head_dim));
  const size_t part_floats = static_cast<size_t>(kAttentionMaxRows) * (c.head_dim + 2);
  auto queries_of = [&](const AttentionItem& item) {
    const int64_t head_offset = int64_t{item.kv_head} * group * c.head_dim;
    return AttentionQueries{&s_.q[item.first_token * c.q_dim() + head_offset], c.q_dim(),
                            &s_.att[item.first_token * c.q_dim() + head_offset], c.q_dim(),
                            item.n_tokens, group, s_.token_pos[item.first_token]};
  };
  auto partial_of = [&](int w) {
    float* base = s_.partials.data() + w * part_floats;
    return AttentionPartial{base, base + kAttentionMaxRows * c.head_dim,
                            base + kAttentionMaxRows * (c.head_dim + 1)};
  };
  const int n_items = static_cast<int>(s_.attention_items.size());
  const int n_groups = static_cast<int>(s_.attention_groups.size());
  const int64_t work = int64_t{static_cast<int>(batch.tokens.size())} * c.n_heads *
                       (s_.token_pos[batch.tokens.size() - 1] + 1) * c.head_dim;
#pragma omp parallel if (work >= (int64_t{1} << 16))
  {
#pragma omp for schedule(dynamic, 1)
    for (int w = 0; w < n_items; ++w) {
      const AttentionItem& item = s_.attention_items[w];
      const int seq = batch.seqs[item.seq].seq_id;
      const KvBlocks blocks{kv.block_table(seq).data(), kv.key_block(0, l, item.kv_head),
                            kv.value_block(0, l, item.kv_head), kv.block_stride(),
                            kv.block_size(), item.pos_end, kv_element(kv.type())};
      flash_attention_partial(queries_of(item), blocks, item.pos_begin, item.pos_end, c.head_dim,
                              scale, partial_of(w));
      // Unsplit, each item is its whole group: finish it while its partial is in cache.
      if (!s_.attention_split) {
        const AttentionPartial part = partial_of(w);
        merge_attention_partials(queries_of(item), &part, 1, c.head_dim);
      }
    }
    if (s_.attention_split) {  // the same on every thread
#pragma omp for schedule(static)
      for (int g = 0; g < n_groups; ++g) {
        const auto [first, last] = s_.attention_groups[g];
        AttentionPartial parts[kMaxSplits];
        for (int i = first; i < last; ++i) parts[i - first] = partial_of(i);
        merge_attention_partials(queries_of(s_.attention_items[first]), parts, last - first, c.head_dim);
      }
    }
  }
}

}  // namespace skiff
