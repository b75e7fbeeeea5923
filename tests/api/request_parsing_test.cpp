// api/: OpenAI request bodies read into prompt ids and sampling parameters,
// against stories260K's tokenizer and a small chat template whose renderings
// are written out by hand: every field as the server, skiff batch and Python
// read it, and bad bodies as RequestError with their status and field.
#include <gtest/gtest.h>

#include <string>

#include "api/api_model.h"
#include "api/chat_request.h"
#include "api/completion_request.h"
#include "api/request_fields.h"
#include "chat/chat_output.h"
#include "chat/chat_template.h"
#include "request_refusal.h"
#include "stories_model.h"

namespace skiff {
namespace {

using testing::stories_tokenizer;

const ChatTemplate& role_template() {
  static const ChatTemplate t(
      "{% for m in messages %}<{{ m.role }}>{{ m.content }}\n{% endfor %}"
      "{% if add_generation_prompt %}<assistant>{% endif %}{% if tools %}[{{ tools | length }} tools]{% endif %}");
  return t;
}

ApiModel stories(int max_model_len = 256, const ChatTemplate* chat_template = &role_template()) {
  return ApiModel{"stories", stories_tokenizer(), max_model_len, chat_template};
}

using testing::refusal;

std::vector<int32_t> encode(const std::string& text, bool add_special) {
  return stories_tokenizer().encode(text, add_special, /*parse_special=*/true);
}

TEST(CompletionRequest, PromptsAsTextAndAsTokenIds) {
  const auto r = parse_completion_request(
      stories(), ojson::parse(R"({"prompt": ["Once upon a time", [1, 2, 3]], "max_tokens": 5, "temperature": 0.5,
                                  "top_k": 7, "stop": ["."], "echo": true, "stream": true,
                                  "stream_options": {"include_usage": true}})"));
  ASSERT_EQ(r.prompts.size(), 2u);
  EXPECT_EQ(r.prompts[0], encode("Once upon a time", true));  // BOS added, as vLLM does for text
  EXPECT_EQ(r.prompts[1], (std::vector<int32_t>{1, 2, 3}));
  EXPECT_EQ(r.prompt_texts[0], "Once upon a time");
  EXPECT_EQ(r.params.max_tokens, 5);
  EXPECT_FLOAT_EQ(r.params.temperature, 0.5f);
  EXPECT_EQ(r.params.top_k, 7);
  EXPECT_EQ(r.params.stop, std::vector<std::string>{"."});
  EXPECT_TRUE(r.echo);
  EXPECT_TRUE(r.stream.stream);
  EXPECT_TRUE(r.stream.include_usage);
}

TEST(CompletionRequest, BadBodiesNameTheirField) {
  const struct {
    const char* body;
    int status;
    const char* param;
  } cases[] = {
      {R"({"max_tokens": 4})", 400, "prompt"},
      {R"({"prompt": 3})", 400, "prompt"},
      {R"({"prompt": [[1, 99999]]})", 400, "prompt"},                // outside the vocabulary
      {R"({"prompt": "x", "logprobs": 21})", 400, "logprobs"},
      {R"({"prompt": "x", "echo": true, "logprobs": 1})", 400, "echo"},
      {R"({"prompt": "x", "max_tokens": 300})", 400, "max_tokens"},  // past the context of 256
      {R"({"prompt": "x", "temperature": "hot"})", 400, "temperature"},
      {R"({"prompt": "x", "stream_options": 1})", 400, "stream_options"},
  };
  for (const auto& c : cases) {
    const RequestError e = refusal([&] { parse_completion_request(stories(), ojson::parse(c.body)); });
    EXPECT_EQ(e.status(), c.status) << c.body;
    EXPECT_EQ(e.param(), c.param) << c.body << ": " << e.what();
  }
}

TEST(ChatRequest, TheConversationRenderedByItsTemplate) {
  const auto r = parse_chat_request(
      stories(), ojson::parse(R"({"messages": [{"role": "system", "content": "Be brief."},
                                               {"role": "user", "content": [{"type": "text", "text": "Hi"},
                                                                            {"type": "text", "text": "there"}]}],
                                  "max_completion_tokens": 9, "logprobs": true, "top_logprobs": 3})"));
  EXPECT_EQ(r.prompt, encode("<system>Be brief.\n<user>Hi\nthere\n<assistant>", false));  // text parts joined by newlines
  EXPECT_EQ(r.params.max_tokens, 9);
  EXPECT_EQ(r.top_logprobs, 3);
  EXPECT_EQ(r.params.logprobs, 3);
}

TEST(ChatRequest, MaxTokensDefaultsToTheContextLeft) {
  const auto r = parse_chat_request(stories(64), ojson::parse(R"({"messages": [{"role": "user", "content": "Hi"}]})"));
  EXPECT_EQ(r.params.max_tokens, 64 - static_cast<int>(r.prompt.size()));
  EXPECT_FALSE(r.top_logprobs);
}

TEST(ChatRequest, TemplateInputsFromTheBody) {
  const ojson body = ojson::parse(R"({"messages": [{"role": "user", "content": "Hi"}], "add_generation_prompt": false,
                                      "tools": [{"type": "function"}, {"type": "function"}]})");
  EXPECT_EQ(render_chat(&role_template(), stories_tokenizer(), body, true).text, "<user>Hi\n[2 tools]");
}

