#include "api/messages_request.h"

#include <fmt/core.h>

#include <functional>
#include <limits>
#include <optional>

#include "api/request_fields.h"
#include "api/tool_list.h"
#include "base/json.h"

namespace skiff {
namespace {

std::string type_of(const ojson& block) {
  const auto it = block.find("type");
  return it != block.end() && it->is_string() ? it->get<std::string>() : std::string();
}

// A field of a block that must be a string.
std::string string_in(const ojson& block, const char* key, const std::string& where, const std::string& field) {
  const auto it = block.find(key);
  if (it == block.end() || !it->is_string()) bad_field(field, fmt::format("{}.{} must be a string", where, key));
  return it->get<std::string>();
}

// Text given as a string or a list of text blocks (system, a tool_result's
// content), the blocks joined by newlines as the chat endpoint joins parts.
std::string text_of(const ojson& content, const std::string& where, const std::string& field) {
  if (content.is_string()) return content.get<std::string>();
  if (!content.is_array()) bad_field(field, fmt::format("{} must be a string or a list of text blocks", where));
  std::string text;
  for (size_t i = 0; i < content.size(); ++i) {
    const std::string at = fmt::format("{}[{}]", where, i);
    if (!content[i].is_object() || type_of(content[i]) != "text")
      bad_field(field, fmt::format("{} must be a text block ({{\"type\": \"text\", \"text\": ...}})", at));
    if (i > 0) text += "\n";
    text += string_in(content[i], "text", at, field);
  }
  return text;
}

[[noreturn]] void unsupported_block(const std::string& where, const std::string& type) {
  bad_field("messages", fmt::format("{}: blocks of type '{}' are not supported (text, tool_use, tool_result and "
                                    "thinking are)",
                                    where, type));
}

// Calls fn(block, its type, where it is) for each block of a message's
// content, which must be objects.
using BlockFn = std::function<void(const ojson& block, const std::string& type, const std::string& at)>;
void for_each_block(const ojson& blocks, const std::string& where, const BlockFn& fn) {
  for (size_t j = 0; j < blocks.size(); ++j) {
    const std::string at = fmt::format("{}.content[{}]", where, j);
    if (!blocks[j].is_object()) bad_field("messages", fmt::format("{} must be a content block object", at));
    fn(blocks[j], type_of(blocks[j]), at);
  }
}

// A user turn: its text blocks a user message, each tool_result a tool
// message, in the order the blocks come.
void add_user_turn(const ojson& blocks, const std::string& where, ojson& out) {
  std::optional<std::string> text;
  const auto flush_text = [&] {
    if (text) out.push_back({{"role", "user"}, {"content", std::move(*text)}});
    text.reset();
  };
  for_each_block(blocks, where, [&](const ojson& block, const std::string& type, const std::string& at) {
    if (type == "text") {
      text = text ? *text + "\n" : std::string();
      *text += string_in(block, "text", at, "messages");
    } else if (type == "tool_result") {
      flush_text();
      const std::string id = string_in(block, "tool_use_id", at, "messages");
      const auto content = block.find("content");
      const bool empty = content == block.end() || content->is_null();
      if (block.contains("is_error") && !block["is_error"].is_null()) boolean_field(block["is_error"], "messages");
      out.push_back({{"role", "tool"},
                     {"tool_call_id", id},
                     {"content", empty ? std::string() : text_of(*content, at + ".content", "messages")}});
    } else {
      unsupported_block(at, type);
    }
  });
  flush_text();
}

// An assistant turn: text blocks its content, thinking its reasoning_content,
// tool_use blocks its tool_calls (arguments as objects, as templates print them).
void add_assistant_turn(const ojson& blocks, const std::string& where, ojson& out) {
  std::string text, reasoning;
  ojson calls = ojson::array();
  for_each_block(blocks, where, [&](const ojson& block, const std::string& type, const std::string& at) {
    if (type == "text") {
      if (!text.empty()) text += "\n";
      text += string_in(block, "text", at, "messages");
    } else if (type == "thinking") {
      reasoning += string_in(block, "thinking", at, "messages");
    } else if (type == "redacted_thinking") {
      // Encrypted by another server: nothing a template could show.
    } else if (type == "tool_use") {
      const auto input = block.find("input");
      if (input == block.end() || !input->is_object())
        bad_field("messages", fmt::format("{}.input must be an object", at));
      calls.push_back({{"id", string_in(block, "id", at, "messages")},
                       {"type", "function"},
                       {"function", {{"name", string_in(block, "name", at, "messages")}, {"arguments", *input}}}});
    } else {
      unsupported_block(at, type);
    }
  });
  ojson message{{"role", "assistant"}};
  message["content"] = text.empty() && !calls.empty() ? ojson(nullptr) : ojson(text);
  if (!reasoning.empty()) message["reasoning_content"] = std::move(reasoning);
  if (!calls.empty()) message["tool_calls"] = std::move(calls);
  out.push_back(std::move(message));
}

ojson conversation_messages(const ojson& body) {
  ojson out = ojson::array();
  if (body.contains("system") && !body["system"].is_null())
    out.push_back({{"role", "system"}, {"content", text_of(body["system"], "system", "system")}});
  const auto it = body.find("messages");
  if (it == body.end() || !it->is_array() || it->empty())
    bad_field("messages", "messages must be a non-empty list of messages");
  for (size_t i = 0; i < it->size(); ++i) {
    const ojson& m = (*it)[i];
    const std::string where = fmt::format("messages[{}]", i);
    const std::string role = m.is_object() && m.contains("role") && m["role"].is_string() ? m["role"].get<std::string>() : "";
    if (role != "user" && role != "assistant")
      bad_field("messages", fmt::format("{} must be an object with role \"user\" or \"assistant\"", where));
    const auto content = m.find("content");
    if (content == m.end() || (!content->is_string() && !content->is_array()))
      bad_field("messages", fmt::format("{}.content must be a string or a list of content blocks", where));
    if (content->is_string()) out.push_back({{"role", role}, {"content", *content}});
    else if (role == "user") add_user_turn(*content, where, out);
    else add_assistant_turn(*content, where, out);
  }
  return out;
}

// Anthropic's client tools as OpenAI's functions; server tools (typed
// web_search_..., bash_..., ...) run on Anthropic's side and are refused.
ojson function_tools(const ojson& tools) {
  return translate_tools(tools, [](const ojson& t, const std::string& where) -> ojson {
    const std::string type = type_of(t);
    if (t.contains("type") && !t["type"].is_null() && type != "custom")
      bad_field("tools", fmt::format("{}: tools of type '{}' are not supported (only client tools: name, "
                                     "description, input_schema)",
                                     where, type.empty() ? json_excerpt(t["type"]) : type));
    const std::string name = string_in(t, "name", where, "tools");
    if (name.empty()) bad_field("tools", fmt::format("{}.name must not be empty", where));
    const auto schema = t.find("input_schema");
    if (schema == t.end() || !schema->is_object())
      bad_field("tools", fmt::format("{}.input_schema must be a JSON Schema object", where));
    // OpenAI's order (name, description, parameters): templates print the tools as JSON.
    ojson function{{"name", name}};
    if (t.contains("description") && !t["description"].is_null())
      function["description"] = string_in(t, "description", where, "tools");
    function["parameters"] = *schema;
    return {{"type", "function"}, {"function", std::move(function)}};
  });
}

// tool_choice {type: auto | any | tool (with name) | none,
// disable_parallel_tool_use} as OpenAI's tool_choice and parallel_tool_calls.
void add_tool_choice(const ojson& choice, ojson& out) {
  const std::string type = choice.is_object() ? type_of(choice) : "";
  if (type == "auto") out["tool_choice"] = "auto";
  else if (type == "any") out["tool_choice"] = "required";
  else if (type == "none") out["tool_choice"] = "none";
  else if (type == "tool")
    out["tool_choice"] = {{"type", "function"},
                          {"function", {{"name", string_in(choice, "name", "tool_choice", "tool_choice")}}}};
  else
    bad_field("tool_choice", "tool_choice must be {\"type\": \"auto\"}, {\"type\": \"any\"}, {\"type\": \"none\"} "
                             "or {\"type\": \"tool\", \"name\": ...}");
  const auto parallel = choice.find("disable_parallel_tool_use");
  if (parallel != choice.end() && !parallel->is_null())
    out["parallel_tool_calls"] = !boolean_field(*parallel, "tool_choice.disable_parallel_tool_use");
}

// thinking {type: enabled (budget_tokens) | adaptive | disabled}: the
// template's enable_thinking, the switch of the models that think.
bool thinking_on(const ojson& thinking) {
  const std::string type = thinking.is_object() ? type_of(thinking) : "";
  if (type != "enabled" && type != "adaptive" && type != "disabled")
    bad_field("thinking", "thinking must be {\"type\": \"enabled\", \"budget_tokens\": N} or {\"type\": \"disabled\"}");
  const auto budget = thinking.find("budget_tokens");
  if (budget != thinking.end() && !budget->is_null())
    integer_field(*budget, "thinking.budget_tokens", 1, std::numeric_limits<int32_t>::max());
  return type != "disabled";
}

// stop_sequences read as the engine's stop strings, its errors naming it.
void read_stop_sequences(const ojson& v, SamplingParams& p, const SamplingFieldLimits& limits) {
  if (!v.is_array()) bad_field("stop_sequences", fmt::format("stop_sequences must be a list of strings, got {}", json_excerpt(v)));
  for (const ojson& s : v)
    if (s.is_string() && s.get<std::string>().empty()) bad_field("stop_sequences", "stop_sequences: a string is empty");
  try {
    read_sampling_field("stop", v, p, limits);
  } catch (const RequestError& e) {
    throw RequestError(e.status(), "stop_sequences" + std::string(e.what()).substr(4), "stop_sequences");
  }
}

}  // namespace

ojson messages_conversation(const ojson& body) {
  if (!body.is_object()) bad_field("", "the request body must be a JSON object");
  ojson out{{"messages", conversation_messages(body)}};
  if (body.contains("tools") && !body["tools"].is_null()) out["tools"] = function_tools(body["tools"]);
  if (body.contains("tool_choice") && !body["tool_choice"].is_null()) add_tool_choice(body["tool_choice"], out);
  if (body.contains("thinking") && !body["thinking"].is_null())
    out["chat_template_kwargs"] = {{"enable_thinking", thinking_on(body["thinking"])}};
  return out;
}

ChatRequest parse_messages_request(const ApiModel& model, const ojson& body) {
  return build_chat_request(model, messages_conversation(body), [&](ChatRequest& r, const SamplingFieldLimits& limits) {
    const auto max_tokens = body.find("max_tokens");
    if (max_tokens == body.end() || max_tokens->is_null())
      bad_field("max_tokens", "max_tokens is required: the most tokens the reply may have");
    for (const auto& [key, v] : body.items()) {
      if (key == "max_tokens" || key == "temperature" || key == "top_p" || key == "top_k") {
        read_sampling_field(key, v, r.params, limits);
      } else if (key == "stop_sequences") {
        if (!v.is_null()) read_stop_sequences(v, r.params, limits);
      } else if (key == "stream") {
        r.stream.stream = !v.is_null() && boolean_field(v, key);
      } else if (key == "metadata") {
        if (!v.is_null() && !v.is_object()) bad_field(key, "metadata must be an object");
      }
    }
  });
}

size_t count_message_tokens(const ApiModel& model, const ojson& body) {
  const ojson conversation = messages_conversation(body);
  parse_chat_tools(conversation);  // refused as /v1/messages would refuse them (a duplicate name, ...)
  return chat_prompt(model, conversation).ids.size();
}

}  // namespace skiff
