// The JSON shapes of OpenAI's API that every endpoint shares: errors, usage,
// ids, log-probabilities in the completions and chat forms, server-sent events.
#pragma once
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "api/request_fields.h"
#include "engine/request.h"
#include "tokenizer/tokenizer.h"

namespace skiff {

// {"error": {"message", "type", "param", "code"}} as vLLM writes it (type
// from the status: BadRequestError, NotFoundError, ...; code: the status).
ojson error_body(int status, const std::string& message, const std::string& param = {});
// A random id with OpenAI's prefix ("cmpl-", "chatcmpl-").
std::string response_id(const char* prefix);
int64_t unix_seconds();

ojson usage_json(int64_t prompt_tokens, int64_t completion_tokens);
// {"id", "object", "created", "model"}: what every response and chunk starts with.
ojson response_head(const char* object, const char* id_prefix, const std::string& model);
// A stream's chunk: head plus one choice; its last chunk: head, no choices, usage.
std::string sse_choice(const ojson& head, ojson choice);
std::string sse_usage(const ojson& head, int64_t prompt_tokens, int64_t completion_tokens);

// "stop", "length", "abort", "error"; null while running.
ojson finish_reason_json(const std::optional<FinishReason>& reason);
// vLLM's stop_reason: the stop string or stop token that ended a completion, else null.
ojson stop_reason_json(const CompletionOutput& c);

// /v1/completions: {"tokens", "token_logprobs", "top_logprobs", "text_offset"},
// offsets counted from text_offset (where this part of the text starts);
// tokens named by their text, or as "token_id:N" with tokens_as_ids.
ojson completion_logprobs(const Tokenizer& tokenizer, const std::vector<TokenLogprob>& logprobs,
                          size_t text_offset, bool tokens_as_ids);
// /v1/chat/completions: {"content": [{"token", "logprob", "bytes", "top_logprobs"}]}.
ojson chat_logprobs(const Tokenizer& tokenizer, const std::vector<TokenLogprob>& logprobs, int top);

// One server-sent event: "data: <json>\n\n" (invalid UTF-8 replaced).
std::string sse_event(const ojson& j);
inline constexpr const char* kSseDone = "data: [DONE]\n\n";
std::string dump_json(const ojson& j);

}  // namespace skiff
