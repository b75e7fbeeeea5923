#include "api/chat_request.h"

#include "api/constraint_fields.h"

#include <fmt/core.h>

#include "base/json.h"
#include "chat/chat_template.h"

namespace skiff {
namespace {

using nlohmann::json;

// A message's content as the templates take it: a string (text parts joined
// by newlines, as vLLM's "string" content format does).
ojson message_content(const ojson& content, size_t i) {
  if (content.is_string() || content.is_null()) return content;
  if (!content.is_array()) bad_field("messages", fmt::format("messages[{}].content must be a string or a list of parts", i));
  std::string text;
  for (const ojson& part : content) {
    if (!part.is_object() || part.value("type", "") != "text" || !part.contains("text") || !part["text"].is_string())
      bad_field("messages", fmt::format("messages[{}].content: only text parts ({{\"type\": \"text\", \"text\": ...}}) are supported", i));
    if (!text.empty()) text += "\n";
    text += part["text"].get<std::string>();
  }
  return text;
}

// OpenAI sends an assistant's tool-call arguments as JSON text; templates
// print them as objects (tojson), as vLLM hands them over.
void arguments_as_objects(ojson& message) {
  if (!message.contains("tool_calls") || !message["tool_calls"].is_array()) return;
  for (ojson& call : message["tool_calls"]) {
    if (!call.is_object() || !call.contains("function") || !call["function"].is_object()) continue;
    ojson& f = call["function"];
    if (!f.contains("arguments") || !f["arguments"].is_string()) continue;
    try {
      f["arguments"] = parse_ordered_json(f["arguments"].get<std::string>());
    } catch (const Error&) {
      // Not JSON: the template gets the text as it is.
    }
  }
}

ojson conversation(const ojson& body) {
  const auto it = body.find("messages");
  if (it == body.end() || !it->is_array() || it->empty()) bad_field("messages", "messages must be a non-empty list of messages");
  ojson messages = ojson::array();
  for (size_t i = 0; i < it->size(); ++i) {
    const ojson& m = (*it)[i];
    if (!m.is_object() || !m.contains("role") || !m["role"].is_string())
      bad_field("messages", fmt::format("messages[{}] must be an object with a string role", i));
    ojson copy = m;
    if (m.contains("content")) copy["content"] = message_content(m["content"], i);
    arguments_as_objects(copy);
    messages.push_back(std::move(copy));
  }
  return messages;
}

// The tools' constraint on the reply, where the model's syntax writes JSON
// arguments; a structured output starts after the reasoning.
void constrain_tool_calls(ChatRequest& r) {
  std::optional<CallLayout> layout = r.syntax ? r.syntax->call_layout() : std::nullopt;
  std::optional<CallsFormat> calls = layout ? calls_format(r.tools, *layout) : std::nullopt;
  StructuredOutputs& so = r.params.structured_outputs;
  if (calls && calls->trigger.empty() && !so.empty())
    bad_field(so.field, fmt::format("{} cannot apply when tool_choice asks for a call", so.field));
  if (calls && so.empty()) {  // with auto and a response_format, the format wins (no calls then)
    so.calls = std::move(calls);
    so.field = "tools";
  }
  if (!so.empty() && r.syntax) so.after = r.syntax->reasoning_end();
}

// The syntax a reply to `prompt` is parsed with: the model's, less its tool
// calls unless `tools` are parsed (reasoning is, always); null for none.
std::unique_ptr<ChatSyntax> reply_syntax(const ApiModel& model, const std::string& prompt, const ChatTools* tools) {
  if (!model.chat_syntax) return nullptr;
  std::unique_ptr<ChatSyntax> reasoning_only;
  if (!tools) reasoning_only = chat_syntax_named("", model.chat_syntax->reasoning_name());
  return (reasoning_only ? *reasoning_only : *model.chat_syntax)
      .for_prompt(prompt, tools ? string_parameters(*tools) : StringParameters{});
}

}  // namespace

MarkedPrompt render_chat(const ChatTemplate* chat_template, const Tokenizer& t, const ojson& body,
                         bool default_generation_prompt, bool special_tokens_in_content) {
  if (!chat_template)
    throw RequestError(400, "this model has no chat template: start the server with --chat-template FILE");
  ChatTemplateInputs in;
  in.messages = conversation(body);
  in.add_generation_prompt = default_generation_prompt;
  if (body.contains("add_generation_prompt") && !body["add_generation_prompt"].is_null())
    in.add_generation_prompt = boolean_field(body["add_generation_prompt"], "add_generation_prompt");
  if (t.bos_id() >= 0) in.bos_token = t.token_text(t.bos_id());
  if (t.eos_id() >= 0) in.eos_token = t.token_text(t.eos_id());
  if (body.contains("tools") && !body["tools"].is_null()) in.extra["tools"] = body["tools"];
  if (body.contains("chat_template_kwargs") && !body["chat_template_kwargs"].is_null()) {
    if (!body["chat_template_kwargs"].is_object()) bad_field("chat_template_kwargs", "chat_template_kwargs must be an object");
    for (const auto& [k, v] : body["chat_template_kwargs"].items()) {
      // The variables this request sets from its validated fields: a kwarg
      // would replace them unchecked (a conversation never validated).
      for (const char* set : {"messages", "tools", "add_generation_prompt", "bos_token", "eos_token"})
        if (k == set)
          bad_field("chat_template_kwargs", fmt::format("chat_template_kwargs may not set \"{}\"", k));
      in.extra[k] = v;
    }
  }
  const auto render = [&] {
    try {
      return chat_template->render(in);
    } catch (const Error& e) {
      throw RequestError(400, fmt::format("the chat template failed: {}", e.what()), "messages");
    }
  };
  if (special_tokens_in_content) return MarkedPrompt{render(), {}};
  ClientTextMarks marks(t, chat_template->source(), {&in.messages, &in.extra});
  marks.mark(in.messages);
  marks.mark(in.extra);
  return marks.unmark(render());
}

ChatPrompt chat_prompt(const ApiModel& model, const ojson& conversation) {
  MarkedPrompt rendered =
      render_chat(model.chat_template, model.tokenizer, conversation, true, model.special_tokens_in_content);
  ChatPrompt p;
  p.ids = model.tokenizer.encode(rendered.text, /*add_special=*/false, /*parse_special=*/true, rendered.plain);
  if (p.ids.empty()) bad_field("messages", "the conversation renders to no tokens");
  p.text = std::move(rendered.text);
  return p;
}

ChatRequest build_chat_request(const ApiModel& model, const ojson& conversation, const ChatFieldReader& read_fields) {
  ChatRequest r;
  r.tools = parse_chat_tools(conversation);
  ChatPrompt prompt = chat_prompt(model, conversation);
  r.prompt = std::move(prompt.ids);
  // Tool calls are parsed only where tools are on; reasoning always.
  r.syntax = reply_syntax(model, prompt.text, r.tools.any() ? &r.tools : nullptr);
  const SamplingFieldLimits limits{model.tokenizer.n_vocab(),
                                   model.max_model_len - static_cast<int32_t>(r.prompt.size())};
  r.params.max_tokens = std::max(1, limits.null_max_tokens);  // absent: the context left, as vLLM
  read_fields(r, limits);
  constrain_tool_calls(r);
  // A reply held to a response_format (or another structured output) beside
  // tool_choice auto is that format's content, never parsed as calls: a JSON
  // object with a "name" would read as one.
  if (r.tools.any() && !r.params.structured_outputs.calls && !r.params.structured_outputs.empty())
    r.syntax = reply_syntax(model, prompt.text, nullptr);
  validate_sampling(r.params);
  check_context(model, r.prompt.size(), r.params.max_tokens);
  return r;
}

ChatRequest parse_chat_request(const ApiModel& model, const ojson& body) {
  return build_chat_request(model, body, [&](ChatRequest& r, const SamplingFieldLimits& limits) {
    bool logprobs = false;
    for (const auto& [key, v] : body.items()) {
      if (key == "logprobs") {
        logprobs = !v.is_null() && boolean_field(v, key);
      } else if (key == "top_logprobs") {
        if (!v.is_null()) r.top_logprobs = static_cast<int>(integer_field(v, key, 0, kMaxLogprobs));
      } else if (key == "max_completion_tokens") {
        read_sampling_field("max_tokens", v, r.params, limits);
      } else if (read_stream_field(key, v, r.stream)) {
      } else if (read_constraint_field(key, v, r.params)) {
      } else if (key != "messages") {
        read_sampling_field(key, v, r.params, limits);  // other fields are ignored, as vLLM does
      }
    }
    if (r.top_logprobs && !logprobs) bad_field("top_logprobs", "top_logprobs needs logprobs: true");
    if (logprobs) {
      r.top_logprobs = r.top_logprobs.value_or(0);
      r.params.logprobs = *r.top_logprobs;
    } else {
      r.top_logprobs.reset();
    }
  });
}

}  // namespace skiff
