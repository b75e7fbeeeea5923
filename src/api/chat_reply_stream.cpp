#include "api/chat_reply_stream.h"

namespace skiff {
namespace {

// The part of `now` past `sent`, where `now` extends it (a parse that went
// back on itself sends nothing until it extends what was sent again).
std::string grown(const std::string& sent, const std::string& now) {
  if (now.size() <= sent.size() || now.compare(0, sent.size(), sent) != 0) return {};
  return now.substr(sent.size());
}

}  // namespace

ChatReplyStream::ChatReplyStream(const ChatSyntax* syntax, std::string call_id_prefix)
    : syntax_(syntax), call_id_prefix_(std::move(call_id_prefix)) {}

ReplyDelta ChatReplyStream::push(std::string_view text) {
  text_ += text;
  if (text.empty()) return {};
  return advance(true);
}

ReplyDelta ChatReplyStream::finish() { return advance(false); }

ReplyDelta ChatReplyStream::advance(bool partial) {
  ReplyDelta delta;
  if (!syntax_) {
    delta.content = text_.substr(sent_.content.size());
    sent_.content = text_;
    return delta;
  }
  const ChatReply now = syntax_->parse(text_, partial);
  delta.reasoning = grown(sent_.reasoning, now.reasoning);
  sent_.reasoning += delta.reasoning;
  delta.content = grown(sent_.content, now.content);
  sent_.content += delta.content;
  // Arguments written as JSON verbatim grow while the call is open; others
  // (synthesized from XML parameters) are sent once the call is closed.
  const bool verbatim = syntax_->call_layout().has_value();
  for (size_t i = 0; i < now.tool_calls.size(); ++i) {
    const bool open = partial && now.call_open && i + 1 == now.tool_calls.size();
    if (open && !verbatim) break;
    ToolCallDelta d;
    d.index = static_cast<int>(i);
    if (i == sent_.tool_calls.size()) {
      sent_.tool_calls.push_back({now.tool_calls[i].name, ""});
      call_closed_.push_back(false);
      d.id = call_id(i);
      d.name = now.tool_calls[i].name;
    }
    if (call_closed_[i]) continue;
    d.arguments = grown(sent_.tool_calls[i].arguments, now.tool_calls[i].arguments);
    sent_.tool_calls[i].arguments += d.arguments;
    call_closed_[i] = !open;
    if (!d.name.empty() || !d.arguments.empty()) delta.tool_calls.push_back(std::move(d));
  }
  sent_.call_open = partial && now.call_open;
  return delta;
}

}  // namespace skiff
