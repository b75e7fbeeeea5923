// Single-sequence generation: prefill the prompt as one batch, then decode one
// token per step with a sampler, timing both phases. The continuous-batching
// engine generalises this loop to many sequences.
#pragma once
#include <cstdint>
#include <functional>
#include <span>

#include "engine/sampler.h"
#include "model/model.h"

namespace skiff {

struct GenerationStats {
  int prompt_tokens = 0;
  double prefill_seconds = 0;
  double first_token_seconds = 0;  // from start of prefill to the first sampled token
  int generated_tokens = 0;
  int decode_steps = 0;            // forward passes after prefill
  double decode_seconds = 0;
  bool stopped_at_end_token = false;
};

struct GenerateOptions {
  int max_tokens = 256;
  SamplingParams sampling;
  // True for tokens that end generation (EOS, end-of-turn); such a token is not emitted.
  std::function<bool(int32_t)> is_end_token;
};

// Calls on_token for each generated token as soon as it is sampled; returning
// false stops generation. Uses KV sequence 0, which must be empty and large
// enough for the prompt (Error otherwise); generation stops when the sequence
// reaches the cache's max_seq_len.
GenerationStats generate(Model& model, PagedKvCache& kv, std::span<const int32_t> prompt,
                         const GenerateOptions& options,
                         const std::function<bool(int32_t)>& on_token);

}  // namespace skiff
