// api/messages_request: Anthropic Messages bodies translated into the
// OpenAI-shaped conversation the chat template renders (written out by hand
// here), their sampling fields, and bad bodies refused naming the Anthropic
// field. Against stories260K's tokenizer and a template that prints what it
// is given.
#include <gtest/gtest.h>

#include <string>

#include "api/api_model.h"
#include "api/chat_request.h"
#include "api/messages_request.h"
#include "api/request_fields.h"
#include "chat/chat_output.h"
#include "chat/chat_template.h"
#include "request_refusal.h"
#include "stories_model.h"

namespace skiff {
namespace {

using testing::stories_tokenizer;

// Each message's role, content, tool calls and tool_call_id; the tools' names.
const ChatTemplate& printing_template() {
  static const ChatTemplate t(
      "{% for m in messages %}<{{ m.role }}>{% if m.content %}{{ m.content }}{% endif %}"
      "{% for c in m.tool_calls or [] %}[{{ c.id }} {{ c.function.name }} {{ c.function.arguments | tojson }}]"
      "{% endfor %}{% if m.tool_call_id %}({{ m.tool_call_id }}){% endif %}\n{% endfor %}"
      "{% for t in tools or [] %}{tool {{ t.function.name }}}{% endfor %}"
      "{% if enable_thinking is defined %}{think {{ enable_thinking }}}{% endif %}"
      "{% if add_generation_prompt %}<assistant>{% endif %}");
  return t;
}

ApiModel stories(int max_model_len = 512) {
  return ApiModel{"stories", stories_tokenizer(), max_model_len, &printing_template()};
}

using testing::refusal;

const char* kToolLoop = R"({
  "model": "stories", "max_tokens": 32,
  "system": [{"type": "text", "text": "Be brief."}, {"type": "text", "text": "Use tools."}],
  "messages": [
    {"role": "user", "content": "Weather in Paris?"},
    {"role": "assistant", "content": [
      {"type": "thinking", "thinking": "Call the tool.", "signature": "x"},
      {"type": "text", "text": "Let me look."},
      {"type": "tool_use", "id": "toolu_1", "name": "get_weather", "input": {"city": "Paris"}}]},
    {"role": "user", "content": [
      {"type": "tool_result", "tool_use_id": "toolu_1", "content": [{"type": "text", "text": "18 C"}]},
      {"type": "text", "text": "And tomorrow?"}]}],
  "tools": [{"name": "get_weather", "description": "Weather in a city",
             "input_schema": {"type": "object", "properties": {"city": {"type": "string"}}}}],
  "tool_choice": {"type": "any", "disable_parallel_tool_use": true},
  "thinking": {"type": "disabled"}})";

TEST(MessagesRequest, TheConversationAsOpenAIMessages) {
  const ojson expected = ojson::parse(R"({
    "messages": [
      {"role": "system", "content": "Be brief.\nUse tools."},
      {"role": "user", "content": "Weather in Paris?"},
      {"role": "assistant", "content": "Let me look.", "reasoning_content": "Call the tool.",
       "tool_calls": [{"id": "toolu_1", "type": "function",
                       "function": {"name": "get_weather", "arguments": {"city": "Paris"}}}]},
      {"role": "tool", "tool_call_id": "toolu_1", "content": "18 C"},
      {"role": "user", "content": "And tomorrow?"}],
    "tools": [{"type": "function", "function": {
      "name": "get_weather", "description": "Weather in a city",
      "parameters": {"type": "object", "properties": {"city": {"type": "string"}}}}}],
    "tool_choice": "required", "parallel_tool_calls": false,
    "chat_template_kwargs": {"enable_thinking": false}})");
  EXPECT_EQ(messages_conversation(ojson::parse(kToolLoop)), expected);
}

