// Arguments written as XML parameters (json_schema.h's XmlParameterLayout):
// the texts a grammar of Qwen3-Coder's layout accepts and refuses, its masks
// against trying every token, text_without against a search for the marker,
// and the schemas it refuses.
#include <gtest/gtest.h>

#include <random>

#include "base/error.h"
#include "grammar/call_grammar.h"
#include "grammar/json_schema.h"
#include "grammar_test_support.h"

namespace skiff::grammar {
namespace {

using nlohmann::ordered_json;

const XmlParameterLayout kQwen3Coder{"<parameter={key}>\n", "\n</parameter>\n"};

std::shared_ptr<const Grammar> parameters_grammar(const std::string& schema, XmlParameterLayout layout = kQwen3Coder) {
  CallGrammarSpec spec{"", "\n", "", {{"<function=f>\n", ordered_json::parse(schema), "</function>"}}, true, layout};
  return compile_calls(spec);
}

std::string call(const std::string& parameters) { return "<function=f>\n" + parameters + "</function>"; }
std::string parameter(const std::string& key, const std::string& value) {
  return "<parameter=" + key + ">\n" + value + "\n</parameter>\n";
}

TEST(TextWithout, MatchesExactlyTheTextsThatNeverHoldTheMarker) {
  // Every text of up to 7 characters over the marker's own characters and one other.
  const std::string marker = "</a/>";
  GrammarBuilder g;
  const Symbol s = g.regex(text_without(marker), TextEncoding::Utf8, "without");
  const std::shared_ptr<const Grammar> grammar = g.build(g.rule_of("root", {{s}}));
  const std::string alphabet = "</a>x";
  std::vector<std::string> texts{""};
  for (size_t length = 1; length <= 7; ++length) {
    std::vector<std::string> longer;
    for (const std::string& t : texts)
      if (t.size() == length - 1)
        for (char c : alphabet) longer.push_back(t + c);
    texts.insert(texts.end(), longer.begin(), longer.end());
  }
  for (const std::string& t : texts) EXPECT_EQ(accepts_text(grammar, t), t.find(marker) == std::string::npos) << t;
  EXPECT_THROW(text_without("abca"), Error);  // its first character again
}

TEST(XmlParameters, StringsRawOthersJsonRequiredAlwaysOptionalMaybe) {
  const auto g = parameters_grammar(R"({"type": "object", "properties": {
      "path": {"type": "string"}, "line": {"type": "integer", "minimum": 1},
      "mode": {"enum": ["r", "w"]}, "flags": {"type": "array", "items": {"type": "boolean"}}},
      "required": ["path"]})");
  EXPECT_TRUE(accepts_text(g, call(parameter("path", "src/a <b>.cpp\nline two"))));
  EXPECT_TRUE(accepts_text(g, call(parameter("path", "3") + parameter("line", "12") + parameter("mode", "w") +
                                   parameter("flags", "[true, false]"))));
  EXPECT_TRUE(accepts_text(g, call(parameter("path", "") + parameter("flags", "[]"))));
  EXPECT_FALSE(accepts_text(g, call("")));                                            // path is required
  EXPECT_FALSE(accepts_text(g, call(parameter("line", "1") + parameter("path", "x"))));  // the listed order
  EXPECT_FALSE(accepts_text(g, call(parameter("path", "x") + parameter("line", "0"))));  // minimum
  EXPECT_FALSE(accepts_text(g, call(parameter("path", "x") + parameter("line", "\"1\""))));
  EXPECT_FALSE(accepts_text(g, call(parameter("path", "x") + parameter("mode", "a"))));
  EXPECT_FALSE(accepts_text(g, call(parameter("path", "x") + parameter("mode", "\"w\""))));  // raw, not JSON
  EXPECT_FALSE(accepts_text(g, call(parameter("path", "x") + parameter("other", "1"))));
  // A string never holds the closing tag, which would end it there.
  EXPECT_FALSE(accepts_text(g, call(parameter("path", "a</parameter>b"))));
  EXPECT_TRUE(accepts_text(g, call(parameter("path", "a</parameter b</param"))));
}

TEST(XmlParameters, StringKeywordsHoldOnTheRawText) {
  const auto g = parameters_grammar(R"({"type": "object", "properties": {
      "id": {"$ref": "#/$defs/id"}, "day": {"type": "string", "format": "date"}},
      "required": ["id"], "$defs": {"id": {"type": "string", "pattern": "^[a-z]+$", "maxLength": 4}}})");
  EXPECT_TRUE(accepts_text(g, call(parameter("id", "abcd") + parameter("day", "2026-12-07"))));
  EXPECT_FALSE(accepts_text(g, call(parameter("id", "abcde"))));
  EXPECT_FALSE(accepts_text(g, call(parameter("id", "ab1"))));
  EXPECT_FALSE(accepts_text(g, call(parameter("id", "ab") + parameter("day", "2026-13-07"))));
  EXPECT_EQ(string_only_properties(ordered_json::parse(R"({"properties": {"id": {"$ref": "#/$defs/id"},
      "n": {"type": ["string", "null"]}, "c": {"const": "x"}, "e": {"enum": ["a", 1]}},
      "$defs": {"id": {"type": "string"}}})")),
            (std::vector<std::string>{"id", "c"}));
}

TEST(XmlParameters, DsmlMarksStringsInTheTag) {
  const XmlParameterLayout dsml{"<p name=\"{key}\" string=\"{string}\">", "</p>\n"};
  const auto g = parameters_grammar(R"({"properties": {"s": {"type": "string"}, "n": {"type": "number"}}})", dsml);
  EXPECT_TRUE(accepts_text(g, call("<p name=\"s\" string=\"true\">hi</p>\n<p name=\"n\" string=\"false\">2.5</p>\n")));
  EXPECT_FALSE(accepts_text(g, call("<p name=\"s\" string=\"false\">hi</p>\n")));
}

TEST(XmlParameters, MasksEqualTryingEveryToken) {
  const auto g = parameters_grammar(R"({"type": "object", "properties": {
      "path": {"type": "string"}, "n": {"type": "integer"}, "mode": {"enum": ["read", "write"]}},
      "required": ["path", "mode"]})");
  const std::vector<std::string> texts{
      call(parameter("path", "a/<b>/</parame") + parameter("n", "-12") + parameter("mode", "write")),
      call(parameter("path", "") + parameter("mode", "read"))};
  expect_masks_along(g, texts, pieces_vocab(texts));
}

TEST(XmlParameters, RefusesWhatParametersCannotWrite) {
  for (const char* schema : {
           R"({"type": "object", "patternProperties": {"^x": {}}})",
           R"({"type": "object", "properties": {"a": {}}, "minProperties": 1})",
           R"({"anyOf": [{"type": "object"}]})",
           R"({"type": "array"})",
           R"({"properties": {"a": {}}, "required": ["b"]})",
           R"({"properties": {"a>b": {}}})",
           R"({"properties": {"a": {"type": "string", "not": {"const": "x"}}}})",
           R"({"properties": {"a": {"enum": ["</parameter>"]}}, "required": ["a"]})",
       }) {
    EXPECT_THROW(parameters_grammar(schema), Error) << schema;
  }
  try {
    parameters_grammar(R"({"type": "object", "patternProperties": {"^x": {}}})");
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("patternProperties"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace skiff::grammar
