// The Llama architecture (Llama 2/3, Mistral, TinyLlama, SmolLM): RMSNorm,
// RoPE, grouped-query attention, SwiGLU FFN. One forward pass over a ragged
// batch; prefill and decode are its two common shapes.
#pragma once
#include <span>
#include <vector>

#include "kv/kv_cache.h"
#include "model/batch.h"
#include "model/config.h"
#include "model/weights.h"

namespace skiff {

class LlamaModel {
 public:
  LlamaModel(ModelConfig config, LlamaWeights weights);

  const ModelConfig& config() const { return config_; }
  const LlamaWeights& weights() const { return weights_; }

  // A KV cache shaped for this model: n_slots sequences of up to max_ctx tokens.
  KvCache make_kv_cache(int n_slots, int max_ctx) const;

  // Runs every new token of the batch through the model, appending their K/V
  // to each sequence's slot, and writes logits for the last n_logits tokens of
  // each sequence, in batch order, to logits [batch.n_logits(), vocab].
  void forward(const Batch& batch, KvCache& kv, float* logits);

  // One sequence: the whole prompt as one batch; returns the last token's logits.
  std::vector<float> prefill(KvCache& kv, int slot, std::span<const int32_t> tokens);
  // One sequence, one new token.
  std::vector<float> decode(KvCache& kv, int slot, int32_t token);

 private:
  void check_batch(const Batch& batch, const KvCache& kv) const;
  void attention_layer(const Batch& batch, KvCache& kv, int layer);
  void ffn_layer(int layer, int n_tokens);
  void output_head(const Batch& batch, float* logits);
  void reserve(int n_tokens);

  ModelConfig config_;
  LlamaWeights weights_;
  std::vector<float> rope_freq_;  // [rope_dim / 2]

  struct AttentionItem {
    int seq;          // index in the batch
    int first_token;  // first of its query tokens, in batch order
    int n_tokens;
    int kv_head;
  };
  // Scratch reused across steps, grown to the largest batch seen.
  struct Scratch {
    std::vector<float> x;       // residual stream [n_tokens, dim]
    std::vector<float> xb;      // normed input [n_tokens, dim]
    std::vector<float> q;       // [n_tokens, q_dim]
    std::vector<float> k;       // [n_tokens, kv_dim]
    std::vector<float> v;       // [n_tokens, kv_dim]
    std::vector<float> att;     // attention output [n_tokens, q_dim]
    std::vector<float> proj;    // a projection back to the stream [n_tokens, dim]
    std::vector<float> gate;    // [n_tokens, ffn_dim]
    std::vector<float> up;      // [n_tokens, ffn_dim]
    std::vector<int> token_seq; // which batch sequence each token belongs to [n_tokens]
    std::vector<int> token_pos; // each token's position in its sequence [n_tokens]
    std::vector<AttentionItem> attention_items;
  } s_;
};

}  // namespace skiff
