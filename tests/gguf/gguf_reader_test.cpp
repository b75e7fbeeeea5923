#include <gtest/gtest.h>

#include "gguf/gguf.h"

namespace skiff::gguf {

TEST(GgufReader, ReadsStories260K) {
  GgufFile f(std::string(SKIFF_MODELS_DIR) + "/derived/stories260K-f32.gguf");
  EXPECT_EQ(f.version(), 3u);
  EXPECT_EQ(f.get_string("general.architecture", ""), "llama");
  EXPECT_EQ(f.get_int("llama.embedding_length", 0), 64);
  EXPECT_EQ(f.get_string_array("tokenizer.ggml.tokens").size(), 512u);
  EXPECT_EQ(f.tensors().size(), 48u);
  const TensorInfo* emb = f.find_tensor("token_embd.weight");
  ASSERT_NE(emb, nullptr);
  EXPECT_EQ(emb->ne, (std::vector<int64_t>{64, 512}));
  EXPECT_EQ(emb->nbytes, 64u * 512u * 4u);
}

}  // namespace skiff::gguf
