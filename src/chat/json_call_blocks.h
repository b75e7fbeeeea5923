// Calls written as JSON objects that carry the name and the arguments:
// Hermes' <tool_call>{"name": ..., "arguments": ...}</tool_call>, Llama 3's
// bare {"name": ..., "parameters": ...}, and arrays of them after a marker
// (Mistral's [TOOL_CALLS][...], Granite's <|tool_call|>[...], Command-R's
// Action: ```json [...] ```).
#pragma once
#include "chat/tool_call_format.h"

namespace skiff::chat_syntax {

struct JsonCallBlockSpec {
  std::vector<std::string> openers{};       // "" opens at once (only with reply_start_only)
  std::vector<std::string> after_opener{};  // literals that follow it, spaces between: "```json"
  bool array = false;                       // the block holds one JSON array of calls
  std::string separator{};                  // between calls outside an array; "" = spaces only
  std::vector<std::string> closer{};        // literals that end the block; none: it ends with its last call
  std::vector<std::string> name_keys = {"name"};
  std::vector<std::string> arguments_keys = {"arguments", "parameters"};
};

std::unique_ptr<CallBlockSyntax> make_json_call_blocks(JsonCallBlockSpec spec);

}  // namespace skiff::chat_syntax
