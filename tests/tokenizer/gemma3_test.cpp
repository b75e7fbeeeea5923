// Gemma 3's SentencePiece vocabulary (tokenizer.ggml.model "llama", 262,144
// pieces, add_space_prefix false, byte fallback, whitespace runs and HTML tags
// as user-defined pieces) against SentencePiece's own ids
// (data/gemma3_sentencepiece_ids.json, tools/make_gemma3_golden.py). The model
// file is not in shared/models: scripts/fetch-models.sh caches it (real_models.h).
#include <gtest/gtest.h>

#include <filesystem>

#include "real_models.h"
#include "tokenizer/hf_files.h"
#include "tokenizer/tokenizer.h"
#include "tokenizer/vocab_vectors.h"

namespace skiff {
namespace {

TEST(Gemma3Spm, MatchesSentencePiece) {
  const auto path = testing::real_model("gemma-3-270m-q4_k_m.gguf");
  if (!path) GTEST_SKIP() << "no Gemma 3 GGUF: run scripts/fetch-models.sh";
  const std::unique_ptr<Tokenizer> tokenizer = Tokenizer::from_path(*path);
  ASSERT_EQ(tokenizer->n_vocab(), 262144);
  ASSERT_FALSE(tokenizer->vocab().add_space_prefix);
  const auto golden = hf::read_json(std::filesystem::path(SKIFF_SOURCE_DIR) / "tests/tokenizer/data/gemma3_sentencepiece_ids.json");
  for (const auto& entry : golden["cases"]) {
    const std::string text = entry[0];
    const auto ids = tokenizer->encode(text, /*add_special=*/false, /*parse_special=*/false);
    EXPECT_EQ(test::join_ids(ids), test::join_ids(entry[1].get<std::vector<int32_t>>())) << "text: '" << text << "'";
  }
}

}  // namespace
}  // namespace skiff
