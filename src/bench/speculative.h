// What `skiff bench-spec` measures: one greedy request decoded plainly and
// with speculation at each k, on fresh engines over the same loaded models, and
// the cost of the target's verification pass of k+1 tokens as a multiple of one
// decode step (the number that decides whether speculation pays).
#pragma once
#include <cstdint>
#include <vector>

#include "engine/engine.h"

namespace skiff::bench {

struct SpecResult {
  int k = 0;  // 0: plain decoding
  int generated = 0;
  double decode_seconds = 0;  // after the first token (the prefill's)
  EngineMetrics metrics;
  std::vector<int32_t> tokens;
  double decode_tokens_per_second() const {
    return decode_seconds > 0 ? (generated - 1) / decode_seconds : 0.0;
  }
};

// One request of prompt, n_tokens greedy tokens (EOS ignored), on a fresh
// engine with `options` (its speculation as given: kNone for plain).
SpecResult run_greedy(Model& target, const Tokenizer& tokenizer, const EngineOptions& options,
                      const std::vector<int32_t>& prompt, int n_tokens);

// Seconds of one target forward pass of n_new tokens of one sequence after
// the prompt, the median of `repeats` (the KV is rolled back after each).
double forward_seconds(Model& target, const std::vector<int32_t>& prompt, int n_new, int repeats);

}  // namespace skiff::bench
