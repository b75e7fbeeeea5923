#include "api/chat_tools.h"

#include <fmt/format.h>

#include "api/request_fields.h"
#include "base/error.h"
#include "base/json.h"
#include "grammar/json_schema.h"

namespace skiff {
namespace {

const ojson& function_of(const ojson& tool, size_t i) {
  if (!tool.is_object() || tool.value("type", "function") != "function" || !tool.contains("function") ||
      !tool["function"].is_object())
    bad_field("tools", fmt::format("tools[{}] must be {{\"type\": \"function\", \"function\": {{...}}}}", i));
  return tool["function"];
}

}  // namespace

ChatTools parse_chat_tools(const ojson& body) {
  ChatTools tools;
  if (body.contains("tools") && !body["tools"].is_null()) {
    const ojson& list = body["tools"];
    if (!list.is_array()) bad_field("tools", "tools must be a list");
    for (size_t i = 0; i < list.size(); ++i) {
      const ojson& f = function_of(list[i], i);
      if (!f.contains("name") || !f["name"].is_string() || f["name"].get<std::string>().empty())
        bad_field("tools", fmt::format("tools[{}].function.name must be a non-empty string", i));
      ChatTools::Function fn{f["name"].get<std::string>(), ojson{{"type", "object"}}};
      if (f.contains("parameters") && !f["parameters"].is_null()) {
        if (!f["parameters"].is_object() && !f["parameters"].is_boolean())
          bad_field("tools", fmt::format("tools[{}].function.parameters must be a JSON Schema object", i));
        fn.parameters = f["parameters"];
      }
      for (const ChatTools::Function& other : tools.functions)
        if (other.name == fn.name) bad_field("tools", fmt::format("two tools are named '{}'", fn.name));
      tools.functions.push_back(std::move(fn));
    }
  }
  if (body.contains("tool_choice") && !body["tool_choice"].is_null()) {
    const ojson& c = body["tool_choice"];
    if (c.is_string()) {
      const std::string s = c.get<std::string>();
      if (s == "none") tools.choice = ChatTools::Choice::kNone;
      else if (s == "auto") tools.choice = ChatTools::Choice::kAuto;
      else if (s == "required") tools.choice = ChatTools::Choice::kRequired;
      else bad_field("tool_choice", fmt::format("tool_choice must be none, auto, required or a function, got '{}'", s));
    } else if (c.is_object() && c.value("type", "") == "function" && c.contains("function") &&
               c["function"].is_object() && c["function"].contains("name") && c["function"]["name"].is_string()) {
      tools.choice = ChatTools::Choice::kNamed;
      tools.named = c["function"]["name"].get<std::string>();
      bool known = false;
      for (const ChatTools::Function& f : tools.functions) known = known || f.name == tools.named;
      if (!known) bad_field("tool_choice", fmt::format("tool_choice names '{}', which is not among the tools", tools.named));
    } else {
      bad_field("tool_choice", "tool_choice must be \"none\", \"auto\", \"required\" or "
                               "{\"type\": \"function\", \"function\": {\"name\": ...}}");
    }
    if (tools.choice != ChatTools::Choice::kNone && tools.choice != ChatTools::Choice::kAuto && tools.functions.empty())
      bad_field("tool_choice", "tool_choice asks for a call, but the request has no tools");
  }
  if (body.contains("parallel_tool_calls") && !body["parallel_tool_calls"].is_null())
    tools.parallel = boolean_field(body["parallel_tool_calls"], "parallel_tool_calls");
  return tools;
}

StringParameters string_parameters(const ChatTools& tools) {
  StringParameters out;
  for (const ChatTools::Function& f : tools.functions) {
    try {
      for (std::string& name : grammar::string_only_properties(f.parameters)) out[f.name].insert(std::move(name));
    } catch (const Error& e) {
      bad_field("tools", fmt::format("tool '{}': {}", f.name, e.what()));
    }
  }
  return out;
}

std::optional<CallsFormat> calls_format(const ChatTools& tools, const CallLayout& layout) {
  if (!tools.any()) return std::nullopt;
  CallsFormat format;
  format.prefix = layout.prefix;
  format.separator = layout.separator;
  format.suffix = layout.suffix;
  format.parameter_begin = layout.parameter_begin;
  format.parameter_end = layout.parameter_end;
  format.parallel = tools.parallel && tools.choice != ChatTools::Choice::kNamed;
  if (tools.choice == ChatTools::Choice::kAuto) format.trigger = layout.trigger;
  const size_t name_at = layout.call_begin.find("{name}");
  for (const ChatTools::Function& f : tools.functions) {
    if (tools.choice == ChatTools::Choice::kNamed && f.name != tools.named) continue;
    std::string begin = layout.call_begin;
    if (name_at != std::string::npos) begin.replace(name_at, 6, f.name);
    format.calls.push_back({std::move(begin), f.parameters.dump(), layout.call_end});
  }
  return format;
}

}  // namespace skiff
