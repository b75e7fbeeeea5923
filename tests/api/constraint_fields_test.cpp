// api/constraint_fields and chat_tools: every spelling of a constraint read
// into SamplingParams, the conflicts and bad shapes as RequestError naming
// the field, and tools with tool_choice into the calls' constraint.
#include <gtest/gtest.h>

#include "api/chat_tools.h"
#include "api/constraint_fields.h"

namespace skiff {
namespace {

SamplingParams read(const char* body) {
  SamplingParams p;
  const ojson fields = ojson::parse(body);
  for (const auto& [key, v] : fields.items())
    EXPECT_TRUE(read_constraint_field(key, v, p)) << key;
  return p;
}

std::string refused_field(const char* body) {
  try {
    read(body);
  } catch (const RequestError& e) {
    EXPECT_EQ(e.status(), 400);
    return e.param();
  }
  ADD_FAILURE() << "accepted: " << body;
  return {};
}

TEST(ConstraintFields, EverySpellingOfAStructuredOutput) {
  const char* schema = R"({"type": "object", "properties": {"b": {}, "a": {}}})";
  for (const std::string& body :
       {std::string(R"({"response_format": {"type": "json_schema", "json_schema": {"name": "x", "schema": )") + schema + "}}}",
        std::string(R"({"structured_outputs": {"json": )") + schema + "}}",
        std::string(R"({"guided_json": )") + schema + "}", std::string(R"({"json_schema": )") + schema + "}"}) {
    SamplingParams p = read(body.c_str());
    EXPECT_EQ(p.structured_outputs.json, ojson::parse(schema).dump()) << body;  // the keys keep their order
  }
  EXPECT_TRUE(read(R"({"response_format": {"type": "json_object"}})").structured_outputs.json_object);
  EXPECT_TRUE(read(R"({"response_format": {"type": "text"}})").structured_outputs.empty());
  EXPECT_EQ(read(R"({"guided_regex": "a+"})").structured_outputs.regex, "a+");
  EXPECT_EQ(read(R"({"structured_outputs": {"choice": ["x", "y"]}})").structured_outputs.choice,
            (std::vector<std::string>{"x", "y"}));
  EXPECT_EQ(read(R"({"grammar": "root ::= \"a\""})").structured_outputs.grammar, "root ::= \"a\"");
  EXPECT_TRUE(read(R"({"structured_outputs": {"json_object": true, "disable_any_whitespace": true}})")
                  .structured_outputs.disable_any_whitespace);
  EXPECT_EQ(read(R"({"guided_json": "{\"type\": \"integer\"}"})").structured_outputs.json, R"({"type":"integer"})");
}

TEST(ConstraintFields, ProcessorsAndTheirBadShapes) {
  SamplingParams p = read(R"({"logit_bias": {"5": 100, "7": -2.5}, "allowed_token_ids": [1, 2], "bad_words": ["x"]})");
  EXPECT_EQ(p.logit_bias, (std::vector<std::pair<int32_t, float>>{{5, 100.0f}, {7, -2.5f}}));
  EXPECT_EQ(p.allowed_token_ids, (std::vector<int32_t>{1, 2}));
  EXPECT_EQ(p.bad_words, (std::vector<std::string>{"x"}));
  EXPECT_EQ(refused_field(R"({"logit_bias": {"x": 1}})"), "logit_bias");
  EXPECT_EQ(refused_field(R"({"logit_bias": {"3": 101}})"), "logit_bias");
  EXPECT_EQ(refused_field(R"({"allowed_token_ids": []})"), "allowed_token_ids");
  EXPECT_EQ(refused_field(R"({"response_format": {"type": "xml"}})"), "response_format.type");
  EXPECT_EQ(refused_field(R"({"response_format": {"type": "json_schema"}})"), "response_format.json_schema");
  EXPECT_EQ(refused_field(R"({"guided_json": "{nope"})"), "guided_json");
  EXPECT_EQ(refused_field(R"({"structured_outputs": {"structural_tag": {}}})"), "structured_outputs.structural_tag");
  // Two structured outputs: the second names itself.
  EXPECT_EQ(refused_field(R"({"response_format": {"type": "json_object"}, "guided_regex": "a"})"), "guided_regex");
  EXPECT_EQ(refused_field(R"({"structured_outputs": {"regex": "a", "choice": ["a"]}})"), "structured_outputs.choice");
  // An empty regex or grammar is refused, never dropped (it constrained nothing).
  EXPECT_EQ(refused_field(R"({"guided_regex": ""})"), "guided_regex");
  EXPECT_EQ(refused_field(R"({"structured_outputs": {"regex": ""}})"), "structured_outputs.regex");
  EXPECT_EQ(refused_field(R"({"guided_grammar": ""})"), "guided_grammar");
  EXPECT_EQ(refused_field(R"({"structured_outputs": {"grammar": ""}})"), "structured_outputs.grammar");
  EXPECT_EQ(refused_field(R"({"grammar": ""})"), "grammar");
}

TEST(ChatTools, ChoicesAndTheirCallsFormat) {
  const char* tools = R"("tools": [{"type": "function", "function": {"name": "f", "parameters": {"type": "object"}}},
                                   {"type": "function", "function": {"name": "g"}}])";
  const CallLayout layout{.call_begin = "<call>{name}:", .call_end = "</call>", .separator = "\n", .trigger = "<call>"};
  auto parse = [&](const std::string& rest) { return parse_chat_tools(ojson::parse("{" + std::string(tools) + rest + "}")); };

  std::optional<CallsFormat> any = calls_format(parse(""), layout);  // auto by default
  ASSERT_TRUE(any);
  EXPECT_EQ(any->trigger, "<call>");
  ASSERT_EQ(any->calls.size(), 2u);
  EXPECT_EQ(any->calls[0].begin, "<call>f:");
  EXPECT_EQ(any->calls[1].arguments_schema, R"({"type":"object"})");  // no parameters: any object
  std::optional<CallsFormat> required = calls_format(parse(R"(, "tool_choice": "required", "parallel_tool_calls": false)"), layout);
  ASSERT_TRUE(required);
  EXPECT_TRUE(required->trigger.empty());
  EXPECT_FALSE(required->parallel);
  std::optional<CallsFormat> named = calls_format(parse(R"(, "tool_choice": {"type": "function", "function": {"name": "g"}})"), layout);
  ASSERT_TRUE(named);
  ASSERT_EQ(named->calls.size(), 1u);
  EXPECT_EQ(named->calls[0].begin, "<call>g:");
  EXPECT_FALSE(calls_format(parse(R"(, "tool_choice": "none")"), layout));
  EXPECT_FALSE(calls_format(parse_chat_tools(ojson::object()), layout));

  auto refused = [&](const std::string& body) {
    try {
      parse_chat_tools(ojson::parse(body));
    } catch (const RequestError& e) {
      return e.param();
    }
    return std::string("accepted");
  };
  EXPECT_EQ(refused(R"({"tool_choice": "required"})"), "tool_choice");
  EXPECT_EQ(refused("{" + std::string(tools) + R"(, "tool_choice": {"type": "function", "function": {"name": "h"}}})"), "tool_choice");
  EXPECT_EQ(refused(R"({"tools": [{"type": "function", "function": {"name": "f"}}, {"type": "function", "function": {"name": "f"}}]})"), "tools");
  EXPECT_EQ(refused(R"({"tools": [{"type": "function", "function": {}}]})"), "tools");
}

}  // namespace
}  // namespace skiff
