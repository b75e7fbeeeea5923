// Reasoning at the start of a reply: opened by the reply or by the prompt
// (for_prompt), each family's markers, partial texts, and what a structured
// output waits for (reasoning_end).
#include <gtest/gtest.h>

#include "chat/chat_output.h"

namespace skiff {
namespace {

ChatReply parse(const ChatSyntax& syntax, std::string_view text, bool partial = false) {
  return syntax.parse(text, partial);
}

TEST(ReasoningParse, ThinkTagsTheReplyOpens) {
  const auto syntax = chat_syntax_named("hermes", "qwen3");
  const ChatReply reply = parse(*syntax, "<think>\nPlan.\n</think>\n\nAnswer.");
  EXPECT_EQ(reply.reasoning, "Plan.");
  EXPECT_EQ(reply.content, "Answer.");
  // No tags: all content; tags later in the reply are content too.
  EXPECT_EQ(parse(*syntax, "Answer.").content, "Answer.");
  EXPECT_EQ(parse(*syntax, "A <think>b</think>").content, "A <think>b</think>");
  // A reply that closes an empty reasoning has none.
  EXPECT_EQ(parse(*syntax, "</think>Answer.").content, "Answer.");
}

TEST(ReasoningParse, PromptThatOpensReasoning) {
  const auto closed = chat_syntax_named("hermes", "qwen3");
  const auto opened = closed->for_prompt("<|im_start|>assistant\n<think>\n");
  const ChatReply reply = parse(*opened, "Plan.\n</think>\n\nAnswer.");
  EXPECT_EQ(reply.reasoning, "Plan.");
  EXPECT_EQ(reply.content, "Answer.");
  // A model that writes the opening tag again.
  EXPECT_EQ(parse(*opened, "<think>Plan.</think>Answer.").reasoning, "Plan.");
  // Cut off by max_tokens: all reasoning, as the stream showed it.
  EXPECT_EQ(parse(*opened, "Still thinking").reasoning, "Still thinking");
  EXPECT_EQ(parse(*opened, "Still thinking").content, "");
  // A prompt that closed it (thinking off) leaves replies outside.
  const auto off = opened->for_prompt("<|im_start|>assistant\n<think>\n\n</think>\n\n");
  EXPECT_EQ(parse(*off, "Answer.").content, "Answer.");
  EXPECT_EQ(off->reasoning_end(), "");
  EXPECT_EQ(opened->reasoning_end(), "</think>");
  // DeepSeek R1 by name: its replies start inside.
  EXPECT_EQ(parse(*chat_syntax_named("", "deepseek_r1"), "Plan.</think>Answer.").reasoning, "Plan.");
}

TEST(ReasoningParse, TemplateDecidesWhereRepliesStart) {
  // Its generation prompt ends inside <think>; the comment names the end tag.
  const std::string opens = "{% if add_generation_prompt %}assistant\n<think>\n{% endif %}{# </think> #}";
  const auto syntax = chat_syntax_for_template(opens);
  EXPECT_EQ(syntax->reasoning_name(), "deepseek_r1");
  EXPECT_EQ(parse(*syntax, "Plan.</think>Answer.").reasoning, "Plan.");
  const auto qwen3 = chat_syntax_for_template("{% if enable_thinking %}<think>{% endif %}</think>");
  EXPECT_EQ(qwen3->reasoning_name(), "qwen3");
  EXPECT_EQ(parse(*qwen3, "Answer.").content, "Answer.");
}

TEST(ReasoningParse, PartialReasoningHoldsBackMarkers) {
  const auto syntax = chat_syntax_named("hermes", "qwen3");
  EXPECT_EQ(parse(*syntax, "<thi", true).content, "");
  EXPECT_EQ(parse(*syntax, "<think>Plan", true).reasoning, "Plan");
  EXPECT_EQ(parse(*syntax, "<think>Plan</thi", true).reasoning, "Plan");
  EXPECT_EQ(parse(*syntax, "<think>Plan</think>Ans", true).content, "Ans");
  EXPECT_EQ(parse(*syntax, "<b>", true).content, "<b>");
}

TEST(ReasoningParse, OtherFamiliesMarkers) {
  struct Case {
    const char* parser;
    const char* text;
  };
  for (const Case& c : {Case{"mistral", "[THINK]Plan.[/THINK]Answer."},
                        Case{"granite", "Here is my thought process: Plan. Here is my response: Answer."},
                        Case{"granite", "Here's my thought process:\nPlan.\nHere's my response:\nAnswer."},
                        Case{"seed_oss", "<seed:think>Plan.</seed:think>Answer."},
                        Case{"minimax_m3", "<mm:think>Plan.</mm:think>Answer."},
                        Case{"command_r7b", "<|START_THINKING|>Plan.<|END_THINKING|>Answer."}}) {
    const ChatReply reply = parse(*chat_syntax_named("", c.parser), c.text);
    EXPECT_EQ(reply.reasoning, "Plan.") << c.parser;
    EXPECT_EQ(reply.content, "Answer.") << c.parser;
  }
  const auto apriel = chat_syntax_named("apriel", "apriel");
  const ChatReply reply = parse(*apriel, "Plan.\n[BEGIN FINAL RESPONSE]\nAnswer.");
  EXPECT_EQ(reply.reasoning, "Plan.");
  EXPECT_EQ(reply.content, "Answer.");
}

TEST(ReasoningParse, HarmonyContentStartsAfterTheFinalHeader) {
  const auto syntax = chat_syntax_named("openai", "");
  EXPECT_EQ(syntax->reasoning_name(), "openai_gptoss");
  EXPECT_EQ(syntax->reasoning_end(), "<|channel|>final<|message|>");
}

TEST(ReasoningParse, ToolCallsAfterReasoning) {
  const auto syntax = chat_syntax_named("hermes", "qwen3")->for_prompt("<think>\n");
  const ChatReply reply =
      parse(*syntax, "Need it.</think>\n<tool_call>\n{\"name\": \"f\", \"arguments\": {}}\n</tool_call>");
  EXPECT_EQ(reply.reasoning, "Need it.");
  ASSERT_EQ(reply.tool_calls.size(), 1u);
  EXPECT_EQ(reply.tool_calls[0].name, "f");
  // A call written while still reasoning is reasoning.
  EXPECT_TRUE(parse(*syntax, "<tool_call>{\"name\": \"f\", \"arguments\": {}}</tool_call>", true).tool_calls.empty());
}

}  // namespace
}  // namespace skiff
