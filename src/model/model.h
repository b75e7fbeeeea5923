// A decoder-only transformer: RMSNorm, RoPE, grouped-query attention, a gated
// FFN. One forward pass over a ragged batch serves every architecture skiff
// runs (Llama, Mistral, Qwen2/3, Gemma 2/3, Phi-3): each layer is an attention
// block and an FFN block composed from the layer's LayerSpec (model/config.h;
// the families fill them in: model/architecture.h). Prefill and decode are its
// two common shapes.
#pragma once
#include <span>
#include <vector>

#include "kv/paged_kv_cache.h"
#include "model/batch.h"
#include "model/config.h"
#include "model/weights.h"

namespace skiff {

class Model {
 public:
  Model(ModelConfig config, ModelWeights weights);

  const ModelConfig& config() const { return config_; }

  // The longest context the caller will run (the engine's max_model_len,
  // perplexity's chunk). It matters only for LongRoPE (Phi-3), whose short
  // factors apply up to the original context and long ones past it, as
  // llama.cpp chooses by -c; until called, the model's own context decides.
  void set_context_length(int n_ctx);
  const ModelWeights& weights() const { return weights_; }

  // A paged KV cache shaped for this model with blocks for n_seqs sequences
  // of up to max_ctx tokens, and those sequences created (ids 0..n_seqs-1).
  PagedKvCache make_kv_cache(int n_seqs, int max_ctx, KvType type = KvType::kF16,
                             int block_size = 16) const;

  // Runs every new token of the batch through the model, writing their K/V
  // into each sequence's cache, and writes logits for the last n_logits tokens of
  // each sequence, in batch order, to logits [batch.n_logits(), vocab].
  // The positions written must be reserved and unshared already (throws Error
  // otherwise): the cache's owner reserves them, and sets each sequence's
  // length past them after the pass (the engine's Scheduler does both).
  void forward(const Batch& batch, PagedKvCache& kv, float* logits);
  // forward() for a caller that owns its cache outright (tests, perplexity,
  // benchmarks): reserves the new positions first (throws Error when the
  // pool cannot hold them) and sets the lengths after.
  void forward_and_append(const Batch& batch, PagedKvCache& kv, float* logits);

  // One sequence by forward_and_append: the whole prompt as one batch; the
  // last token's logits (vocab_size floats), returned or written to `logits`.
  std::vector<float> prefill(PagedKvCache& kv, int seq_id, std::span<const int32_t> tokens);
  void prefill(PagedKvCache& kv, int seq_id, std::span<const int32_t> tokens, float* logits);
  // One sequence, one new token.
  std::vector<float> decode(PagedKvCache& kv, int seq_id, int32_t token);
  void decode(PagedKvCache& kv, int seq_id, int32_t token, float* logits);

 private:
  void check_batch(const Batch& batch, const PagedKvCache& kv) const;
  // The pass itself, on a checked batch whose positions are writable.
  void forward_checked(const Batch& batch, PagedKvCache& kv, float* logits);
  struct AttentionPlan;
  void plan_attention(const Batch& batch, const PagedKvCache& kv, AttentionPlan& plan);
  void rope_tables(int n_tokens);
  void attention_block(const Batch& batch, PagedKvCache& kv, int layer);
  // Biases, per-head norms and RoPE of one token's q and k.
  void project_token(int layer, int t);
  void attend(const Batch& batch, const PagedKvCache& kv, int layer);
  // The FFN of the layer's kind between its norm and residual.
  void ffn_block(int layer, int n_tokens);
  // proj = the gated FFN of w's dense matrices (a dense layer's, a mixture's shared expert).
  void dense_ffn(Activation activation, const FfnWeights& w, int n_tokens);
  // proj = each token's routed experts' outputs, weighed, plus the shared expert's.
  void expert_ffn(const FfnSpec& spec, const FfnWeights& w, int n_tokens);
  // xb = rmsnorm(x) · weight for each token.
  void norm_tokens(const std::vector<float>& weight, int n_tokens);
  // x += proj, after proj = rmsnorm(proj) · post_norm where the layer's spec
  // norms the block's output: the residual connection.
  void add_residual(const std::vector<float>& post_norm, int n_tokens);
  void output_head(const Batch& batch, float* logits);
  void grow_scratch(int n_tokens);

  ModelConfig config_;
  ModelWeights weights_;
  // A RoPE the layers rotate by (most models have one; Gemma 3 a second for
  // its local layers): its frequencies [rope_dim / 2], and the angles of each
  // token of the pass [n_tokens, rope_dim / 2], shared by its layers.
  struct RopeTable {
    RopeSpec spec;
    std::vector<float> freq;
    std::vector<float> cos, sin;
  };
  std::vector<RopeTable> ropes_;
  std::vector<int> layer_rope_;  // [n_layers]: each layer's index in ropes_
  std::vector<int> layer_plan_;  // [n_layers]: each layer's index in s_.plans

  // One unit of attention work: some query tokens of one sequence and KV head
  // against a range of its cached positions.
  struct AttentionItem {
    int seq;          // index in the batch
    int first_token;  // first of its query tokens, in batch order
    int n_tokens;
    int kv_head;
    int pos_begin;    // the cached positions it reads
    int pos_end;
  };
  struct AttentionGroup {
    int first_item;   // items [first_item, last_item) split one query tile's context
    int last_item;
  };
  // Planned once per forward pass for each window the layers have (0: the
  // global layers); a window's items read only the positions it reaches.
  struct AttentionPlan {
    int window = 0;
    std::vector<AttentionItem> items;
    std::vector<AttentionGroup> groups;
    int most_items = 0;  // in one group
    bool split = false;  // threads share groups' items, which merge in a second pass
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
    std::vector<float> gate;    // [n_tokens, widest dense FFN]
    std::vector<float> up;      // [n_tokens, widest dense FFN]
    // A mixture of experts' (sized by ModelConfig::widest_experts): the router's logits
    // [n_tokens, n_experts], each token's experts and weights [n_tokens, n_used],
    // their hidden rows [n_tokens × n_used, expert ffn_dim] and outputs [n_tokens × n_used, dim].
    std::vector<float> router_logits;
    std::vector<int32_t> expert_ids;
    std::vector<float> expert_weights;
    std::vector<float> expert_gate, expert_up, expert_out;
    std::vector<int> token_seq; // which batch sequence each token belongs to [n_tokens]
    std::vector<int> token_pos; // each token's position in its sequence [n_tokens]
    std::vector<int> logit_tokens;  // the tokens that need logits, in output order
    std::vector<AttentionPlan> plans;  // one per distinct window of the layers
    std::vector<float> partials;  // [kAttentionMaxRows][head_dim + 2] per item (split) or per thread and item of a group
  } s_;
};

}  // namespace skiff
