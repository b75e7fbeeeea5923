// The library front door: LLM::generate on stories260K.
#include "engine/llm.h"

#include <gtest/gtest.h>

#include "base/error.h"

namespace skiff {
namespace {

const std::string kModelPath = std::string(SKIFF_MODELS_DIR) + "/derived/stories260K-f32.gguf";

LlmOptions small_options() {
  LlmOptions options;
  options.engine.kv_type = KvType::kF32;
  options.engine.max_model_len = 256;
  return options;
}

SamplingParams greedy(int max_tokens) {
  SamplingParams p;
  p.temperature = 0;
  p.max_tokens = max_tokens;
  return p;
}

TEST(Llm, GenerateReturnsOutputsInPromptOrder) {
  LLM llm(kModelPath, small_options());
  const std::vector<std::string> prompts = {"Once upon a time", "The cat", "Lily went"};
  const std::vector<SamplingParams> params = {greedy(12), greedy(5), greedy(8)};
  const std::vector<RequestOutput> outs = llm.generate(prompts, params);
  ASSERT_EQ(outs.size(), 3u);
  for (size_t i = 0; i < prompts.size(); ++i) {
    EXPECT_EQ(outs[i].prompt_token_ids, llm.tokenizer().encode(prompts[i], true, true));
    ASSERT_EQ(outs[i].outputs.size(), 1u);
    EXPECT_LE(outs[i].outputs[0].token_ids.size(), static_cast<size_t>(params[i].max_tokens));
    // Each alone gives the same completion.
    const RequestOutput alone = llm.generate({prompts[i]}, params[i]).at(0);
    EXPECT_EQ(alone.outputs[0].token_ids, outs[i].outputs[0].token_ids);
    EXPECT_EQ(alone.outputs[0].text, outs[i].outputs[0].text);
  }
  EXPECT_FALSE(outs[0].outputs[0].text.empty());
}

TEST(Llm, StreamsDeltasThroughTheCallback) {
  LLM llm(kModelPath, small_options());
  std::string streamed;
  const RequestOutput out =
      llm.generate({"Once upon a time"}, greedy(20), [&](const StreamDelta& d) { streamed += d.text; }).at(0);
  EXPECT_EQ(streamed, out.outputs[0].text);
}

TEST(Llm, ABadPromptQueuesNothing) {
  LLM llm(kModelPath, small_options());
  const std::string too_long(4000, 'a');
  EXPECT_THROW(llm.generate({"Once upon a time", too_long}, greedy(5)), Error);
  EXPECT_FALSE(llm.engine().has_unfinished());
  EXPECT_EQ(llm.engine().kv_cache().pool().n_used(), 0);
  const std::vector<SamplingParams> one = {greedy(5)};
  EXPECT_THROW(llm.generate({"a", "b"}, one), Error);
  EXPECT_THROW(LLM("/nonexistent/model.gguf"), Error);
}

}  // namespace
}  // namespace skiff
