// How Tokenizer::from_gguf reads tokenizer.ggml.model / .pre and the flags
// they imply, as llama.cpp's vocabulary loader does, on small written files.
#include <gtest/gtest.h>

#include <filesystem>

#include "base/error.h"
#include "gguf/gguf.h"
#include "gguf/gguf_writer.h"
#include "tokenizer/tokenizer.h"

namespace skiff {
namespace {

using gguf::ValueType;

class GgufTokenizerKeys : public testing::Test {
 protected:
  // A BPE vocabulary: a, b, ab (merge "a b") and SentencePiece-style ▁, ▁a, <0x0A>.
  GgufTokenizerKeys() {
    writer_.set("general.architecture", gguf::make_string("test"));
    set_tokens(0);
  }

  // The seven tokens, then `padding` more normal ones.
  void set_tokens(int padding) {
    std::vector<std::string> tokens = {"a", "b", "ab", "\xE2\x96\x81", "\xE2\x96\x81" "a", "<0x0A>", "<s>"};
    std::vector<gguf::Value> types;
    for (int type : {1, 1, 1, 1, 1, 6, 3}) types.push_back(gguf::make_int(ValueType::INT32, type));
    for (int i = 0; i < padding; ++i) {
      tokens.push_back("pad" + std::to_string(i));
      types.push_back(gguf::make_int(ValueType::INT32, 1));
    }
    writer_.set("tokenizer.ggml.tokens", gguf::make_string_array(tokens));
    writer_.set("tokenizer.ggml.token_type", gguf::make_array(ValueType::INT32, std::move(types)));
  }

  std::unique_ptr<Tokenizer> load(bool with_merges = true) {
    if (with_merges) writer_.set("tokenizer.ggml.merges", gguf::make_string_array({"a b", "\xE2\x96\x81 a"}));
    const std::string path = testing::TempDir() + "/tokenizer_keys.gguf";
    writer_.write(path);
    auto tokenizer = Tokenizer::from_gguf(gguf::GgufFile(path));
    std::filesystem::remove(path);
    return tokenizer;
  }

  std::string load_error(bool with_merges = true) {
    try {
      load(with_merges);
    } catch (const Error& e) {
      return e.what();
    }
    return "";
  }

