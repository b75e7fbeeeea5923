#include "api/responses_request.h"

#include <fmt/core.h>

#include <cstring>

#include "api/constraint_fields.h"
#include "api/request_fields.h"
#include "api/tool_list.h"
#include "base/json.h"

namespace skiff {
namespace {

// An item's or part's "type"; items may leave it out for a message.
std::string kind_of(const ojson& o, const char* fallback = "") {
  const auto it = o.find("type");
  if (it == o.end() || it->is_null()) return fallback;
  return it->is_string() ? it->get<std::string>() : std::string("?");
}

// o[key] where it is a string; RequestError 400 naming `field` otherwise.
std::string required_string(const ojson& o, const char* key, const std::string& where, const std::string& field) {
  const auto it = o.find(key);
  if (it == o.end() || !it->is_string()) bad_field(field, fmt::format("{}.{} must be a string", where, key));
  return it->get<std::string>();
}

// A message's content, or a function_call_output's output: a string, or text
// parts (input_text, output_text) joined by newlines as the chat endpoint
// joins its parts.
std::string content_text(const ojson& content, const std::string& where) {
  if (content.is_string()) return content.get<std::string>();
  if (!content.is_array()) bad_field("input", fmt::format("{} must be a string or a list of content parts", where));
  std::string text;
  for (size_t i = 0; i < content.size(); ++i) {
    const std::string at = fmt::format("{}[{}]", where, i);
    const std::string type = content[i].is_object() ? kind_of(content[i]) : "";
    if (type != "input_text" && type != "output_text")
      bad_field("input", fmt::format("{}: content parts of type '{}' are not supported (input_text and output_text "
                                     "are)",
                                     at, type));
    if (i > 0) text += "\n";
    text += required_string(content[i], "text", at, "input");
  }
  return text;
}

// A reasoning item's text: its reasoning_text parts (else its summary).
std::string reasoning_text(const ojson& item, const std::string& where) {
  std::string text;
  for (const char* key : {"content", "summary"}) {
    const auto parts = item.find(key);
    if (parts == item.end() || parts->is_null()) continue;
    if (!parts->is_array()) bad_field("input", fmt::format("{}.{} must be a list of text parts", where, key));
    for (size_t i = 0; i < parts->size(); ++i)
      text += required_string((*parts)[i], "text", fmt::format("{}.{}[{}]", where, key, i), "input");
    if (!text.empty()) break;
  }
  return text;
}

// The chat messages of the items. Assistant-side items that follow one
// another (reasoning, an assistant message, function calls: one response's
// output) make one assistant turn, as the chat endpoint's reply is one
// message with reasoning_content, content and tool_calls.
ojson conversation_messages(const ojson& items) {
  ojson out = ojson::array();
  bool assistant_open = false;  // the last message is an assistant turn later output items join
  const auto assistant_turn = [&](bool joins) -> ojson& {
    if (!assistant_open || !joins) out.push_back({{"role", "assistant"}, {"content", nullptr}});
    assistant_open = true;
    return out.back();
  };
  // The open turn has nothing yet but (with_reasoning) its reasoning.
  const auto bare_turn = [&](bool with_reasoning) {
    return !out.empty() && out.back()["content"].is_null() && !out.back().contains("tool_calls") &&
           (with_reasoning || !out.back().contains("reasoning_content"));
  };
  for (size_t i = 0; i < items.size(); ++i) {
    const ojson& item = items[i];
    const std::string where = fmt::format("input[{}]", i);
    if (!item.is_object()) bad_field("input", fmt::format("{} must be an object", where));
    const std::string type = kind_of(item, "message");
    if (type == "message") {
      const std::string role = item.contains("role") && item["role"].is_string() ? item["role"].get<std::string>() : "";
      if (role != "user" && role != "assistant" && role != "system" && role != "developer")
        bad_field("input", fmt::format("{}.role must be user, assistant, system or developer", where));
      const auto content = item.find("content");
      if (content == item.end()) bad_field("input", fmt::format("{}.content is required", where));
      std::string text = content_text(*content, where + ".content");
      if (role == "assistant") {
        ojson& turn = assistant_turn(bare_turn(true));
        turn["content"] = std::move(text);
      } else {
        out.push_back({{"role", role == "developer" ? "system" : role}, {"content", std::move(text)}});
        assistant_open = false;
      }
    } else if (type == "function_call") {
      ojson& turn = assistant_turn(true);
      if (!turn.contains("tool_calls")) turn["tool_calls"] = ojson::array();
      turn["tool_calls"].push_back(
          {{"id", required_string(item, "call_id", where, "input")},
           {"type", "function"},
           {"function", {{"name", required_string(item, "name", where, "input")},
                         {"arguments", required_string(item, "arguments", where, "input")}}}});
    } else if (type == "function_call_output") {
      const auto output = item.find("output");
      if (output == item.end()) bad_field("input", fmt::format("{}.output is required", where));
      out.push_back({{"role", "tool"},
                     {"tool_call_id", required_string(item, "call_id", where, "input")},
                     {"content", content_text(*output, where + ".output")}});
      assistant_open = false;
    } else if (type == "reasoning") {
      std::string text = reasoning_text(item, where);
      ojson& turn = assistant_turn(bare_turn(false));
      if (!text.empty()) turn["reasoning_content"] = std::move(text);
    } else {
      bad_field("input", fmt::format("{}: items of type '{}' are not supported (message, function_call, "
                                     "function_call_output and reasoning are)",
                                     where, type));
    }
  }
  return out;
}

// Function tools in the Responses shape ({type, name, description,
// parameters, strict}) as the chat endpoint's; hosted tools are refused.
ojson function_tools(const ojson& tools) {
  return translate_tools(tools, [](const ojson& t, const std::string& where) -> ojson {
    const std::string type = kind_of(t);
    if (type != "function")
      bad_field("tools", fmt::format("{}: tools of type '{}' are not supported (only function tools: type, name, "
                                     "description, parameters)",
                                     where, type));
    ojson function{{"name", required_string(t, "name", where, "tools")}};
    if (t.contains("description") && !t["description"].is_null())
      function["description"] = required_string(t, "description", where, "tools");
    if (t.contains("parameters") && !t["parameters"].is_null()) function["parameters"] = t["parameters"];
    if (t.contains("strict") && !t["strict"].is_null()) boolean_field(t["strict"], "tools");
    return {{"type", "function"}, {"function", std::move(function)}};
  });
}

// tool_choice: "auto", "none", "required" as they are; {type: "function",
// name} as the chat endpoint names a function.
ojson tool_choice(const ojson& choice) {
  if (choice.is_string()) return choice;  // parse_chat_tools names a bad one
  if (choice.is_object() && kind_of(choice) == "function")
    return {{"type", "function"}, {"function", {{"name", required_string(choice, "name", "tool_choice", "tool_choice")}}}};
  bad_field("tool_choice", "tool_choice must be \"auto\", \"none\", \"required\" or {\"type\": \"function\", "
                           "\"name\": ...}");
}

// reasoning {effort}: the thinking switch of the templates that have one
// (enable_thinking: off for "none") and the effort for those that read it.
ojson reasoning_kwargs(const ojson& reasoning) {
  if (!reasoning.is_object()) bad_field("reasoning", "reasoning must be an object ({\"effort\": ...})");
  const auto effort = reasoning.find("effort");
  if (effort == reasoning.end() || effort->is_null()) return nullptr;
  const std::string level = effort->is_string() ? effort->get<std::string>() : "";
  for (const char* known : {"none", "minimal", "low", "medium", "high", "xhigh"})
    if (level == known) return {{"enable_thinking", level != "none"}, {"reasoning_effort", level}};
  bad_field("reasoning.effort", fmt::format("reasoning.effort must be none, minimal, low, medium, high or xhigh, "
                                            "got {}",
                                            json_excerpt(*effort)));
}

// text {format, verbosity}: format {type: text | json_object | json_schema
// (name, schema, strict)} through the chat endpoint's response_format.
void read_text_format(const ojson& text, SamplingParams& p) {
  if (!text.is_object()) bad_field("text", "text must be an object ({\"format\": ...})");
  const auto format = text.find("format");
  if (format == text.end() || format->is_null()) return;
  const std::string type = format->is_object() ? kind_of(*format) : "";
  ojson response_format{{"type", type}};
  if (type == "json_schema") {
    const auto schema = format->find("schema");
    if (schema == format->end() || !schema->is_object())
      bad_field("text.format.schema", "text.format.schema must be a JSON Schema object");
    if (format->contains("name") && !(*format)["name"].is_string())
      bad_field("text.format.name", "text.format.name must be a string");
    if (format->contains("strict") && !(*format)["strict"].is_null()) boolean_field((*format)["strict"], "text.format.strict");
    response_format["json_schema"] = {{"schema", *schema}};
  } else if (type != "text" && type != "json_object") {
    bad_field("text.format", "text.format must be {\"type\": \"text\"}, {\"type\": \"json_object\"} or "
                             "{\"type\": \"json_schema\", \"name\": ..., \"schema\": {...}}");
  }
  read_constraint_field("response_format", response_format, p);
  if (!p.structured_outputs.empty()) p.structured_outputs.field = "text.format";
}

// The engine's max_tokens is max_output_tokens here: its errors (its value,
// the context's room for it) name the Responses field.
RequestError as_max_output_tokens(const RequestError& e) {
  std::string message = e.what();
  if (message.starts_with("max_tokens")) message = "max_output_tokens" + message.substr(std::strlen("max_tokens"));
  return RequestError(e.status(), message, "max_output_tokens");
}

}  // namespace

ojson input_items(const ojson& body) {
  if (!body.is_object()) bad_field("", "the request body must be a JSON object");
  const auto input = body.find("input");
  if (input == body.end() || input->is_null())
    bad_field("input", "input is required: a string or a list of items");
  if (input->is_string()) return ojson::array({{{"type", "message"}, {"role", "user"}, {"content", *input}}});
  if (!input->is_array()) bad_field("input", "input must be a string or a list of items");
  return *input;
}

ojson responses_conversation(const ojson& body, const ojson& items) {
  ojson messages = ojson::array();
  if (body.contains("instructions") && !body["instructions"].is_null()) {
    if (!body["instructions"].is_string()) bad_field("instructions", "instructions must be a string");
    messages.push_back({{"role", "system"}, {"content", body["instructions"]}});
  }
  for (ojson& m : conversation_messages(items)) messages.push_back(std::move(m));
  if (messages.empty()) bad_field("input", "input must hold at least one item");
  ojson out{{"messages", std::move(messages)}};
  if (body.contains("tools") && !body["tools"].is_null()) out["tools"] = function_tools(body["tools"]);
  if (body.contains("tool_choice") && !body["tool_choice"].is_null()) out["tool_choice"] = tool_choice(body["tool_choice"]);
  if (body.contains("parallel_tool_calls") && !body["parallel_tool_calls"].is_null())
    out["parallel_tool_calls"] = boolean_field(body["parallel_tool_calls"], "parallel_tool_calls");
  if (body.contains("reasoning") && !body["reasoning"].is_null()) {
    ojson kwargs = reasoning_kwargs(body["reasoning"]);
    if (!kwargs.is_null()) out["chat_template_kwargs"] = std::move(kwargs);
  }
  return out;
}

std::optional<std::string> previous_response_id(const ojson& body) {
  const auto it = body.is_object() ? body.find("previous_response_id") : body.end();
  if (it == body.end() || it->is_null()) return std::nullopt;
  if (!it->is_string()) bad_field("previous_response_id", "previous_response_id must be a string");
  return it->get<std::string>();
}

ResponsesRequest parse_responses_request(const ApiModel& model, const ojson& body, const ojson* previous_items) {
  ResponsesRequest r;
  r.items = previous_items ? *previous_items : ojson::array();
  for (const ojson& item : input_items(body)) r.items.push_back(item);
  const ChatFieldReader read_fields = [&](ChatRequest& c, const SamplingFieldLimits& limits) {
    for (const auto& [key, v] : body.items()) {
      if (key == "max_output_tokens") {
        read_sampling_field("max_tokens", v, c.params, limits);
      } else if (key == "temperature" || key == "top_p") {
        read_sampling_field(key, v, c.params, limits);
      } else if (key == "stream") {
        c.stream.stream = !v.is_null() && boolean_field(v, key);
      } else if (key == "store") {
        r.store = v.is_null() || boolean_field(v, key);
      } else if (key == "text") {
        if (!v.is_null()) read_text_format(v, c.params);
      } else if (key == "metadata") {
        if (!v.is_null() && !v.is_object()) bad_field(key, "metadata must be an object of strings");
        if (v.is_object())
          for (const auto& [k, value] : v.items())
            if (!value.is_string()) bad_field(key, fmt::format("metadata.{} must be a string", k));
      } else if (key == "user") {
        if (!v.is_null()) text_field(v, key);
      } else if (key == "previous_response_id") {
        previous_response_id(body);  // its type; the server finds it
      }
    }
  };
  try {
    r.chat = build_chat_request(model, responses_conversation(body, r.items), read_fields);
  } catch (const RequestError& e) {
    if (e.param() == "max_tokens") throw as_max_output_tokens(e);
    throw;
  }
  return r;
}

}  // namespace skiff
