// api/responses_request: OpenAI Responses bodies translated into the
// OpenAI-shaped conversation the chat template renders (written out by hand
// here), previous items continued, their sampling fields, and bad bodies
// refused naming the Responses field. Against stories260K's tokenizer and a
// template that prints what it is given.
#include <gtest/gtest.h>

#include <string>

#include "api/api_model.h"
#include "api/chat_request.h"
#include "api/request_fields.h"
#include "api/responses_request.h"
#include "chat/chat_template.h"
#include "request_refusal.h"
#include "stories_model.h"

namespace skiff {
namespace {

using testing::refusal;
using testing::stories_tokenizer;

// Each message's role, content, reasoning, tool calls and tool_call_id; the tools' names.
const ChatTemplate& printing_template() {
  static const ChatTemplate t(
      "{% for m in messages %}<{{ m.role }}>{% if m.reasoning_content %}({{ m.reasoning_content }}){% endif %}"
      "{% if m.content %}{{ m.content }}{% endif %}"
      "{% for c in m.tool_calls or [] %}[{{ c.id }} {{ c.function.name }} {{ c.function.arguments | tojson }}]"
      "{% endfor %}{% if m.tool_call_id %}({{ m.tool_call_id }}){% endif %}\n{% endfor %}"
      "{% for t in tools or [] %}{tool {{ t.function.name }}}{% endfor %}"
      "{% if enable_thinking is defined %}{think {{ enable_thinking }} {{ reasoning_effort }}}{% endif %}"
      "{% if add_generation_prompt %}<assistant>{% endif %}");
  return t;
}

ApiModel stories(int max_model_len = 512) {
  return ApiModel{"stories", stories_tokenizer(), max_model_len, &printing_template()};
}

// A function-call loop as the SDK sends it: the previous output items
// (reasoning, message, two calls) appended to the input, then their outputs.
const char* kToolLoop = R"({
  "model": "stories", "max_output_tokens": 32, "instructions": "Be brief.",
  "input": [
    {"role": "developer", "content": "Use tools."},
    {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "Weather in"},
                                                    {"type": "input_text", "text": "Paris and Rome?"}]},
    {"type": "reasoning", "id": "rs_1", "summary": [], "content": [{"type": "reasoning_text", "text": "Call it."}]},
    {"type": "message", "id": "msg_1", "role": "assistant", "status": "completed",
     "content": [{"type": "output_text", "text": "Let me look.", "annotations": []}]},
    {"type": "function_call", "id": "fc_1", "call_id": "call_1", "name": "get_weather",
     "arguments": "{\"city\": \"Paris\"}", "status": "completed"},
    {"type": "function_call", "call_id": "call_2", "name": "get_weather", "arguments": "{\"city\": \"Rome\"}"},
    {"type": "function_call_output", "call_id": "call_1", "output": "18 C"},
    {"type": "function_call_output", "call_id": "call_2", "output": [{"type": "input_text", "text": "21 C"}]},
    {"role": "user", "content": "Thanks."}],
  "tools": [{"type": "function", "name": "get_weather", "description": "Weather in a city", "strict": true,
             "parameters": {"type": "object", "properties": {"city": {"type": "string"}}}}],
  "tool_choice": {"type": "function", "name": "get_weather"}, "parallel_tool_calls": false,
  "reasoning": {"effort": "low"}})";

TEST(ResponsesRequest, TheConversationAsOpenAIMessages) {
  const ojson body = ojson::parse(kToolLoop);
  const ojson expected = ojson::parse(R"({
    "messages": [
      {"role": "system", "content": "Be brief."},
      {"role": "system", "content": "Use tools."},
      {"role": "user", "content": "Weather in\nParis and Rome?"},
      {"role": "assistant", "content": "Let me look.", "reasoning_content": "Call it.",
       "tool_calls": [
         {"id": "call_1", "type": "function", "function": {"name": "get_weather", "arguments": "{\"city\": \"Paris\"}"}},
         {"id": "call_2", "type": "function", "function": {"name": "get_weather", "arguments": "{\"city\": \"Rome\"}"}}]},
      {"role": "tool", "tool_call_id": "call_1", "content": "18 C"},
      {"role": "tool", "tool_call_id": "call_2", "content": "21 C"},
      {"role": "user", "content": "Thanks."}],
    "tools": [{"type": "function", "function": {
      "name": "get_weather", "description": "Weather in a city",
      "parameters": {"type": "object", "properties": {"city": {"type": "string"}}}}}],
    "tool_choice": {"type": "function", "function": {"name": "get_weather"}}, "parallel_tool_calls": false,
    "chat_template_kwargs": {"enable_thinking": true, "reasoning_effort": "low"}})");
  // Key order aside (the template sees objects by key).
  EXPECT_EQ(nlohmann::json(responses_conversation(body, input_items(body))), nlohmann::json(expected));
}

