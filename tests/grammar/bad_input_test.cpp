// Constraints that are bad input, and texts no constraint can finish: what
// the fuzz harnesses (fuzz/grammar_compile.cpp, fuzz/grammar_matcher.cpp)
// found, each kept here as its smallest case.
#include <gtest/gtest.h>

#include "base/error.h"
#include "grammar/compile.h"
#include "grammar/gbnf.h"
#include "grammar/json_schema.h"
#include "grammar_test_support.h"

namespace skiff::grammar {
namespace {

using ojson = nlohmann::ordered_json;

bool any_allowed(Matcher& m) {
  std::vector<uint32_t> bits((m.vocab()->n_vocab() + 31) / 32);
  m.fill_mask(bits);
  for (uint32_t w : bits)
    if (w) return true;
  return false;
}

// Every byte the mask allows leads somewhere the text can still be finished.
TEST(BadInput, ABranchThatCanNeverMatchIsNeverEntered) {
  Matcher m(compile_regex("a(b[^\\s\\S]|c)"), toy_vocab());
  ASSERT_TRUE(m.accept_token(byte_token('a')));
  std::vector<uint32_t> bits((m.vocab()->n_vocab() + 31) / 32);
  m.fill_mask(bits);
  EXPECT_FALSE(mask_has(bits, byte_token('b')));
  EXPECT_TRUE(mask_has(bits, byte_token('c')));
  EXPECT_FALSE(m.accept_token(byte_token('b')));
}

TEST(BadInput, ARegexThatMatchesNothingIsRefused) {
  for (const char* pattern : {"[^\\s\\S]", "[^^\"][^)*c?[\\s\\S]{0,30", "a[^\\s\\S]b|[^\\d\\D]+"})
    EXPECT_THROW(compile_regex(pattern), Error) << pattern;
}

TEST(BadInput, AGbnfAlternativeThatCannotEndIsNeverEntered) {
  // "a" x never ends (x recurses forever, or needs a character that no text has).
  for (const char* text : {"root ::= \"a\" x | \"b\"\nx ::= \"c\" x\n", "root ::= \"a\" [^\\x00-\\U0010FFFF] | \"b\"\n"}) {
    Matcher m(compile_gbnf(text), toy_vocab());
    EXPECT_FALSE(m.accept_token(byte_token('a'))) << text;
    EXPECT_TRUE(m.accept_token(byte_token('b'))) << text;
    EXPECT_TRUE(m.is_complete()) << text;
  }
  EXPECT_THROW(compile_gbnf("root ::= [^\\x00-\\U0010FFFF]\n"), Error);
}

TEST(BadInput, ANumberAtAnExclusiveBoundHasNoDeadEnd) {
  auto g = compile_json_schema(ojson::parse(R"({"type": "number", "exclusiveMaximum": 5})"));
  Matcher m(g, toy_vocab());
  EXPECT_FALSE(m.accept_bytes("5"));
  ASSERT_TRUE(m.accept_bytes("4"));
  EXPECT_TRUE(any_allowed(m));
  EXPECT_TRUE(m.is_complete());
}

// Intersections (a number and its bounds, a pattern and a length): every
// part alone would take a prefix that no text finishes for all of them.
TEST(BadInput, PartsOfALexemeThatCannotFinishTogetherAreNotEntered) {
  auto bounded = compile_json_schema(ojson::parse(R"({"type": "integer", "minimum": 10, "maximum": 20})"));
  Matcher n(bounded, toy_vocab());
  std::vector<uint32_t> bits((n.vocab()->n_vocab() + 31) / 32);
  n.fill_mask(bits);
  EXPECT_TRUE(mask_has(bits, byte_token('1')));
  EXPECT_TRUE(mask_has(bits, byte_token('2')));
  for (char c : std::string("03456789-"))
    EXPECT_FALSE(mask_has(bits, byte_token(c))) << c;
  ASSERT_TRUE(n.accept_bytes("2"));
  n.fill_mask(bits);
  EXPECT_TRUE(mask_has(bits, byte_token('0')));
  EXPECT_FALSE(mask_has(bits, byte_token('1')));
  EXPECT_FALSE(mask_has(bits, 0));  // 2 alone is under the minimum

  auto pattern = compile_json_schema(ojson::parse(R"({"type": "string", "pattern": "^(ab)+$", "maxLength": 3})"));
  Matcher s(pattern, toy_vocab());
  ASSERT_TRUE(s.accept_bytes("\"ab"));
  s.fill_mask(bits);
  EXPECT_TRUE(mask_has(bits, byte_token('"')));
  EXPECT_FALSE(mask_has(bits, byte_token('a')));  // "aba" needs a fourth character
  EXPECT_FALSE(s.accept_bytes("a"));
  // Parts that no text satisfies together: refused when compiled.
  EXPECT_THROW(compile_json_schema(ojson::parse(R"({"type": "string", "pattern": "^a$", "minLength": 2})")), Error);
}

// allOf over a DAG of references: merging follows every path (2^24 here),
// so its work is bounded apart from the schema's size.
TEST(BadInput, MergingSchemasThatShareSubschemasAlongManyPathsIsRefused) {
  ojson defs = ojson::object();
  for (int i = 0; i < 24; ++i) {
    const std::string next = "#/$defs/d" + std::to_string(i + 1);
    defs["d" + std::to_string(i)] = {{"type", "object"}, {"properties", {{"a", {{"$ref", next}}}, {"b", {{"$ref", next}}}}}};
  }
  defs["d24"] = {{"type", "integer"}};
  ojson schema = {{"$defs", defs}, {"allOf", {{{"$ref", "#/$defs/d0"}}, {{"$ref", "#/$defs/d0"}}}}};
  try {
    compile_json_schema(schema);
    FAIL() << "compiled";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("too much work to combine"), std::string::npos) << e.what();
  }
}

// oneOf's branches are told apart once each, then pairwise up to 1000 of
// them; past that, by one required property with a const of its own in each.
TEST(BadInput, ALargeOneOfIsCheckedQuickly) {
  auto branches = [](int n, int distinct) {
    ojson list = ojson::array();
    for (int i = 0; i < n; ++i)
      list.push_back({{"type", "object"}, {"properties", {{"k", {{"const", i % distinct}}}}}, {"required", {"k"}}});
    return ojson{{"oneOf", list}};
  };
  EXPECT_TRUE(accepts_text(compile_json_schema(branches(1500, 1500)), R"({"k":1499})"));
  EXPECT_TRUE(accepts_text(compile_json_schema(branches(800, 800)), R"({"k":799})"));
  EXPECT_THROW(compile_json_schema(branches(1500, 1400)), Error);
  EXPECT_THROW(compile_json_schema(branches(800, 700)), Error);
}

// additionalProperties false bounds an object at its listed properties, which
// it never needs to count: 400 of them took 160,000 rules and were refused as
// "'minProperties' too large to count" though the schema had none.
TEST(BadInput, ManyOptionalPropertiesWithoutExtrasAreNotCounted) {
  ojson props = ojson::object();
  for (int i = 0; i < 400; ++i) props["p" + std::to_string(i)] = {{"type", "integer"}};
  auto g = compile_json_schema({{"type", "object"}, {"properties", props}, {"additionalProperties", false}});
  EXPECT_LT(g->n_rules(), 2000u);
  EXPECT_TRUE(accepts_text(g, R"({"p3":1,"p17":2,"p399":3})"));
  EXPECT_TRUE(accepts_text(g, "{}"));
  EXPECT_FALSE(accepts_text(g, R"({"p17":2,"p3":1})"));
  EXPECT_FALSE(accepts_text(g, R"({"p400":1})"));
  auto bounded = compile_json_schema(
      {{"type", "object"}, {"properties", props}, {"additionalProperties", false}, {"minProperties", 2}, {"maxProperties", 3}});
  EXPECT_FALSE(accepts_text(bounded, R"({"p3":1})"));
  EXPECT_TRUE(accepts_text(bounded, R"({"p3":1,"p4":1,"p5":1})"));
  EXPECT_FALSE(accepts_text(bounded, R"({"p3":1,"p4":1,"p5":1,"p6":1})"));
  EXPECT_THROW(compile_json_schema({{"type", "object"}, {"properties", {{"a", true}}}, {"additionalProperties", false},
                                    {"minProperties", 2}}),
               Error);
}

// Each row of this grammar makes more completions than the last (cubic time):
// the text is refused before a token takes long, the parser left as before it.
TEST(BadInput, AnAmbiguousGrammarIsRefusedBeforeItGetsSlow) {
  Matcher m(compile_gbnf("root ::= root root | \"a\"\n"), toy_vocab());
  int taken = 0;
  EXPECT_THROW(
      while (taken < 2000) {
        ASSERT_TRUE(m.accept_token(byte_token('a')));
        ++taken;
      },
      Error);
  EXPECT_GT(taken, 100);
  EXPECT_LT(taken, 1000);
  EXPECT_EQ(m.n_tokens(), taken);
  m.rollback(taken - 10);
  EXPECT_TRUE(m.accept_token(byte_token('a')));
  EXPECT_TRUE(m.is_complete());
}

// A limit reached inside a token of several bytes, or inside a mask: the
// matcher stays as it was before that token or mask.
TEST(BadInput, AMatcherPastItsLimitsStaysAsItWas) {
  auto vocab = toy_vocab({"aa"});
  const int32_t aa = vocab->n_vocab() - 1;
  Matcher m(compile_gbnf("root ::= root root | \"a\"\n"), vocab);
  int taken = 0;
  std::vector<uint32_t> bits((vocab->n_vocab() + 31) / 32);
  EXPECT_THROW(
      while (taken < 2000) {
        ASSERT_TRUE(m.accept_token(aa));
        ++taken;
      },
      Error);
  EXPECT_EQ(m.n_tokens(), taken);
  EXPECT_THROW(m.fill_mask(bits), Error);
  EXPECT_EQ(m.n_tokens(), taken);
  m.rollback(taken - 5);
  EXPECT_TRUE(m.accept_token(aa));
  EXPECT_TRUE(m.accept_token(byte_token('a')));
  EXPECT_TRUE(m.is_complete());
  m.fill_mask(bits);
  EXPECT_TRUE(mask_has(bits, aa));
}

// Stacked repetitions of *, + and ? are one repetition: nested stars would
// make each row ambiguous in as many ways as they are deep.
TEST(BadInput, StackedRepetitionsAreOneRepetition) {
  auto g = compile_gbnf("root ::= [a-c]" + std::string(90, '*') + " \"x\" (\"y\"?)+ ((\"z\"+)?)?\n",
                        Limits{}, GbnfOptions{.collapse_regular = false});
  Matcher m(g, toy_vocab());
  for (int i = 0; i < 200; ++i) ASSERT_TRUE(m.accept_token(byte_token("abc"[i % 3]))) << i;
  for (char c : std::string("xyyyzz")) ASSERT_TRUE(m.accept_token(byte_token(c))) << c;
  EXPECT_TRUE(m.is_complete());
  EXPECT_TRUE(accepts_text(g, "x"));
  EXPECT_TRUE(accepts_text(g, "abx"));
  EXPECT_FALSE(accepts_text(g, "abxzy"));
}

// Right recursion completes one item per level: never refused as ambiguous.
TEST(BadInput, RightRecursionIsNotAmbiguity) {
  Matcher m(compile_gbnf("root ::= \"a\" root | \"a\"\n"), toy_vocab());
  for (int i = 0; i < 600; ++i) ASSERT_TRUE(m.accept_token(byte_token('a'))) << i;
  EXPECT_TRUE(m.is_complete());
}

}  // namespace
}  // namespace skiff::grammar
