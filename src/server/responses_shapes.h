// The JSON shapes of OpenAI's Responses API: the response object (with the
// request's fields echoed), its output items (reasoning, message with
// output_text, function_call) and the numbered events a streamed response is
// made of ("event: TYPE\ndata: {type, sequence_number, ...}").
#pragma once
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>

#include "api/chat_reply_stream.h"
#include "api/request_fields.h"

namespace skiff {

// A response in progress, no output yet: id, object, created_at, model,
// status "in_progress", and the fields of the (validated) request body a
// response repeats, with OpenAI's defaults where the body has none.
ojson response_skeleton(const std::string& id, const std::string& model, const ojson& body);

// One response built from its reply's deltas: the output items (a new item
// when the kind of text changes: reasoning, message, a new call) and, where
// rendered, the stream's events. A whole reply goes through the same steps,
// so the streamed response ends equal to the whole one.
class ResponseEvents {
 public:
  // render: make the events' text (a stream); else only the response.
  ResponseEvents(ojson skeleton, bool render);

  std::string start();  // response.created, response.in_progress
  std::string push(const ReplyDelta& delta);
  // Closes the open item; the status is "incomplete" (reason
  // max_output_tokens) where the reply was cut by the length, else
  // "completed"; response.completed or response.incomplete with the usage.
  std::string finish(bool cut_by_length, int64_t input_tokens, int64_t output_tokens);
  // An error event numbered in the sequence.
  std::string error(int status, const std::string& message, const std::string& param);

  const ojson& response() const { return response_; }

 private:
  enum class Kind { kNone, kReasoning, kMessage, kFunctionCall };
  std::string event(const char* type, ojson fields);
  std::string open(Kind kind, ojson item);
  std::string close(const char* status);
  std::string text_delta(const char* type, const std::string& text);
  ojson& item() { return response_["output"][index_]; }

  ojson response_;
  bool render_;
  int64_t sequence_ = 0;
  Kind kind_ = Kind::kNone;
  int index_ = -1;  // the open item's in output
};

}  // namespace skiff
