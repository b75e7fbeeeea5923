// Each family's calls parsed from text written by hand: the forms the
// templates in ../shared do not render (Granite 3's <|tool_call|>, gpt-oss's
// own harmony headers, Mistral's array, Llama 3's <|python_tag|> and ";"),
// what is not a call, and partial texts cut at every kind of place.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <random>

#include "chat/chat_output.h"

namespace skiff {
namespace {

ChatReply parse(std::string_view tool_parser, std::string_view text, bool partial = false) {
  const auto syntax = chat_syntax_named(tool_parser, "");
  EXPECT_NE(syntax, nullptr) << tool_parser;
  return syntax->parse(text, partial);
}

nlohmann::json arguments(const ToolCall& call) { return nlohmann::json::parse(call.arguments); }

TEST(ToolCallParse, HermesCallsAndContentAroundThem) {
  const ChatReply reply =
      parse("hermes",
            "Let me look.\n<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": "
            "\"Paris\"}}\n</tool_call>\n<tool_call>{\"arguments\": {}, \"name\": \"now\"}</tool_call>"
            "\nDone.");
  ASSERT_EQ(reply.tool_calls.size(), 2u);
  EXPECT_EQ(reply.tool_calls[0], (ToolCall{"get_weather", "{\"city\": \"Paris\"}"}));
  EXPECT_EQ(reply.tool_calls[1], (ToolCall{"now", "{}"}));
  EXPECT_EQ(reply.content, "Let me look.\n\n\nDone.");
  EXPECT_FALSE(reply.call_open);
}

TEST(ToolCallParse, ArgumentsGivenAsAStringAreWhatItSpells) {
  const ChatReply reply =
      parse("hermes", "<tool_call>{\"name\": \"f\", \"arguments\": \"{\\\"a\\\": 1}\"}</tool_call>");
  ASSERT_EQ(reply.tool_calls.size(), 1u);
  EXPECT_EQ(reply.tool_calls[0].arguments, "{\"a\": 1}");
}

TEST(ToolCallParse, WhatIsNotACallIsContent) {
  for (const char* text : {"<tool_call>not json</tool_call>", "<tool_call>{\"name\": \"f\", \"x\": 1}</tool_call>",
                           "<tool_call>{\"name\": \"bad name\", \"arguments\": {}}</tool_call>",
                           "<tool_call>{\"arguments\": {}}</tool_call>"}) {
    const ChatReply reply = parse("hermes", text);
    EXPECT_TRUE(reply.tool_calls.empty()) << text;
    EXPECT_EQ(reply.content, text);
  }
}

TEST(ToolCallParse, ACallAFinishedTextBreaksOffIsContent) {
  const std::string text = "Sure. <tool_call>{\"name\": \"f\", \"arguments\": {\"a\": ";
  const ChatReply finished = parse("hermes", text);
  EXPECT_TRUE(finished.tool_calls.empty());
  EXPECT_EQ(finished.content, text.substr(0, text.size() - 1));  // trimmed
  const ChatReply partial = parse("hermes", text, true);
  ASSERT_EQ(partial.tool_calls.size(), 1u);
  EXPECT_EQ(partial.tool_calls[0], (ToolCall{"f", "{\"a\":"}));
  EXPECT_TRUE(partial.call_open);
  EXPECT_EQ(partial.content, "Sure.");
}

TEST(ToolCallParse, AFinishedTextMayStopShortOfTheClosingMarker) {
  const ChatReply hermes = parse("hermes", "<tool_call>\n{\"name\": \"f\", \"arguments\": {\"a\": 1}}\n");
  ASSERT_EQ(hermes.tool_calls.size(), 1u);
  EXPECT_EQ(hermes.tool_calls[0], (ToolCall{"f", "{\"a\": 1}"}));
  EXPECT_EQ(parse("qwen3_coder", "<tool_call>\n<function=f>\n<parameter=a>\n1\n</parameter>\n").tool_calls.at(0),
            (ToolCall{"f", "{\"a\": 1}"}));
  EXPECT_EQ(
      parse("kimi_k2", "<|tool_calls_section_begin|><|tool_call_begin|>functions.f:0<|tool_call_argument_begin|>{}")
          .tool_calls.size(),
      1u);
}

TEST(ToolCallParse, PartialTextHoldsBackWhatMayBeAMarker) {
  EXPECT_EQ(parse("hermes", "Hello <tool_c", true).content, "Hello");
  EXPECT_EQ(parse("hermes", "Hello <b>", true).content, "Hello <b>");
  EXPECT_EQ(parse("hermes", "Hello <tool_c", false).content, "Hello <tool_c");
  // A block whose name is not yet whole shows nothing.
  const ChatReply reply = parse("hermes", "<tool_call>{\"name\": \"get_we", true);
  EXPECT_TRUE(reply.tool_calls.empty());
  EXPECT_EQ(reply.content, "");
  EXPECT_FALSE(reply.call_open);
}

TEST(ToolCallParse, Llama3JsonWithPythonTagAndSeveralCalls) {
  const ChatReply reply = parse("llama3_json",
                                "<|python_tag|>{\"name\": \"a\", \"parameters\": {\"x\": 1}}; {\"name\": \"b\", "
                                "\"arguments\": {}}");
  ASSERT_EQ(reply.tool_calls.size(), 2u);
  EXPECT_EQ(reply.tool_calls[0], (ToolCall{"a", "{\"x\": 1}"}));
  EXPECT_EQ(reply.tool_calls[1], (ToolCall{"b", "{}"}));
  // JSON that is no call, or text before it: content.
  EXPECT_TRUE(parse("llama3_json", "{\"answer\": 42}").tool_calls.empty());
  EXPECT_EQ(parse("llama3_json", "{\"answer\": 42}", true).content, "{\"answer\": 42}");
  EXPECT_TRUE(parse("llama3_json", "Here: {\"name\": \"a\", \"parameters\": {}}").tool_calls.empty());
  EXPECT_EQ(parse("llama3_json", "{\"na", true).content, "");  // may be a call
}

TEST(ToolCallParse, MistralArrayAndArgsForms) {
  const ChatReply array = parse(
      "mistral", "[TOOL_CALLS] [{\"name\": \"a\", \"arguments\": {\"x\": 1}}, {\"name\": \"b\", \"arguments\": {}}]");
  ASSERT_EQ(array.tool_calls.size(), 2u);
  EXPECT_EQ(array.tool_calls[1].name, "b");
  const ChatReply args = parse("mistral", "Ok[TOOL_CALLS]a[ARGS]{\"x\": 1}[TOOL_CALLS]b[CALL_ID]abc123XYZ[ARGS]{}");
  ASSERT_EQ(args.tool_calls.size(), 2u);
  EXPECT_EQ(args.tool_calls[0], (ToolCall{"a", "{\"x\": 1}"}));
  EXPECT_EQ(args.tool_calls[1], (ToolCall{"b", "{}"}));
  EXPECT_EQ(args.content, "Ok");
  // [ARGS] dropped by a detokenizer that skips special tokens.
  EXPECT_EQ(parse("mistral", "[TOOL_CALLS]a{\"x\": 1}").tool_calls.at(0), (ToolCall{"a", "{\"x\": 1}"}));
}

TEST(ToolCallParse, GraniteCallsAfterItsMarker) {
  const ChatReply reply =
      parse("granite", "<|tool_call|>[{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris\", \"days\": 3}}]");
  ASSERT_EQ(reply.tool_calls.size(), 1u);
  EXPECT_EQ(reply.tool_calls[0], (ToolCall{"get_weather", "{\"city\": \"Paris\", \"days\": 3}"}));
  // The layout writes what Granite 3 writes (no template of it in ../shared).
  const CallLayout layout = *chat_syntax_named("granite", "")->call_layout();
  EXPECT_EQ(layout.prefix + "{\"name\": \"get_weather\", \"arguments\": " + "{\"city\": \"Paris\", \"days\": 3}" +
                layout.call_end + layout.suffix,
            "<|tool_call|>[{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris\", \"days\": 3}}]");
  EXPECT_EQ(layout.call_begin, "{\"name\": \"{name}\", \"arguments\": ");
}

TEST(ToolCallParse, HarmonyAsGptOssWritesIt) {
  const std::string text =
      "<|channel|>analysis<|message|>Need the weather.<|end|><|start|>assistant<|channel|>commentary "
      "to=functions.get_weather <|constrain|>json<|message|>{\"city\": \"Paris\"}<|call|>";
  const ChatReply reply = parse("openai", text);
  EXPECT_EQ(reply.reasoning, "Need the weather.");
  EXPECT_EQ(reply.content, "");
  ASSERT_EQ(reply.tool_calls.size(), 1u);
  EXPECT_EQ(reply.tool_calls[0], (ToolCall{"get_weather", "{\"city\": \"Paris\"}"}));
  const ChatReply answer =
      parse("openai", "<|channel|>analysis<|message|>Easy.<|end|><|start|>assistant<|channel|>final<|message|>Hi!");
  EXPECT_EQ(answer.reasoning, "Easy.");
  EXPECT_EQ(answer.content, "Hi!");
  EXPECT_EQ(parse("openai", "Plain words").content, "Plain words");
  // Partial: the end marker held back; a call's arguments so far.
  EXPECT_EQ(parse("openai", "<|channel|>analysis<|message|>Thinking<|e", true).reasoning, "Thinking");
  const ChatReply open = parse("openai", text.substr(0, text.find("ris")), true);
  ASSERT_EQ(open.tool_calls.size(), 1u);
  EXPECT_TRUE(open.call_open);
  EXPECT_EQ(open.tool_calls[0].arguments, "{\"city\": \"Pa");
}

TEST(ToolCallParse, FunctionaryV32Recipients) {
  const ChatReply reply =
      parse("functionary_v3", "all\nChecking.\n>>>get_weather\n{\"city\": \"Paris\"}>>>python\nprint(1)");
  EXPECT_EQ(reply.content, "Checking.");
  ASSERT_EQ(reply.tool_calls.size(), 2u);
  EXPECT_EQ(reply.tool_calls[0], (ToolCall{"get_weather", "{\"city\": \"Paris\"}"}));
  EXPECT_EQ(arguments(reply.tool_calls[1]), nlohmann::json({{"code", "print(1)"}}));
  EXPECT_EQ(parse("functionary_v3", "Just words, no recipient").content, "Just words, no recipient");
  EXPECT_EQ(parse("functionary_v3", "al", true).content, "");  // may be "all"
}

TEST(ToolCallParse, KimiK2NamesDropTheirPrefixAndIndex) {
  const ChatReply reply = parse("kimi_k2",
                                "<|tool_calls_section_begin|><|tool_call_begin|>functions.get_weather:0"
                                "<|tool_call_argument_begin|>{\"city\": \"Paris\"}<|tool_call_end|>"
                                "<|tool_calls_section_end|>");
  ASSERT_EQ(reply.tool_calls.size(), 1u);
  EXPECT_EQ(reply.tool_calls[0], (ToolCall{"get_weather", "{\"city\": \"Paris\"}"}));
}

TEST(ToolCallParse, XmlParameterValuesAreJsonWhenTheyReadAsJson) {
  const ChatReply reply = parse("qwen3_coder",
                                "<tool_call>\n<function=run>\n<parameter=code>\nprint(\"hi\")\nx = 1\n</parameter>\n"
                                "<parameter=times>\n3\n</parameter>\n<parameter=flags>\n[\"a\", true]\n</parameter>\n"
                                "<parameter=quoted>\n\"3\"\n</parameter>\n<parameter=empty>\n\n</parameter>\n"
                                "</function>\n</tool_call>");
  ASSERT_EQ(reply.tool_calls.size(), 1u);
  EXPECT_EQ(reply.tool_calls[0].name, "run");
  EXPECT_EQ(arguments(reply.tool_calls[0]),
            nlohmann::json::parse(R"({"code": "print(\"hi\")\nx = 1", "times": 3, "flags": ["a", true],
                                      "quoted": "3", "empty": ""})"));
  // Partial: the parameters so far, as a prefix of the finished object.
  const ChatReply partial =
      parse("qwen3_coder", "<tool_call>\n<function=f>\n<parameter=a>\n1\n</parameter>\n<parameter=b>\nx", true);
  ASSERT_EQ(partial.tool_calls.size(), 1u);
  EXPECT_TRUE(partial.call_open);
  EXPECT_EQ(partial.tool_calls[0].arguments, "{\"a\": 1");
}

TEST(ToolCallParse, GlmCallsWithAndWithoutArguments) {
  const ChatReply reply = parse("glm45",
                                "<tool_call>now</tool_call><tool_call>get_weather\n<arg_key>city</arg_key>\n"
                                "<arg_value>Paris</arg_value>\n</tool_call>");
  ASSERT_EQ(reply.tool_calls.size(), 2u);
  EXPECT_EQ(reply.tool_calls[0], (ToolCall{"now", "{}"}));
  EXPECT_EQ(reply.tool_calls[1], (ToolCall{"get_weather", "{\"city\": \"Paris\"}"}));
}

TEST(ToolCallParse, DsmlStringAttributeDecides) {
  const ChatReply reply =
      parse("deepseek_v32",
            "<｜DSML｜function_calls>\n<｜DSML｜invoke name=\"f\">\n<｜DSML｜parameter name=\"id\" "
            "string=\"true\">007</｜DSML｜parameter>\n<｜DSML｜parameter name=\"n\" string=\"false\">"
            "7</｜DSML｜parameter>\n</｜DSML｜invoke>\n</｜DSML｜function_calls>");
  ASSERT_EQ(reply.tool_calls.size(), 1u);
  EXPECT_EQ(arguments(reply.tool_calls[0]), nlohmann::json::parse(R"({"id": "007", "n": 7})"));
}

TEST(ToolCallParse, DeepSeekV3FencedArguments) {
  const ChatReply reply =
      parse("deepseek_v3",
            "<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>function<｜tool▁sep｜>f\n```json\n{\"a\": 1}\n"
            "```<｜tool▁call▁end｜><｜tool▁calls▁end｜>");
  ASSERT_EQ(reply.tool_calls.size(), 1u);
  EXPECT_EQ(reply.tool_calls[0], (ToolCall{"f", "{\"a\": 1}"}));
}

TEST(ToolCallParse, PlainHasNoCalls) {
  const ChatReply reply = parse("plain", "<tool_call>{\"name\": \"f\", \"arguments\": {}}</tool_call>", true);
  EXPECT_TRUE(reply.tool_calls.empty());
  EXPECT_FALSE(chat_syntax_named("plain", "")->call_layout().has_value());
}

// Texts spliced from every family's markers and JSON pieces: every prefix of
// each parses, partial or finished, without throwing, and a finished text's
// calls have JSON object arguments.
TEST(ToolCallParse, AnyTextParses) {
  const std::vector<std::string> pieces = {"<tool_call>",
                                           "</tool_call>",
                                           "{\"name\": \"f\", ",
                                           "\"arguments\": ",
                                           "{\"a\": [1, \"x\"]}",
                                           "}",
                                           "\n",
                                           "<function=f>",
                                           "<parameter=a>",
                                           "</parameter>",
                                           "</function>",
                                           "[TOOL_CALLS]",
                                           "[ARGS]",
                                           "<|python_tag|>",
                                           "<｜tool▁calls▁begin｜>",
                                           "<｜tool▁call▁begin｜>",
                                           "<｜tool▁sep｜>",
                                           "<｜tool▁call▁end｜>",
                                           "```json",
                                           "```",
                                           "<|channel|>",
                                           "analysis",
                                           "<|message|>",
                                           "<|end|>",
                                           " to=functions.f",
                                           "<|call|>",
                                           ">>>",
                                           "all",
                                           "<arg_key>",
                                           "</arg_key>",
                                           "<arg_value>",
                                           "</arg_value>",
                                           "<think>",
                                           "</think>",
                                           "\xe3\x80",
                                           "\"",
                                           "\\",
                                           "text "};
  std::mt19937 random(7);
  std::vector<std::string> texts;
  for (int n = 0; n < 60; ++n) {
    std::string text;
    for (int k = 0; k < 12; ++k) text += pieces[random() % pieces.size()];
    texts.push_back(text);
  }
  std::vector<std::string> reasonings = chat_reasoning_names();
  for (const std::string& name : chat_syntax_names()) {
    const std::string reasoning = name == "openai" ? "" : reasonings[random() % (reasonings.size() - 2)];
    const auto syntax = chat_syntax_named(name, reasoning);
    ASSERT_NE(syntax, nullptr) << name << " " << reasoning;
    for (const std::string& text : texts) {
      for (size_t length = 0; length <= text.size(); ++length) {
        const std::string_view prefix = std::string_view(text).substr(0, length);
        ASSERT_NO_THROW(syntax->parse(prefix, true)) << name;
        ChatReply reply;
        ASSERT_NO_THROW(reply = syntax->parse(prefix, false)) << name;
        for (const ToolCall& call : reply.tool_calls) {
          const auto arguments = nlohmann::json::parse(call.arguments, nullptr, false);
          EXPECT_TRUE(arguments.is_object()) << name << ": " << call.arguments;
        }
      }
    }
  }
}

}  // namespace
}  // namespace skiff
