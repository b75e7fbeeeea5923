// Token sampling: turns one position's logits into the next token, in vLLM's
// order: penalties → temperature → top-k → top-p → min-p → draw. Each Sampler
// owns a seeded std::mt19937_64 stream and draws in token-id order, so a seed
// reproduces a run on any platform and standard library, unless a last-bit
// difference between libms' std::exp happens to tip a draw (rare).
#pragma once
#include <cstdint>
#include <random>
#include <span>
#include <vector>

#include "engine/sampling_params.h"

namespace skiff {

// Logits are one position's scores over the vocabulary: finite, or -inf for a
// token masked out (never chosen). Non-finite values have a defined meaning, as
// a broken model or an extreme penalty can produce them: NaN counts as -inf, and
// +inf logits (a repetition penalty of 1e-38 makes them) take all the
// probability, shared equally. With no logit above -inf, sample() throws Error. The token history comes in with every call
// rather than living here: the engine owns the sequence, so preemption,
// recomputation and speculative rollback need no sampler bookkeeping. It costs
// O(prompt + output) per call, and only when a penalty is on.
// Not thread-safe: one Sampler per sequence.
class Sampler {
 public:
  // Validates params; throws Error. end_tokens: the ids that end generation
  // (EOS and the like), masked out with stop_token_ids while the output is
  // shorter than min_tokens.
  Sampler(const SamplingParams& params, int32_t vocab_size, std::span<const int32_t> end_tokens = {});

  // The next token. A greedy Sampler draws nothing from its stream; any other
  // consumes exactly one 64-bit output per call.
  int32_t sample(std::span<const float> logits, std::span<const int32_t> prompt_tokens,
                 std::span<const int32_t> output_tokens);

  // Writes to `probs` (vocab_size entries) the distribution sample() draws
  // from, after every penalty and filter: 0 for filtered-out tokens, one-hot
  // when greedy. Consumes no randomness (for rejection sampling in
  // speculative decoding, and for tests).
  void probabilities(std::span<const float> logits, std::span<const int32_t> prompt_tokens,
                     std::span<const int32_t> output_tokens, std::span<float> probs);

  // The logits after the penalties; `logits` itself when no penalty is on,
  // else a buffer valid until the next call.
  std::span<const float> penalized_logits(std::span<const float> logits,
                                          std::span<const int32_t> prompt_tokens,
                                          std::span<const int32_t> output_tokens);

  // For speculative decoding's rejection sampling, from this sampler's stream:
  // a uniform double in [0, 1) (one 64-bit output), and a token drawn in
  // proportion to `weights` (vocab_size entries, unnormalized, not all 0; one
  // output), scanned in id order as sample() draws.
  double uniform();
  int32_t draw_from(std::span<const float> weights);

  // Frees the vocabulary-sized scratch, which is allocated at the first call
  // that needs it: a queued request costs no memory per vocabulary entry.
  void release_scratch();

  const SamplingParams& params() const { return params_; }
  int32_t vocab_size() const { return vocab_size_; }
  // The seed in use, also when it came from std::random_device, so a random
  // run can be reproduced.
  uint64_t seed() const { return seed_; }

 private:
  // A token still in the running. weight = exp((logit - max logit) / temperature):
  // unnormalized, and exactly 1 for the most likely token.
  struct Candidate {
    float logit;
    float weight;
    int32_t id;
  };

  bool has_penalties() const;
  bool masks_ends(std::span<const int32_t> output_tokens) const;
  // Every logit that is not -inf is an end's (ends_ is sorted).
  bool only_ends_possible(std::span<const float> logits) const;
  void allocate_scratch();
  void check_tokens(std::span<const int32_t> tokens) const;
  void apply_repetition_penalty(std::span<const int32_t> prompt_tokens,
                                std::span<const int32_t> output_tokens);
  void apply_frequency_presence_penalties(std::span<const int32_t> output_tokens);
  int32_t argmax(std::span<const float> scores) const;
  // The survivors of top-k, top-p and min-p, a prefix of candidates_.
  std::span<Candidate> filter(std::span<const float> scores);
  std::span<Candidate> keep_nucleus(std::span<Candidate> candidates, double total_weight) const;
  std::span<Candidate> drop_below_min_p(std::span<Candidate> candidates) const;
  int32_t draw(std::span<Candidate> kept);

  SamplingParams params_;
  int32_t vocab_size_;
  uint64_t seed_;
  std::mt19937_64 rng_;
  std::vector<int32_t> ends_;  // masked before min_tokens: EOS (unless ignore_eos) and stop_token_ids
  // Scratch of vocab_size entries (or empty: see release_scratch), reused so
  // that a call allocates nothing.
  std::vector<float> penalized_;
  std::vector<int32_t> output_counts_;  // all zero between calls
  std::vector<uint8_t> seen_;           // all zero between calls
  std::vector<Candidate> candidates_;
};

}  // namespace skiff
