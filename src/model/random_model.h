// Random-weight models of any family skiff runs, in GGUF, laid out as
// llama.cpp's architecture of that name expects (the family's own metadata
// keys and tensors, as `skiff quantize` writes them): for loader tests and
// for benchmarks at any shape without downloading weights. The tokenizer is
// copied from another GGUF.
#pragma once
#include <cstdint>
#include <string>

#include "gguf/file_type.h"
#include "kernels/dtype.h"

namespace skiff {

struct RandomModelSpec {
  std::string arch = "llama";  // GGUF's general.architecture: llama, qwen3moe, olmoe, ...
  int n_layers = 12;
  int dim = 768;
  int n_heads = 12;
  int n_kv_heads = 12;
  int ffn_dim = 2048;
  int head_dim = 0;        // 0: dim / n_heads
  // A mixture of experts in every layer when n_experts > 0.
  int n_experts = 0;
  int n_experts_used = 0;
  int expert_ffn_dim = 0;
  int shared_expert_ffn_dim = 0;  // the families with a shared expert (qwen2moe)
  // Every tokenizer.* key is copied from here; its token count is the vocab size.
  std::string vocab_path;
  // The 2-D weights' type (or the Q4_K_M / Q5_K_M mix); norm weights stay F32.
  gguf::FileType file_type = DType::F16;
  int context_length = 2048;
  float rope_theta = 10000.0f;
  float norm_eps = 1e-5f;
  uint64_t seed = 1;
  std::string name = "random-model";
};

// Where the default vocab lives: $SKIFF_MODELS/gguf/llama-2-tiny-random.gguf,
// or ../shared/models/... relative to the working directory.
std::string default_random_llama_vocab();

// Writes the model, generating one tensor at a time (weights ~ N(0, 0.02),
// norm weights 1) so memory stays at the largest tensor. The same spec and
// seed give the same file. Progress goes to stderr. Throws Error on a bad spec.
void write_random_model(const RandomModelSpec& spec, const std::string& out_path);

}  // namespace skiff
