// Regexes, choices and the mask on hand-written cases; the table checked
// against Python's re.fullmatch is regex_table_test.cpp.
#include <gtest/gtest.h>

#include "base/error.h"
#include "grammar/compile.h"
#include "grammar/json_schema.h"
#include "grammar_test_support.h"

namespace skiff::grammar {
namespace {

TEST(Regex, LiteralsClassesAndRepeats) {
  auto g = compile_regex("a[0-9]{2,3}(x|yz)*");
  EXPECT_TRUE(accepts_text(g, "a12"));
  EXPECT_TRUE(accepts_text(g, "a123xyzx"));
  EXPECT_FALSE(accepts_text(g, "a1"));
  EXPECT_FALSE(accepts_text(g, "a1234"));
  EXPECT_FALSE(accepts_text(g, "a12y"));
}

TEST(Regex, RefusesWhatItCannotEnforce) {
  EXPECT_THROW(compile_regex("(?=a)b"), Error);
  EXPECT_THROW(compile_regex("(a)\\1"), Error);
  EXPECT_THROW(compile_regex("a\\bb"), Error);
  EXPECT_THROW(compile_regex("a("), Error);
  EXPECT_THROW(compile_regex("a{3,2}"), Error);
}

TEST(Regex, MaskAllowsEveryTokenThatKeepsTheMatchAlive) {
  auto vocab = toy_vocab({"ab", "abc", "b1", "zz"});
  Matcher m(compile_regex("(ab)+c?"), vocab);
  std::vector<uint32_t> bits((vocab->n_vocab() + 31) / 32);
  m.fill_mask(bits);
  EXPECT_TRUE(mask_has(bits, byte_token('a')));
  EXPECT_FALSE(mask_has(bits, byte_token('b')));
  EXPECT_TRUE(mask_has(bits, 257));   // ab
  EXPECT_TRUE(mask_has(bits, 258));   // abc
  EXPECT_FALSE(mask_has(bits, 259));  // b1
  EXPECT_FALSE(mask_has(bits, 0));    // not complete yet
  ASSERT_TRUE(m.accept_token(257));
  m.fill_mask(bits);
  EXPECT_TRUE(mask_has(bits, 0));
  EXPECT_TRUE(mask_has(bits, byte_token('c')));
  EXPECT_TRUE(mask_has(bits, 258));
  ASSERT_TRUE(m.accept_token(byte_token('c')));
  m.fill_mask(bits);
  EXPECT_FALSE(mask_has(bits, byte_token('a')));
  EXPECT_TRUE(mask_has(bits, 0));
  m.rollback(1);
  m.fill_mask(bits);
  EXPECT_TRUE(mask_has(bits, byte_token('a')));
}

TEST(Choice, APrefixOfAnotherChoiceEndsOnlyAtTheEnd) {
  auto g = compile_choice({"a", "ab", "xyz"});
  EXPECT_TRUE(accepts_text(g, "a"));
  EXPECT_TRUE(accepts_text(g, "ab"));
  EXPECT_TRUE(accepts_text(g, "xyz"));
  EXPECT_FALSE(accepts_text(g, "abx"));
  EXPECT_FALSE(accepts_text(g, "x"));
}

}  // namespace
}  // namespace skiff::grammar

namespace skiff::grammar {
namespace {

TEST(ForcedBytes, TheOnlyContinuationUpToAChoiceOrTheEnd) {
  Matcher m(compile_regex("abc(d|e)f?"), toy_vocab());
  EXPECT_EQ(m.forced_bytes(), "abc");
  ASSERT_TRUE(m.accept_bytes("abcd"));
  EXPECT_EQ(m.forced_bytes(), "");  // complete: it may end or take an f
  Matcher key(compile_json_schema(nlohmann::ordered_json::parse(
                  R"({"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"],
                      "additionalProperties": false})")),
              toy_vocab());
  ASSERT_TRUE(key.accept_bytes("{\""));
  EXPECT_EQ(key.forced_bytes(), "name\"");  // then a blank or the colon
  ASSERT_TRUE(key.accept_bytes("name\":\"x\""));
  EXPECT_EQ(key.forced_bytes(), "");  // a blank or the closing brace
}

}  // namespace
}  // namespace skiff::grammar
