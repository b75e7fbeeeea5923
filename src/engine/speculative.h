// Verifying a draft against the target's logits so that the tokens output
// are distributed exactly as plain sampling's (Leviathan et al. 2023, Chen et
// al. 2023). Row i of the target's logits scores the token after the draft's
// first i tokens; p_i is the request's distribution after all its transforms
// (penalties over the context so far, temperature, top-k/p, min-p), q_i the
// drafter's. Greedy: accept the longest prefix equal to the target's argmax,
// then output the argmax. Sampling: accept drafted token d with probability
// min(1, p_i(d)/q_i(d)); on rejection draw from norm(max(0, p_i - q_i)) and
// stop; when every draft is accepted, draw a bonus token from p_k. The
// request's logits processors (constraints) shape each row first, in the
// state after the draft tokens before it; they end in the state they began.
#pragma once
#include <cstdint>
#include <span>
#include <vector>

#include "engine/logits_processor.h"
#include "engine/proposer.h"
#include "engine/sampler.h"

namespace skiff {

// Vocabulary-sized buffers, reused across calls.
struct VerifyScratch {
  std::vector<int32_t> context;
  std::vector<float> p;
  std::vector<float> residual;
  std::vector<float> row;  // a row after the logits processors
};

// logits: [draft.tokens.size() + 1][vocab]. Writes to `out` the tokens to
// output: the accepted drafts, then one drawn by the target; returns how many
// drafts were accepted. Randomness comes from the target's sampler.
// processors: null for none.
int verify_draft(Sampler& sampler, const float* logits, const Draft& draft, VerifyScratch& scratch,
                 LogitsProcessors* processors, std::vector<int32_t>& out);

}  // namespace skiff
