// POST /v1/chat/completions' request: the conversation rendered by the
// model's chat template and tokenized, the sampling fields and the context
// checked.
#pragma once
#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "api/api_model.h"
#include "api/chat_tools.h"
#include "api/client_text.h"
#include "api/request_fields.h"
#include "chat/chat_output.h"
#include "engine/sampling_params.h"

namespace skiff {

struct ChatRequest {
  std::vector<int32_t> prompt;
  SamplingParams params;
  std::optional<int> top_logprobs;  // set when logprobs is true
  StreamFields stream;
  ChatTools tools;
  // How this request's replies are parsed (the model's syntax for this
  // prompt; tool calls only when tools are on); null: all text is content.
  std::shared_ptr<const ChatSyntax> syntax;
};
ChatRequest parse_chat_request(const ApiModel& model, const nlohmann::ordered_json& body);

// The conversation of a chat request (its messages, add_generation_prompt,
// tools, chat_template_kwargs) rendered by the chat template, with the spans
// of control-token spellings that came from the client, to be tokenized as
// plain text (api/client_text.h; none when special_tokens_in_content). Throws
// RequestError 400 when there is none (null), the template fails, or
// chat_template_kwargs names a variable the request sets.
MarkedPrompt render_chat(const ChatTemplate* chat_template, const Tokenizer& tokenizer,
                         const nlohmann::ordered_json& body, bool add_generation_prompt,
                         bool special_tokens_in_content = false);

}  // namespace skiff
