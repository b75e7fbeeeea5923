// WordPiece (tokenizer.ggml.model "bert"): the splitting and matching rules on a
// tiny vocabulary, and encode/decode on the bge vocabulary (its llama.cpp vectors
// are in vocab_vectors_test.cpp).
#include <gtest/gtest.h>

#include <random>

#include "base/error.h"
#include "gguf/gguf.h"
#include "tokenizer/tokenizer.h"
#include "tokenizer/vocab_vectors.h"

namespace skiff {
namespace {

using Ids = std::vector<int32_t>;

const std::string kWordStart = "\xE2\x96\x81";  // ▁

// [UNK], then word-initial pieces (with ▁) and continuation pieces (bare).
Tokenizer tiny_tokenizer(bool with_unknown) {
  Vocab vocab;
  vocab.kind = VocabKind::Wpm;
  vocab.texts = {"[UNK]", kWordStart + "un", kWordStart + "unaff", "able", "aff", kWordStart + "a", ",", kWordStart + ","};
  vocab.types = {TokenType::Control, TokenType::Normal, TokenType::Normal, TokenType::Normal,
                 TokenType::Normal, TokenType::Normal, TokenType::Normal, TokenType::Normal};
  vocab.unk_id = with_unknown ? 0 : -1;
  return Tokenizer(std::move(vocab));
}

TEST(WordPieceRules, LongestPieceFirst) {
  const Tokenizer tokenizer = tiny_tokenizer(true);
  EXPECT_EQ(tokenizer.encode("unaffable", false, false), (Ids{2, 3}));  // not ▁un + aff + able
  EXPECT_EQ(tokenizer.encode("UNAFFABLE", false, false), (Ids{2, 3}));
}

TEST(WordPieceRules, AWordThatCannotBeSpeltIsOneUnknown) {
  const Tokenizer tokenizer = tiny_tokenizer(true);
  EXPECT_EQ(tokenizer.encode("unaffx a", false, false), (Ids{0, 5}));
  // Without an unknown token the word is dropped.
  EXPECT_EQ(tiny_tokenizer(false).encode("unaffx a", false, false), (Ids{5}));
}

TEST(WordPieceRules, PunctuationIsAWordOfItsOwn) {
  const Tokenizer tokenizer = tiny_tokenizer(true);
  // "a,a": three words, each starting with ▁; the bare "," piece is never used.
  EXPECT_EQ(tokenizer.encode("a,a", false, false), (Ids{5, 7, 5}));
}

class BgeVocab : public testing::Test {
 protected:
  static void SetUpTestSuite() {
    tokenizer_ = Tokenizer::from_gguf(gguf::GgufFile(test::models_dir() + "/vocab/ggml-vocab-bert-bge.gguf")).release();
  }
  static void TearDownTestSuite() {
    delete tokenizer_;
    tokenizer_ = nullptr;
  }
  static Ids encode(std::string_view text) { return tokenizer_->encode(text, false, false); }

  static const Tokenizer* tokenizer_;
};
const Tokenizer* BgeVocab::tokenizer_ = nullptr;

TEST_F(BgeVocab, SpecialIdsAreLlamaCppDefaultsAndKeys) {
  EXPECT_EQ(tokenizer_->vocab().kind, VocabKind::Wpm);
  EXPECT_EQ(tokenizer_->token_text(tokenizer_->bos_id()), "[CLS]");  // the file names no BOS: default 101
  EXPECT_EQ(tokenizer_->token_text(tokenizer_->vocab().sep_id), "[SEP]");
  EXPECT_EQ(tokenizer_->token_text(tokenizer_->vocab().unk_id), "[UNK]");
  EXPECT_EQ(tokenizer_->token_text(tokenizer_->vocab().pad_id), "[PAD]");
  EXPECT_TRUE(tokenizer_->add_bos());
}

TEST_F(BgeVocab, AddSpecialWrapsInClsAndSep) {
  EXPECT_EQ(tokenizer_->encode("Hello world", true, false), (Ids{101, 7592, 2088, 102}));
  EXPECT_EQ(tokenizer_->encode("", true, false), (Ids{101, 102}));
  // Special texts are tokens only when asked for.
  EXPECT_EQ(tokenizer_->encode("[SEP]", false, true), (Ids{102}));
  EXPECT_NE(tokenizer_->encode("[SEP]", false, false), (Ids{102}));
}

TEST_F(BgeVocab, LowercasesAndDropsAccentsOfPrecomposedLetters) {
  EXPECT_EQ(encode("HELLO Wörld"), encode("hello world"));
  EXPECT_EQ(encode("Äpfel"), encode("apfel"));
}

TEST_F(BgeVocab, SplitsOnWhitespacePunctuationAsciiSymbolsAndIdeographs) {
  EXPECT_EQ(encode("a+b"), encode("a + b"));
  EXPECT_EQ(encode("hello,world!"), encode("hello , world !"));
  EXPECT_EQ(encode("\xE6\x88\x91\xE6\x83\xB3"), encode("\xE6\x88\x91 \xE6\x83\xB3"));  // 我想
  EXPECT_EQ(encode("a\tb\nc\xE2\x80\x83" "d"), encode("a b c d"));                      // U+2003 em space
  // Format characters (zero-width space) and control characters vanish.
  EXPECT_EQ(encode("hel\xE2\x80\x8Blo\x01"), encode("hello"));
}

TEST_F(BgeVocab, DecodeJoinsPiecesWithoutTheFirstWordsMark) {
  const Ids ids = encode("Hello, world! Apfel");
  EXPECT_EQ(tokenizer_->decode(ids), "hello , world ! apfel");
  EXPECT_EQ(tokenizer_->decode(tokenizer_->encode("Hello", true, false)), "hello");  // [CLS]/[SEP] are control
  EXPECT_EQ(tokenizer_->decode(tokenizer_->encode("Hello", true, false), /*render_control=*/true),
            "[CLS] hello[SEP]");
  StreamDecoder stream(*tokenizer_);
  std::string streamed;
  for (const int32_t id : ids) streamed += stream.push(id);
  streamed += stream.flush();
  EXPECT_EQ(streamed, tokenizer_->decode(ids));
}

TEST_F(BgeVocab, EveryIdDecodesAndOthersAreErrors) {
  for (int32_t id = 0; id < tokenizer_->n_vocab(); ++id) {
    EXPECT_NO_THROW(tokenizer_->token_to_piece(id, true)) << id;
  }
  EXPECT_THROW(tokenizer_->token_to_piece(tokenizer_->n_vocab()), Error);
  EXPECT_THROW(tokenizer_->token_to_piece(-1), Error);
}

TEST_F(BgeVocab, AnyBytesEncodeToVocabularyIds) {
  std::mt19937 rng(7);
  std::uniform_int_distribution<int> byte(0, 255);
  for (int round = 0; round < 200; ++round) {
    std::string text(1 + round % 40, '\0');
    for (char& c : text) c = static_cast<char>(byte(rng));
    for (const int32_t id : encode(text)) {
      ASSERT_GE(id, 0);
      ASSERT_LT(id, tokenizer_->n_vocab());
    }
  }
}

TEST_F(BgeVocab, LongWordsAreLinear) {
  const std::string long_word(200000, 'a');
  const Ids ids = encode(long_word);
  ASSERT_FALSE(ids.empty());
  EXPECT_EQ(tokenizer_->decode(ids), long_word);
}

}  // namespace
}  // namespace skiff
