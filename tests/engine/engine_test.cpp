// The continuous-batching engine end to end on stories260K: golden greedy
// output, batch-independence of every request's output, stops, streaming,
// cancellation, preemption and the prefix cache.
#include "engine/engine.h"

#include <gtest/gtest.h>

#include <malloc.h>

#include <fstream>
#include <atomic>
#include <map>
#include <thread>
#include <nlohmann/json.hpp>

#include "base/error.h"
#include "model/loader.h"
#include "stories_model.h"

namespace skiff {
namespace {

class EngineTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    model_ = &testing::stories_model();
    tokenizer_ = &testing::stories_tokenizer();
  }

  static Engine make_engine(EngineOptions options = {}) {
    options.kv_type = KvType::kF32;
    return Engine(*model_, *tokenizer_, options);
  }
  static std::vector<int32_t> encode(const std::string& text) {
    return tokenizer_->encode(text, true, false);
  }
  static RequestOutput run_alone(const std::vector<int32_t>& prompt, const SamplingParams& params,
                                 EngineOptions options = {}) {
    Engine engine = make_engine(options);
    engine.add_request(prompt, params);
    std::vector<RequestOutput> outs = engine.run_to_completion();
    EXPECT_EQ(outs.size(), 1u);
    return outs.at(0);
  }

  static Model* model_;
  static const Tokenizer* tokenizer_;
};
Model* EngineTest::model_ = nullptr;
const Tokenizer* EngineTest::tokenizer_ = nullptr;

using testing::greedy;

SamplingParams seeded(uint64_t seed, int max_tokens) {
  SamplingParams p;
  p.temperature = 0.9f;
  p.top_p = 0.95f;
  p.seed = seed;
  p.max_tokens = max_tokens;
  return p;
}

TEST_F(EngineTest, GreedyFromBosMatchesGolden) {
  std::ifstream in(std::string(SKIFF_MODELS_DIR) + "/derived/golden/stories260K.greedy.json");
  const auto golden = nlohmann::json::parse(in)["greedy_ids"].get<std::vector<int32_t>>();
  SamplingParams params = greedy(static_cast<int>(golden.size()));
  params.ignore_eos = true;
  const RequestOutput out = run_alone({1}, params);
  EXPECT_EQ(out.outputs.at(0).token_ids, golden);
  EXPECT_EQ(out.outputs[0].finish_reason, FinishReason::kLength);
}

// Thirty-two requests of mixed prompts, lengths and sampling, run together
// through a small token budget (so prompts are chunked and mixed with
// decodes), produce exactly what each produces alone.
TEST_F(EngineTest, EveryRequestsOutputIsIndependentOfTheBatch) {
  const std::vector<std::string> texts = {"Once upon a time", "The cat", "Lily and Ben went to the park",
                                          "One day, a little bird", "Tom"};
  std::vector<std::vector<int32_t>> prompts;
  std::vector<SamplingParams> params;
  for (int i = 0; i < 32; ++i) {
    prompts.push_back(encode(texts[i % texts.size()]));
    const int max_tokens = 8 + (i * 7) % 40;
    params.push_back(i % 2 ? seeded(100 + i, max_tokens) : greedy(max_tokens));
    if (i % 5 == 0) params.back().repetition_penalty = 1.3f;
    if (i % 7 == 0) params.back().n = 2;
  }
  EngineOptions batched;
  batched.scheduler.max_batch_tokens = 48;
  batched.scheduler.max_seqs = 24;
  Engine engine = make_engine(batched);
  std::map<RequestId, size_t> index;
  for (size_t i = 0; i < prompts.size(); ++i) index[engine.add_request(prompts[i], params[i])] = i;
  std::vector<RequestOutput> together = engine.run_to_completion();
  ASSERT_EQ(together.size(), prompts.size());
  EXPECT_GT(engine.metrics().steps, 0);
  for (const RequestOutput& out : together) {
    const size_t i = index.at(out.request_id);
    const RequestOutput alone = run_alone(prompts[i], params[i]);
    ASSERT_EQ(out.outputs.size(), alone.outputs.size());
    for (size_t c = 0; c < out.outputs.size(); ++c) {
      EXPECT_EQ(out.outputs[c].token_ids, alone.outputs[c].token_ids) << "request " << i;
      EXPECT_EQ(out.outputs[c].text, alone.outputs[c].text) << "request " << i;
    }
  }
  EXPECT_EQ(engine.kv_cache().pool().n_used(), 0);
}

