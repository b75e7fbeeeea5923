// Pre-tokenizers against an independent reference: data/pretokenizer_splits.json
// holds how Python's `regex` module splits texts with each type's llama.cpp
// regexes (tools/make_pretokenizer_golden.py). Both skiff paths must agree
// with it: pre_tokenize (hand-written fast paths where there are some) and
// the regex engine alone.
#include <gtest/gtest.h>

#include <filesystem>
#include <set>

#include "base/error.h"
#include "error_of.h"
#include "tokenizer/hf_files.h"
#include "tokenizer/pretokenizer.h"
#include "tokenizer/regex.h"
#include "tokenizer/unicode.h"

namespace skiff {
namespace {

const nlohmann::json& golden() {
  static const nlohmann::json root =
      hf::read_json(std::filesystem::path(SKIFF_SOURCE_DIR) / "tests/tokenizer/data/pretokenizer_splits.json");
  return root;
}

std::vector<std::string_view> as_views(const std::vector<std::string>& strings) {
  return {strings.begin(), strings.end()};
}

TEST(PreTokenizer, SplitsMatchPythonRegex) {
  std::set<PreTokenizer> covered;
  for (const auto& type : golden()["types"]) {
    const std::string name = type["name"];
    const PreTokenizer pre = pre_tokenizer_from_name(name).type;
    covered.insert(pre);
    const auto regexes = type["regexes"].get<std::vector<std::string>>();
    ASSERT_EQ(as_views(regexes), pre_tokenizer_regexes(pre)) << name << ": regenerate the golden file";
    for (const auto& split : type["splits"]) {
      const std::string text = split[0];
      const auto words = split[1].get<std::vector<std::string>>();
      EXPECT_EQ(pre_tokenize(text, pre), words) << name << ", text: '" << text << "'";
      EXPECT_EQ(regex_split(text, as_views(regexes)), words) << name << " (regex engine), text: '" << text << "'";
    }
  }
  for (const std::string_view name : pre_tokenizer_names()) {
    EXPECT_TRUE(covered.count(pre_tokenizer_from_name(name).type)) << name << "'s type has no golden splits";
  }
}

TEST(PreTokenizer, NamesMapAsLlamaCpp) {
  EXPECT_EQ(pre_tokenizer_from_name("command-r").type, PreTokenizer::Starcoder);
  EXPECT_EQ(pre_tokenizer_from_name("grok-2").type, PreTokenizer::Qwen2);
  EXPECT_EQ(pre_tokenizer_from_name("llama4").type, PreTokenizer::Gpt4o);
  const PreTokenizerChoice llama3 = pre_tokenizer_from_name("llama-bpe");
  EXPECT_TRUE(llama3.ignore_merges && llama3.add_bos);
  const PreTokenizerChoice dbrx = pre_tokenizer_from_name("dbrx");
  EXPECT_EQ(dbrx.type, PreTokenizer::Llama3);
  EXPECT_FALSE(dbrx.ignore_merges || dbrx.add_bos);
  EXPECT_TRUE(pre_tokenizer_from_name("gemma4").escape_whitespaces);
  EXPECT_TRUE(pre_tokenizer_from_name("chatglm-bpe").no_default_bos);
  EXPECT_FALSE(pre_tokenizer_from_name("chatglm-bpe").ignore_merges);
  for (const char* glm : {"glm4", "glm5"}) {
    const PreTokenizerChoice choice = pre_tokenizer_from_name(glm);
    EXPECT_EQ(choice.type, PreTokenizer::Llama3) << glm;
    EXPECT_TRUE(choice.ignore_merges && choice.no_default_bos) << glm;
  }
  EXPECT_EQ(pre_tokenizer_from_name("kimi-k2").type, PreTokenizer::KimiK2);
  EXPECT_EQ(pre_tokenizer_from_name("afmoe").type, PreTokenizer::Afmoe);
  EXPECT_FALSE(pre_tokenizer_byte_encodes(PreTokenizer::Gemma4));
  EXPECT_TRUE(pre_tokenizer_byte_encodes(PreTokenizer::Qwen35));
  for (const char* name : {"deepseek-llm", "deepseek-v3", "falcon", "refact", "stablelm2", "olmo", "poro-chat",
                           "viking", "jais", "tekken", "smollm", "codeshell", "bloom", "gpt3-finnish", "exaone",
                           "chameleon", "minerva-7b", "megrez", "gpt-4o", "superbpe", "trillion", "bailingmoe",
                           "pixtral", "seed-coder", "hunyuan", "glm4", "qwen35", "granite-docling"}) {
    EXPECT_NO_THROW(pre_tokenizer_from_name(name)) << name;
  }
}

using testing::error_of;

TEST(PreTokenizer, UnknownNamesAreNamedInTheError) {
  EXPECT_NE(error_of([] { pre_tokenizer_from_name("no-such-pre"); }).find("'no-such-pre'"), std::string::npos);
  EXPECT_NE(error_of([] { pre_tokenizer_from_name("gpt2"); }).find("unknown"), std::string::npos);
}

TEST(Regex, RejectsSyntaxItDoesNotKnow) {
  for (const char* pattern : {"(?i:a)", "a*?", "a++", "\\p{Han}", "(a*)*", "[a-", "(a", "a)", "\\q", "a{2,1}"}) {
    EXPECT_NE(error_of([&] { Regex{pattern}; }), "") << pattern;
  }
}

ptrdiff_t match_length(std::string_view pattern, std::string_view text, size_t pos = 0) {
  const auto cps = unicode::decode_utf8(text);
  return Regex(pattern).match_at(cps, 0, pos, cps.size());
}

TEST(Regex, LeftmostFirstGreedyBacktracking) {
  EXPECT_EQ(match_length("a|ab", "ab"), 1);  // the first alternative that matches, not the longest
  EXPECT_EQ(match_length("\\s+(?!\\S)", "   x"), 2);
  EXPECT_EQ(match_length("\\s+$", "  \n"), 3);
  EXPECT_EQ(match_length("\\s+$", "  x"), -1);
  EXPECT_EQ(match_length("\\p{N}{1,3}", "12345"), 3);
  EXPECT_EQ(match_length("(?=(\\d{3})+(?!\\d))", "1234", 1), 0);  // an empty match
  EXPECT_EQ(match_length("(?=(\\d{3})+(?!\\d))", "1234", 0), -1);
  EXPECT_EQ(match_length("[^(\\s|.,)]+", "ab(c d"), 2);
  EXPECT_EQ(match_length("[\\x{212A}-\\x{212D}]+", "\u212A\u212B\u212C\u212DK"), 4);
  EXPECT_EQ(match_length("\\d{1,3}(?=(?:\\d{3})*\\b)", "12345 "), 2);
}

// llama.cpp's AFMoE digit split: groups of 3 from the right, the first one
// closing the word that holds the text before the run.
TEST(PreTokenizer, AfmoeDigitsGroupAsLlamaCpp) {
  EXPECT_EQ(regex_split("x  1234 abc 12", {"\\p{AFMoE_digits}"}),
            (std::vector<std::string>{"x  1", "234", " abc 12"}));
  EXPECT_EQ(regex_split("123456", {"\\p{AFMoE_digits}"}), (std::vector<std::string>{"123", "456"}));
  // The whole pre-tokenizer takes the glued text apart again, but "  " before a
  // digit stays two words, as in llama.cpp.
  EXPECT_EQ(pre_tokenize("a  1234", PreTokenizer::Afmoe), (std::vector<std::string>{"a", " ", " ", "1", "234"}));
}

// Repetitions run on the heap: a megabyte-long run must not exhaust the stack.
TEST(Regex, LongRunsDoNotRecurse) {
  const std::string letters(1 << 20, 'a');
  EXPECT_EQ(match_length("(?:\\p{L}\\p{M}*(?: \\p{L}\\p{M}*)*)+", letters), 1 << 20);
  EXPECT_EQ(match_length("((?=[\\p{L}])([^A-Z]))+", letters), 1 << 20);
}

}  // namespace
}  // namespace skiff
