// POST /v1/chat/completions' request: the conversation rendered by the
// model's chat template and tokenized, the sampling fields and the context
// checked.
#pragma once
#include <cstdint>
#include <functional>
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

// What every chat API shares, over an OpenAI-shaped conversation (messages,
// tools, tool_choice, parallel_tool_calls, chat_template_kwargs,
// add_generation_prompt): the tools read, the conversation rendered and
// tokenized, the reply's syntax; then read_fields sets the API's own fields
// (max_tokens is the context left until it does); then the tools' constraint
// and the checks of the sampling values and of the context.
using ChatFieldReader = std::function<void(ChatRequest&, const SamplingFieldLimits&)>;
ChatRequest build_chat_request(const ApiModel& model, const nlohmann::ordered_json& conversation,
                               const ChatFieldReader& read_fields);

// A conversation's prompt as a chat request has it: rendered with the
// generation prompt, and tokenized (the client's text as plain text).
// RequestError 400 where it renders to no tokens.
struct ChatPrompt {
  std::string text;
  std::vector<int32_t> ids;
};
ChatPrompt chat_prompt(const ApiModel& model, const nlohmann::ordered_json& conversation);

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