TEST(ResponsesRequest, AssistantTurnsSplitWhereAnotherRoleComesBetween) {
  const ojson body = ojson::parse(R"({"input": [
      {"type": "function_call", "call_id": "a", "name": "f", "arguments": "{}"},
      {"role": "assistant", "content": "after the call"},
      {"role": "assistant", "content": "another turn"},
      {"type": "reasoning", "summary": [{"type": "summary_text", "text": "hm"}]},
      {"type": "function_call", "call_id": "b", "name": "f", "arguments": "{}"}],
      "reasoning": {"effort": "none"}})");
  const ojson c = responses_conversation(body, input_items(body));
  const ojson& m = c["messages"];
  ASSERT_EQ(m.size(), 4u) << m.dump();
  EXPECT_TRUE(m[0]["content"].is_null());
  EXPECT_EQ(m[0]["tool_calls"][0]["id"], "a");
  EXPECT_EQ(m[1]["content"], "after the call");
  EXPECT_EQ(m[2]["content"], "another turn");
  EXPECT_EQ(m[3]["reasoning_content"], "hm");
  EXPECT_EQ(m[3]["tool_calls"][0]["id"], "b");
  EXPECT_EQ(c["chat_template_kwargs"]["enable_thinking"], false);
}

TEST(ResponsesRequest, RenderedAndSampledAsTheChatEndpointWould) {
  const ResponsesRequest r = parse_responses_request(stories(), ojson::parse(kToolLoop));
  const std::string rendered =
      "<system>Be brief.<system>Use tools.<user>Weather in\nParis and Rome?"
      "<assistant>(Call it.)Let me look.[call_1 get_weather {\"city\": \"Paris\"}]"
      "[call_2 get_weather {\"city\": \"Rome\"}]<tool>18 C(call_1)<tool>21 C(call_2)<user>Thanks."
      "{tool get_weather}{think True low}<assistant>";
  EXPECT_EQ(r.chat.prompt, stories_tokenizer().encode(rendered, false, true));
  EXPECT_EQ(r.chat.params.max_tokens, 32);
  EXPECT_EQ(r.chat.tools.choice, ChatTools::Choice::kNamed);
  EXPECT_FALSE(r.chat.tools.parallel);
  EXPECT_FALSE(r.chat.stream.stream);
  EXPECT_TRUE(r.store);
  EXPECT_EQ(r.items, ojson::parse(kToolLoop)["input"]);  // the instructions are not kept

  const ResponsesRequest s = parse_responses_request(stories(), ojson::parse(R"({
      "input": "Hi", "max_output_tokens": 5, "temperature": 0.25, "top_p": 0.5, "stream": true, "store": false,
      "metadata": {"k": "v"}, "user": "u1", "truncation": "disabled", "include": []})"));
  EXPECT_EQ(s.chat.prompt, stories_tokenizer().encode("<user>Hi<assistant>", false, true));
  EXPECT_EQ(s.chat.params.max_tokens, 5);
  EXPECT_FLOAT_EQ(s.chat.params.temperature, 0.25f);
  EXPECT_FLOAT_EQ(s.chat.params.top_p, 0.5f);
  EXPECT_TRUE(s.chat.stream.stream);
  EXPECT_FALSE(s.store);
  EXPECT_EQ(s.items, ojson::parse(R"([{"type": "message", "role": "user", "content": "Hi"}])"));
  // Without max_output_tokens, the context left.
  EXPECT_EQ(parse_responses_request(stories(), ojson::parse(R"({"input": "Hi"})")).chat.params.max_tokens,
            512 - static_cast<int>(s.chat.prompt.size()));
}

TEST(ResponsesRequest, APreviousResponsesItemsComeFirst) {
  const ojson previous = ojson::parse(R"([
      {"type": "message", "role": "user", "content": "Hi"},
      {"type": "message", "id": "msg_1", "role": "assistant", "content": [{"type": "output_text", "text": "Hello"}]}])");
  const ojson body = ojson::parse(R"({"input": "Again", "instructions": "Be kind.",
                                      "previous_response_id": "resp_1"})");
  EXPECT_EQ(previous_response_id(body), "resp_1");
  const ResponsesRequest r = parse_responses_request(stories(), body, &previous);
  EXPECT_EQ(r.chat.prompt,
            stories_tokenizer().encode("<system>Be kind.<user>Hi<assistant>Hello<user>Again<assistant>", false, true));
  EXPECT_EQ(r.items.size(), 3u);
  EXPECT_EQ(r.items[2]["content"], "Again");
  EXPECT_EQ(previous_response_id(ojson::parse(R"({"input": "x"})")), std::nullopt);
}

