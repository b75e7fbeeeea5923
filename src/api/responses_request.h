// POST /v1/responses' request (OpenAI's Responses API) read as a chat
// request: its input items (messages, function_call, function_call_output,
// reasoning) and instructions translated into the OpenAI-shaped conversation
// the chat template renders (function_call: an assistant's tool_calls;
// function_call_output: a tool message), its function tools, tool_choice,
// text.format (the structured-output path) and reasoning effort (the
// template's thinking switch) as the chat endpoint reads them. Errors name
// the Responses field at fault.
#pragma once
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "api/api_model.h"
#include "api/chat_request.h"

namespace skiff {

struct ResponsesRequest {
  ChatRequest chat;
  // The conversation's items so far: the previous response's (as kept) and
  // this request's input, without the instructions (a next turn gives its
  // own): what a stored response keeps, with its output items after them.
  nlohmann::ordered_json items;
  bool store = true;  // store: false: not kept for a previous_response_id
};

// The input as a list of items: a string is one user message. RequestError
// 400 naming "input" for another shape.
nlohmann::ordered_json input_items(const nlohmann::ordered_json& body);

// The OpenAI-shaped conversation of a Responses body over `items` (the
// previous items and this input's): messages (instructions first, as a
// system message), tools, tool_choice, parallel_tool_calls and
// chat_template_kwargs (enable_thinking, reasoning_effort), as render_chat
// and parse_chat_tools read them.
nlohmann::ordered_json responses_conversation(const nlohmann::ordered_json& body,
                                              const nlohmann::ordered_json& items);

// previous_response_id, where one is given (a string, else RequestError 400).
std::optional<std::string> previous_response_id(const nlohmann::ordered_json& body);

// The request: max_output_tokens, temperature, top_p, stream, store,
// text.format; metadata, user and parallel_tool_calls checked; other fields
// ignored. previous_items: the items the previous response keeps (null: none).
ResponsesRequest parse_responses_request(const ApiModel& model, const nlohmann::ordered_json& body,
                                         const nlohmann::ordered_json* previous_items = nullptr);

}  // namespace skiff
