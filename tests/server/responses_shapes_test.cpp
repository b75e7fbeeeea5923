// server/responses_shapes: a reply's deltas as the Responses API's output
// items and numbered events, on deltas written by hand (reasoning among them,
// which the pytest model never writes), and a whole reply equal to the
// streamed one.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "server/responses_shapes.h"

namespace skiff {
namespace {

// Each event's type and data, in order, checking its framing.
std::vector<ojson> events_of(const std::string& stream) {
  std::vector<ojson> out;
  size_t at = 0;
  while (at < stream.size()) {
    const size_t end = stream.find("\n\n", at);
    const std::string block = stream.substr(at, end - at);
    at = end + 2;
    const size_t newline = block.find('\n');
    const ojson data = ojson::parse(block.substr(newline + std::string("\ndata: ").size()));
    EXPECT_EQ(block.substr(0, newline), "event: " + data["type"].get<std::string>());
    out.push_back(data);
  }
  return out;
}

std::vector<ReplyDelta> deltas() {
  std::vector<ReplyDelta> d(5);
  d[0].reasoning = "Think";
  d[1].reasoning = " more.";
  d[1].content = "Hello";
  d[2].content = " there.";
  d[3].tool_calls.push_back({0, "call_0", "get_weather", "{\"city\":"});
  d[4].tool_calls.push_back({0, "", "", " \"Oslo\"}"});
  return d;
}

TEST(ResponseEvents, ItemsOpenGrowAndCloseInOrder) {
  ResponseEvents r(response_skeleton("resp_1", "m", ojson::parse(R"({"temperature": 0.5})")), true);
  std::string stream = r.start();
  for (const ReplyDelta& d : deltas()) stream += r.push(d);
  stream += r.finish(false, 10, 7);
  const std::vector<ojson> events = events_of(stream);
  std::vector<std::string> types;
  for (size_t i = 0; i < events.size(); ++i) {
    EXPECT_EQ(events[i]["sequence_number"], i);
    types.push_back(events[i]["type"]);
  }
  const std::vector<std::string> expected = {
      "response.created", "response.in_progress",
      "response.output_item.added", "response.content_part.added", "response.reasoning_text.delta",
      "response.reasoning_text.delta", "response.reasoning_text.done", "response.content_part.done",
      "response.output_item.done",
      "response.output_item.added", "response.content_part.added", "response.output_text.delta",
      "response.output_text.delta", "response.output_text.done", "response.content_part.done",
      "response.output_item.done",
      "response.output_item.added", "response.function_call_arguments.delta",
      "response.function_call_arguments.delta", "response.function_call_arguments.done",
      "response.output_item.done", "response.completed"};
  EXPECT_EQ(types, expected);
  EXPECT_EQ(events[0]["response"]["status"], "in_progress");
  EXPECT_EQ(events[0]["response"]["temperature"], 0.5);
  EXPECT_EQ(events[13]["text"], "Hello there.");
  EXPECT_EQ(events[19]["arguments"], "{\"city\": \"Oslo\"}");

  const ojson& response = events.back()["response"];
  EXPECT_EQ(response["status"], "completed");
  EXPECT_TRUE(response["incomplete_details"].is_null());
  EXPECT_EQ(response["usage"]["total_tokens"], 17);
  const ojson& output = response["output"];
  ASSERT_EQ(output.size(), 3u);
  EXPECT_EQ(output[0]["type"], "reasoning");
  EXPECT_EQ(output[0]["content"][0], ojson::parse(R"({"type": "reasoning_text", "text": "Think more."})"));
  EXPECT_EQ(output[1]["type"], "message");
  EXPECT_EQ(output[1]["content"][0]["text"], "Hello there.");
  EXPECT_EQ(output[2]["call_id"], "call_0");
  EXPECT_EQ(output[2]["arguments"], "{\"city\": \"Oslo\"}");
  for (const ojson& item : output) EXPECT_EQ(item["status"], "completed");
  EXPECT_EQ(response, r.response());
}

TEST(ResponseEvents, AWholeReplyIsTheStreamedOneAndACutOneIsIncomplete) {
  const ojson skeleton = response_skeleton("resp_1", "m", ojson::object());
  ResponseEvents streamed(skeleton, true), whole(skeleton, false);
  ReplyDelta all;
  for (const ReplyDelta& d : deltas()) {
    streamed.push(d);
    all.reasoning += d.reasoning;
    all.content += d.content;
  }
  streamed.finish(true, 3, 4);
  all.tool_calls.push_back({0, "call_0", "get_weather", "{\"city\": \"Oslo\"}"});
  EXPECT_EQ(whole.start(), "");  // nothing rendered
  whole.push(all);
  whole.finish(true, 3, 4);
  ojson a = streamed.response(), b = whole.response();
  for (ojson* r : {&a, &b})
    for (ojson& item : (*r)["output"]) item.erase("id");  // random
  EXPECT_EQ(a, b);
  EXPECT_EQ(a["status"], "incomplete");
  EXPECT_EQ(a["incomplete_details"]["reason"], "max_output_tokens");
  EXPECT_EQ(a["output"].back()["status"], "incomplete");  // the item the length cut
  EXPECT_EQ(a["output"][0]["status"], "completed");
}

TEST(ResponseEvents, AnErrorIsAnEventInTheSequence) {
  ResponseEvents r(response_skeleton("resp_1", "m", ojson::object()), true);
  const std::string start = r.start();
  const std::vector<ojson> events = events_of(r.error(400, "bad grammar", "text.format"));
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(events[0]["type"], "error");
  EXPECT_EQ(events[0]["sequence_number"], 2);
  EXPECT_EQ(events[0]["param"], "text.format");
  EXPECT_EQ(events[0]["message"], "bad grammar");
}

}  // namespace
}  // namespace skiff
