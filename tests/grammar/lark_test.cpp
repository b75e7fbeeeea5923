// Lark grammars (lark.h): each construct against texts it must accept and
// refuse, a Lark grammar against the GBNF grammar of the same language on
// every short text, masks against trying every token, and the errors.
#include <gtest/gtest.h>

#include "base/error.h"
#include "grammar/gbnf.h"
#include "grammar/lark.h"
#include "grammar_test_support.h"

namespace skiff::grammar {
namespace {

TEST(Lark, StringsRangesRegexesAndRepetitions) {
  const auto g = compile_lark(R"g(
// a comment
?start: greeting name ("," name)* ["!"]
greeting: "hello"i " " -> hi
        | "hey" " "
name: LETTER DIGIT~2..3
    | /x[0-9a-f]+/ | "<" "a".."c"~2 ">"
LETTER.2: "A".."Z"
DIGIT: /[0-9]/
)g");
  for (const char* text : {"hello A12", "HeLLo B123,C45!", "hey x0f", "hey <ab>", "hey <cc>,Z99!"})
    EXPECT_TRUE(accepts_text(g, text)) << text;
  for (const char* text : {"hello A1", "hello A1234", "hello a12", "hey <ad>", "hey <a>", "hey x", "hi A12", "hey A12!!"})
    EXPECT_FALSE(accepts_text(g, text)) << text;
}

TEST(Lark, CommonImportsAndIgnoredWhitespace) {
  const auto g = compile_lark(R"g(
start: pair ("," pair)*
pair: ESCAPED_STRING ":" value
value: SIGNED_NUMBER | CNAME | "[" [value ("," value)*] "]"
%import common.ESCAPED_STRING
%import common (SIGNED_NUMBER, CNAME)
%import common.WS -> BLANK
%ignore BLANK
)g");
  for (const char* text : {R"("a":1)", R"( "a" : -1.5e3 , "b\"c" : [ x_1 , [ ] , 2 ] )", "\"k\":\n\t[1,2]\n"})
    EXPECT_TRUE(accepts_text(g, text)) << text;
  for (const char* text : {R"("a":)", R"("a" 1)", R"("a":1,)", R"("a\":1)", R"('a':1)", R"("a":1x)"})
    EXPECT_FALSE(accepts_text(g, text)) << text;
}

// Every text of up to 6 characters over the grammars' alphabet: the same verdicts.
TEST(Lark, AgreesWithGbnfOnTheSameLanguage) {
  const auto lark = compile_lark(R"g(
start: sum
sum: product (("+" | "-") product)*
product: atom ("*" atom)*
atom: NUMBER | "(" sum ")"
NUMBER: /[0-9]+/
)g");
  const auto gbnf = compile_gbnf(R"g(
root ::= sum
sum ::= product (("+" | "-") product)*
product ::= atom ("*" atom)*
atom ::= [0-9]+ | "(" sum ")"
)g");
  const std::string alphabet = "1+*()";
  std::vector<std::string> texts{""};
  for (size_t i = 0; i < texts.size(); ++i)
    if (texts[i].size() < 6)
      for (char c : alphabet) texts.push_back(texts[i] + c);
  int accepted = 0;
  for (const std::string& t : texts) {
    EXPECT_EQ(accepts_text(lark, t), accepts_text(gbnf, t)) << t;
    accepted += accepts_text(gbnf, t);
  }
  EXPECT_GT(accepted, 50);
}

TEST(Lark, MasksEqualTryingEveryToken) {
  const auto g = compile_lark(R"g(
start: "call" NAME "(" [arg ("," arg)*] ")"
arg: NAME "=" (INT | ESCAPED_STRING)
NAME: /[a-z_]+/
%import common.INT
%import common.ESCAPED_STRING
%import common.WS
%ignore WS
)g");
  const std::vector<std::string> texts{"call f(a=1, b_c = \"x\\\"y\")", "call  g ( )"};
  expect_masks_along(g, texts, pieces_vocab(texts));
}

TEST(Lark, GbnfOrLarkByTheirRules) {
  EXPECT_TRUE(accepts_text(compile_gbnf_or_lark("root ::= \"a\"+"), "aa"));
  EXPECT_TRUE(accepts_text(compile_gbnf_or_lark("start: \"a\"+"), "aa"));
  EXPECT_THROW(compile_gbnf_or_lark("root: \"a\""), Error);  // Lark, without a start rule
}

TEST(Lark, ErrorsNameTheLineAndWhat) {
  auto message = [](const char* text) {
    try {
      compile_lark(text);
    } catch (const Error& e) {
      return std::string(e.what());
    }
    return std::string("compiled");
  };
  EXPECT_NE(message("rule: \"a\"").find("no rule named 'start'"), std::string::npos);
  EXPECT_NE(message("start: other").find("undefined rule 'other'"), std::string::npos);
  EXPECT_NE(message("start: \"a\"\n%declare X").find("line 2"), std::string::npos);
  EXPECT_NE(message("start: X\n%import mylib.X").find("common library"), std::string::npos);
  EXPECT_NE(message("start: /a/i").find("flags"), std::string::npos);
  EXPECT_NE(message("start: \"abc").find("unterminated string"), std::string::npos);
  EXPECT_NE(message("start: /ab").find("unterminated regular expression"), std::string::npos);
  EXPECT_NE(message("start: \"b\"..\"a\"").find("range"), std::string::npos);
  EXPECT_NE(message("start: \"a\"\nstart: \"b\"").find("defined twice"), std::string::npos);
  EXPECT_NE(message("start{x}: \"a\"").find("templates"), std::string::npos);
  EXPECT_NE(message("start: (\"a\"").find("')'"), std::string::npos);
  EXPECT_NE(message("start: \"a\"~3..2").find("maximum"), std::string::npos);
  EXPECT_NE(message("start: \"x\" /a^b/").find("lark: line 1 column 12"), std::string::npos);
}

}  // namespace
}  // namespace skiff::grammar
