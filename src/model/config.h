// Hyperparameters of a decoder model, read from GGUF metadata or config.json.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "kernels/ops/ops.h"

namespace skiff {

// The FFN's activation of the gate: SwiGLU (Llama, Qwen, Phi-3) or GeGLU
// with the tanh approximation of GELU (Gemma).
enum class Activation { kSilu, kGeluTanh };

// What a decoder model is: its shape, and the short list of facts in which the
// architectures skiff runs differ (model/arch_*.cpp fill them in from a
// file's metadata; the forward pass reads them).
struct ModelConfig {
  // Bounds validate() puts on what a file may declare (the largest public
  // models are 10-50x below each), so that a batch's token count times any
  // width stays far inside int.
  static constexpr int64_t kMaxWidth = int64_t{1} << 20;
  static constexpr int64_t kMaxVocab = int64_t{1} << 24;
  static constexpr int64_t kMaxLayers = 4096;

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
  float rope_theta = 10000.0f;
  int rope_dim = 0;     // leading dims of each head that RoPE rotates
  RopeStyle rope_style = RopeStyle::kInterleaved;
  // Per-pair frequency divisors [rope_dim/2] (Llama-3, linear or LongRoPE scaling); empty: none.
  std::vector<float> rope_freq_factors;
  float rope_mscale = 1.0f;  // LongRoPE's attention factor: cos and sin are scaled by it
  // LongRoPE (Phi-3): rope_freq_factors holds the long set, for contexts past
  // rope_original_ctx, and this the short one, for contexts up to it (see
  // Model::set_context_length). Empty otherwise.
  std::vector<float> rope_freq_factors_short;
  int rope_original_ctx = 0;
  bool tied_output = false;  // output head shares the token embedding
  // llama.cpp's name of the file's quantization (general.file_type: "Q4_K_M");
  // empty when the file does not say or skiff has no name for its id.
  std::string file_type;

  // The facts architectures differ in. Defaults are Llama's.
  bool qkv_bias = false;     // Q/K/V projections add a bias (Qwen2)
  bool qk_norm = false;      // RMSNorm over each head of q and k before RoPE (Qwen3, Gemma 3)
  bool post_norms = false;   // RMSNorm of the attention and FFN outputs before the residual add (Gemma 2/3)
  Activation activation = Activation::kSilu;
  float embedding_scale = 1.0f;  // token embeddings are multiplied by it (Gemma: sqrt(dim))
  float attention_scale = 0.0f;  // scores = q·k × this; 0: 1/sqrt(head_dim)
  float attn_softcap = 0.0f;     // > 0: scores become cap·tanh(score/cap) (Gemma 2)
  float logit_softcap = 0.0f;    // > 0: the same for the output logits (Gemma 2)
  // Sliding-window attention: a layer marked in sliding_layers lets a token
  // at position p see only positions (p - sliding_window, p]. Empty: no window.
  int sliding_window = 0;
  std::vector<bool> sliding_layers;  // [n_layers]
  float rope_theta_sliding = 0.0f;   // windowed layers' RoPE base without scaling (Gemma 3); 0: as the others

  int q_dim() const { return n_heads * head_dim; }
  int kv_dim() const { return n_kv_heads * head_dim; }
  // Layer l's window, 0 when it attends to the whole context.
  int window(int layer) const { return sliding_layers.empty() || !sliding_layers[layer] ? 0 : sliding_window; }
  // Whether layer l uses the windowed layers' own RoPE table.
  bool sliding_rope(int layer) const { return rope_theta_sliding > 0 && window(layer) > 0; }
  float score_scale() const;
  // Throws Error when the shape is inconsistent.
  void validate() const;
};

// Llama-3 ("rope_type": "llama3") frequency divisors for each rotated pair.
std::vector<float> llama3_rope_factors(int rope_dim, float theta, float factor,
                                       float low_freq_factor, float high_freq_factor,
                                       int original_ctx);

}  // namespace skiff