TEST_F(EngineTest, SiblingsOfParallelSamplingMatchSeparateSeededRequests) {
  SamplingParams params = seeded(42, 20);
  params.n = 3;
  const std::vector<int32_t> prompt = encode("Once upon a time there was a");
  const RequestOutput together = run_alone(prompt, params);
  ASSERT_EQ(together.outputs.size(), 3u);
  for (int i = 0; i < 3; ++i) {
    EXPECT_EQ(together.outputs[i].index, i);
    const RequestOutput single = run_alone(prompt, seeded(42 + i, 20));
    EXPECT_EQ(together.outputs[i].token_ids, single.outputs[0].token_ids) << "completion " << i;
  }
  EXPECT_NE(together.outputs[0].token_ids, together.outputs[1].token_ids);
}

TEST_F(EngineTest, PreemptionUnderATinyPoolChangesNoOutput) {
  std::vector<std::vector<int32_t>> prompts;
  std::vector<SamplingParams> params;
  for (int i = 0; i < 8; ++i) {
    prompts.push_back(encode(i % 2 ? "The little dog" : "Once upon a time, in a big forest"));
    params.push_back(i % 2 ? seeded(7 + i, 60) : greedy(60));
  }
  EngineOptions tiny;
  tiny.max_model_len = 128;
  tiny.block_size = 16;
  // Room for three sequences of ~80 tokens (16 blocks of 16): eight must take turns.
  tiny.kv_mem_bytes = 16 * 16 * model_->config().n_layers * model_->config().n_kv_heads *
                      model_->config().head_dim * 2 * sizeof(float);
  Engine engine = make_engine(tiny);
  std::map<RequestId, size_t> index;
  for (size_t i = 0; i < prompts.size(); ++i) index[engine.add_request(prompts[i], params[i])] = i;
  const std::vector<RequestOutput> outs = engine.run_to_completion();
  EXPECT_GT(engine.metrics().preemptions, 0);
  for (const RequestOutput& out : outs) {
    const size_t i = index.at(out.request_id);
    EXPECT_EQ(out.outputs[0].token_ids, run_alone(prompts[i], params[i]).outputs[0].token_ids)
        << "request " << i;
  }
  EXPECT_EQ(engine.kv_cache().pool().n_used(), 0);
}

TEST_F(EngineTest, StreamedDeltasJoinToTheFinalOutput) {
  SamplingParams params = seeded(3, 50);
  params.n = 2;
  params.logprobs = 2;
  Engine engine = make_engine();
  std::map<int, std::string> text;
  std::map<int, std::vector<int32_t>> tokens;
  std::map<int, int> finishes;
  engine.add_request(encode("Once upon a time"), params, [&](const StreamDelta& d) {
    text[d.index] += d.text;
    tokens[d.index].insert(tokens[d.index].end(), d.token_ids.begin(), d.token_ids.end());
    EXPECT_EQ(d.logprobs.size(), d.token_ids.size());
    finishes[d.index] += d.finish_reason.has_value();
  });
  const RequestOutput out = engine.run_to_completion().at(0);
  for (const CompletionOutput& c : out.outputs) {
    EXPECT_EQ(text[c.index], c.text);
    EXPECT_EQ(tokens[c.index], c.token_ids);
    EXPECT_EQ(finishes[c.index], 1);
    ASSERT_EQ(c.logprobs.size(), c.token_ids.size());
    for (size_t t = 0; t < c.logprobs.size(); ++t) {
      EXPECT_EQ(c.logprobs[t].token, c.token_ids[t]);
      EXPECT_LE(c.logprobs[t].logprob, 0.0f);
      EXPECT_EQ(c.logprobs[t].top.size(), 2u);
    }
  }
}

TEST_F(EngineTest, StopStringCutsTheTextAndEndsTheCompletion) {
  const std::vector<int32_t> prompt = encode("Once upon a time");
  const RequestOutput free_run = run_alone(prompt, greedy(60));
  const std::string full = free_run.outputs[0].text;
  ASSERT_GT(full.size(), 30u);
  const std::string stop = full.substr(20, 4);
  SamplingParams params = greedy(60);
  params.stop = {stop};
  const CompletionOutput c = run_alone(prompt, params).outputs[0];
  EXPECT_EQ(c.finish_reason, FinishReason::kStop);
  EXPECT_EQ(c.stop_reason, stop);
  EXPECT_EQ(c.text, full.substr(0, full.find(stop)));
  EXPECT_LT(c.token_ids.size(), free_run.outputs[0].token_ids.size());
}

