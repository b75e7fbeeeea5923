// server/anthropic_shapes: a reply's deltas as Anthropic's content-block
// events (written out by hand), stop reasons, whole replies' blocks, and
// errors typed by their status.
#include "server/anthropic_shapes.h"

#include <gtest/gtest.h>

#include <string>

namespace skiff {
namespace {

std::string event(const char* name, const char* data) { return std::string("event: ") + name + "\ndata: " + data + "\n\n"; }

TEST(AnthropicShapes, DeltasOpenABlockPerKindOfTextAndPerCall) {
  ContentBlockEvents blocks;
  ReplyDelta thinking_then_text;
  thinking_then_text.reasoning = "Hmm.";
  thinking_then_text.content = "Let";
  ReplyDelta more_text;
  more_text.content = " me look.";
  ReplyDelta calls;  // the rest of nothing, a whole call, and the start of another
  calls.tool_calls = {{0, "toolu_0", "f", R"({"a": 1})"}, {1, "toolu_1", "g", R"({"b")"}};
  ReplyDelta rest;
  rest.tool_calls = {{1, "", "", R"(: 2})"}};
  std::string out;  // in this order (the operands of + are not)
  for (const ReplyDelta* d : {&thinking_then_text, &more_text, &calls, &rest}) out += blocks.push(*d);
  out += blocks.push(ReplyDelta{});
  out += blocks.close();
  out += blocks.close();
  const std::string expected =
      event("content_block_start", R"({"type":"content_block_start","index":0,"content_block":{"type":"thinking","thinking":"","signature":""}})") +
      event("content_block_delta", R"({"type":"content_block_delta","index":0,"delta":{"type":"thinking_delta","thinking":"Hmm."}})") +
      event("content_block_stop", R"({"type":"content_block_stop","index":0})") +
      event("content_block_start", R"({"type":"content_block_start","index":1,"content_block":{"type":"text","text":""}})") +
      event("content_block_delta", R"({"type":"content_block_delta","index":1,"delta":{"type":"text_delta","text":"Let"}})") +
      event("content_block_delta", R"({"type":"content_block_delta","index":1,"delta":{"type":"text_delta","text":" me look."}})") +
      event("content_block_stop", R"({"type":"content_block_stop","index":1})") +
      event("content_block_start", R"({"type":"content_block_start","index":2,"content_block":{"type":"tool_use","id":"toolu_0","name":"f","input":{}}})") +
      event("content_block_delta", R"({"type":"content_block_delta","index":2,"delta":{"type":"input_json_delta","partial_json":"{\"a\": 1}"}})") +
      event("content_block_stop", R"({"type":"content_block_stop","index":2})") +
      event("content_block_start", R"({"type":"content_block_start","index":3,"content_block":{"type":"tool_use","id":"toolu_1","name":"g","input":{}}})") +
      event("content_block_delta", R"({"type":"content_block_delta","index":3,"delta":{"type":"input_json_delta","partial_json":"{\"b\""}})") +
      event("content_block_delta", R"({"type":"content_block_delta","index":3,"delta":{"type":"input_json_delta","partial_json":": 2}"}})") +
      event("content_block_stop", R"({"type":"content_block_stop","index":3})");
  EXPECT_EQ(out, expected);
}

TEST(AnthropicShapes, StopReasons) {
  CompletionOutput c;
  c.finish_reason = FinishReason::kStop;
  EXPECT_EQ(message_stop(c, false).reason, "end_turn");
  EXPECT_TRUE(message_stop(c, false).sequence.is_null());
  EXPECT_EQ(message_stop(c, true).reason, "tool_use");
  c.stop_reason = "END";
  EXPECT_EQ(message_stop(c, false).reason, "stop_sequence");
  EXPECT_EQ(message_stop(c, false).sequence, "END");
  c.finish_reason = FinishReason::kLength;
  EXPECT_EQ(message_stop(c, true).reason, "max_tokens");  // a call cut short is no call to make
  c.finish_reason.reset();
  EXPECT_TRUE(message_stop(c, false).reason.is_null());
}

TEST(AnthropicShapes, AWholeReplysBlocks) {
  const std::unique_ptr<ChatSyntax> hermes = chat_syntax_named("hermes", "");
  ChatReplyStream stream(hermes.get(), "toolu_x_");
  stream.push(R"(Looking.<tool_call>{"name": "f", "arguments": {"a": [1, 2]}}</tool_call>)"
              R"(<tool_call>{"name": "g", "arguments": {}}</tool_call>)");
  stream.finish();
  EXPECT_EQ(content_blocks(stream), ojson::parse(R"([
      {"type": "text", "text": "Looking."},
      {"type": "tool_use", "id": "toolu_x_0", "name": "f", "input": {"a": [1, 2]}},
      {"type": "tool_use", "id": "toolu_x_1", "name": "g", "input": {}}])"));
  ChatReplyStream plain(nullptr, "toolu_y_");
  plain.push("Hi");
  plain.finish();
  EXPECT_EQ(content_blocks(plain), ojson::parse(R"([{"type": "text", "text": "Hi"}])"));
}

TEST(AnthropicShapes, ErrorsTypedByStatusAndNamingTheirField) {
  const struct {
    int status, shown;
    const char* type;
  } cases[] = {{400, 400, "invalid_request_error"}, {401, 401, "authentication_error"},
               {404, 404, "not_found_error"},       {413, 413, "request_too_large"},
               {500, 500, "api_error"},             {503, 529, "overloaded_error"}};
  for (const auto& c : cases) {
    EXPECT_EQ(anthropic_status(c.status), c.shown);
    EXPECT_EQ(anthropic_error_body(c.status, "m")["error"]["type"], c.type) << c.status;
  }
  EXPECT_EQ(anthropic_error_body(400, "max_tokens is required", "max_tokens"),
            ojson::parse(R"({"type": "error", "error": {"type": "invalid_request_error",
                                                          "message": "max_tokens is required"}})"));
  EXPECT_EQ(anthropic_error_body(400, "two tools are named 'f'", "tools")["error"]["message"],
            "tools: two tools are named 'f'");
}

}  // namespace
}  // namespace skiff