TEST(MessagesRequest, ToolChoicesAndThinking) {
  const auto conversation = [](const std::string& fields) {
    return messages_conversation(
        ojson::parse(R"({"messages": [{"role": "user", "content": "Hi"}],
                         "tools": [{"name": "f", "input_schema": {"type": "object"}}])" + fields + "}"));
  };
  EXPECT_EQ(conversation(R"(, "tool_choice": {"type": "auto"})")["tool_choice"], "auto");
  EXPECT_EQ(conversation(R"(, "tool_choice": {"type": "none"})")["tool_choice"], "none");
  EXPECT_EQ(conversation(R"(, "tool_choice": {"type": "tool", "name": "f"})")["tool_choice"],
            ojson::parse(R"({"type": "function", "function": {"name": "f"}})"));
  EXPECT_FALSE(conversation("").contains("tool_choice"));
  EXPECT_FALSE(conversation("").contains("chat_template_kwargs"));
  EXPECT_EQ(conversation(R"(, "thinking": {"type": "enabled", "budget_tokens": 2048})")["chat_template_kwargs"],
            ojson::parse(R"({"enable_thinking": true})"));
}

TEST(MessagesRequest, RenderedAndSampledAsTheChatEndpointWould) {
  const ChatRequest r = parse_messages_request(stories(), ojson::parse(kToolLoop));
  // (jinja2's trim_blocks drops the newline after each message's {% endif %}.)
  const std::string rendered =
      "<system>Be brief.\nUse tools.<user>Weather in Paris?"
      "<assistant>Let me look.[toolu_1 get_weather {\"city\": \"Paris\"}]<tool>18 C(toolu_1)"
      "<user>And tomorrow?{tool get_weather}{think False}<assistant>";
  EXPECT_EQ(r.prompt, stories_tokenizer().encode(rendered, false, true));
  EXPECT_EQ(count_message_tokens(stories(), ojson::parse(kToolLoop)), r.prompt.size());
  EXPECT_EQ(r.params.max_tokens, 32);
  EXPECT_EQ(r.tools.choice, ChatTools::Choice::kRequired);
  EXPECT_FALSE(r.tools.parallel);
  EXPECT_FALSE(r.stream.stream);

  const ChatRequest s = parse_messages_request(stories(), ojson::parse(R"({
      "messages": [{"role": "user", "content": "Hi"}], "max_tokens": 5, "temperature": 0.25, "top_p": 0.5,
      "top_k": 7, "stop_sequences": ["\n\n", "END"], "stream": true, "metadata": {"user_id": "u1"},
      "service_tier": "auto"})"));
  EXPECT_EQ(s.prompt, stories_tokenizer().encode("<user>Hi<assistant>", false, true));
  EXPECT_EQ(s.params.max_tokens, 5);
  EXPECT_FLOAT_EQ(s.params.temperature, 0.25f);
  EXPECT_FLOAT_EQ(s.params.top_p, 0.5f);
  EXPECT_EQ(s.params.top_k, 7);
  EXPECT_EQ(s.params.stop, (std::vector<std::string>{"\n\n", "END"}));
  EXPECT_TRUE(s.stream.stream);
}

TEST(MessagesRequest, CountingTokensNeedsNoMaxTokensNorRoomInTheContext) {
  const ojson body = ojson::parse(R"({"messages": [{"role": "user", "content": "Once upon a time there was"}]})");
  EXPECT_EQ(count_message_tokens(stories(4), body),
            stories_tokenizer().encode("<user>Once upon a time there was<assistant>", false, true).size());
  const RequestError e = refusal([] {
    count_message_tokens(stories(), ojson::parse(R"({"messages": [{"role": "user", "content": "Hi"}],
        "tools": [{"name": "f", "input_schema": {}}, {"name": "f", "input_schema": {}}]})"));
  });
  EXPECT_EQ(e.param(), "tools") << e.what();
}

