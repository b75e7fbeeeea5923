// POST /v1/completions' request: OpenAI's legacy completions with vLLM's
// extensions (top_k, min_p, repetition_penalty, stop_token_ids, ignore_eos),
// read into prompts as tokens and sampling parameters.
#pragma once
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "api/api_model.h"
#include "api/request_fields.h"
#include "engine/sampling_params.h"

namespace skiff {

// Its prompts as tokens, checked against the vocabulary, the sampling fields
// and the context, before anything runs.
struct CompletionRequest {
  std::vector<std::vector<int32_t>> prompts;
  std::vector<std::string> prompt_texts;  // what echo repeats (a list of ids keeps it only with echo)
  SamplingParams params;
  StreamFields stream;
  bool echo = false;
  // vLLM's return_tokens_as_token_ids: logprobs name tokens "token_id:N", so
  // that tokens which are not whole UTF-8 (byte tokens) stay distinguishable.
  bool tokens_as_ids = false;
};
CompletionRequest parse_completion_request(const ApiModel& model, const nlohmann::ordered_json& body);

}  // namespace skiff