TEST_F(EngineTest, StopTokenEndsWithoutBeingOutput) {
  const std::vector<int32_t> prompt = encode("Once upon a time");
  const std::vector<int32_t> free_run = run_alone(prompt, greedy(30)).outputs[0].token_ids;
  SamplingParams params = greedy(30);
  params.stop_token_ids = {free_run[6]};
  const CompletionOutput c = run_alone(prompt, params).outputs[0];
  EXPECT_EQ(c.finish_reason, FinishReason::kStop);
  EXPECT_EQ(c.stop_token, free_run[6]);
  const auto first = std::find(free_run.begin(), free_run.end(), free_run[6]);
  EXPECT_EQ(c.token_ids, std::vector<int32_t>(free_run.begin(), first));
}

TEST_F(EngineTest, ContextLimitEndsWithLength) {
  EngineOptions options;
  options.max_model_len = 20;
  const std::vector<int32_t> prompt = encode("Once upon a time");
  SamplingParams params = greedy(100);
  params.ignore_eos = true;
  const CompletionOutput c = run_alone(prompt, params, options).outputs[0];
  EXPECT_EQ(c.finish_reason, FinishReason::kLength);
  EXPECT_EQ(prompt.size() + c.token_ids.size(), 20u);
}

TEST_F(EngineTest, CancellingFromTheStreamFreesEveryBlock) {
  Engine engine = make_engine();
  SamplingParams long_run = greedy(200);
  long_run.ignore_eos = true;
  long_run.n = 2;
  RequestId victim = 0;
  int deltas_after_cancel = 0;
  bool cancelled = false;
  victim = engine.add_request(encode("Once upon a time"), long_run, [&](const StreamDelta& d) {
    if (cancelled && !d.finish_reason) ++deltas_after_cancel;
    if (d.token_ids.size() && !cancelled && engine.kv_cache().pool().n_used() > 2) {
      engine.cancel(victim);
      cancelled = true;
    }
  });
  const RequestId other = engine.add_request(encode("The cat"), greedy(10));
  std::vector<RequestOutput> outs = engine.run_to_completion();
  ASSERT_EQ(outs.size(), 2u);
  for (const RequestOutput& out : outs) {
    const FinishReason expected = out.request_id == other ? FinishReason::kLength : FinishReason::kCancelled;
    for (const CompletionOutput& c : out.outputs) EXPECT_EQ(c.finish_reason, expected);
  }
  EXPECT_LE(deltas_after_cancel, 1);  // the rest of the step it was cancelled in
  EXPECT_EQ(engine.kv_cache().pool().n_used(), 0);
  EXPECT_EQ(engine.metrics().requests_cancelled, 1);
}

TEST_F(EngineTest, CancellingAQueuedRequestFreesEverything) {
  Engine engine = make_engine();
  const RequestId id = engine.add_request(encode("Once upon a time"), greedy(50));
  engine.cancel(id);
  engine.cancel(id + 100);  // unknown: ignored
  std::vector<RequestOutput> outs = engine.run_to_completion();
  ASSERT_EQ(outs.size(), 1u);
  EXPECT_EQ(outs[0].outputs[0].finish_reason, FinishReason::kCancelled);
  EXPECT_TRUE(outs[0].outputs[0].token_ids.empty());
  EXPECT_EQ(engine.kv_cache().pool().n_used(), 0);
}

