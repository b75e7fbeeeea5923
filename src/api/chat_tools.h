// The tools of a chat request (OpenAI's tools, tool_choice,
// parallel_tool_calls) and the constraint they put on the reply: calls in
// the model's call layout, each function's arguments valid for its
// parameters schema. required and a named function constrain the whole
// reply; auto constrains a call once the model opens one.
#pragma once
#include <nlohmann/json.hpp>

#include <optional>
#include <string>
#include <vector>

#include "chat/chat_output.h"
#include "engine/sampling_params.h"

namespace skiff {

struct ChatTools {
  enum class Choice { kNone, kAuto, kRequired, kNamed };
  struct Function {
    std::string name;
    nlohmann::ordered_json parameters;  // a JSON Schema of the arguments object
  };
  std::vector<Function> functions;
  Choice choice = Choice::kAuto;
  std::string named;      // Choice::kNamed: the function
  bool parallel = true;   // parallel_tool_calls
  bool any() const { return !functions.empty() && choice != Choice::kNone; }
};

// Reads tools, tool_choice and parallel_tool_calls; RequestError 400 naming
// the field for a bad shape, a duplicate name or a choice of an unknown function.
ChatTools parse_chat_tools(const nlohmann::ordered_json& body);

// The parameters the functions' schemas allow only strings in, which the
// families that write parameters raw (XML) read as text; RequestError 400
// for a schema whose $refs do not resolve.
StringParameters string_parameters(const ChatTools& tools);

// The constraint on the reply's calls for this layout: nullopt when the
// tools put none (no tools, tool_choice none).
std::optional<CallsFormat> calls_format(const ChatTools& tools, const CallLayout& layout);

}  // namespace skiff
