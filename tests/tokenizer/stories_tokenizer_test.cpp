// The stories260K vocabulary (SentencePiece, 512 pieces, byte fallback) read
// from GGUF and from tokenizer.model; decoding and streaming.
#include <gtest/gtest.h>

#include "gguf/gguf.h"
#include "tokenizer/tokenizer.h"
#include "tokenizer/unicode.h"
#include "tokenizer/vocab_vectors.h"

namespace skiff {
namespace {

const char* const kSamples[] = {
    "Once upon a time, there was a little girl named Lily.",
    " She liked to play outside.\n\nOne day,  she saw a big  dog!",
    "Emoji 😀 and CJK 你好世界 and accents: café, naïve",
    "tabs\tand\r\nnewlines\n",
    "",
};

class Stories : public testing::Test {
 protected:
  static void SetUpTestSuite() {
    gguf_ = Tokenizer::from_gguf(gguf::GgufFile(test::models_dir() + "/derived/stories260K-f32.gguf")).release();
    hf_ = Tokenizer::from_hf_dir(test::models_dir() + "/derived/stories260K-hf").release();
  }
  static void TearDownTestSuite() {
    delete gguf_;
    delete hf_;
  }
  static const Tokenizer* gguf_;
  static const Tokenizer* hf_;
};
const Tokenizer* Stories::gguf_ = nullptr;
const Tokenizer* Stories::hf_ = nullptr;

TEST_F(Stories, MetadataMatchesBetweenSources) {
  EXPECT_EQ(gguf_->n_vocab(), 512);
  EXPECT_EQ(hf_->n_vocab(), 512);
  EXPECT_EQ(gguf_->bos_id(), 1);
  EXPECT_EQ(gguf_->eos_id(), 2);
  EXPECT_EQ(hf_->bos_id(), 1);
  EXPECT_EQ(hf_->eos_id(), 2);
  EXPECT_TRUE(gguf_->add_bos());
  EXPECT_TRUE(hf_->add_bos());
  EXPECT_TRUE(gguf_->is_end_of_generation(2));
  EXPECT_FALSE(gguf_->is_end_of_generation(1));
  for (int32_t id = 0; id < 512; ++id) {
    ASSERT_EQ(gguf_->token_text(id), hf_->token_text(id)) << id;
    ASSERT_EQ(gguf_->vocab().types[id], hf_->vocab().types[id]) << id;
    ASSERT_EQ(gguf_->vocab().scores[id], hf_->vocab().scores[id]) << id;
  }
}

TEST_F(Stories, GgufAndTokenizerModelGiveTheSameIds) {
  for (const char* text : kSamples) {
    for (const bool add_special : {false, true}) {
      EXPECT_EQ(gguf_->encode(text, add_special, true), hf_->encode(text, add_special, true)) << text;
    }
  }
}

TEST_F(Stories, AddsBosAndSpacePrefix) {
  const auto ids = gguf_->encode("Hello", true, false);
  ASSERT_GE(ids.size(), 2u);
  EXPECT_EQ(ids[0], 1);
  EXPECT_EQ(gguf_->token_to_piece(ids[1]).front(), ' ');  // the dummy prefix
  EXPECT_TRUE(gguf_->encode("", false, false).empty());
  EXPECT_EQ(gguf_->encode("", true, false), std::vector<int32_t>{1});
}

TEST_F(Stories, ParseSpecialMatchesControlTokenText) {
  const auto parsed = gguf_->encode("a</s>b", false, true);
  EXPECT_NE(std::find(parsed.begin(), parsed.end(), 2), parsed.end());
  const auto literal = gguf_->encode("a</s>b", false, false);
  EXPECT_EQ(std::find(literal.begin(), literal.end(), 2), literal.end());
  EXPECT_EQ(gguf_->decode(literal), "a</s>b");
}

TEST_F(Stories, DecodeRoundTrips) {
  for (const char* text : kSamples) {
    EXPECT_EQ(gguf_->decode(gguf_->encode(text, true, false)), text);
    EXPECT_EQ(hf_->decode(hf_->encode(text, false, false)), text);
  }
}

TEST_F(Stories, UsesByteFallbackForUnseenCharacters) {
  const auto ids = gguf_->encode("😀", false, false);
  size_t byte_tokens = 0;
  for (const int32_t id : ids) byte_tokens += gguf_->vocab().types[id] == TokenType::Byte;
  EXPECT_EQ(byte_tokens, 4u);  // F0 9F 98 80
}

TEST_F(Stories, StreamDecoderNeverEmitsBrokenUtf8) {
  for (const char* text : kSamples) {
    const auto ids = gguf_->encode(text, false, false);
    StreamDecoder stream(*gguf_);
    std::string streamed;
    for (const int32_t id : ids) {
      const std::string chunk = stream.push(id);
      EXPECT_TRUE(unicode::is_valid_utf8(chunk)) << text;
      streamed += chunk;
    }
    streamed += stream.flush();
    EXPECT_EQ(streamed, gguf_->decode(ids)) << text;
    EXPECT_EQ(streamed, text);
  }
}

TEST_F(Stories, StreamDecoderCanContinueText) {
  // Not at the start of a text, the dummy-prefix space is a real space.
  const auto ids = gguf_->encode("time", false, false);
  StreamDecoder stream(*gguf_, /*at_text_start=*/false);
  std::string streamed;
  for (const int32_t id : ids) streamed += stream.push(id);
  EXPECT_EQ(streamed + stream.flush(), " time");
}

TEST_F(Stories, StreamDecoderHoldsBackSplitCharacters) {
  const auto ids = gguf_->encode("😀", false, false);
  StreamDecoder stream(*gguf_);
  std::string streamed;
  for (size_t i = 0; i + 1 < ids.size(); ++i) streamed += stream.push(ids[i]);
  EXPECT_EQ(streamed, "");  // the emoji's bytes are pending
  EXPECT_EQ(stream.push(ids.back()), "😀");
  // A character cut short is replaced, never emitted broken.
  StreamDecoder cut(*gguf_, /*at_text_start=*/false);
  EXPECT_EQ(cut.push(ids[1]), "");
  EXPECT_EQ(cut.push(ids[2]), "");
  EXPECT_EQ(cut.flush(), "\xEF\xBF\xBD");
}

}  // namespace
}  // namespace skiff