TEST_F(EngineTest, RequestsAndCancelsFromAnotherThreadWhileStepping) {
  Engine engine = make_engine();
  std::atomic<bool> done_adding = false;
  std::thread producer([&] {
    for (int i = 0; i < 12; ++i) {
      SamplingParams params = greedy(i % 3 == 0 ? 100 : 8);
      params.ignore_eos = true;
      const RequestId id = engine.add_request(encode(i % 2 ? "The cat" : "Once upon a time"), params);
      if (i % 3 == 0) engine.cancel(id);
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    done_adding = true;
  });
  std::vector<RequestOutput> outs;
  while (!done_adding || engine.has_unfinished())
    for (RequestOutput& out : engine.step()) outs.push_back(std::move(out));
  producer.join();
  ASSERT_EQ(outs.size(), 12u);
  for (const RequestOutput& out : outs) {
    const FinishReason reason = *out.outputs[0].finish_reason;
    EXPECT_TRUE(reason == FinishReason::kLength || reason == FinishReason::kCancelled);
    if (reason == FinishReason::kLength) {
      EXPECT_EQ(out.outputs[0].token_ids.size(), 8u);
    }
  }
  EXPECT_EQ(engine.metrics().requests_cancelled, 4);
  EXPECT_EQ(engine.kv_cache().pool().n_used(), 0);
}

TEST_F(EngineTest, ImpossibleRequestsAreRejectedUpFront) {
  EngineOptions options;
  options.max_model_len = 16;
  options.scheduler.max_seqs = 4;
  Engine engine = make_engine(options);
  EXPECT_THROW(engine.add_request({}, greedy(4)), Error);
  EXPECT_THROW(engine.add_request(std::vector<int32_t>(16, 5), greedy(4)), Error);
  EXPECT_THROW(engine.add_request({1, 100000}, greedy(4)), Error);
  SamplingParams many = greedy(4);
  many.n = 5;
  EXPECT_THROW(engine.add_request({1}, many), Error);
  SamplingParams bad = greedy(4);
  bad.top_p = 2;
  EXPECT_THROW(engine.add_request({1}, bad), Error);
  EXPECT_FALSE(engine.has_unfinished());
  // A pool that cannot hold one sequence of max_model_len is refused.
  EngineOptions small;
  small.max_model_len = 256;
  small.kv_mem_bytes = 1;
  EXPECT_THROW(make_engine(small), Error);
  // One larger than the memory available is refused at start, with both figures.
  EngineOptions huge;
  huge.kv_mem_bytes = size_t{1} << 50;
  try {
    make_engine(huge);
    ADD_FAILURE() << "a 1 PiB KV cache was accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("GiB of memory is available"), std::string::npos) << e.what();
  }
}

TEST_F(EngineTest, RepeatedPromptHitsThePrefixCache) {
  EngineOptions options;
  options.block_size = 16;  // whole blocks of this short prompt are cached
  Engine engine = make_engine(options);
  const std::vector<int32_t> prompt =
      encode("Once upon a time, there was a little girl named Lily. She loved to play outside "
             "with her dog in the big green park near her house.");
  ASSERT_GT(prompt.size(), 32u);
  engine.add_request(prompt, greedy(10));
  const RequestOutput first = engine.run_to_completion().at(0);
  engine.add_request(prompt, greedy(10));
  const RequestOutput second = engine.run_to_completion().at(0);
  EXPECT_EQ(first.outputs[0].token_ids, second.outputs[0].token_ids);
  const EngineMetrics m = engine.metrics();
  EXPECT_EQ(m.prefix_cache_queries, 2 * static_cast<int64_t>(prompt.size()));
  EXPECT_EQ(m.prefix_cache_hits, static_cast<int64_t>((prompt.size() - 1) / 16 * 16));
}

TEST_F(EngineTest, MetricsCountTokensRequestsAndLatencies) {
  Engine engine = make_engine();
  for (int i = 0; i < 3; ++i) engine.add_request(encode("The cat"), greedy(5 + i));
  EXPECT_EQ(engine.metrics().requests_waiting, 3);
  engine.step();
  EXPECT_EQ(engine.metrics().requests_running, 3);
  engine.run_to_completion();
  const EngineMetrics m = engine.metrics();
  EXPECT_EQ(m.requests_finished, 3);
  EXPECT_EQ(m.requests_running + m.requests_waiting, 0);
  EXPECT_EQ(m.prompt_tokens, 3 * static_cast<int64_t>(encode("The cat").size()));
  EXPECT_LE(m.generation_tokens, 5 + 6 + 7);
  EXPECT_EQ(m.time_to_first_token.count(), 3);
  EXPECT_EQ(m.time_per_output_token.count(), m.generation_tokens - 3);
  EXPECT_EQ(m.kv_blocks_used, 0);
  EXPECT_GT(m.kv_blocks_total, 0);
}

// Prompt tokens count once computed: not for a request cancelled before its
// first step, once for n completions.
TEST_F(EngineTest, PromptTokensCountWhatWasComputed) {
  Engine engine = make_engine();
  const RequestId cancelled = engine.add_request(encode("The cat"), greedy(5));
  SamplingParams two = greedy(5);
  two.n = 2;
  engine.add_request(encode("The cat sat"), two);
  engine.cancel(cancelled);
  engine.run_to_completion();
  const EngineMetrics m = engine.metrics();
  EXPECT_EQ(m.prompt_tokens, static_cast<int64_t>(encode("The cat sat").size()));
  EXPECT_EQ(m.requests_cancelled, 1);
}

// A request no step has taken leaves at once; one a step took waits for cancel().
TEST_F(EngineTest, WithdrawTakesBackWhatNoStepTook) {
  Engine engine = make_engine();
  SamplingParams two = greedy(5);
  two.n = 2;
  const RequestId id = engine.add_request(encode("The cat"), two);
  const std::optional<RequestOutput> out = engine.withdraw(id);
  ASSERT_TRUE(out);
  EXPECT_EQ(out->request_id, id);
  ASSERT_EQ(out->outputs.size(), 2u);
  EXPECT_EQ(out->outputs[1].finish_reason, FinishReason::kCancelled);
  EXPECT_FALSE(engine.has_unfinished());
  EXPECT_FALSE(engine.withdraw(id));
  const RequestId taken = engine.add_request(encode("The cat"), greedy(5));
  engine.step();
  EXPECT_FALSE(engine.withdraw(taken));
  engine.run_to_completion();
  const EngineMetrics m = engine.metrics();
  EXPECT_EQ(m.requests_finished, 2);
  EXPECT_EQ(m.requests_cancelled, 1);
  EXPECT_EQ(m.prompt_tokens, static_cast<int64_t>(encode("The cat").size()));
}

// A model whose logits are all NaN (NaN weights in a downloaded file) ends each
// request with FinishReason::kError and a message; the engine stays usable.
TEST_F(EngineTest, NanLogitsEndTheRequestWithAnErrorNotTheEngine) {
  ModelWeights weights = model_->weights();
  std::fill(weights.output_norm.begin(), weights.output_norm.end(), NAN);
  Model broken(model_->config(), std::move(weights));
  EngineOptions options;
  options.kv_type = KvType::kF32;
  Engine engine(broken, *tokenizer_, options);
  SamplingParams sampled = seeded(1, 8);
  sampled.n = 2;
  engine.add_request(encode("Once upon a time"), greedy(8));
  engine.add_request(encode("The cat"), sampled);
  const std::vector<RequestOutput> outs = engine.run_to_completion();
  ASSERT_EQ(outs.size(), 2u);
  for (const RequestOutput& out : outs)
    for (const CompletionOutput& c : out.outputs) {
      EXPECT_EQ(c.finish_reason, FinishReason::kError);
      EXPECT_NE(c.error.find("NaN"), std::string::npos) << c.error;
      EXPECT_TRUE(c.token_ids.empty());
    }
  EXPECT_EQ(engine.kv_cache().pool().n_used(), 0);
  EXPECT_FALSE(engine.has_unfinished());
}

// Queued requests hold nothing that scales with the vocabulary (a sampler's
// scratch is 21 bytes per entry): 160 queued completions on a 32k-vocabulary
// model grew the heap by 107 MB when each allocated it at add_request.
TEST(EngineMemory, QueuedCompletionsHoldNoPerVocabularyState) {
  const std::string path = std::string(SKIFF_MODELS_DIR) + "/gguf/llama-2-tiny-random.gguf";
  const std::unique_ptr<Model> model = load_model(path);
  const std::unique_ptr<Tokenizer> tokenizer = Tokenizer::from_path(path);
  const int vocab = model->config().vocab_size;
  ASSERT_GE(vocab, 32000);
  EngineOptions options;
  options.scheduler.max_seqs = 8;
  Engine engine(*model, *tokenizer, options);
  SamplingParams params;
  params.n = 8;
  params.repetition_penalty = 1.1f;  // every scratch array in use once running
  params.max_tokens = 2;
  const int kRequests = 20;
  const size_t before = mallinfo2().uordblks;
  for (int i = 0; i < kRequests; ++i) engine.add_request({1, 2, 3}, params);
  const size_t grown = mallinfo2().uordblks - before;
  EXPECT_LT(grown / (kRequests * params.n), static_cast<size_t>(vocab)) << grown << " bytes";
  EXPECT_EQ(engine.run_to_completion().size(), static_cast<size_t>(kRequests));
}

}  // namespace
}  // namespace skiff
