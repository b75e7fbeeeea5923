// What a request asks for: how to choose tokens (the Sampler's part) and when
// to stop (the engine's part), as vLLM's SamplingParams.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "base/error.h"

namespace skiff {

// The most top alternatives a token's logprobs may carry (OpenAI's cap, and
// vLLM's default max_logprobs).
constexpr int32_t kMaxLogprobs = 20;

// A request field the engine refuses (a constraint it cannot compile, a token
// id outside the vocabulary): the message, and the field it came from.
class FieldError : public Error {
 public:
  FieldError(std::string field, const std::string& what) : Error(what), field_(std::move(field)) {}
  const std::string& field() const { return field_; }

 private:
  std::string field_;
};

// Calls in a fixed layout, each with JSON arguments (tool calls: the server
// writes one from the tools, tool_choice and the model's call syntax):
// prefix, calls separated by separator, suffix; each call one of `calls`.
struct CallsFormat {
  struct Call {
    std::string begin;             // "{index}" in it: any number
    std::string arguments_schema;  // JSON Schema text
    std::string end;
    bool operator==(const Call&) const = default;
  };
  std::string prefix, separator, suffix;
  std::vector<Call> calls;
  bool parallel = true;
  // Empty: the whole output is calls (tool_choice required or a named
  // function). Else the output is free until this text, which opens the
  // calls (tool_choice auto): a call once begun is always well-formed.
  std::string trigger;
  // Non-empty parameter_end: arguments are written a parameter at a time
  // (XML families, grammar/json_schema.h's XmlParameterLayout), each
  // parameter_begin with "{key}" replaced, its value, parameter_end.
  std::string parameter_begin, parameter_end;
  bool operator==(const CallsFormat&) const = default;
};

// Structured outputs (vLLM's StructuredOutputsParams): the output must match
// one of these, at most one set. The text forms are compiled by the engine
// (engine/structured_output.h), which refuses what it cannot enforce.
struct StructuredOutputs {
  std::string json;                 // a JSON Schema, as JSON text
  bool json_object = false;         // any JSON object (OpenAI's json_object)
  std::string regex;                // the whole output matches it
  std::vector<std::string> choice;  // the output is one of these
  std::string grammar;              // a GBNF grammar (llama.cpp's format)
  std::optional<CallsFormat> calls;  // tool calls
  std::string field;                // the request field it came from, for messages
  // JSON without whitespace between tokens (vLLM's option); otherwise up to
  // 64 blank bytes between two tokens.
  bool disable_any_whitespace = false;
  // Set: the constraint starts after this text (a reasoning model's end of
  // thinking, "</think>"): what comes before it is free.
  std::string after;

  int count() const {
    return !json.empty() + json_object + !regex.empty() + !choice.empty() + !grammar.empty() + calls.has_value();
  }
  bool empty() const { return count() == 0; }
};

// How one request chooses its tokens. The defaults sample from the model's
// unmodified distribution.
struct SamplingParams {
  // Divides the logits. 0 means greedy: the argmax, lowest id on ties, and
  // top-k/top-p/min-p do nothing. Below 1e-5 counts as 0, as in vLLM.
  float temperature = 1.0f;
  // Keeps the k highest-ranked tokens (ties ranked by lowest id). 0 or -1: off.
  int32_t top_k = 0;
  // Keeps the fewest highest-ranked tokens whose probability sums to at least
  // top_p. In (0, 1]; 1: off.
  float top_p = 1.0f;
  // Drops tokens less likely than min_p times the most likely one. In [0, 1]; 0: off.
  float min_p = 0.0f;
  // Once per distinct token of prompt or output: a positive logit is divided
  // by it, a negative one multiplied (CTRL, vLLM). Above 0; 1: off.
  float repetition_penalty = 1.0f;
  // OpenAI semantics over the output tokens only: logit -= frequency_penalty ×
  // count, then -= presence_penalty if count > 0. In [-2, 2]; 0: off.
  float frequency_penalty = 0.0f;
  float presence_penalty = 0.0f;
  // Seeds the sampler's stream; unset: a seed from std::random_device.
  std::optional<uint64_t> seed;

  // Completions per prompt (parallel sampling); they share the prompt's KV
  // blocks. With a seed, completion i samples with seed + i.
  int32_t n = 1;
  // Output tokens per completion at most (vLLM's default).
  int32_t max_tokens = 16;
  // Output tokens before EOS or a stop_token_ids entry may end the completion
  // (they are masked out of sampling until then) and before stop strings are
  // looked for (vLLM). In [0, max_tokens].
  int32_t min_tokens = 0;
  // Generation stops when the text contains one of these; the output text
  // ends before it.
  std::vector<std::string> stop;
  // Generation stops at these tokens, which, like EOS, are not output.
  std::vector<int32_t> stop_token_ids;
  // Keep generating past EOS (benchmarks).
  bool ignore_eos = false;
  // Control tokens (<|im_end|>, <s>, ...) in the output give no text; false:
  // their text is in the output (token ids are the same either way).
  bool skip_special_tokens = true;
  // Log-probabilities of each output token under the model's distribution
  // (before penalties and filters), plus this many most likely alternatives.
  // Unset: none.
  std::optional<int32_t> logprobs;
  // Speculative decoding, where the engine has a drafter: tokens drafted per
  // step at most. -1: the engine's k; 0: this request does not speculate.
  // The output's distribution is the same either way.
  int32_t speculative_tokens = -1;

  // Logits processors, applied in this order before penalties and
  // temperature (engine/logits_processor.h): OpenAI's logit_bias (token id,
  // bias in [-100, 100] added to its logit), vLLM's allowed_token_ids (only
  // these may be sampled) and bad_words (their token sequences never
  // complete), and structured outputs (a grammar's token mask).
  std::vector<std::pair<int32_t, float>> logit_bias;
  std::vector<int32_t> allowed_token_ids;
  std::vector<std::string> bad_words;
  StructuredOutputs structured_outputs;

  bool is_greedy() const;
  // Throws Error naming the first field out of range.
  void validate() const;
};

}  // namespace skiff
