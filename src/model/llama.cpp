#include "model/llama.h"

#include <omp.h>

#include <algorithm>
#include <cmath>

#include "base/error.h"
#include "kernels/attention.h"
#include "kernels/ops.h"

namespace skiff {

LlamaModel::LlamaModel(ModelConfig config, LlamaWeights weights)
    : config_(std::move(config)), weights_(std::move(weights)) {
  config_.validate();
  rope_freq_.resize(config_.rope_dim / 2);
  rope_frequencies(config_.rope_dim, config_.rope_theta,
                   config_.rope_freq_factors.empty() ? nullptr : config_.rope_freq_factors.data(),
                   rope_freq_.data());
}

KvCache LlamaModel::make_kv_cache(int n_slots, int max_ctx) const {
  return KvCache(config_.n_layers, config_.n_kv_heads, config_.head_dim, n_slots, max_ctx);
}

void LlamaModel::reserve(int n_tokens) {
  const ModelConfig& c = config_;
  auto grow = [](std::vector<float>& v, size_t n) {
    if (v.size() < n) v.resize(n);
  };
  const size_t t = n_tokens;
  grow(s_.x, t * c.dim);
  grow(s_.xb, t * c.dim);
  grow(s_.q, t * c.q_dim());
  grow(s_.k, t * c.kv_dim());
  grow(s_.v, t * c.kv_dim());
  grow(s_.att, t * c.q_dim());
  grow(s_.proj, t * c.dim);
  grow(s_.gate, t * c.ffn_dim);
  grow(s_.up, t * c.ffn_dim);
  if (s_.token_seq.size() < t) {
    s_.token_seq.resize(t);
    s_.token_pos.resize(t);
  }
}

void LlamaModel::check_batch(const Batch& batch, const KvCache& kv) const {
  size_t n = 0;
  for (const BatchSeq& s : batch.seqs) {
    if (s.slot < 0 || s.slot >= kv.n_slots()) fail("batch: KV slot {} does not exist", s.slot);
    if (s.first_pos != kv.length(s.slot))
      fail("batch: sequence in slot {} starts at {} but has {} cached tokens", s.slot,
           s.first_pos, kv.length(s.slot));
    if (s.n_new <= 0 || s.n_logits < 0 || s.n_logits > s.n_new)
      fail("batch: sequence in slot {} has {} new tokens and {} logits", s.slot, s.n_new,
           s.n_logits);
    if (s.first_pos + s.n_new > kv.max_ctx())
      fail("context full: {} tokens do not fit the context of {}", s.first_pos + s.n_new,
           kv.max_ctx());
    n += s.n_new;
  }
  if (n != batch.tokens.size()) fail("batch: {} tokens but sequences claim {}", batch.tokens.size(), n);
  for (int32_t tok : batch.tokens)
    if (tok < 0 || tok >= config_.vocab_size) fail("token id {} is outside the vocabulary", tok);
}

void LlamaModel::forward(const Batch& batch, KvCache& kv, float* logits) {
  check_batch(batch, kv);
  const ModelConfig& c = config_;
  const int n_tokens = static_cast<int>(batch.tokens.size());
  reserve(n_tokens);
  for (int i = 0, t = 0; i < static_cast<int>(batch.seqs.size()); ++i)
    for (int j = 0; j < batch.seqs[i].n_new; ++j, ++t) {
      s_.token_seq[t] = i;
      s_.token_pos[t] = batch.seqs[i].first_pos + j;
    }

  for (int t = 0; t < n_tokens; ++t)
    matrix_row(weights_.token_embedding, batch.tokens[t], s_.x.data() + static_cast<size_t>(t) * c.dim);

  for (int l = 0; l < c.n_layers; ++l) {
    attention_layer(batch, kv, l);
    ffn_layer(l, n_tokens);
  }
  for (const BatchSeq& s : batch.seqs) kv.set_length(s.slot, s.first_pos + s.n_new);
  output_head(batch, logits);
}

void LlamaModel::attention_layer(const Batch& batch, KvCache& kv, int l) {
  const ModelConfig& c = config_;
  const LayerWeights& L = weights_.layers[l];
  const int n_tokens = static_cast<int>(batch.tokens.size());
  for (int t = 0; t < n_tokens; ++t)
    rmsnorm(&s_.x[t * c.dim], L.attn_norm.data(), c.dim, c.norm_eps, &s_.xb[t * c.dim]);
  matmul(L.wq, s_.xb.data(), n_tokens, s_.q.data());
  matmul(L.wk, s_.xb.data(), n_tokens, s_.k.data());
  matmul(L.wv, s_.xb.data(), n_tokens, s_.v.data());

  // Rotate q and k, then append k and v to each sequence's cache slot.
  for (int t = 0; t < n_tokens; ++t) {
    const int slot = batch.seqs[s_.token_seq[t]].slot, pos = s_.token_pos[t];
    rope(&s_.q[t * c.q_dim()], c.n_heads, c.head_dim, c.rope_dim, rope_freq_.data(), pos, c.rope_style);
    rope(&s_.k[t * c.kv_dim()], c.n_kv_heads, c.head_dim, c.rope_dim, rope_freq_.data(), pos, c.rope_style);
    kv.write(l, slot, pos, &s_.k[t * c.kv_dim()], &s_.v[t * c.kv_dim()]);
  }

  // Attention work items: one per (sequence, KV head, tile of query tokens);
  // the query heads of a KV head share each K/V load (grouped-query attention).
  const int group = c.n_heads / c.n_kv_heads;
  const int tile = std::max(1, kAttentionMaxRows / group);
  s_.attention_items.clear();
  for (int i = 0, t0 = 0; i < static_cast<int>(batch.seqs.size()); t0 += batch.seqs[i++].n_new)
    for (int j = 0; j < batch.seqs[i].n_new; j += tile)
      for (int g = 0; g < c.n_kv_heads; ++g)
        s_.attention_items.push_back({i, t0 + j, std::min(tile, batch.seqs[i].n_new - j), g});
  const float scale = 1.0f / std::sqrt(static_cast<float>(c.head_dim));
  const int n_items = static_cast<int>(s_.attention_items.size());
  const int64_t work = int64_t{n_tokens} * c.n_heads * (s_.token_pos[n_tokens - 1] + 1) * c.head_dim;
#pragma omp parallel for schedule(dynamic, 1) if (work >= (int64_t{1} << 16))
  for (int w = 0; w < n_items; ++w) {
    const AttentionItem& item = s_.attention_items[w];
    const BatchSeq& s = batch.seqs[item.seq];
    const int64_t head_offset = int64_t{item.kv_head} * group * c.head_dim;
    AttentionQueries queries{&s_.q[item.first_token * c.q_dim() + head_offset], c.q_dim(),
                             &s_.att[item.first_token * c.q_dim() + head_offset], c.q_dim(),
                             item.n_tokens, group, s_.token_pos[item.first_token]};
    // The slot's positions are one contiguous run: a single block.
    const int block = 0;
    const auto* k = reinterpret_cast<const uint8_t*>(kv.keys(l, s.slot, item.kv_head));
    const auto* v = reinterpret_cast<const uint8_t*>(kv.values(l, s.slot, item.kv_head));
    const KvBlocks blocks{&block, k, v, 0, kv.max_ctx(), s.first_pos + s.n_new, KvElement::kF32};
    flash_attention(queries, blocks, c.head_dim, scale);
  }
  matmul(L.wo, s_.att.data(), n_tokens, s_.proj.data());
  add(s_.x.data(), s_.proj.data(), int64_t{n_tokens} * c.dim);
}

void LlamaModel::ffn_layer(int l, int n_tokens) {
  const ModelConfig& c = config_;
  const LayerWeights& L = weights_.layers[l];
  for (int t = 0; t < n_tokens; ++t)
    rmsnorm(&s_.x[t * c.dim], L.ffn_norm.data(), c.dim, c.norm_eps, &s_.xb[t * c.dim]);
  matmul(L.w_gate, s_.xb.data(), n_tokens, s_.gate.data());
  matmul(L.w_up, s_.xb.data(), n_tokens, s_.up.data());
  silu_mul(s_.gate.data(), s_.up.data(), int64_t{n_tokens} * c.ffn_dim);
  matmul(L.w_down, s_.gate.data(), n_tokens, s_.proj.data());
  add(s_.x.data(), s_.proj.data(), int64_t{n_tokens} * c.dim);
}

void LlamaModel::output_head(const Batch& batch, float* logits) {
  const ModelConfig& c = config_;
  // Gather the rows that need logits, norm them, and run the head on just those.
  int n_out = 0, t0 = 0;
  for (const BatchSeq& s : batch.seqs) {
    for (int j = s.n_new - s.n_logits; j < s.n_new; ++j)
      rmsnorm(&s_.x[(t0 + j) * c.dim], weights_.output_norm.data(), c.dim, c.norm_eps,
              &s_.xb[n_out++ * c.dim]);
    t0 += s.n_new;
  }
  matmul(weights_.output, s_.xb.data(), n_out, logits);
}

std::vector<float> LlamaModel::prefill(KvCache& kv, int slot, std::span<const int32_t> tokens) {
  Batch batch;
  batch.tokens.assign(tokens.begin(), tokens.end());
  batch.seqs.push_back({slot, kv.length(slot), static_cast<int>(tokens.size()), 1});
  std::vector<float> logits(config_.vocab_size);
  forward(batch, kv, logits.data());
  return logits;
}

std::vector<float> LlamaModel::decode(KvCache& kv, int slot, int32_t token) {
  return prefill(kv, slot, std::span<const int32_t>(&token, 1));
}

}  // namespace skiff
