// A reply parsed while it streams: the text so far is parsed again by the
// model's ChatSyntax at each delta (replies are short), and what changed
// since the last delta is sent: reasoning and content as new text, tool calls
// as OpenAI streams them (a call's index, then its id and name once, then its
// arguments in pieces). The pieces join to exactly the non-streamed reply.
#pragma once
#include <string>
#include <string_view>
#include <vector>

#include "chat/chat_output.h"

namespace skiff {

struct ToolCallDelta {
  int index = 0;
  std::string id, name;  // in a call's first delta only
  std::string arguments;
};

struct ReplyDelta {
  std::string reasoning, content;
  std::vector<ToolCallDelta> tool_calls;
  bool empty() const { return reasoning.empty() && content.empty() && tool_calls.empty(); }
};

class ChatReplyStream {
 public:
  // syntax: null for plain text. call_ids: the ids of the calls, in order
  // (made by the caller: "call_" and a random suffix).
  ChatReplyStream(const ChatSyntax* syntax, std::string call_id_prefix);
  ReplyDelta push(std::string_view text);
  ReplyDelta finish();  // the text is complete
  const ChatReply& reply() const { return sent_; }  // everything sent so far
  std::string call_id(size_t index) const { return call_id_prefix_ + std::to_string(index); }

 private:
  ReplyDelta advance(bool partial);

  const ChatSyntax* syntax_;
  std::string call_id_prefix_;
  std::string text_;
  ChatReply sent_;
  std::vector<bool> call_closed_;  // calls whose arguments are final
};

}  // namespace skiff