  gguf::GgufWriter writer_;
};

TEST_F(GgufTokenizerKeys, MissingPreIsTheDefaultPreTokenizer) {
  writer_.set("tokenizer.ggml.model", gguf::make_string("gpt2"));
  const auto tokenizer = load();
  EXPECT_EQ(tokenizer->vocab().pre, PreTokenizer::Default);
  EXPECT_EQ(tokenizer->encode("ab", false, false), std::vector<int32_t>{2});
}

TEST_F(GgufTokenizerKeys, UnknownPreIsAnErrorNamingIt) {
  writer_.set("tokenizer.ggml.model", gguf::make_string("gpt2"));
  writer_.set("tokenizer.ggml.pre", gguf::make_string("no-such-pre"));
  const std::string error = load_error();
  EXPECT_NE(error.find("'no-such-pre'"), std::string::npos) << error;
  EXPECT_NE(error.find("tokenizer_keys.gguf"), std::string::npos) << error;
}

TEST_F(GgufTokenizerKeys, BpeWithoutMergesIsAnError) {
  writer_.set("tokenizer.ggml.model", gguf::make_string("gpt2"));
  writer_.set("tokenizer.ggml.pre", gguf::make_string("gpt-2"));
  EXPECT_NE(load_error(/*with_merges=*/false).find("tokenizer.ggml.merges"), std::string::npos);
}

// llama.cpp loads a Kimi K2 vocabulary without merges: its words stay in single tokens.
TEST_F(GgufTokenizerKeys, KimiK2LoadsWithoutMerges) {
  writer_.set("tokenizer.ggml.model", gguf::make_string("gpt2"));
  writer_.set("tokenizer.ggml.pre", gguf::make_string("kimi-k2"));
  const auto unmerged = load(/*with_merges=*/false);
  EXPECT_EQ(unmerged->vocab().pre, PreTokenizer::KimiK2);
  EXPECT_EQ(unmerged->encode("ab", false, false), (std::vector<int32_t>{0, 1}));
  EXPECT_EQ(load()->encode("ab", false, false), std::vector<int32_t>{2});  // with merges, they apply
}

// GPT-2's default BOS/EOS id 11 lies outside this vocabulary: none, as llama.cpp.
TEST_F(GgufTokenizerKeys, DefaultIdsOutsideTheVocabularyAreNone) {
  writer_.set("tokenizer.ggml.model", gguf::make_string("gpt2"));
  writer_.set("tokenizer.ggml.pre", gguf::make_string("gpt-2"));
  const auto tokenizer = load();
  EXPECT_EQ(tokenizer->bos_id(), -1);
  EXPECT_EQ(tokenizer->eos_id(), -1);
}

TEST_F(GgufTokenizerKeys, ChatglmHasNoDefaultBos) {
  set_tokens(10);  // id 11 exists
  writer_.set("tokenizer.ggml.model", gguf::make_string("gpt2"));
  writer_.set("tokenizer.ggml.pre", gguf::make_string("chatglm-bpe"));
  const auto chatglm = load();
  EXPECT_EQ(chatglm->bos_id(), -1);
  EXPECT_EQ(chatglm->eos_id(), 11);
  writer_.set("tokenizer.ggml.pre", gguf::make_string("llama-bpe"));
  const auto llama3 = load();
  EXPECT_EQ(llama3->bos_id(), 11);
  EXPECT_TRUE(llama3->add_bos());
  EXPECT_TRUE(llama3->vocab().ignore_merges);
}

// tokenizer.ggml.model "gemma4": the gemma4 pre-tokenizer whatever .pre says,
// spaces as ▁, <0xAB> byte fallback, and BOS always added.
TEST_F(GgufTokenizerKeys, Gemma4IsSentencePieceStyleBpe) {
  writer_.set("tokenizer.ggml.model", gguf::make_string("gemma4"));
  writer_.set("tokenizer.ggml.pre", gguf::make_string("qwen2"));
  writer_.set("tokenizer.ggml.add_bos_token", gguf::make_bool(false));
  writer_.set("tokenizer.ggml.bos_token_id", gguf::make_uint(ValueType::UINT32, 6));
  const auto tokenizer = load();
  EXPECT_EQ(tokenizer->vocab().pre, PreTokenizer::Gemma4);
  EXPECT_TRUE(tokenizer->add_bos());
  EXPECT_EQ(tokenizer->encode(" a\nab", true, false), (std::vector<int32_t>{6, 4, 5, 2}));
  EXPECT_EQ(tokenizer->decode(std::vector<int32_t>{4, 5, 2}), " a\nab");
}

// tokenizer.ggml.model "bert": WordPiece, ids from llama.cpp's keys (its spelling of
// "seperator"); the defaults 100-102 lie outside this vocabulary, so there is no [UNK]
// and a word that cannot be spelt ("c") is dropped.
TEST_F(GgufTokenizerKeys, BertIsWordPiece) {
  writer_.set("tokenizer.ggml.model", gguf::make_string("bert"));
  writer_.set("tokenizer.ggml.bos_token_id", gguf::make_uint(ValueType::UINT32, 6));
  writer_.set("tokenizer.ggml.seperator_token_id", gguf::make_uint(ValueType::UINT32, 6));
  const auto tokenizer = load(/*with_merges=*/false);
  EXPECT_EQ(tokenizer->vocab().kind, VocabKind::Wpm);
  EXPECT_EQ(tokenizer->vocab().unk_id, -1);
  EXPECT_EQ(tokenizer->encode("AB c a", true, false), (std::vector<int32_t>{6, 4, 1, 4, 6}));
  EXPECT_EQ(tokenizer->decode(std::vector<int32_t>{6, 4, 1, 4, 6}), "ab a");
}

TEST_F(GgufTokenizerKeys, UnknownModelIsAnError) {
  writer_.set("tokenizer.ggml.model", gguf::make_string("t5"));
  EXPECT_NE(load_error().find("'t5'"), std::string::npos);
}

}  // namespace
}  // namespace skiff
