// Hyperparameters of a decoder model, read from GGUF metadata or config.json.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "kernels/ops/ops.h"

namespace skiff {

// The FFN's activation of the gate: SwiGLU (Llama, Qwen, Phi-3), GeGLU with
// the tanh approximation of GELU (Gemma), or gpt-oss's clamped SwiGLU:
// (clamp(up, ±7) + 1) · g·σ(1.702·g) with g = min(gate, 7).
enum class Activation { kSilu, kGeluTanh, kSwigluOai };

// A layer's rotary embedding: its base, and whether the model's frequency
// factors and attention factor (Llama-3, linear or LongRoPE scaling) apply.
// Gemma 3's local layers rotate at their own base without them.
struct RopeSpec {
  float theta = 10000.0f;
  bool scaled = true;
  bool operator==(const RopeSpec&) const = default;
};

// A layer's attention: whom a token sees and how q, k and the output are made.
struct AttentionSpec {
  int window = 0;         // > 0: a token at p sees only (p - window, p]; 0: the whole context
  RopeSpec rope;
  bool qkv_bias = false;  // Q/K/V projections add a bias (Qwen2, gpt-oss)
  bool o_bias = false;    // the output projection adds a bias (gpt-oss)
  bool sinks = false;     // a learned logit per query head joins each softmax's denominator (gpt-oss)
  bool qk_norm = false;   // RMSNorm over each head of q and k before RoPE (Qwen3, Gemma 3)
  bool qk_norm_whole = false;  // with qk_norm: over the whole q and k projections, all heads at once (OLMoE)
  bool post_norm = false; // RMSNorm of the output before the residual add (Gemma 2/3)
  float softcap = 0.0f;   // > 0: scores become cap·tanh(score/cap) (Gemma 2)
};

// YaRN (rope_type "yarn"): the parameters rope_freq_factors (a blend of
// interpolated and extrapolated frequencies per pair) and rope_mscale (its
// attention factor) were made from, kept to write them back to GGUF.
struct YarnRope {
  float factor = 0.0f;  // the context's extension; 0: not YaRN
  float beta_fast = 32.0f, beta_slow = 1.0f;  // rotations bounding the blend
  bool truncate = true;  // the blend's bounds rounded out to whole pairs (llama.cpp always does)
};

// A mixture of experts: each token goes through n_used of n_experts gated
// FFNs of ffn_dim, its output their sum weighted by the router: a softmax over
// the router's logits, of which the n_used largest are kept (a softmax over
// only those, as Granite-MoE and gpt-oss compute it, is the same as
// renormalising). A shared expert (a dense gated FFN of shared_ffn_dim) may
// add to every token's output.
struct ExpertsSpec {
  int n_experts = 0;
  int n_used = 0;        // experts per token (top-k)
  int ffn_dim = 0;       // each expert's hidden width
  bool normalize = false;   // the kept weights renormalised to sum 1 (Qwen3-MoE, Mixtral, Granite-MoE)
  int shared_ffn_dim = 0;   // > 0: the shared expert's hidden width
  bool shared_gate = false; // the shared expert's output × sigmoid(gate · x) (Qwen2-MoE)
  bool biases = false;      // the router and each expert's gate, up and down add biases (gpt-oss)
  bool operator==(const ExpertsSpec&) const = default;
};

// A layer's FFN: dense, a gated FFN of ModelConfig::ffn_dim, or a mixture of experts.
enum class FfnKind { kDense, kExperts };
struct FfnSpec {
  FfnKind kind = FfnKind::kDense;
  Activation activation = Activation::kSilu;
  bool post_norm = false;  // RMSNorm of the output before the residual add (Gemma 2/3)
  ExpertsSpec experts;     // kExperts
};

// One decoder layer: an attention block, then an FFN block, each with its
// pre-norm and residual connection.
struct LayerSpec {
  AttentionSpec attention;
  FfnSpec ffn;
};

struct ModelConfig {
  // Bounds validate() puts on what a file may declare (the largest public
  // models are 10-50x below each), so that a batch's token count times any
  // width stays far inside int.
  static constexpr int64_t kMaxWidth = int64_t{1} << 20;
  static constexpr int64_t kMaxVocab = int64_t{1} << 24;
  static constexpr int64_t kMaxLayers = 4096;
  static constexpr int kMaxExperts = 4096;  // DeepSeek-V3 and Qwen3-MoE have 256 and 128