TEST(MessagesRequest, BadBodiesNameTheirField) {
  const struct {
    const char* fields;
    const char* param;
  } cases[] = {
      {R"("messages": [{"role": "user", "content": "Hi"}])", "max_tokens"},
      {R"("messages": [{"role": "user", "content": "Hi"}], "max_tokens": null)", "max_tokens"},
      {R"("messages": [{"role": "user", "content": "Hi"}], "max_tokens": 0)", "max_tokens"},
      {R"("messages": [{"role": "user", "content": "Hi"}], "max_tokens": 600)", "max_tokens"},  // past the context
      {R"("max_tokens": 4)", "messages"},
      {R"("messages": [], "max_tokens": 4)", "messages"},
      {R"("messages": [{"role": "system", "content": "Hi"}], "max_tokens": 4)", "messages"},
      {R"("messages": [{"role": "user"}], "max_tokens": 4)", "messages"},
      {R"("messages": [{"role": "user", "content": [{"type": "image", "source": {}}]}], "max_tokens": 4)", "messages"},
      {R"("messages": [{"role": "user", "content": [{"type": "tool_result"}]}], "max_tokens": 4)", "messages"},
      {R"("messages": [{"role": "assistant", "content": [{"type": "tool_use", "id": "t", "name": "f",
                                                          "input": "{}"}]}], "max_tokens": 4)", "messages"},
      {R"("messages": [{"role": "user", "content": "Hi"}], "max_tokens": 4, "system": 3)", "system"},
      {R"("messages": [{"role": "user", "content": "Hi"}], "max_tokens": 4, "system": [{"type": "image"}])", "system"},
      {R"("messages": [{"role": "user", "content": "Hi"}], "max_tokens": 4, "temperature": "hot")", "temperature"},
      {R"("messages": [{"role": "user", "content": "Hi"}], "max_tokens": 4, "top_k": -2)", "top_k"},
      {R"("messages": [{"role": "user", "content": "Hi"}], "max_tokens": 4, "stop_sequences": "END")", "stop_sequences"},
      {R"("messages": [{"role": "user", "content": "Hi"}], "max_tokens": 4, "stop_sequences": [""])", "stop_sequences"},
      {R"("messages": [{"role": "user", "content": "Hi"}], "max_tokens": 4, "stream": "yes")", "stream"},
      {R"("messages": [{"role": "user", "content": "Hi"}], "max_tokens": 4, "metadata": 1)", "metadata"},
      {R"("messages": [{"role": "user", "content": "Hi"}], "max_tokens": 4, "tools": {})", "tools"},
      {R"("messages": [{"role": "user", "content": "Hi"}], "max_tokens": 4, "tools": [{"name": "f"}])", "tools"},
      {R"("messages": [{"role": "user", "content": "Hi"}], "max_tokens": 4,
          "tools": [{"type": "web_search_20250305", "name": "web_search"}])", "tools"},
      {R"("messages": [{"role": "user", "content": "Hi"}], "max_tokens": 4,
          "tools": [{"name": "f", "input_schema": {}}, {"name": "f", "input_schema": {}}])", "tools"},
      {R"("messages": [{"role": "user", "content": "Hi"}], "max_tokens": 4, "tool_choice": "auto")", "tool_choice"},
      {R"("messages": [{"role": "user", "content": "Hi"}], "max_tokens": 4, "tool_choice": {"type": "any"})", "tool_choice"},
      {R"("messages": [{"role": "user", "content": "Hi"}], "max_tokens": 4,
          "tools": [{"name": "f", "input_schema": {}}], "tool_choice": {"type": "tool", "name": "g"})", "tool_choice"},
      {R"("messages": [{"role": "user", "content": "Hi"}], "max_tokens": 4, "thinking": {"type": "sometimes"})", "thinking"},
      {R"("messages": [{"role": "user", "content": "Hi"}], "max_tokens": 4,
          "thinking": {"type": "enabled", "budget_tokens": "lots"})", "thinking.budget_tokens"},
  };
  for (const auto& c : cases) {
    const std::string body = std::string("{") + c.fields + "}";
    const RequestError e = refusal([&] { parse_messages_request(stories(), ojson::parse(body)); });
    EXPECT_EQ(e.status(), 400) << body;
    EXPECT_EQ(e.param(), c.param) << body << ": " << e.what();
  }
}

}  // namespace
}  // namespace skiff
