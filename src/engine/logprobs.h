// Log-probabilities of output tokens under the model, as vLLM reports them
// for SamplingParams::logprobs: the log-softmax of the raw logits, before any
// penalty, temperature or filter.
#pragma once
#include <cstdint>
#include <span>

#include "engine/request.h"

namespace skiff {

// The chosen token's log-probability and the top_n most likely tokens, most
// likely first (ties: lower id first); top_n beyond the vocabulary gives every
// token. Logits are finite or -inf (a masked token, logprob -inf). One pass
// for the maximum, one for the sum, one through a top_n-entry heap that most
// tokens fail to enter: no sort, no vocabulary-sized buffer. Throws Error on
// an id out of range, a negative top_n, a NaN or +inf logit, or no finite logit.
TokenLogprob token_logprob(std::span<const float> logits, int32_t token, int top_n);

}  // namespace skiff
