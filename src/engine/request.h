// What the engine hands back: each request's completions, whole or as deltas
// while they stream, in the shape of vLLM's RequestOutput.
#pragma once
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace skiff {

using RequestId = uint64_t;

enum class FinishReason {
  kStop,       // EOS, a stop token or a stop string
  kLength,     // max_tokens, or the context is full
  kCancelled,  // cancel() before it finished
  kError,      // no token could be sampled (the model produced no usable logit)
};
// "stop", "length", "abort", "error" (OpenAI/vLLM)
const char* finish_reason_name(FinishReason reason);

// One output token's log-probability under the model (log-softmax of the raw
// logits), and the top alternatives, most likely first.
struct TokenLogprob {
  int32_t token = 0;
  float logprob = 0;
  std::vector<std::pair<int32_t, float>> top;  // (token, logprob) [SamplingParams::logprobs]
};

// One of a request's n completions.
struct CompletionOutput {
  int index = 0;                     // which of the n
  std::string text;                  // detokenized, cut before a stop string
  std::vector<int32_t> token_ids;    // generated tokens (no EOS or stop token)
  std::vector<TokenLogprob> logprobs;  // per token, when asked
  std::optional<FinishReason> finish_reason;  // unset while running
  std::string stop_reason;           // the stop string that matched, if one did
  std::optional<int32_t> stop_token; // the stop_token_ids entry that ended it, if one did
  std::string error;                 // what went wrong, with FinishReason::kError
};

struct RequestOutput {
  RequestId request_id = 0;
  std::vector<int32_t> prompt_token_ids;
  std::vector<CompletionOutput> outputs;  // [n]
  bool finished() const;                  // every completion has a finish reason
};

// What one step added to one completion: the text and tokens since the last
// delta (text is never a broken UTF-8 character, nor a possible start of a
// stop string), and the finish reason on its last delta.
struct StreamDelta {
  RequestId request_id = 0;
  int index = 0;
  std::string text;
  std::vector<int32_t> token_ids;
  std::vector<TokenLogprob> logprobs;
  std::optional<FinishReason> finish_reason;
};
// Called on the thread that runs the engine's steps; it may call cancel().
using StreamCallback = std::function<void(const StreamDelta&)>;

}  // namespace skiff
