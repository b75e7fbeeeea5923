// The server's engine thread on stories260K: requests from other threads
// come back whole and as deltas, a full queue refuses at once, cancel and
// stop free everything; and the HTTP layer's non-blocking take and listener.
#include "server/serving_engine.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <thread>

#include "api/request_fields.h"
#include "kv/prefix_hash.h"
#include "server/generation.h"
#include "stories_model.h"

namespace skiff {
namespace {

class ServingEngineTest : public ::testing::Test {
 protected:
  Model& model_ = testing::stories_model();
  const Tokenizer& tokenizer_ = testing::stories_tokenizer();
  std::vector<int32_t> prompt() const { return tokenizer_.encode("Once upon a time", true, false); }
  static SamplingParams greedy(int max_tokens) {  // EOS ignored: every request runs its length
    SamplingParams p = testing::greedy(max_tokens);
    p.ignore_eos = true;
    return p;
  }
};

// A ServingEngine whose loop runs on a thread of its own while it lives.
struct RunningEngine {
  RunningEngine(Engine& engine, int max_waiting) : serving(engine, max_waiting), thread([this] { serving.run(); }) {}
  ~RunningEngine() {
    serving.stop();
    thread.join();
  }
  ServingEngine serving;
  std::thread thread;
};

TEST_F(ServingEngineTest, OutputsEqualTheEnginesOwnAndDeltasAddUpToThem) {
  Engine offline(model_, tokenizer_);
  offline.add_request(prompt(), greedy(20));
  const std::string expected = offline.run_to_completion()[0].outputs[0].text;

  Engine engine(model_, tokenizer_);
  RunningEngine running(engine, 0);
  Generation gen(running.serving, {prompt(), prompt()}, greedy(20));
  std::string streamed[2];
  std::vector<ResponseChannel::Event> events;
  while (!gen.poll(events)) {
  }
  for (const auto& e : events) streamed[e.prompt] += e.delta.text;
  for (int p = 0; p < 2; ++p) {
    EXPECT_EQ(gen.output(p).outputs[0].text, expected);
    EXPECT_EQ(streamed[p], expected);
  }
}

TEST_F(ServingEngineTest, AFullQueueRefusesAtOnceAndCountsIt) {
  EngineOptions options;
  options.scheduler.max_seqs = 1;
  Engine engine(model_, tokenizer_, options);
  RunningEngine loop(engine, 1);
  ServingEngine& serving = loop.serving;
  Generation running(serving, {prompt()}, greedy(400));
  std::vector<ResponseChannel::Event> events;
  while (events.empty()) running.poll(events);  // it produces tokens: no longer waiting
  Generation waiting(serving, {prompt()}, greedy(400));
  try {
    Generation refused(serving, {prompt()}, greedy(5));
    FAIL() << "a third request should not fit a queue of one";
  } catch (const RequestError& e) {
    EXPECT_EQ(e.status(), 503);
    EXPECT_NE(std::string(e.what()).find("queue is full"), std::string::npos);
  }
  EXPECT_EQ(serving.rejected(), 1);
}

// A cancel does not wait for a step: a request no step has taken leaves the
// queue at once (here no loop runs at all).
TEST_F(ServingEngineTest, CancellingQueuedPromptsFreesTheQueueAtOnce) {
  Engine engine(model_, tokenizer_);
  ServingEngine serving(engine, 2);
  {
    Generation gen(serving, {prompt(), prompt()}, greedy(5));
    EXPECT_EQ(serving.waiting(), 2);
    gen.cancel();
    std::vector<ResponseChannel::Event> events;
    EXPECT_TRUE(gen.poll(events));
    EXPECT_EQ(gen.output(1).outputs[0].finish_reason, FinishReason::kCancelled);
  }
  EXPECT_EQ(serving.waiting(), 0);
  EXPECT_FALSE(engine.has_unfinished());
  Generation again(serving, {prompt(), prompt()}, greedy(5));  // room again
  EXPECT_EQ(serving.waiting(), 2);
}

// More prompts than the queue ever holds can never be admitted: 400, not
// 503's "retry later"; none of them is queued.
TEST_F(ServingEngineTest, MorePromptsThanTheQueueHoldsAreA400) {
  Engine engine(model_, tokenizer_);
  RunningEngine loop(engine, 2);
  try {
    Generation g(loop.serving, {prompt(), prompt(), prompt()}, greedy(5));
    FAIL();
  } catch (const RequestError& e) {
    EXPECT_EQ(e.status(), 400);
    EXPECT_EQ(e.param(), "prompt");
  }
  EXPECT_EQ(loop.serving.waiting(), 0);
  EXPECT_EQ(loop.serving.rejected(), 0);
}

TEST_F(ServingEngineTest, InvalidRequestsAreA400AndQueueNothing) {
  Engine engine(model_, tokenizer_);
  RunningEngine loop(engine, 0);
  ServingEngine& serving = loop.serving;
  SamplingParams too_many = greedy(5);
  too_many.n = 1000;
  try {
    Generation g(serving, {prompt()}, too_many);
    FAIL();
  } catch (const RequestError& e) {
    EXPECT_EQ(e.status(), 400);
  }
  EXPECT_EQ(serving.waiting(), 0);
}

TEST_F(ServingEngineTest, CancelAndStopFreeTheBlocks) {
  Engine engine(model_, tokenizer_);
  RunningEngine loop(engine, 0);
  ServingEngine& serving = loop.serving;
  {
    Generation gen(serving, {prompt()}, greedy(400));
    std::vector<ResponseChannel::Event> events;
    while (events.empty()) gen.poll(events);
  }  // destroyed unfinished: cancelled
  // The metrics are a snapshot after each step: wait for the one after the cancel.
  for (int i = 0; i < 2000 && serving.metrics().requests_cancelled == 0; ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  EXPECT_EQ(serving.metrics().requests_cancelled, 1);
  EXPECT_EQ(serving.metrics().kv_blocks_used, 0);
  EXPECT_EQ(serving.metrics().requests_running, 0);

  Generation left(serving, {prompt()}, greedy(400));
  serving.stop();  // cancels what is in flight
  std::vector<ResponseChannel::Event> events;
  while (!left.poll(events)) {
  }
  EXPECT_EQ(left.output(0).outputs[0].finish_reason, FinishReason::kCancelled);
  EXPECT_THROW(Generation(serving, {prompt()}, greedy(5)), RequestError);
}

// GET /kv/prefix_blocks' source: a snapshot, current by the time a request's
// output arrives (taken after the step, before the outputs go out).
TEST_F(ServingEngineTest, ThePrefixCacheListingIsCurrentWhenTheOutputArrives) {
  Engine engine(model_, tokenizer_);
  RunningEngine running(engine, 0);
  const int block = engine.kv_cache().block_size();
  const PrefixCacheListing empty = running.serving.prefix_cache(100);
  EXPECT_EQ(empty.block_size, block);
  EXPECT_EQ(empty.total_blocks, engine.kv_cache().pool().n_blocks());
  EXPECT_TRUE(empty.hashes.empty());

  std::vector<int32_t> ids;
  for (int i = 0; i < 2 * block + 3; ++i) ids.push_back(10 + 7 * i % 200);  // two full blocks
  Generation gen(running.serving, {ids}, greedy(1));
  std::vector<ResponseChannel::Event> events;
  while (!gen.poll(events)) {
  }
  const std::span<const int32_t> tokens(ids);
  const uint64_t first = prefix_block_hash(kPrefixHashSeed, tokens.first(block));
  const uint64_t second = prefix_block_hash(first, tokens.subspan(block, block));
  const PrefixCacheListing listing = running.serving.prefix_cache(100);
  EXPECT_EQ(listing.hashes, (std::vector<uint64_t>{first, second}));  // released last block first
  EXPECT_EQ(listing.cached_blocks, 2);
  EXPECT_EQ(running.serving.prefix_cache(1).hashes, std::vector<uint64_t>{first});
}

// What the HTTP layer waits by: take() never blocks, and the listener hears
// every push (it posts to the connection's strand instead of a thread waiting).
TEST_F(ServingEngineTest, TakeNeverWaitsAndTheListenerHearsEachPush) {
  Engine engine(model_, tokenizer_);
  RunningEngine running(engine, 0);
  Generation gen(running.serving, {prompt()}, greedy(10));
  std::atomic<int> told = 0;
  gen.on_ready([&] { ++told; });
  std::vector<ResponseChannel::Event> events;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  while (!gen.take(events) && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  std::string text;
  for (const auto& e : events) text += e.delta.text;
  EXPECT_EQ(text, gen.output(0).outputs[0].text);
  EXPECT_GT(told.load(), 0);
}

TEST(RequestFields, NameTheFieldAndKeepDefaultsForNull) {
  SamplingParams p;
  p.temperature = 0.5f;
  const SamplingFieldLimits limits{100, 50};
  EXPECT_TRUE(read_sampling_field("temperature", nullptr, p, limits));
  EXPECT_EQ(p.temperature, 0.5f);
  EXPECT_TRUE(read_sampling_field("max_tokens", nullptr, p, limits));
  EXPECT_EQ(p.max_tokens, 50);
  EXPECT_FALSE(read_sampling_field("user", "x", p, limits));
  try {
    read_sampling_field("stop_token_ids", nlohmann::json::array({5, 100}), p, limits);
    FAIL();
  } catch (const RequestError& e) {
    EXPECT_EQ(e.param(), "stop_token_ids");
    EXPECT_EQ(e.status(), 400);
  }
  EXPECT_THROW(read_sampling_field("top_k", 1e300, p, limits), RequestError);
  EXPECT_THROW(read_sampling_field("seed", -3, p, limits), RequestError);
  EXPECT_THROW(read_sampling_field("n", uint64_t{1} << 40, p, limits), RequestError);
}

}  // namespace
}  // namespace skiff
