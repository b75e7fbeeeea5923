// Every llama.cpp test vector whose vocabulary is in shared/models must give
// exactly upstream's ids (test-tokenizer-0: add_special off, parse_special off).
#include <gtest/gtest.h>

#include <filesystem>
#include <set>

#include "gguf/gguf.h"
#include "tokenizer/tokenizer.h"
#include "tokenizer/vocab_vectors.h"

namespace skiff {
namespace {

void expect_vectors_match(const Tokenizer& tokenizer, const std::string& vectors_base) {
  const auto vectors = test::read_vocab_vectors(vectors_base + ".inp", vectors_base + ".out");
  ASSERT_GT(vectors.size(), 30u);
  for (const auto& vector : vectors) {
    const auto ids = tokenizer.encode(vector.text, /*add_special=*/false, /*parse_special=*/false);
    EXPECT_EQ(test::join_ids(ids), test::join_ids(vector.ids)) << "text: '" << vector.text << "'";
  }
}

class GgufVocabVectors : public testing::TestWithParam<std::string> {};

TEST_P(GgufVocabVectors, MatchUpstreamIds) {
  const std::string base = test::models_dir() + "/vocab/ggml-vocab-" + GetParam() + ".gguf";
  const auto tokenizer = Tokenizer::from_gguf(gguf::GgufFile(base));
  expect_vectors_match(*tokenizer, base);
}

// Every vocabulary in shared/models/vocab that comes with .inp/.out vectors.
const std::string kVocabsWithVectors[] = {"llama-spm", "phi-3", "gpt-2", "deepseek-coder", "mpt", "bert-bge",
                                          "qwen2", "qwen35", "llama-bpe", "command-r", "gemma-4"};

INSTANTIATE_TEST_SUITE_P(Vocabs, GgufVocabVectors, testing::ValuesIn(kVocabsWithVectors),
                         [](const auto& info) {
                           std::string name = info.param;
                           std::erase(name, '-');
                           return name;
                         });

TEST(GgufVocabVectors, EveryVectorFileIsCovered) {
  // A new .inp/.out pair beside a vocab must be added to the list above.
  const std::set<std::string> covered(std::begin(kVocabsWithVectors), std::end(kVocabsWithVectors));
  for (const auto& entry : std::filesystem::directory_iterator(test::models_dir() + "/vocab")) {
    const std::string name = entry.path().filename().string();
    const std::string prefix = "ggml-vocab-";
    const std::string suffix = ".gguf.inp";
    if (name.size() <= prefix.size() + suffix.size() || !name.ends_with(suffix)) continue;
    const std::string vocab = name.substr(prefix.size(), name.size() - prefix.size() - suffix.size());
    EXPECT_TRUE(covered.count(vocab)) << vocab;
  }
}

// The Llama 3 vocabulary from other files: ollama's Llama 3.2 encoder.json + vocab.bpe.
TEST(LlamaBpeVectors, MatchWithLlama32Files) {
  const std::string dir = test::models_dir() + "/tokenizers/llama3.2";
  const auto tokenizer =
      Tokenizer::from_gpt2_files(dir + "/encoder.json", dir + "/vocab.bpe", PreTokenizer::Llama3);
  expect_vectors_match(*tokenizer, test::models_dir() + "/vocab/ggml-vocab-llama-bpe.gguf");
}

// BPE with byte fallback is lossless: every vector string and a very long word
// decode back exactly (Gemma 4 included: its ▁ become spaces again).
class LosslessBpe : public testing::TestWithParam<std::string> {};

TEST_P(LosslessBpe, DecodeRoundTrips) {
  const std::string base = test::models_dir() + "/vocab/ggml-vocab-" + GetParam() + ".gguf";
  const auto tokenizer = Tokenizer::from_gguf(gguf::GgufFile(base));
  for (const auto& vector : test::read_vocab_vectors(base + ".inp", base + ".out")) {
    EXPECT_EQ(tokenizer->decode(vector.ids), vector.text);
  }
  // One 200k-character word: merging must not be quadratic.
  const std::string long_word(200000, 'a');
  EXPECT_EQ(tokenizer->decode(tokenizer->encode(long_word, false, false)), long_word);
}

INSTANTIATE_TEST_SUITE_P(Vocabs, LosslessBpe, testing::Values("gpt-2", "qwen35", "command-r", "gemma-4"),
                         [](const auto& info) {
                           std::string name = info.param;
                           std::erase(name, '-');
                           return name;
                         });

// The same Llama 2 vocabulary as SentencePiece's own file and as another GGUF.
TEST(LlamaSpmVectors, MatchWithLlama2TokenizerModel) {
  const auto tokenizer = Tokenizer::from_sentencepiece_model(test::models_dir() + "/tokenizers/llama2/tokenizer.model");
  expect_vectors_match(*tokenizer, test::models_dir() + "/vocab/ggml-vocab-llama-spm.gguf");
}

TEST(LlamaSpmVectors, MatchWithLlama2TinyRandomGguf) {
  const auto tokenizer = Tokenizer::from_gguf(gguf::GgufFile(test::models_dir() + "/gguf/llama-2-tiny-random.gguf"));
  expect_vectors_match(*tokenizer, test::models_dir() + "/vocab/ggml-vocab-llama-spm.gguf");
}

}  // namespace
}  // namespace skiff
