// What a request is read against: the served model's name, tokenizer,
// context length and chat template. Each API's request parser (this folder)
// takes one; the server makes it from the model it serves.
#pragma once
#include <cstddef>
#include <nlohmann/json.hpp>
#include <string>

#include "tokenizer/tokenizer.h"

namespace skiff {

class ChatTemplate;
class ChatSyntax;

struct ApiModel {
  std::string name;
  const Tokenizer& tokenizer;
  int max_model_len = 0;                        // prompt + output tokens of one sequence
  const ChatTemplate* chat_template = nullptr;  // none: chat requests are refused
  // How replies write reasoning and tool calls (from the template, or named
  // by --tool-call-parser / --reasoning-parser); none: all text is content.
  const ChatSyntax* chat_syntax = nullptr;
  // A chat's client text (contents, tool results, ...) spelling a control
  // token becomes that token, as before api/client_text.h (a trusted client's
  // choice: --special-tokens-in-content); off: it is plain text.
  bool special_tokens_in_content = false;
};

// Checks the request's "model" (absent, or the served name; else 404).
void check_model_name(const ApiModel& model, const nlohmann::ordered_json& body);
// The model's maximum context length exceeded (400, with both counts).
void check_context(const ApiModel& model, size_t prompt_tokens, int max_tokens);

}  // namespace skiff
