#include "model/model.h"

#include <omp.h>

#include <algorithm>
#include <cmath>
#include <limits>

#include "base/error.h"
#include "kernels/attention/attention.h"
#include "kernels/matmul/matmul.h"
#include "kernels/matmul/matmul_experts.h"
#include "kernels/ops/ops.h"
#include "model/experts.h"
#include "model/parallel_tokens.h"

namespace skiff {

namespace {

// The index of `value` in `distinct`, appended when new.
template <class T>
int index_in(std::vector<T>& distinct, const T& value) {
  const auto it = std::find(distinct.begin(), distinct.end(), value);
  if (it != distinct.end()) return static_cast<int>(it - distinct.begin());
  distinct.push_back(value);
  return static_cast<int>(distinct.size()) - 1;
}

}  // namespace

Model::Model(ModelConfig config, ModelWeights weights)
    : config_(std::move(config)), weights_(std::move(weights)) {
  config_.validate();
  // The layers share a RoPE table and an attention plan per distinct RoPE and window.
  std::vector<RopeSpec> ropes;
  std::vector<int> windows;
  for (const LayerSpec& layer : config_.layers) {
    layer_rope_.push_back(index_in(ropes, layer.attention.rope));
    layer_plan_.push_back(index_in(windows, layer.attention.window));
  }
  for (const RopeSpec& rope : ropes) ropes_.push_back({rope, std::vector<float>(config_.rope_dim / 2), {}, {}});
  for (int window : windows) s_.plans.emplace_back().window = window;
  set_context_length(config_.max_ctx);
}

void Model::set_context_length(int n_ctx) {
  const ModelConfig& c = config_;
  const bool short_set = !c.rope_freq_factors_short.empty() && n_ctx <= c.rope_original_ctx;
  const std::vector<float>& factors = short_set ? c.rope_freq_factors_short : c.rope_freq_factors;
  for (RopeTable& rope : ropes_) {
    const bool scaled = rope.spec.scaled && !factors.empty();
    rope_frequencies(c.rope_dim, rope.spec.theta, scaled ? factors.data() : nullptr, rope.freq.data());
  }
}

PagedKvCache Model::make_kv_cache(int n_seqs, int max_ctx, KvType type, int block_size) const {
  const int blocks_per_seq = (max_ctx + block_size - 1) / block_size;
  PagedKvCache kv({config_.n_layers, config_.n_kv_heads, config_.head_dim}, type, block_size,
                  n_seqs * blocks_per_seq, max_ctx);
  for (int i = 0; i < n_seqs; ++i) kv.create_sequence();
  return kv;
}

void Model::grow_scratch(int n_tokens) {
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
  grow(s_.gate, t * c.widest_dense_ffn());
  grow(s_.up, t * c.widest_dense_ffn());
  const ExpertsSpec e = c.widest_experts();
  const size_t slots = t * e.n_used;
  grow(s_.router_logits, t * e.n_experts);
  grow(s_.expert_weights, slots);
  if (s_.expert_ids.size() < slots) s_.expert_ids.resize(slots);
  grow(s_.expert_gate, slots * e.ffn_dim);
  grow(s_.expert_up, slots * e.ffn_dim);
  grow(s_.expert_out, slots * c.dim);
  for (RopeTable& rope : ropes_) {
    grow(rope.cos, t * (c.rope_dim / 2));
    grow(rope.sin, t * (c.rope_dim / 2));
  }
  if (s_.token_seq.size() < t) {
    s_.token_seq.resize(t);
    s_.token_pos.resize(t);
  }
}

void Model::check_batch(const Batch& batch, const PagedKvCache& kv) const {
  size_t n = 0;
  for (const BatchSeq& s : batch.seqs) {
    if (!kv.has_sequence(s.seq_id)) fail("batch: KV sequence {} does not exist", s.seq_id);
    if (s.first_pos != kv.length(s.seq_id))
      fail("batch: sequence {} starts at {} but has {} cached tokens", s.seq_id,
           s.first_pos, kv.length(s.seq_id));
    if (s.n_new <= 0 || s.n_logits < 0 || s.n_logits > s.n_new)
      fail("batch: sequence {} has {} new tokens and {} logits", s.seq_id, s.n_new,
           s.n_logits);
    if (s.first_pos + s.n_new > kv.max_seq_len())
      fail("context full: {} tokens do not fit the context of {}", s.first_pos + s.n_new,
           kv.max_seq_len());
    n += s.n_new;
  }
  if (n != batch.tokens.size()) fail("batch: {} tokens but sequences claim {}", batch.tokens.size(), n);
  // Scratch offsets are token x width in int (config widths are bounded by validate()).
  const ExpertsSpec e = config_.widest_experts();
  const int64_t widest = std::max<int64_t>({config_.dim, config_.q_dim(), config_.widest_dense_ffn(), e.n_experts,
                                            int64_t{e.n_used} * std::max(e.ffn_dim, config_.dim)});
  if (static_cast<int64_t>(n) * widest > std::numeric_limits<int32_t>::max())
    fail("batch: {} tokens of width {} are too many for one forward pass", n, widest);
  for (int32_t tok : batch.tokens)
    if (tok < 0 || tok >= config_.vocab_size) fail("token id {} is outside the vocabulary", tok);
}

void Model::forward(const Batch& batch, PagedKvCache& kv, float* logits) {
  check_batch(batch, kv);
  for (const BatchSeq& s : batch.seqs) kv.check_writable(s.seq_id, s.first_pos, s.first_pos + s.n_new);
  forward_checked(batch, kv, logits);
}

void Model::forward_and_append(const Batch& batch, PagedKvCache& kv, float* logits) {
  check_batch(batch, kv);  // first, so a bad batch is named as such, not as a full pool
  for (const BatchSeq& s : batch.seqs)
    if (!kv.reserve(s.seq_id, s.first_pos + s.n_new))
      fail("out of KV cache blocks: {} tokens of sequence {} do not fit ({} of {} blocks free)",
           s.first_pos + s.n_new, s.seq_id, kv.pool().n_free(), kv.pool().n_blocks());
  forward_checked(batch, kv, logits);
  for (const BatchSeq& s : batch.seqs) kv.set_length(s.seq_id, s.first_pos + s.n_new);
}

void Model::forward_checked(const Batch& batch, PagedKvCache& kv, float* logits) {
  const ModelConfig& c = config_;
  const int n_tokens = static_cast<int>(batch.tokens.size());
  grow_scratch(n_tokens);
  for (int i = 0, t = 0; i < static_cast<int>(batch.seqs.size()); ++i)
    for (int j = 0; j < batch.seqs[i].n_new; ++j, ++t) {
      s_.token_seq[t] = i;
      s_.token_pos[t] = batch.seqs[i].first_pos + j;
    }
  for_each_token(n_tokens, c.dim, [&](int t) {
    float* x = s_.x.data() + static_cast<size_t>(t) * c.dim;
    matrix_row(weights_.token_embedding, batch.tokens[t], x);
    if (c.embedding_scale != 1.0f)
      for (int i = 0; i < c.dim; ++i) x[i] *= c.embedding_scale;
  });
  rope_tables(n_tokens);

  for (AttentionPlan& plan : s_.plans) plan_attention(batch, kv, plan);
  for (int l = 0; l < c.n_layers; ++l) {
    attention_block(batch, kv, l);
    ffn_block(l, n_tokens);
  }
  output_head(batch, logits);
}

void Model::ffn_block(int l, int n_tokens) {
  const FfnSpec& spec = config_.layers[l].ffn;
  const FfnWeights& w = weights_.layers[l].ffn;
  norm_tokens(w.norm, n_tokens);
  switch (spec.kind) {
    case FfnKind::kDense: dense_ffn(spec.activation, w, n_tokens); break;
    case FfnKind::kExperts: expert_ffn(spec, w, n_tokens); break;
  }
  add_residual(w.post_norm, n_tokens);
}

namespace {

// gpt-oss's clamped SwiGLU (its constants, which llama.cpp also fixes).
void swiglu_oai(float* gate, const float* up, int64_t n) {
  constexpr float kAlpha = 1.702f, kLimit = 7.0f;
  for (int64_t i = 0; i < n; ++i) {
    const float g = std::min(gate[i], kLimit), u = std::clamp(up[i], -kLimit, kLimit);
    gate[i] = (u + 1.0f) * g / (1.0f + std::exp(-kAlpha * g));
  }
}

// gate = act(gate) ⊙ up over n values, across the threads.
void gated_activation(Activation activation, float* gate, const float* up, int64_t n) {
  for_each_range(n, [&](int64_t begin, int64_t end) {
    switch (activation) {
      case Activation::kSilu: silu_mul(gate + begin, up + begin, end - begin); break;
      case Activation::kGeluTanh: gelu_tanh_mul(gate + begin, up + begin, end - begin); break;
      case Activation::kSwigluOai: swiglu_oai(gate + begin, up + begin, end - begin); break;
    }
  });
}

// Each slot's routed row (width floats) += its expert's bias; ids[t * k + j] is token t's j-th expert.
void add_expert_biases(float* rows, const std::vector<float>& bias, const ExpertRouting& routing, const int32_t* ids,
                       int k, int64_t width) {
  if (bias.empty()) return;
  for_each_token(routing.n_tokens() * k, width, [&](int s) {
    add(rows + routing.row_of(s / k, s % k) * width, &bias[ids[s] * width], static_cast<int>(width));
  });
}

}  // namespace

void Model::dense_ffn(Activation activation, const FfnWeights& w, int n_tokens) {
  const MatmulProduct gate_up[] = {{&w.w_gate, s_.gate.data()}, {&w.w_up, s_.up.data()}};
  matmul_many(gate_up, s_.xb.data(), n_tokens);
  gated_activation(activation, s_.gate.data(), s_.up.data(), n_tokens * w.w_gate.rows);
  matmul(w.w_down, s_.gate.data(), n_tokens, s_.proj.data());
}

void Model::expert_ffn(const FfnSpec& spec, const FfnWeights& w, int n_tokens) {
  const ExpertsSpec& e = spec.experts;
  const int d = config_.dim, k = e.n_used;
  // Which experts a token gets must not depend on its batch (a router too
  // short for panels, 8 or 40 experts, is stored as rows).
  const MatmulProduct router{&w.router, s_.router_logits.data(), /*batch_invariant=*/true};
  matmul_many({&router, 1}, s_.xb.data(), n_tokens);
  for_each_token(n_tokens, e.n_experts, [&](int t) {
    float* logits = &s_.router_logits[t * e.n_experts];
    if (!w.router_bias.empty()) add(logits, w.router_bias.data(), e.n_experts);
    route_token(e, logits, &s_.expert_ids[t * k], &s_.expert_weights[t * k]);
  });
  const int32_t* ids = s_.expert_ids.data();
  const ExpertRouting routing(ids, k, n_tokens, e.n_experts);
  // A shared expert's products run in the routed experts' parallel regions.
  const bool shared = e.shared_ffn_dim > 0;
  const MatmulProduct shared_gate_up[] = {{&w.w_gate, s_.gate.data()}, {&w.w_up, s_.up.data()}};
  const ExpertProduct gate_up[] = {{w.experts_gate, s_.expert_gate.data()}, {w.experts_up, s_.expert_up.data()}};
  matmul_experts(gate_up, routing, s_.xb.data(), ExpertInput::kPerToken,
                 shared ? TokenProducts{shared_gate_up, s_.xb.data()} : TokenProducts{});
  add_expert_biases(s_.expert_gate.data(), w.experts_gate_bias, routing, ids, k, e.ffn_dim);
  add_expert_biases(s_.expert_up.data(), w.experts_up_bias, routing, ids, k, e.ffn_dim);
  gated_activation(spec.activation, s_.expert_gate.data(), s_.expert_up.data(), int64_t{n_tokens} * k * e.ffn_dim);
  if (shared) gated_activation(spec.activation, s_.gate.data(), s_.up.data(), int64_t{n_tokens} * e.shared_ffn_dim);
  const MatmulProduct shared_down{&w.w_down, s_.proj.data()};
  const ExpertProduct down{w.experts_down, s_.expert_out.data()};
  matmul_experts({&down, 1}, routing, s_.expert_gate.data(), ExpertInput::kPerRoutedRow,
                 shared ? TokenProducts{{&shared_down, 1}, s_.gate.data()} : TokenProducts{});
  add_expert_biases(s_.expert_out.data(), w.experts_down_bias, routing, ids, k, d);
  for_each_token(n_tokens, int64_t{k} * d, [&](int t) {
    float* out = &s_.proj[t * d];
    if (!shared) {
      std::fill(out, out + d, 0.0f);
    } else if (e.shared_gate) {
      const float g = 1.0f / (1.0f + std::exp(-dot(w.shared_gate.data(), &s_.xb[t * d], d)));
      for (int i = 0; i < d; ++i) out[i] *= g;
    }
    for (int j = 0; j < k; ++j) {
      const float weight = s_.expert_weights[t * k + j];
      const float* y = &s_.expert_out[static_cast<size_t>(routing.row_of(t, j)) * d];
      for (int i = 0; i < d; ++i) out[i] += weight * y[i];
    }
  });
}

void Model::rope_tables(int n_tokens) {
  const ModelConfig& c = config_;
  const size_t pairs = c.rope_dim / 2;
  for_each_token(n_tokens, c.rope_dim, [&](int t) {
    for (RopeTable& rope : ropes_) {
      float* cos = &rope.cos[t * pairs];
      float* sin = &rope.sin[t * pairs];
      rope_angles(rope.freq.data(), c.rope_dim, s_.token_pos[t], cos, sin);
      if (rope.spec.scaled && c.rope_mscale != 1.0f)  // LongRoPE's attention factor
        for (size_t i = 0; i < pairs; ++i) {
          cos[i] *= c.rope_mscale;
          sin[i] *= c.rope_mscale;
        }
    }
  });
}

void Model::norm_tokens(const std::vector<float>& weight, int n_tokens) {
  const int d = config_.dim;
  for_each_token(n_tokens, d, [&](int t) {
    rmsnorm(&s_.x[t * d], weight.data(), d, config_.norm_eps, &s_.xb[t * d]);
  });
}

void Model::add_residual(const std::vector<float>& post_norm, int n_tokens) {
  const int d = config_.dim;
  for_each_token(n_tokens, d, [&](int t) {
    float* proj = &s_.proj[t * d];
    if (!post_norm.empty()) rmsnorm(proj, post_norm.data(), d, config_.norm_eps, proj);
    if (config_.residual_scale != 1.0f)
      for (int i = 0; i < d; ++i) proj[i] *= config_.residual_scale;
    add(&s_.x[t * d], proj, d);
  });
}

void Model::output_head(const Batch& batch, float* logits) {
  const ModelConfig& c = config_;
  // Gather the rows that need logits, norm them, and run the head on just those.
  s_.logit_tokens.clear();
  int t0 = 0;
  for (const BatchSeq& s : batch.seqs) {
    for (int j = s.n_new - s.n_logits; j < s.n_new; ++j) s_.logit_tokens.push_back(t0 + j);
    t0 += s.n_new;
  }
  const int n_out = static_cast<int>(s_.logit_tokens.size());
  for_each_token(n_out, c.dim, [&](int i) {
    rmsnorm(&s_.x[s_.logit_tokens[i] * c.dim], weights_.output_norm.data(), c.dim, c.norm_eps,
            &s_.xb[i * c.dim]);
  });
  matmul(weights_.output, s_.xb.data(), n_out, logits);
  const int64_t v = c.vocab_size;
  if (c.logit_scale != 1.0f)
    for_each_token(n_out, v, [&](int i) {
      for (int64_t j = 0; j < v; ++j) logits[i * v + j] *= c.logit_scale;
    });
  if (c.logit_softcap > 0) for_each_token(n_out, v, [&](int i) { softcap(logits + i * v, v, c.logit_softcap); });
}

void Model::prefill(PagedKvCache& kv, int seq_id, std::span<const int32_t> tokens, float* logits) {
  Batch batch;
  batch.tokens.assign(tokens.begin(), tokens.end());
  batch.seqs.push_back({seq_id, kv.length(seq_id), static_cast<int>(tokens.size()), 1});
  forward_and_append(batch, kv, logits);
}

std::vector<float> Model::prefill(PagedKvCache& kv, int seq_id, std::span<const int32_t> tokens) {
  std::vector<float> logits(config_.vocab_size);
  prefill(kv, seq_id, tokens, logits.data());
  return logits;
}

void Model::decode(PagedKvCache& kv, int seq_id, int32_t token, float* logits) {
  prefill(kv, seq_id, std::span<const int32_t>(&token, 1), logits);
}

std::vector<float> Model::decode(PagedKvCache& kv, int seq_id, int32_t token) {
  return prefill(kv, seq_id, std::span<const int32_t>(&token, 1));
}

}  // namespace skiff
