#include "server/responses_shapes.h"

#include "server/openai_shapes.h"

namespace skiff {

ojson response_skeleton(const std::string& id, const std::string& model, const ojson& body) {
  const auto field = [&](const char* key, ojson fallback) {
    const auto it = body.find(key);
    return it != body.end() && !it->is_null() ? *it : fallback;
  };
  return ojson{{"id", id},
               {"object", "response"},
               {"created_at", unix_seconds()},
               {"status", "in_progress"},
               {"error", nullptr},
               {"incomplete_details", nullptr},
               {"instructions", field("instructions", nullptr)},
               {"max_output_tokens", field("max_output_tokens", nullptr)},
               {"model", model},
               {"output", ojson::array()},
               {"parallel_tool_calls", field("parallel_tool_calls", true)},
               {"previous_response_id", field("previous_response_id", nullptr)},
               {"reasoning", field("reasoning", {{"effort", nullptr}, {"summary", nullptr}})},
               {"store", field("store", true)},
               {"temperature", field("temperature", 1.0)},
               {"text", field("text", {{"format", {{"type", "text"}}}})},
               {"tool_choice", field("tool_choice", "auto")},
               {"tools", field("tools", ojson::array())},
               {"top_p", field("top_p", 1.0)},
               {"truncation", "disabled"},
               {"usage", nullptr},
               {"user", field("user", nullptr)},
               {"metadata", field("metadata", ojson::object())}};
}

ResponseEvents::ResponseEvents(ojson skeleton, bool render) : response_(std::move(skeleton)), render_(render) {}

std::string ResponseEvents::event(const char* type, ojson fields) {
  const int64_t number = sequence_++;
  if (!render_) return {};
  ojson e{{"type", type}, {"sequence_number", number}};
  for (auto& [key, value] : fields.items()) e[key] = std::move(value);
  return std::string("event: ") + type + "\ndata: " + dump_json(e) + "\n\n";
}

std::string ResponseEvents::start() {
  std::string out = event("response.created", {{"response", response_}});  // numbered in this order
  return out + event("response.in_progress", {{"response", response_}});
}

std::string ResponseEvents::open(Kind kind, ojson new_item) {
  std::string out = close("completed");
  kind_ = kind;
  response_["output"].push_back(std::move(new_item));
  ++index_;
  out += event("response.output_item.added", {{"output_index", index_}, {"item", item()}});
  if (kind == Kind::kFunctionCall) return out;
  // Reasoning and messages hold their text in one content part.
  ojson part = kind == Kind::kMessage ? ojson{{"type", "output_text"}, {"text", ""}, {"annotations", ojson::array()}, {"logprobs", ojson::array()}}
                                      : ojson{{"type", "reasoning_text"}, {"text", ""}};
  out += event("response.content_part.added",
               {{"item_id", item()["id"]}, {"output_index", index_}, {"content_index", 0}, {"part", part}});
  item()["content"].push_back(std::move(part));
  return out;
}

std::string ResponseEvents::text_delta(const char* type, const std::string& text) {
  item()["content"][0]["text"].get_ref<std::string&>() += text;
  ojson fields{{"item_id", item()["id"]}, {"output_index", index_}, {"content_index", 0}, {"delta", text}};
  if (kind_ == Kind::kMessage) fields["logprobs"] = ojson::array();
  return event(type, std::move(fields));
}

std::string ResponseEvents::push(const ReplyDelta& d) {
  std::string out;
  if (!d.reasoning.empty()) {
    if (kind_ != Kind::kReasoning)
      out += open(Kind::kReasoning, {{"id", response_id("rs_")},
                                     {"type", "reasoning"},
                                     {"status", "in_progress"},
                                     {"summary", ojson::array()},
                                     {"content", ojson::array()}});
    out += text_delta("response.reasoning_text.delta", d.reasoning);
  }
  if (!d.content.empty()) {
    if (kind_ != Kind::kMessage)
      out += open(Kind::kMessage, {{"id", response_id("msg_")},
                                   {"type", "message"},
                                   {"status", "in_progress"},
                                   {"role", "assistant"},
                                   {"content", ojson::array()}});
    out += text_delta("response.output_text.delta", d.content);
  }
  for (const ToolCallDelta& call : d.tool_calls) {
    // A call's first delta has its id: an item of its own; later ones only
    // extend the open call's arguments.
    if (!call.id.empty())
      out += open(Kind::kFunctionCall, {{"id", response_id("fc_")},
                                        {"type", "function_call"},
                                        {"status", "in_progress"},
                                        {"arguments", ""},
                                        {"call_id", call.id},
                                        {"name", call.name}});
    if (call.arguments.empty()) continue;
    item()["arguments"].get_ref<std::string&>() += call.arguments;
    out += event("response.function_call_arguments.delta",
                 {{"item_id", item()["id"]}, {"output_index", index_}, {"delta", call.arguments}});
  }
  return out;
}

std::string ResponseEvents::close(const char* status) {
  if (kind_ == Kind::kNone) return {};
  std::string out;
  const ojson where{{"item_id", item()["id"]}, {"output_index", index_}};
  const auto with = [&](ojson fields) {
    ojson all = where;
    for (auto& [key, value] : fields.items()) all[key] = std::move(value);
    return all;
  };
  if (kind_ == Kind::kFunctionCall) {
    out += event("response.function_call_arguments.done", with({{"arguments", item()["arguments"]}}));
  } else {
    const ojson& part = item()["content"][0];
    out += kind_ == Kind::kMessage
               ? event("response.output_text.done",
                       with({{"content_index", 0}, {"text", part["text"]}, {"logprobs", ojson::array()}}))
               : event("response.reasoning_text.done", with({{"content_index", 0}, {"text", part["text"]}}));
    out += event("response.content_part.done", with({{"content_index", 0}, {"part", part}}));
  }
  item()["status"] = status;
  out += event("response.output_item.done", {{"output_index", index_}, {"item", item()}});
  kind_ = Kind::kNone;
  return out;
}

std::string ResponseEvents::finish(bool cut_by_length, int64_t input_tokens, int64_t output_tokens) {
  std::string out = close(cut_by_length ? "incomplete" : "completed");
  response_["status"] = cut_by_length ? "incomplete" : "completed";
  response_["incomplete_details"] = cut_by_length ? ojson{{"reason", "max_output_tokens"}} : ojson(nullptr);
  // Reasoning tokens are not counted apart from the others (they are in output_tokens).
  response_["usage"] = {{"input_tokens", input_tokens},
                        {"input_tokens_details", {{"cached_tokens", 0}}},
                        {"output_tokens", output_tokens},
                        {"output_tokens_details", {{"reasoning_tokens", 0}}},
                        {"total_tokens", input_tokens + output_tokens}};
  return out + event(cut_by_length ? "response.incomplete" : "response.completed", {{"response", response_}});
}

std::string ResponseEvents::error(int status, const std::string& message, const std::string& param) {
  const ojson e = error_body(status, message, param)["error"];
  return event("error", {{"code", e["type"]}, {"message", message}, {"param", e["param"]}});
}

}  // namespace skiff
