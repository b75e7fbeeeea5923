// POST /v1/messages' request (Anthropic's Messages API) read as a chat
// request: its conversation (system, messages of text, tool_use and
// tool_result blocks), tools, tool_choice and thinking switch translated into
// the OpenAI-shaped conversation the chat template renders (tool_use: an
// assistant's tool_calls; tool_result: a tool message), its sampling fields
// read under their own names. Errors name the Anthropic field at fault.
#pragma once
#include <nlohmann/json.hpp>

#include "api/api_model.h"
#include "api/chat_request.h"

namespace skiff {

// The OpenAI-shaped conversation of a Messages body: messages, tools,
// tool_choice, parallel_tool_calls and chat_template_kwargs (enable_thinking),
// as render_chat and parse_chat_tools read them. RequestError 400 naming the
// field for a bad shape or a block skiff cannot render (images, documents,
// server tools).
nlohmann::ordered_json messages_conversation(const nlohmann::ordered_json& body);

// The request: max_tokens required; temperature, top_p, top_k, stop_sequences
// (the engine's stop strings), stream; metadata accepted; other fields ignored.
ChatRequest parse_messages_request(const ApiModel& model, const nlohmann::ordered_json& body);

// POST /v1/messages/count_tokens: the tokens of the prompt the same body
// would be sent as (no max_tokens needed, no context check; its conversation
// and tools refused as parse_messages_request refuses them).
size_t count_message_tokens(const ApiModel& model, const nlohmann::ordered_json& body);

}  // namespace skiff