// Tool calls are parsed from replies only where the reply may make them:
// with tool_choice auto and a response_format, the format holds the reply,
// and a JSON object naming a "name" is its content, not a call.
TEST(ChatRequest, CallsAreParsedOnlyWhereTheReplyMayMakeThem) {
  const std::unique_ptr<ChatSyntax> hermes = chat_syntax_named("hermes", "");
  ApiModel model = stories();
  model.chat_syntax = hermes.get();
  const std::string reply = R"(<tool_call>{"name": "f", "arguments": {}}</tool_call>)";
  auto calls = [&](const std::string& rest) {
    const ChatRequest r = parse_chat_request(
        model, ojson::parse(R"({"messages": [{"role": "user", "content": "Hi"}],
                                 "tools": [{"type": "function", "function": {"name": "f"}}])" + rest + "}"));
    return r.syntax ? r.syntax->parse(reply, false).tool_calls.size() : 0;
  };
  EXPECT_EQ(calls(""), 1u);
  EXPECT_EQ(calls(R"(, "tool_choice": "required")"), 1u);
  EXPECT_EQ(calls(R"(, "tool_choice": "none")"), 0u);
  EXPECT_EQ(calls(R"(, "response_format": {"type": "json_object"})"), 0u);
  EXPECT_EQ(calls(R"(, "guided_regex": "[a-z]+")"), 0u);
}

// An XML family writes strings raw: the request's tools say which parameters
// are strings, so "3" there stays text while an integer's "3" is a number;
// and the constraint writes arguments as its parameters.
TEST(ChatRequest, XmlParametersAreReadAndWrittenByTheToolsSchemas) {
  const std::unique_ptr<ChatSyntax> qwen3_coder = chat_syntax_named("qwen3_coder", "");
  ApiModel model = stories();
  model.chat_syntax = qwen3_coder.get();
  const ChatRequest r = parse_chat_request(model, ojson::parse(R"({"messages": [{"role": "user", "content": "Hi"}],
      "tool_choice": "required", "tools": [{"type": "function", "function": {"name": "f", "parameters":
      {"type": "object", "properties": {"s": {"type": "string"}, "n": {"type": "integer"}}}}}]})"));
  const ChatReply reply =
      r.syntax->parse("<tool_call>\n<function=f>\n<parameter=s>\n3\n</parameter>\n<parameter=n>\n3\n</parameter>\n"
                      "</function>\n</tool_call>",
                      false);
  ASSERT_EQ(reply.tool_calls.size(), 1u);
  EXPECT_EQ(ojson::parse(reply.tool_calls[0].arguments), ojson::parse(R"({"s": "3", "n": 3})"));
  const std::optional<CallsFormat>& calls = r.params.structured_outputs.calls;
  ASSERT_TRUE(calls);
  EXPECT_EQ(calls->parameter_begin, "<parameter={key}>\n");
  EXPECT_EQ(calls->parameter_end, "\n</parameter>\n");
}

TEST(ChatRequest, BadBodiesNameTheirField) {
  const struct {
    const char* body;
    const char* param;
  } cases[] = {
      {R"({})", "messages"},
      {R"({"messages": []})", "messages"},
      {R"({"messages": [{"content": "no role"}]})", "messages"},
      {R"({"messages": [{"role": "user", "content": [{"type": "image_url"}]}]})", "messages"},
      {R"({"messages": [{"role": "user", "content": "Hi"}], "top_logprobs": 2})", "top_logprobs"},
      {R"({"messages": [{"role": "user", "content": "Hi"}], "chat_template_kwargs": 1})", "chat_template_kwargs"},
  };
  for (const auto& c : cases) {
    const RequestError e = refusal([&] { parse_chat_request(stories(), ojson::parse(c.body)); });
    EXPECT_EQ(e.status(), 400) << c.body;
    EXPECT_EQ(e.param(), c.param) << c.body << ": " << e.what();
  }
  // A model without a chat template refuses every chat request.
  const RequestError e = refusal([&] {
    parse_chat_request(stories(256, nullptr), ojson::parse(R"({"messages": [{"role": "user", "content": "Hi"}]})"));
  });
  EXPECT_EQ(e.status(), 400);
  EXPECT_NE(std::string(e.what()).find("no chat template"), std::string::npos) << e.what();
}

TEST(ApiModel, ModelNameAndContext) {
  check_model_name(stories(), ojson::parse(R"({})"));
  check_model_name(stories(), ojson::parse(R"({"model": "stories"})"));
  EXPECT_EQ(refusal([] { check_model_name(stories(), ojson::parse(R"({"model": "gpt-4"})")); }).status(), 404);
  EXPECT_EQ(refusal([] { check_model_name(stories(), ojson::parse(R"({"model": 4})")); }).param(), "model");
  check_context(stories(10), 5, 5);
  EXPECT_EQ(refusal([] { check_context(stories(10), 10, 0); }).param(), "");  // no room left for output
  EXPECT_EQ(refusal([] { check_context(stories(10), 5, 6); }).param(), "max_tokens");
}

}  // namespace
}  // namespace skiff