  std::string arch = "llama";  // GGUF's general.architecture name
  std::string name;
  int n_layers = 0;
  int dim = 0;          // residual stream width
  int n_heads = 0;      // query heads
  int n_kv_heads = 0;   // key/value heads (grouped-query attention when < n_heads)
  int head_dim = 0;
  int ffn_dim = 0;      // gated FFN hidden width
  int vocab_size = 0;
  int max_ctx = 0;      // context length the model was trained for
  float norm_eps = 1e-5f;
  float rope_theta = 10000.0f;  // the file's RoPE base: the layers' unless their spec gives another
  int rope_dim = 0;     // leading dims of each head that RoPE rotates
  RopeStyle rope_style = RopeStyle::kInterleaved;
  // Per-pair frequency divisors [rope_dim/2] (Llama-3, linear or LongRoPE scaling); empty: none.
  std::vector<float> rope_freq_factors;
  float rope_mscale = 1.0f;  // LongRoPE's attention factor: cos and sin are scaled by it
  // LongRoPE (Phi-3): rope_freq_factors holds the long set, for contexts past
  // rope_original_ctx, and this the short one, for contexts up to it (see
  // Model::set_context_length). Empty otherwise.
  std::vector<float> rope_freq_factors_short;
  int rope_original_ctx = 0;  // also YaRN's original context
  YarnRope rope_yarn;
  bool tied_output = false;  // output head shares the token embedding
  // llama.cpp's name of the file's quantization (general.file_type: "Q4_K_M");
  // empty when the file does not say or skiff has no name for its id.
  std::string file_type;

  // The facts of the whole model. Defaults are Llama's.
  float embedding_scale = 1.0f;  // token embeddings are multiplied by it (Gemma: sqrt(dim))
  float attention_scale = 0.0f;  // scores = q·k × this; 0: 1/sqrt(head_dim)
  float logit_softcap = 0.0f;    // > 0: logits become cap·tanh(logit/cap) (Gemma 2)
  float residual_scale = 1.0f;   // each block's output is multiplied by it before the residual add (Granite)
  float logit_scale = 1.0f;      // logits are multiplied by it (Granite: 1 / logits_scaling)
  // What each layer is [n_layers]; the facts the families differ in layer by
  // layer. Loaders fill them (model/arch_*.cpp), the forward pass composes them.
  std::vector<LayerSpec> layers;

  int q_dim() const { return n_heads * head_dim; }
  int kv_dim() const { return n_kv_heads * head_dim; }
  // Layer l's window, 0 when it attends to the whole context.
  int window(int layer) const { return layers[layer].attention.window; }
  // The widest FFN hidden layer of any layer (dense, shared expert), 0 when none.
  int widest_dense_ffn() const;
  // The mixtures' widest counts, field by field (what scratch buffers hold); zeros when none.
  ExpertsSpec widest_experts() const;
  float score_scale() const;
  // Throws Error when the shape is inconsistent.
  void validate() const;
};

// Llama-3 ("rope_type": "llama3") frequency divisors for each rotated pair.
std::vector<float> llama3_rope_factors(int rope_dim, float theta, float factor,
                                       float low_freq_factor, float high_freq_factor,
                                       int original_ctx);

// YaRN's frequency divisors for each rotated pair, as transformers'
// _compute_yarn_parameters computes them: pairs rotating more than beta_fast
// times over original_ctx keep their frequency, those rotating less than
// beta_slow times are slowed by the factor, with a linear ramp between.
std::vector<float> yarn_rope_factors(int rope_dim, float theta, const YarnRope& yarn, int original_ctx);
// YaRN's default attention factor: 0.1·ln(factor)·mscale + 1 (1 for factor <= 1).
float yarn_mscale(float factor, float mscale = 1.0f);

}  // namespace skiff
