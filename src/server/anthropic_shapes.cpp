#include "server/anthropic_shapes.h"

#include "base/json.h"
#include "server/openai_shapes.h"

namespace skiff {
namespace {

const char* error_type(int status) {
  switch (status) {
    case 401: return "authentication_error";
    case 403: return "permission_error";
    case 404: return "not_found_error";
    case 413: return "request_too_large";
    case 429: return "rate_limit_error";
    case 529: return "overloaded_error";
    default: return status >= 500 ? "api_error" : "invalid_request_error";
  }
}

// A call's arguments as the object tool_use's input is: what a call cut
// short by max_tokens wrote is no object yet.
ojson input_object(const std::string& arguments) {
  try {
    ojson input = parse_ordered_json(arguments);
    if (input.is_object()) return input;
  } catch (const Error&) {
  }
  return ojson::object();
}

}  // namespace

int anthropic_status(int status) { return status == 503 ? 529 : status; }

ojson anthropic_error_body(int status, const std::string& message, const std::string& param) {
  const bool named = param.empty() || message.compare(0, param.size(), param) == 0;
  return ojson{{"type", "error"},
               {"error", {{"type", error_type(anthropic_status(status))},
                          {"message", named ? message : param + ": " + message}}}};
}

std::string anthropic_event(const char* name, const ojson& data) {
  return std::string("event: ") + name + "\ndata: " + dump_json(data) + "\n\n";
}

MessageStop message_stop(const CompletionOutput& c, bool made_calls) {
  if (c.finish_reason == FinishReason::kLength) return {"max_tokens", nullptr};
  if (c.finish_reason != FinishReason::kStop) return {nullptr, nullptr};
  if (made_calls) return {"tool_use", nullptr};
  if (!c.stop_reason.empty()) return {"stop_sequence", c.stop_reason};
  return {"end_turn", nullptr};
}

ojson content_blocks(const ChatReplyStream& stream) {
  const ChatReply& reply = stream.reply();
  ojson blocks = ojson::array();
  if (!reply.reasoning.empty())
    blocks.push_back({{"type", "thinking"}, {"thinking", reply.reasoning}, {"signature", ""}});
  if (!reply.content.empty()) blocks.push_back({{"type", "text"}, {"text", reply.content}});
  for (size_t i = 0; i < reply.tool_calls.size(); ++i)
    blocks.push_back({{"type", "tool_use"},
                      {"id", stream.call_id(i)},
                      {"name", reply.tool_calls[i].name},
                      {"input", input_object(reply.tool_calls[i].arguments)}});
  return blocks;
}

std::string ContentBlockEvents::close() {
  if (kind_ == Kind::kNone) return {};
  kind_ = Kind::kNone;
  return anthropic_event("content_block_stop", {{"type", "content_block_stop"}, {"index", index_}});
}

std::string ContentBlockEvents::open(Kind kind, ojson block) {
  std::string out = close();
  kind_ = kind;
  ++index_;
  return out + anthropic_event("content_block_start",
                               {{"type", "content_block_start"}, {"index", index_}, {"content_block", std::move(block)}});
}

std::string ContentBlockEvents::delta(ojson delta) const {
  return anthropic_event("content_block_delta", {{"type", "content_block_delta"}, {"index", index_}, {"delta", std::move(delta)}});
}

std::string ContentBlockEvents::push(const ReplyDelta& d) {
  std::string out;
  if (!d.reasoning.empty()) {
    if (kind_ != Kind::kThinking) out += open(Kind::kThinking, {{"type", "thinking"}, {"thinking", ""}, {"signature", ""}});
    out += delta({{"type", "thinking_delta"}, {"thinking", d.reasoning}});
  }
  if (!d.content.empty()) {
    if (kind_ != Kind::kText) out += open(Kind::kText, {{"type", "text"}, {"text", ""}});
    out += delta({{"type", "text_delta"}, {"text", d.content}});
  }
  for (const ToolCallDelta& call : d.tool_calls) {
    // A call's first delta has its id: a block of its own; later ones only
    // extend the open call's arguments.
    if (!call.id.empty())
      out += open(Kind::kToolUse, {{"type", "tool_use"}, {"id", call.id}, {"name", call.name}, {"input", ojson::object()}});
    if (!call.arguments.empty()) out += delta({{"type", "input_json_delta"}, {"partial_json", call.arguments}});
  }
  return out;
}

}  // namespace skiff
