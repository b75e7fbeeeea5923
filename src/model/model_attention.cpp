// The attention half of a layer: project Q/K/V (with biases and per-head
// norms where the architecture has them), rotate, append K/V to the paged
// cache, then flash attention per (sequence, KV head, query tile) over fixed
// ranges of its context, merged (with the heads' sinks where it has them); the ranges go to different threads (flash
// decoding) when there are too few tiles to keep every thread busy.
#include <omp.h>

#include <algorithm>
#include <cmath>

#include "kernels/attention/attention.h"
#include "kernels/matmul/matmul.h"
#include "kernels/ops/ops.h"
#include "model/model.h"
#include "model/parallel_tokens.h"

namespace skiff {
namespace {

// Every query's cached positions are cut into ranges at fixed multiples of
// this (rounded up to whole blocks), whatever its batch: a token attends
// through the same partials, merged in the same order, alone or in any batch,
// in a prefill chunk of any size or decoding (batch invariance). Ranges are
// what threads share when the queries alone cannot occupy them.
constexpr int kRangePositions = 256;

}  // namespace

void Model::plan_attention(const Batch& batch, const PagedKvCache& kv, AttentionPlan& plan) {
  const ModelConfig& c = config_;
  const int window = plan.window;
  const int group = c.n_heads / c.n_kv_heads;
  const int tile = std::max(1, kAttentionMaxRows / group);
  const int range = (kRangePositions + kv.block_size() - 1) / kv.block_size() * kv.block_size();
  plan.items.clear();
  plan.groups.clear();
  plan.most_items = 0;
  for (int i = 0, t0 = 0; i < static_cast<int>(batch.seqs.size()); t0 += batch.seqs[i++].n_new) {
    const BatchSeq& s = batch.seqs[i];
    for (int j = 0; j < s.n_new; j += tile)
      for (int g = 0; g < c.n_kv_heads; ++g) {
        const int n_q = std::min(tile, s.n_new - j), n_ctx = s.first_pos + j + n_q;
        // A window hides the positions before the tile's first query's window,
        // from the start of their block (items follow block boundaries).
        const int first = window > 0 ? std::max(0, s.first_pos + j - window + 1) / kv.block_size() * kv.block_size() : 0;
        const int first_item = static_cast<int>(plan.items.size());
        for (int p = first; p < n_ctx; p = (p / range + 1) * range)
          plan.items.push_back({i, t0 + j, n_q, g, p, std::min(n_ctx, (p / range + 1) * range)});
        plan.groups.push_back({first_item, static_cast<int>(plan.items.size())});
        plan.most_items = std::max(plan.most_items, static_cast<int>(plan.items.size()) - first_item);
      }
  }
  // Threads share a group's ranges only when the groups alone cannot occupy them.
  plan.split = static_cast<int>(plan.groups.size()) < 2 * omp_get_max_threads() &&
               plan.most_items > 1;
  const size_t part_floats = static_cast<size_t>(kAttentionMaxRows) * (c.head_dim + 2);
  const size_t parts = plan.split ? plan.items.size() : static_cast<size_t>(plan.most_items) * omp_get_max_threads();
  if (s_.partials.size() < parts * part_floats) s_.partials.resize(parts * part_floats);
}

void Model::attention_block(const Batch& batch, PagedKvCache& kv, int l) {
  const ModelConfig& c = config_;
  const AttentionWeights& w = weights_.layers[l].attention;
  const int n_tokens = static_cast<int>(batch.tokens.size());
  norm_tokens(w.norm, n_tokens);
  const MatmulProduct qkv[] = {{&w.wq, s_.q.data()}, {&w.wk, s_.k.data()}, {&w.wv, s_.v.data()}};
  matmul_many(qkv, s_.xb.data(), n_tokens);

  // Finish q and k, then append k and v to each sequence's cache. Tokens run
  // in parallel: each writes its own cache position, and write() only reads
  // the shared block tables (copy-on-write happened in the owner's reserve()).
  for_each_token(n_tokens, c.q_dim() + 2 * c.kv_dim(), [&](int t) {
    project_token(l, t);
    kv.write(l, batch.seqs[s_.token_seq[t]].seq_id, s_.token_pos[t], &s_.k[t * c.kv_dim()], &s_.v[t * c.kv_dim()]);
  });
  attend(batch, kv, l);
  matmul(w.wo, s_.att.data(), n_tokens, s_.proj.data());
  if (c.layers[l].attention.o_bias)
    for_each_token(n_tokens, c.dim, [&](int t) { add(&s_.proj[t * c.dim], w.bo.data(), c.dim); });
  add_residual(w.post_norm, n_tokens);
}

void Model::project_token(int l, int t) {
  const ModelConfig& c = config_;
  const AttentionSpec& spec = c.layers[l].attention;
  const AttentionWeights& w = weights_.layers[l].attention;
  float* q = &s_.q[t * c.q_dim()];
  float* k = &s_.k[t * c.kv_dim()];
  if (spec.qkv_bias) {
    add(q, w.bq.data(), c.q_dim());
    add(k, w.bk.data(), c.kv_dim());
    add(&s_.v[t * c.kv_dim()], w.bv.data(), c.kv_dim());
  }
  if (spec.qk_norm && spec.qk_norm_whole) {
    rmsnorm(q, w.q_norm.data(), c.q_dim(), c.norm_eps, q);
    rmsnorm(k, w.k_norm.data(), c.kv_dim(), c.norm_eps, k);
  } else if (spec.qk_norm) {
    for (int h = 0; h < c.n_heads; ++h) rmsnorm(q + h * c.head_dim, w.q_norm.data(), c.head_dim, c.norm_eps, q + h * c.head_dim);
    for (int h = 0; h < c.n_kv_heads; ++h) rmsnorm(k + h * c.head_dim, w.k_norm.data(), c.head_dim, c.norm_eps, k + h * c.head_dim);
  }
  const size_t pairs = c.rope_dim / 2;
  const RopeTable& table = ropes_[layer_rope_[l]];
  const float* cos = &table.cos[t * pairs];
  const float* sin = &table.sin[t * pairs];
  rope(q, c.n_heads, c.head_dim, c.rope_dim, cos, sin, c.rope_style);
  rope(k, c.n_kv_heads, c.head_dim, c.rope_dim, cos, sin, c.rope_style);
}

void Model::attend(const Batch& batch, const PagedKvCache& kv, int l) {
  const ModelConfig& c = config_;
  const int group = c.n_heads / c.n_kv_heads;
  const float scale = c.score_scale();
  const AttentionPlan& plan = s_.plans[layer_plan_[l]];
  const int window = plan.window;
  const float softcap = c.layers[l].attention.softcap;
  const std::vector<float>& sinks = weights_.layers[l].attention.sinks;  // empty: none
  const size_t part_floats = static_cast<size_t>(kAttentionMaxRows) * (c.head_dim + 2);
  auto queries_of = [&](const AttentionItem& item) {
    const int64_t head_offset = int64_t{item.kv_head} * group * c.head_dim;
    return AttentionQueries{&s_.q[item.first_token * c.q_dim() + head_offset], c.q_dim(),
                            &s_.att[item.first_token * c.q_dim() + head_offset], c.q_dim(),
                            item.n_tokens, group, s_.token_pos[item.first_token], window, softcap,
                            sinks.empty() ? nullptr : &sinks[item.kv_head * group]};
  };
  auto partial_of = [&](int w) {
    float* base = s_.partials.data() + w * part_floats;
    return AttentionPartial{base, base + kAttentionMaxRows * c.head_dim,
                            base + kAttentionMaxRows * (c.head_dim + 1)};
  };
  auto run_item = [&](int w, const AttentionPartial& part) {
    const AttentionItem& item = plan.items[w];
    const int seq = batch.seqs[item.seq].seq_id;
    const KvBlocks blocks{kv.block_table(seq).data(), kv.key_block(0, l, item.kv_head),
                          kv.value_block(0, l, item.kv_head), kv.block_stride(),
                          kv.block_size(), item.pos_end, kv_element(kv.type())};
    flash_attention_partial(queries_of(item), blocks, item.pos_begin, item.pos_end, c.head_dim, scale, part);
  };
  auto merge_group = [&](const AttentionGroup& g, int first_part) {
    thread_local std::vector<AttentionPartial> parts;
    parts.clear();
    for (int i = 0; i < g.last_item - g.first_item; ++i) parts.push_back(partial_of(first_part + i));
    merge_attention_partials(queries_of(plan.items[g.first_item]), parts.data(), static_cast<int>(parts.size()),
                             c.head_dim);
  };
  const int n_items = static_cast<int>(plan.items.size());
  const int n_groups = static_cast<int>(plan.groups.size());
  const int64_t work = int64_t{static_cast<int>(batch.tokens.size())} * c.n_heads *
                       (s_.token_pos[batch.tokens.size() - 1] + 1) * c.head_dim;
#pragma omp parallel if (work >= (int64_t{1} << 16))
  {
    if (plan.split) {  // ranges over the threads, then each group's merge
#pragma omp for schedule(dynamic, 1)
      for (int w = 0; w < n_items; ++w) run_item(w, partial_of(w));
#pragma omp for schedule(static)
      for (int g = 0; g < n_groups; ++g) merge_group(plan.groups[g], plan.groups[g].first_item);
    } else {  // whole groups over the threads, each in the thread's own partials
      const int first_part = omp_get_thread_num() * plan.most_items;
#pragma omp for schedule(dynamic, 1)
      for (int g = 0; g < n_groups; ++g) {
        const AttentionGroup& group_items = plan.groups[g];
        for (int w = group_items.first_item; w < group_items.last_item; ++w)
          run_item(w, partial_of(first_part + w - group_items.first_item));
        merge_group(group_items, first_part);
      }
    }
  }
}

}  // namespace skiff