TEST(ResponsesRequest, TextFormatIsTheStructuredOutput) {
  const auto format = [](const std::string& text) {
    return parse_responses_request(stories(), ojson::parse(R"({"input": "Hi", "text": )" + text + "}"))
        .chat.params.structured_outputs;
  };
  const StructuredOutputs schema = format(R"({"format": {"type": "json_schema", "name": "point", "strict": true,
      "schema": {"type": "object", "properties": {"x": {"type": "integer"}}}}})");
  EXPECT_EQ(ojson::parse(schema.json), ojson::parse(R"({"type": "object", "properties": {"x": {"type": "integer"}}})"));
  EXPECT_EQ(schema.field, "text.format");
  const StructuredOutputs object = format(R"({"format": {"type": "json_object"}})");
  EXPECT_TRUE(object.json_object);
  EXPECT_EQ(object.field, "text.format");
  EXPECT_TRUE(format(R"({"format": {"type": "text"}, "verbosity": "low"})").empty());
}

TEST(ResponsesRequest, BadBodiesNameTheirField) {
  const struct {
    const char* fields;
    const char* param;
  } cases[] = {
      {R"("model": "stories")", "input"},
      {R"("input": 3)", "input"},
      {R"("input": [])", "input"},
      {R"("input": ["Hi"])", "input"},
      {R"("input": [{"role": "tool", "content": "Hi"}])", "input"},
      {R"("input": [{"role": "user"}])", "input"},
      {R"("input": [{"role": "user", "content": [{"type": "input_image", "image_url": "x"}]}])", "input"},
      {R"("input": [{"type": "function_call", "call_id": "a", "name": "f", "arguments": {}}])", "input"},
      {R"("input": [{"type": "function_call_output", "call_id": "a"}])", "input"},
      {R"("input": [{"type": "item_reference", "id": "x"}])", "input"},
      {R"("input": "Hi", "instructions": 3)", "instructions"},
      {R"("input": "Hi", "max_output_tokens": 0)", "max_output_tokens"},
      {R"("input": "Hi", "max_output_tokens": 600)", "max_output_tokens"},  // past the context
      {R"("input": "Hi", "temperature": "hot")", "temperature"},
      {R"("input": "Hi", "stream": "yes")", "stream"},
      {R"("input": "Hi", "store": "yes")", "store"},
      {R"("input": "Hi", "metadata": {"k": 1})", "metadata"},
      {R"("input": "Hi", "user": 1)", "user"},
      {R"("input": "Hi", "previous_response_id": 7)", "previous_response_id"},
      {R"("input": "Hi", "parallel_tool_calls": "no")", "parallel_tool_calls"},
      {R"("input": "Hi", "tools": {})", "tools"},
      {R"("input": "Hi", "tools": [{"type": "web_search"}])", "tools"},
      {R"("input": "Hi", "tools": [{"name": "f", "parameters": {}}])", "tools"},
      {R"("input": "Hi", "tools": [{"type": "function", "name": "f"}, {"type": "function", "name": "f"}])", "tools"},
      {R"("input": "Hi", "tool_choice": "sometimes")", "tool_choice"},
      {R"("input": "Hi", "tool_choice": {"type": "file_search"})", "tool_choice"},
      {R"("input": "Hi", "tools": [{"type": "function", "name": "f"}], "tool_choice": {"type": "function",
          "name": "g"})", "tool_choice"},
      {R"("input": "Hi", "reasoning": {"effort": "extreme"})", "reasoning.effort"},
      {R"("input": "Hi", "reasoning": "high")", "reasoning"},
      {R"("input": "Hi", "text": {"format": {"type": "xml"}})", "text.format"},
      {R"("input": "Hi", "text": {"format": {"type": "json_schema", "name": "x"}})", "text.format.schema"},
      {R"("input": "Hi", "text": {"format": {"type": "json_schema", "name": 1, "schema": {}}})", "text.format.name"},
  };
  for (const auto& c : cases) {
    const std::string body = std::string("{") + c.fields + "}";
    const RequestError e = refusal([&] { parse_responses_request(stories(), ojson::parse(body)); });
    EXPECT_EQ(e.status(), 400) << body;
    EXPECT_EQ(e.param(), c.param) << body << ": " << e.what();
  }
}

}  // namespace
}  // namespace skiff
