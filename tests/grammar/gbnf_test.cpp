// GBNF: llama.cpp's sample grammars (fetched by scripts/fetch-llama-grammars.sh,
// read from SKIFF_LLAMA_GRAMMARS) against texts valid and broken for them;
// the cases where greedy lexing could cut a text wrongly; errors; and the
// collapse of regular parts into single lexemes checked against the grammar
// with every terminal one code point, byte by byte and through the token mask.
#include "grammar/gbnf.h"

#include "grammar/compiled_grammar.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <random>
#include <set>
#include <sstream>

#include "base/error.h"
#include "grammar_test_support.h"

namespace skiff::grammar {
namespace {

std::shared_ptr<const Grammar> exact_gbnf(std::string_view text) {
  return compile_gbnf(text, {}, GbnfOptions{.collapse_regular = false});
}


// The bytes a matcher allows next (by toy_vocab's byte tokens) and, last, whether it may end.
std::vector<bool> allowed(Matcher& m) {
  std::vector<bool> out(257);
  for (int b = 0; b < 256; ++b)
    if (m.accept_token(byte_token(char(b)))) out[b] = true, m.rollback(1);
  out[256] = m.is_complete();
  return out;
}

// Both compilations allow the same bytes after every prefix of `text` (as far
// as it is valid), and accept it alike.
void expect_same_along(const std::shared_ptr<const Grammar>& fast, const std::shared_ptr<const Grammar>& exact,
                       const std::string& text) {
  auto vocab = toy_vocab();
  Matcher a(fast, vocab), b(exact, vocab);
  for (size_t i = 0; i <= text.size(); ++i) {
    ASSERT_EQ(allowed(a), allowed(b)) << "after \"" << escaped(text.substr(0, i)) << "\"";
    if (i == text.size()) break;
    bool ok = a.accept_token(byte_token(text[i]));
    ASSERT_EQ(ok, b.accept_token(byte_token(text[i])));
    if (!ok) break;
  }
}

// Random walks through the exact grammar's language (and just outside it):
// at each step both compilations allow the same bytes.
void expect_same_language(const std::string& gbnf, uint64_t seed, int walks = 25, int max_len = 60) {
  auto fast = compile_gbnf(gbnf), exact = exact_gbnf(gbnf);
  auto vocab = toy_vocab();
  std::mt19937_64 rng(seed);
  for (int w = 0; w < walks; ++w) {
    Matcher a(fast, vocab), b(exact, vocab);
    std::string text;
    for (int step = 0; step < max_len; ++step) {
      std::vector<bool> fa = allowed(a), fb = allowed(b);
      ASSERT_EQ(fa, fb) << "after \"" << escaped(text) << "\"";
      std::vector<int> any, plain;  // plain: ASCII punctuation, digits, spaces: where boundaries are
      for (int c = 0; c < 256; ++c) {
        if (!fa[c]) continue;
        any.push_back(c);
        if (c < 0x80 && !(c >= 'a' && c <= 'z') && !(c >= 'A' && c <= 'Z')) plain.push_back(c);
      }
      if (any.empty() || (fa[256] && rng() % 10 == 0)) break;
      const std::vector<int>& from = !plain.empty() && rng() % 2 ? plain : any;
      char c = char(from[rng() % from.size()]);
      ASSERT_TRUE(a.accept_token(byte_token(c)));
      ASSERT_TRUE(b.accept_token(byte_token(c)));
      text += c;
    }
  }
}

bool has_lexeme(const Grammar& g, const std::string& name) {
  for (size_t i = 0; i < g.lexer().n_lexemes(); ++i)
    if (g.lexer().lexeme(int32_t(i)).name == name) return true;
  return false;
}

// llama.cpp's grammars/ folder, from scripts/fetch-llama-grammars.sh.
class LlamaGrammars : public ::testing::Test {
 protected:
  void SetUp() override {
    const char* dir = std::getenv("SKIFF_LLAMA_GRAMMARS");
    if (!dir || !*dir)
      FAIL() << "SKIFF_LLAMA_GRAMMARS is unset: run `export SKIFF_LLAMA_GRAMMARS=$(scripts/fetch-llama-grammars.sh)` "
                "(scripts/test.sh does)";
    dir_ = dir;
  }
  std::string read(const std::string& name) {
    std::ifstream in(dir_ + "/" + name, std::ios::binary);
    EXPECT_TRUE(in) << "no " << name << " in SKIFF_LLAMA_GRAMMARS=" << dir_;
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
  }
  // Both compilations accept the good texts, refuse the bad, and agree byte by byte along all.
  void check(const std::string& name, const std::vector<std::string>& good, const std::vector<std::string>& bad) {
    std::string text = read(name);
    auto fast = compile_gbnf(text), exact = exact_gbnf(text);
    for (const std::string& t : good) {
      EXPECT_TRUE(accepts_text(fast, t)) << name << ": \"" << escaped(t) << "\"";
      EXPECT_TRUE(accepts_text(exact, t)) << name << " (exact): \"" << escaped(t) << "\"";
      expect_same_along(fast, exact, t);
    }
    for (const std::string& t : bad) {
      EXPECT_FALSE(accepts_text(fast, t)) << name << ": \"" << escaped(t) << "\"";
      EXPECT_FALSE(accepts_text(exact, t)) << name << " (exact): \"" << escaped(t) << "\"";
      expect_same_along(fast, exact, t);
    }
    expect_same_language(text, std::hash<std::string>{}(name));
  }
  std::string dir_;
};

const std::vector<std::string> kJsonGood = {
    "{}",
    "{\"a\": 1}",
    "{\"name\": \"skiff\", \"tags\": [\"a\", \"b\"], \"n\": -12.5e3, \"ok\": true, \"none\": null}",
    "{\n  \"a\": {\"b\": [1, 2, {\"c\": false}]}\n}",
    "{\"esc\": \"a\\\"b\\\\c\\u00e9\\n\"}",
    "{\"\xc3\xbc\": \"\xe6\x97\xa5\xe6\x9c\xac\"}",
    "{\"a\":[],\"b\":{},\"c\":0}",
};

TEST_F(LlamaGrammars, Json) {
  check("json.gbnf", kJsonGood,
        {"{\"a\": 1,}", "{\"a\" 1}", "{'a': 1}", "[1, 2]", "{\"a\": 01}", "{\"a\": \"tab\there\"}", "{\"a\": tru}",
         "{\"a\":  1}", "{\"a\": 1", ""});
  auto g = compile_gbnf(read("json.gbnf"));
  // Strings, numbers and the whitespace rule are single lexemes.
  EXPECT_TRUE(has_lexeme(*g, "rule:string"));
  EXPECT_TRUE(has_lexeme(*g, "rule:number"));
  EXPECT_TRUE(has_lexeme(*g, "rule:ws"));
}

TEST_F(LlamaGrammars, JsonArr) {
  check("json_arr.gbnf", {"[\n]", "[\n{\"a\": 1},\n\"x\"]", "[\n 1,\n2.5]"}, {"[1]", "[\n1,]", "[\n1] "});
}

TEST_F(LlamaGrammars, Arithmetic) {
  check("arithmetic.gbnf", {"x=y\n", "a+b*c=d\n", "(a +12) *b3=  c\n", "x=1\ny=2\n", "x_1 = (y)\n", "x=y\n\n"},
        {"x=y", "=y\n", "x==y\n", "X=y\n", "a + 12=b\n", "x=y\n="});
}

TEST_F(LlamaGrammars, C) {
  check("c.gbnf",
        {"int main(){}", "int add(int a){return a+1;}", "float f(){x = 1;while(x<10){x = x+1;}}",
         "int f(){// hi\n}", "int f(){/* a*b */}", "int f(){int x = 1;}", "int f(){intx = 1;}",
         "char g(){if(a==b){return -c;}else{f (a, b);}}", "int f(){for(i = 0; i<3; i = i+1){}}"},
        {"int main() {}", "int 1x(){}", "int f(){x=1;}", "int f(){return1;}", "int f(){/* a */", "int f()"});
}

TEST_F(LlamaGrammars, Chess) {
  check("chess.gbnf", {"1. e4 e5\n2. Nf3 Nc6\n", "1. O-O-O Qxd8#\n2. exd5 e8=Q+\n10. Ra1 h1=N\n"},
        {"1. e4 e5\n", "1. e9 e5\n2. a3 a6\n", "1. e4 e5\n2. Nf3\n", "1.  e4 e5\n2. a3 a6\n"});
  EXPECT_EQ(compile_gbnf(read("chess.gbnf"))->n_rules(), 1u);  // all one lexeme
}

TEST_F(LlamaGrammars, List) {
  check("list.gbnf", {"- apples\n- pears\n", "- a b c\n"},
        {"", "- \n", "-apples\n", "- a\xe2\x80\xa8" "b\n", "- apples"});
  EXPECT_EQ(compile_gbnf(read("list.gbnf"))->n_rules(), 1u);
}

TEST_F(LlamaGrammars, Japanese) {
  check("japanese.gbnf",
        {"\xe3\x81\x93\xe3\x82\x93\xe3\x81\xab\xe3\x81\xa1\xe3\x81\xaf \xe4\xb8\x96\xe7\x95\x8c",
         "\xe3\x82\xab\xe3\x82\xbf\xe3\x82\xab\xe3\x83\x8a\xe3\x80\x81\xe3\x81\xb2\xe3\x82\x89\xe3\x80\x82"},
        {"hello", "\xe3\x81\x93  \xe4\xb8\x96", "", " \xe3\x81\x93", "\xe3\x81"});
  EXPECT_EQ(compile_gbnf(read("japanese.gbnf"))->n_rules(), 1u);
}

TEST_F(LlamaGrammars, English) {
  check("english.gbnf", {"Hello, world!", "a\tb\nc [d]"}, {"h\xc3\xa9llo", " lead", "two  spaces", ""});
}

TEST_F(LlamaGrammars, MaskEqualsAcceptTokenOnMultiByteVocabulary) {
  const std::string japanese =
      "\xe3\x81\x93\xe3\x82\x93\xe3\x81\xab\xe3\x81\xa1\xe3\x81\xaf \xe4\xb8\x96\xe7\x95\x8c\xe3\x80\x81";
  const std::vector<std::pair<std::string, std::vector<std::string>>> cases = {
      {"json.gbnf", {kJsonGood[2], kJsonGood[3], kJsonGood[4], kJsonGood[5]}},
      {"c.gbnf", {"int f(){intx = 1;return x;}", "float g(int a){/* x*y */while(a<3){a = a+1;}}"}},
      {"japanese.gbnf", {japanese}},
      {"arithmetic.gbnf", {"(a +12) *b3=  c\nx=1\n"}},
      {"chess.gbnf", {"1. e4 e5\n2. Nf3 Nc6\n"}}};
  std::vector<std::string> all;
  for (const auto& [name, texts] : cases) all.insert(all.end(), texts.begin(), texts.end());
  auto vocab = pieces_vocab(all);
  EXPECT_GT(vocab->n_vocab(), 3000);
  for (const auto& [name, texts] : cases) {
    SCOPED_TRACE(name);
    ASSERT_NO_FATAL_FAILURE(expect_masks_along(compile_gbnf(read(name)), texts, vocab));
  }
}

struct Case {
  const char* gbnf;
  std::vector<std::string> good, bad;
};

void expect_cases(const Case& c) {
  auto fast = compile_gbnf(c.gbnf), exact = exact_gbnf(c.gbnf);
  for (const std::string& t : c.good) {
    EXPECT_TRUE(accepts_text(fast, t)) << c.gbnf << "\n\"" << escaped(t) << "\"";
    EXPECT_TRUE(accepts_text(exact, t)) << c.gbnf << "\n(exact) \"" << escaped(t) << "\"";
  }
  for (const std::string& t : c.bad) {
    EXPECT_FALSE(accepts_text(fast, t)) << c.gbnf << "\n\"" << escaped(t) << "\"";
    EXPECT_FALSE(accepts_text(exact, t)) << c.gbnf << "\n(exact) \"" << escaped(t) << "\"";
  }
  expect_same_language(c.gbnf, std::hash<std::string>{}(c.gbnf), 15, 30);
}

// Each root recurses through "[" root "]" so that it is not regular as a
// whole: its parts are what may or may not become single lexemes.
TEST(Gbnf, APrefixLiteralEndsWhereTheNextOneBegins) {
  // Greedy lexing of "a" | "ab" as one lexeme would swallow the "b" of "bc".
  expect_cases({"root ::= (\"a\" | \"ab\") \"bc\" | \"[\" root \"]\"", {"abc", "abbc", "[abc]"},
                {"ab", "abcbc", "bc"}});
  const char* x = "root ::= x \"b\" | \"[\" root \"]\"\nx ::= \"a\" | \"ab\"\n";
  expect_cases({x, {"ab", "abb", "[[ab]]"}, {"a", "abbb"}});
  EXPECT_FALSE(has_lexeme(*compile_gbnf(x), "rule:x"));
  expect_cases({"root ::= [a-z]+ \"z\" | \"[\" root \"]\"", {"az", "zz", "abcz", "[zz]"}, {"a", "z"}});
  expect_cases({"root ::= word (\" \" word)* | \"[\" root \"]\"\nword ::= [a-z]+ | [a-z]+ \"-\" [a-z]+\n",
                {"a b-c", "ab-cd e"}, {"a -b", "a-"}});
  // Keywords against identifiers (c.gbnf's dataType against identifier).
  expect_cases({"root ::= (kw | id) \";\" | \"[\" root \"]\"\nkw ::= \"int\" [ ]+\nid ::= [a-z]+\n",
                {"int ;", "intx;", "in;", "int;", "[int ;]"}, {"int x;"}});
  expect_cases({"root ::= (\"ab\" | \"a\") [b-c] | \"[\" root \"]\"", {"abb", "ab", "ac", "abc"}, {"a", "abbb"}});
  // Lexemes that begin alike where one of them has just ended: "x" then "yz"
  // against "xy" then "z" is fine, "x" then "y" against "xyy" is not.
  expect_cases({"root ::= (\"x\" \"y\"+ | \"xyy\" \"!\") \";\" | \"[\" root \"]\"", {"xy;", "xyy;", "xyy!;"},
                {"xy!;"}});
  // An identifier ended by '!' where a keyword goes on with '!'.
  expect_cases({"root ::= kw \";\" | id \"!\" \";\" | \"[\" root \"]\"\nkw ::= \"ab!!\"\nid ::= [a-z]+\n",
                {"ab!;", "ab!!;", "x!;"}, {"ab;", "ab!!!;"}});
}

TEST(Gbnf, RegularPartsBecomeOneLexemeWhereSafe) {
  auto g = compile_gbnf("root ::= [a-z]+ \"1\"");
  EXPECT_EQ(g->n_rules(), 1u);
  EXPECT_TRUE(accepts_text(g, "abc1"));
  EXPECT_FALSE(accepts_text(g, "abc"));
  // `ws` is followed by what it could take itself, so neither it nor `name`
  // (which ends in it) is one lexeme; the name's tail before `ws` is.
  const char* text = "root ::= (name \"\\n\")+ | \"(\" root \")\"\nname ::= [a-z] [a-z0-9]* ws\nws ::= [ \\n]*\n";
  g = compile_gbnf(text);
  EXPECT_FALSE(has_lexeme(*g, "rule:ws"));
  EXPECT_FALSE(has_lexeme(*g, "rule:name"));
  bool tail = false;
  for (size_t i = 0; i < g->lexer().n_lexemes(); ++i)
    tail = tail || g->lexer().lexeme(int32_t(i)).name.starts_with("re:");
  EXPECT_TRUE(tail);
  expect_cases({text, {"a\n", "ab1 \n\nc\n", "a \n \n", "(a\n)"}, {"1\n", "a", "\n", "(a)"}});
}

TEST(Gbnf, NestedRepetitionAndEmptyAlternatives) {
  expect_cases({"root ::= ((\"a\" \"b\"?)+ \",\")* \"end\"", {"end", "a,end", "abab,aa,end"},
                {"b,end", ",end", "aend,"}});
  expect_cases({"root ::= \"x\" ( | \"y\") \"z\"", {"xz", "xyz"}, {"xyyz", "x"}});
  expect_cases({"root ::= | \"a\"", {"", "a"}, {"aa"}});
  expect_cases({"root ::= (\"a\"*)* \"b\"", {"b", "aaab"}, {"ba"}});
  expect_cases({"root ::= \"\" \"a\" ()* \"\"", {"a"}, {""}});
}

TEST(Gbnf, CountedRepetition) {
  expect_cases({"root ::= \"a\"{2,3} \"b\"{2} \"c\"{1,} \"d\"{0,2}", {"aabbc", "aaabbcccdd"},
                {"abbc", "aaaabbc", "aabbcddd", "aabc"}});
  expect_cases({"root ::= (\"ab\" | [0-9]){ 1 , 3 } \"!\"", {"ab!", "1ab2!"}, {"!", "1234!"}});
  expect_cases({"root ::= x{0}\nx ::= \"q\"", {""}, {"q"}});
  expect_cases({"root ::= (a \",\"){2} a\na ::= \"(\" root? \")\"\n", {"(),(),()", "((),(),()),(),()"},
                {"(),()"}});
}

TEST(Gbnf, Utf8ClassesEscapesAndAny) {
  // Greek letters, a non-letter, e-acute by escape, an emoji range, then anything.
  const std::string alpha = "\xce\xb1", beta = "\xce\xb2", omega = "\xcf\x89", e_acute = "\xc3\xa9";
  const std::string grin = "\xf0\x9f\x98\x80", grin2 = "\xf0\x9f\x98\x81", past = "\xf0\x9f\x99\x90";  // U+1F650
  const std::string sun = "\xe6\x97\xa5";
  expect_cases({"root ::= [\xce\xb1-\xcf\x89]+ [^a-z] \"\\u00e9\" [\\U0001F600-\\U0001F64F] .",
                {alpha + beta + "1" + e_acute + grin + "x", omega + sun + e_acute + grin2 + sun},
                {alpha + "a" + e_acute + grin + "x", alpha + "1" + e_acute + grin,
                 alpha + "1" + e_acute + past + "x"}});
  expect_cases({"root ::= \"\\x41\\t\\\"\\\\\\[\" [\\]\\-] [\\x00-\\x08]", {"A\t\"\\[]\x01", "A\t\"\\[-\x08"},
                {"A\t\"\\[a\x01"}});
  expect_cases({"root ::= [^\"]* \"\\\"\"", {"\"", "ab c\xe2\x82\xac\""}, {"a\"b\"", "\xff\""}});
  expect_cases({"root ::= [^]", {"x", "\xf4\x8f\xbf\xbf"}, {"", "\xed\xa0\x80"}});
}

TEST(Gbnf, SyntaxLlamaCppAccepts) {
  // Rules used before they are defined, names with '-' and digits, comments,
  // a newline after '|' (and, more leniently, before it), CRLF line ends.
  expect_cases({"# a comment\nroot ::= first-rule2 |\n  \"b\" # more\n  | \"c\"\r\nfirst-rule2 ::= \"a\" # end\n",
                {"a", "b", "c"}, {"d"}});
  expect_cases({"root ::= (\n  \"x\"\n  \"y\"\n)", {"xy"}, {"x"}});
}

void expect_error(const std::string& gbnf, const std::string& part, Limits limits = {}) {
  try {
    compile_gbnf(gbnf, limits);
    ADD_FAILURE() << "compiled: " << escaped(gbnf);
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find(part), std::string::npos) << e.what();
  }
}

TEST(Gbnf, ErrorsNameLineAndColumn) {
  expect_error("root ::= foo\n", "line 1 column 10: undefined rule 'foo'");
  expect_error("a ::= \"x\"\n", "no rule named 'root'");
  expect_error("root ::= \"abc\n", "line 1 column 10: unterminated string literal");
  expect_error("root ::= \"a\"\nb \"x\"\n", "line 2 column 3: expected '::='");
  expect_error("root ::= (\"a\"\n", "line 2 column 1: expected ')'");
  expect_error("root ::= \"a\")\n", "line 1 column 13: unbalanced ')'");
  expect_error("root ::= [z-a]", "line 1 column 11: character range out of order");
  expect_error("root ::= []", "empty character class");
  expect_error("root ::= [a-z", "unterminated character class");
  expect_error("root ::= \"\\q\"", "line 1 column 11: unknown escape");
  expect_error("root ::= \"\\x4\"", "2 hex digits");
  expect_error("root ::= \"\\U00110000\"", "past U+10FFFF");
  expect_error("root ::= \"\\uD800\"", "surrogate");
  expect_error("root ::= \"a\"{10001}", "line 1 column 13: repetition count over 10000");
  expect_error("root ::= \"a\"{99999999999999999999}", "repetition count over 10000");
  expect_error("root ::= \"a\"{3,2}", "maximum under its minimum");
  expect_error("root ::= \"a\"{,2}", "expected a repetition count");
  expect_error("root ::= \"a\"{2", "expected '}'");
  expect_error("root ::= *", "line 1 column 10: '*' has nothing to repeat");
  expect_error("root ::= \"a\"\nroot ::= \"b\"\n", "line 2 column 1: rule 'root' is defined twice");
  expect_error("root ::= <think> x", "token references");
  expect_error("root ::= \"a\" b ::= \"c\"", "a newline must come before the rule 'b'");
  expect_error("root ::= \"\xff\"", "invalid UTF-8");
  expect_error("root ::= \"\xc0\x80\"", "invalid UTF-8");
  expect_error("root ::= root \"a\"", "line 1 column 1 (rule 'root'): grammar: no text satisfies it");
  expect_error("  | \"a\"", "'|' outside a rule");
  expect_error(std::string("root ::= ") + std::string(150, '(') + "\"a\"" + std::string(150, ')'), "nested more than");
  expect_error("root ::= \"a\"" + std::string(150, '*'), "too many repetition operators");
}

TEST(Gbnf, ErrorsForLimits) {
  std::string many = "root ::= r0\n";
  for (int i = 0; i < 20; ++i) many += fmt::format("r{} ::= \"x\" r{} | \"y\"\n", i, i + 1);
  many += "r20 ::= \"z\"\n";
  expect_error(many, "grammar too large: more than 10 rules", {.max_rules = 10});
  expect_error("root ::= (\"a\" [b-c]){5000} \"d\"{5000}", "line 1 column 1 (rule 'root'): grammar too large",
               {.max_symbols = 4000});
  expect_error("root ::= \"a\" \"b\" \"c\" \"d\"", "more than 3 items", {.max_symbols = 3});
}

TEST(Gbnf, BigButBoundedGrammarsCompile) {
  // Deep chains of rules, a long alternation and a large count stay within bounds.
  std::string chain = "root ::= c0\n";
  for (int i = 0; i < 3000; ++i) chain += fmt::format("c{} ::= \"x\" c{}\n", i, i + 1);
  chain += "c3000 ::= \"!\"\n";
  auto g = compile_gbnf(chain);
  EXPECT_TRUE(accepts_text(g, std::string(3000, 'x') + "!"));
  EXPECT_FALSE(accepts_text(g, std::string(2999, 'x') + "!"));
  std::string words = "root ::= w0";
  for (int i = 1; i < 2000; ++i) words += fmt::format(" | \"w{}\"", i);
  words += "\nw0 ::= \"w0\"\n";
  g = compile_gbnf(words);
  EXPECT_TRUE(accepts_text(g, "w1999"));
  EXPECT_TRUE(accepts_text(g, "w19"));
  EXPECT_FALSE(accepts_text(g, "w2000"));
  g = compile_gbnf("root ::= [0-9]{1000,10000} \".\"");
  EXPECT_TRUE(accepts_text(g, std::string(1000, '7') + "."));
  EXPECT_FALSE(accepts_text(g, std::string(999, '7') + "."));
}

// Mangled grammars compile or throw Error, never anything else.
TEST(Gbnf, MangledGrammarsNeverCrash) {
  std::vector<std::string> seeds = {
      "root ::= (\"a\" | [b-d]+ x)* \"e\"{1,3}\nx ::= \"\\x41\" . | ( \"\\u00e9\" )?\n",
      "root ::= object\nobject ::= \"{\" ws (string \":\" ws value)? \"}\"\nvalue ::= object | string\n"
      "string ::= \"\\\"\" [^\"]* \"\\\"\" ws\nws ::= [ \\t\\n]*\n",
      "root ::= a b\na ::= \"x\" | a \"x\"\nb ::= [^\\n]{2,}\n"};
  std::mt19937_64 rng(7);
  const std::string alphabet = "\"[]()|*+?{},:=.#\\^-ax0 \n\t\xc3\xa9<>!";
  for (int iter = 0; iter < 1500; ++iter) {
    std::string text = seeds[iter % seeds.size()];
    int edits = 1 + rng() % 4;
    for (int e = 0; e < edits; ++e) {
      size_t at = text.empty() ? 0 : rng() % text.size();
      switch (rng() % 3) {
        case 0: if (!text.empty()) text.erase(at, 1 + rng() % 3); break;
        case 1: text.insert(at, 1, alphabet[rng() % alphabet.size()]); break;
        default: if (!text.empty()) text[at] = char(rng()); break;
      }
    }
    try {
      auto g = compile_gbnf(text);
      accepts_text(g, "xa\"{}e");
    } catch (const Error&) {
    }
  }
}

}  // namespace
}  // namespace skiff::grammar
