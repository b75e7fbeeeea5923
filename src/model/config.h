// Hyperparameters of a decoder model, read from GGUF metadata or config.json.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "kernels/ops.h"

namespace skiff {

struct ModelConfig {
  // Bounds validate() puts on what a file may declare (the largest public
  // models are 10-50x below each), so that a batch's token count times any
  // width stays far inside int.
  static constexpr int64_t kMaxWidth = int64_t{1} << 20;
  static constexpr int64_t kMaxVocab = int64_t{1} << 24;
  static constexpr int64_t kMaxLayers = 4096;

  std::string arch = "llama";
  std::string name;
  int n_layers = 0;
  int dim = 0;          // residual stream width
  int n_heads = 0;      // query heads
  int n_kv_heads = 0;   // key/value heads (grouped-query attention when < n_heads)
  int head_dim = 0;
  int ffn_dim = 0;      // SwiGLU hidden width
  int vocab_size = 0;
  int max_ctx = 0;      // context length the model was trained for
  float norm_eps = 1e-5f;
  float rope_theta = 10000.0f;
  int rope_dim = 0;     // leading dims of each head that RoPE rotates
  RopeStyle rope_style = RopeStyle::kInterleaved;
  // Per-pair frequency divisors [rope_dim/2] (Llama-3 or linear scaling); empty: none.
  std::vector<float> rope_freq_factors;
  bool tied_output = false;  // output head shares the token embedding
  // llama.cpp's name of the file's quantization (general.file_type: "Q4_K_M");
  // empty when the file does not say or skiff has no name for its id.
  std::string file_type;

  int q_dim() const { return n_heads * head_dim; }
  int kv_dim() const { return n_kv_heads * head_dim; }
  // Throws Error when the shape is inconsistent.
  void validate() const;
};

// Llama-3 ("rope_type": "llama3") frequency divisors for each rotated pair.
std::vector<float> llama3_rope_factors(int rope_dim, float theta, float factor,
                                       float low_freq_factor, float high_freq_factor,
                                       int original_ctx);

}  // namespace skiff
