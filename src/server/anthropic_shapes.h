// The JSON shapes of Anthropic's Messages API: errors, a reply's content
// blocks and stop reason, and the events a streamed message is made of.
#pragma once
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>

#include "api/chat_reply_stream.h"
#include "api/request_fields.h"
#include "engine/request.h"

namespace skiff {

// The status an error has on Anthropic's routes: skiff's 503 (loading, a full
// queue) is Anthropic's 529 overloaded_error; the others are kept.
int anthropic_status(int status);
// {"type": "error", "error": {"type": "invalid_request_error", ..., "message"}},
// the type from the status; the message names the field at fault (param).
ojson anthropic_error_body(int status, const std::string& message, const std::string& param = {});
// One event of a stream: "event: NAME\ndata: <json>\n\n".
std::string anthropic_event(const char* name, const ojson& data);

// Why a message ended: stop_reason (end_turn, max_tokens, stop_sequence,
// tool_use) and stop_sequence (the stop string that matched, else null).
struct MessageStop {
  ojson reason, sequence;
};
MessageStop message_stop(const CompletionOutput& c, bool made_calls);

// A whole reply's content blocks: thinking, text, then a tool_use per call
// (its input the arguments' JSON object; {} where they are cut short).
ojson content_blocks(const ChatReplyStream& stream);

// A reply's content blocks as stream events: a block opens when the kind of
// text changes (thinking, text, a new call) and closes before the next one.
class ContentBlockEvents {
 public:
  std::string push(const ReplyDelta& delta);
  std::string close();  // content_block_stop of the open block, if one is

 private:
  enum class Kind { kNone, kThinking, kText, kToolUse };
  std::string open(Kind kind, ojson block);
  std::string delta(ojson delta) const;

  Kind kind_ = Kind::kNone;
  int index_ = -1;  // the open block's
};

}  // namespace skiff
