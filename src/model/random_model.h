// Random-weight Llama models in GGUF, laid out exactly as llama.cpp's "llama"
// architecture expects: for loader tests and for benchmarks at any size
// without downloading weights. The tokenizer is copied from another GGUF.
#pragma once
#include <cstdint>
#include <string>

#include "gguf/file_type.h"
#include "kernels/dtype.h"

namespace skiff {

struct RandomLlamaSpec {
  int n_layers = 12;
  int dim = 768;
  int n_heads = 12;
  int n_kv_heads = 12;
  int ffn_dim = 2048;
  // Every tokenizer.* key is copied from here; its token count is the vocab size.
  std::string vocab_path;
  // The 2-D weights' type (or the Q4_K_M / Q5_K_M mix); norm weights stay F32.
  gguf::FileType file_type = DType::F16;
  int context_length = 2048;
  float rope_theta = 10000.0f;
  float norm_eps = 1e-5f;
  uint64_t seed = 1;
  std::string name = "random-llama";
};

// Where the default vocab lives: $SKIFF_MODELS/gguf/llama-2-tiny-random.gguf,
// or ../shared/models/... relative to the working directory.
std::string default_random_llama_vocab();

// Writes the model, generating one tensor at a time (weights ~ N(0, 0.02),
// norm weights 1) so memory stays at the largest tensor. The same spec and
// seed give the same file. Progress goes to stderr. Throws Error on a bad spec.
void write_random_llama(const RandomLlamaSpec& spec, const std::string& out_path);

}  // namespace skiff
