// The scheduler against a small KV pool, without a model: a fake forward pass
// checks, as the model does, that every position a chunk writes was reserved
// and is the sequence's own, and appends a token to each sequence that
// sampled. The scheduler owns the KV: it reserves, forks, commits (lengths
// included) and rolls back rejected drafts.
#include "engine/scheduler.h"

#include <gtest/gtest.h>

#include <memory>
#include <numeric>

#include "base/error.h"

namespace skiff {
namespace {

constexpr int kBlockSize = 4;

PagedKvCache small_pool(int n_blocks, bool prefix_caching = false) {
  return PagedKvCache(KvShape{1, 1, 4}, KvType::kF32, kBlockSize, n_blocks, /*max_seq_len=*/256,
                      prefix_caching ? PrefixCaching::kOn : PrefixCaching::kOff);
}

class SchedulerTest : public ::testing::Test {
 protected:
  Sequence* make_sequence(int prompt_len, int first_token = 1) {
    auto seq = std::make_unique<Sequence>();
    seq->request_id = sequences_.size();
    seq->tokens.resize(prompt_len);
    std::iota(seq->tokens.begin(), seq->tokens.end(), first_token);
    seq->n_prompt = prompt_len;
    sequences_.push_back(std::move(seq));
    return sequences_.back().get();
  }

  // A new sequence of prompt_len tokens, added and run through one step.
  Sequence* start(Scheduler& scheduler, PagedKvCache& kv, int prompt_len) {
    Sequence* seq = make_sequence(prompt_len);
    scheduler.add(seq);
    run_step(scheduler, kv);
    return seq;
  }

  // Schedules one step and plays the forward pass and the sampling.
  ScheduledStep run_step(Scheduler& scheduler, PagedKvCache& kv) {
    ScheduledStep step = scheduler.schedule();
    play_forward(step, kv);
    std::vector<bool> samples;
    for (const ScheduledChunk& chunk : step.chunks) samples.push_back(chunk.samples());
    scheduler.commit(step);
    for (size_t i = 0; i < step.chunks.size(); ++i)
      if (samples[i]) step.chunks[i].seq->tokens.push_back(7);
    return step;
  }

  static void play_forward(const ScheduledStep& step, const PagedKvCache& kv) {
    for (const ScheduledChunk& chunk : step.chunks) {
      const Sequence& seq = *chunk.seq;
      ASSERT_EQ(kv.length(seq.kv_seq), seq.n_computed);
      kv.check_writable(seq.kv_seq, seq.n_computed, seq.n_computed + chunk.n_tokens + chunk.n_drafted);
    }
  }

  std::vector<std::unique_ptr<Sequence>> sequences_;
};

int chunk_of(const ScheduledStep& step, const Sequence* seq) {
  for (const ScheduledChunk& c : step.chunks)
    if (c.seq == seq) return c.n_tokens;
  return 0;
}

TEST_F(SchedulerTest, RejectsABudgetSmallerThanTheSequenceCap) {
  PagedKvCache kv = small_pool(8);
  EXPECT_THROW(Scheduler(SchedulerOptions{.max_batch_tokens = 4, .max_seqs = 8}, kv), Error);
}

TEST_F(SchedulerTest, LongPromptIsChunkedAcrossSteps) {
  PagedKvCache kv = small_pool(64);
  Scheduler scheduler({.max_batch_tokens = 32, .max_seqs = 4}, kv);
  Sequence* seq = make_sequence(100);
  scheduler.add(seq);
  const int expected[] = {32, 32, 32, 4};
  for (int n : expected) {
    ScheduledStep step = run_step(scheduler, kv);
    ASSERT_EQ(step.chunks.size(), 1u);
    EXPECT_EQ(step.chunks[0].n_tokens, n);
  }
  EXPECT_EQ(seq->n_computed, 100);
  EXPECT_EQ(seq->tokens.size(), 101u);  // sampled only after the last chunk
  EXPECT_EQ(chunk_of(run_step(scheduler, kv), seq), 1);  // then decodes
}

TEST_F(SchedulerTest, DecodesComeBeforePromptChunksWithinTheBudget) {
  PagedKvCache kv = small_pool(64);
  Scheduler scheduler({.max_batch_tokens = 16, .max_seqs = 8}, kv);
  Sequence* a = make_sequence(3);
  Sequence* b = make_sequence(3);
  scheduler.add(a);
  scheduler.add(b);
  run_step(scheduler, kv);  // both prompts in one step
  Sequence* c = make_sequence(40);
  scheduler.add(c);
  ScheduledStep step = run_step(scheduler, kv);
  ASSERT_EQ(step.chunks.size(), 3u);
  EXPECT_EQ(step.chunks[0].seq, a);
  EXPECT_EQ(step.chunks[1].seq, b);
  EXPECT_EQ(step.chunks[2].seq, c);
  EXPECT_EQ(chunk_of(step, c), 14);  // what the two decodes left of 16
  EXPECT_EQ(step.n_tokens, 16);
  // Next step: the decodes again first, then c's next chunk.
  step = run_step(scheduler, kv);
  EXPECT_EQ(step.chunks[0].seq, a);
  EXPECT_EQ(chunk_of(step, c), 14);
}

// With a step target, a long prompt's chunks are what the measured step
// times say fits beside the decodes, not the whole token budget.
TEST_F(SchedulerTest, AStepTargetSizesPromptChunksByMeasuredTime) {
  PagedKvCache kv = small_pool(256);
  Scheduler scheduler({.max_batch_tokens = 512, .max_seqs = 4, .step_target_seconds = 0.1}, kv);
  Sequence* a = make_sequence(40);
  scheduler.add(a);
  ScheduledStep step = run_step(scheduler, kv);
  EXPECT_EQ(chunk_of(step, a), 40);  // nothing measured yet: the token budget
  scheduler.observe(step, 0.05);     // 40 tokens in 50 ms: 80 fit
  Sequence* b = make_sequence(900);
  scheduler.add(b);
  step = run_step(scheduler, kv);
  EXPECT_EQ(step.chunks[0].seq, a);
  EXPECT_EQ(step.n_decodes, 1);
  EXPECT_EQ(chunk_of(step, b), 80);
  EXPECT_EQ(step.n_tokens, 81);
  scheduler.observe(step, 0.16);  // over: what would have fit
  EXPECT_EQ(chunk_of(run_step(scheduler, kv), b), 50);  // 80 x 100 / 160 ms
}

TEST_F(SchedulerTest, CapsRunningSequences) {
  PagedKvCache kv = small_pool(64);
  Scheduler scheduler({.max_batch_tokens = 64, .max_seqs = 2}, kv);
  for (int i = 0; i < 3; ++i) scheduler.add(make_sequence(2));
  ScheduledStep step = run_step(scheduler, kv);
  EXPECT_EQ(step.chunks.size(), 2u);
  EXPECT_EQ(scheduler.n_running(), 2);
  EXPECT_EQ(scheduler.n_waiting(), 1);
  scheduler.finish(sequences_[0].get());
  step = run_step(scheduler, kv);
  EXPECT_EQ(chunk_of(step, sequences_[2].get()), 2);  // admitted as soon as a slot freed
}

TEST_F(SchedulerTest, AdmitsWaitingSequencesAsBlocksFreeUp) {
  PagedKvCache kv = small_pool(4);  // 16 tokens
  Scheduler scheduler({.max_batch_tokens = 64, .max_seqs = 4}, kv);
  Sequence* a = make_sequence(14);
  Sequence* b = make_sequence(6);
  scheduler.add(a);
  scheduler.add(b);
  ScheduledStep step = run_step(scheduler, kv);
  EXPECT_EQ(step.chunks.size(), 1u);  // b's 2 blocks are not there
  EXPECT_EQ(scheduler.n_waiting(), 1);
  EXPECT_EQ(b->kv_seq, -1);           // and it holds none while it waits
  scheduler.finish(a);
  EXPECT_EQ(kv.pool().n_used(), 0);
  step = run_step(scheduler, kv);
  EXPECT_EQ(chunk_of(step, b), 6);
}

TEST_F(SchedulerTest, PreemptsTheMostRecentlyAdmittedAndResumesIt) {
  PagedKvCache kv = small_pool(4);  // 16 tokens: two sequences of 8 at most
  Scheduler scheduler({.max_batch_tokens = 64, .max_seqs = 4}, kv);
  Sequence* first = make_sequence(4);
  Sequence* second = make_sequence(4);
  scheduler.add(first);
  scheduler.add(second);
  run_step(scheduler, kv);  // both prompts: one block each
  // Each decode step adds a token; at 8 tokens each, the pool is full.
  int preempted_at = -1;
  for (int step_no = 0; step_no < 12 && preempted_at < 0; ++step_no) {
    ScheduledStep step = run_step(scheduler, kv);
    if (!step.preempted.empty()) {
      ASSERT_EQ(step.preempted.size(), 1u);
      EXPECT_EQ(step.preempted[0], second);
      EXPECT_EQ(chunk_of(step, first), 1);  // the older one keeps decoding
      EXPECT_EQ(chunk_of(step, second), 0);
      preempted_at = step_no;
    }
  }
  ASSERT_GE(preempted_at, 0);
  EXPECT_EQ(second->status, SequenceStatus::kWaiting);
  EXPECT_EQ(second->kv_seq, -1);
  EXPECT_EQ(second->n_computed, 0);
  const size_t second_tokens = second->tokens.size();
  EXPECT_GT(second_tokens, 4u);  // its output so far is kept, to be recomputed

  scheduler.finish(first);
  ScheduledStep step = run_step(scheduler, kv);
  EXPECT_EQ(chunk_of(step, second), static_cast<int>(second_tokens));  // prompt + output again
  EXPECT_EQ(second->tokens.size(), second_tokens + 1);  // and it samples on
}

TEST_F(SchedulerTest, HeadOfTheQueueIsNeverOvertaken) {
  // A long request waits behind a running one; short ones arriving after it
  // would fit, but wait their turn, so the long one cannot starve.
  PagedKvCache kv = small_pool(8);  // 32 tokens
  Scheduler scheduler({.max_batch_tokens = 64, .max_seqs = 8}, kv);
  Sequence* running = start(scheduler, kv, 12);
  Sequence* long_one = make_sequence(24);
  scheduler.add(long_one);
  for (int i = 0; i < 5; ++i) {
    Sequence* short_one = make_sequence(2);
    scheduler.add(short_one);
    ScheduledStep step = run_step(scheduler, kv);
    EXPECT_EQ(chunk_of(step, short_one), 0);
    EXPECT_EQ(chunk_of(step, long_one), 0);
  }
  scheduler.finish(running);
  ScheduledStep step = run_step(scheduler, kv);
  EXPECT_EQ(chunk_of(step, long_one), 24);
}

TEST_F(SchedulerTest, FinishedSequencesReturnEveryBlock) {
  PagedKvCache kv = small_pool(16);
  Scheduler scheduler({.max_batch_tokens = 16, .max_seqs = 4}, kv);
  std::vector<Sequence*> seqs;
  for (int i = 0; i < 6; ++i) {
    seqs.push_back(make_sequence(5 + i));
    scheduler.add(seqs.back());
  }
  for (int i = 0; i < 10; ++i) run_step(scheduler, kv);
  for (Sequence* seq : seqs) scheduler.finish(seq);
  EXPECT_EQ(kv.pool().n_used(), 0);
  EXPECT_EQ(scheduler.n_running(), 0);
  EXPECT_EQ(scheduler.n_waiting(), 0);
}

TEST_F(SchedulerTest, AdmissionReusesCachedPrefixBlocks) {
  PagedKvCache kv = small_pool(16, /*prefix_caching=*/true);
  Scheduler scheduler({.max_batch_tokens = 64, .max_seqs = 4, .prefix_caching = true}, kv);
  Sequence* a = start(scheduler, kv, 10);
  scheduler.finish(a);  // its two full blocks stay cached
  Sequence* b = make_sequence(10);
  scheduler.add(b);
  ScheduledStep step = run_step(scheduler, kv);
  EXPECT_EQ(chunk_of(step, b), 2);  // positions 8 and 9 only
  EXPECT_EQ(step.prefix_query_tokens, 10);
  EXPECT_EQ(step.prefix_hit_tokens, 8);
  // A prompt of exactly two blocks recomputes its last token for logits.
  Sequence* c = make_sequence(8);
  scheduler.add(c);
  step = run_step(scheduler, kv);
  EXPECT_EQ(chunk_of(step, c), 4);
}

TEST_F(SchedulerTest, CommitSetsTheKvLengthWithNComputed) {
  PagedKvCache kv = small_pool(16);
  Scheduler scheduler({.max_batch_tokens = 4, .max_seqs = 4}, kv);
  Sequence* seq = make_sequence(6);
  scheduler.add(seq);
  for (int n_computed : {4, 6, 7}) {
    run_step(scheduler, kv);
    EXPECT_EQ(seq->n_computed, n_computed);
    EXPECT_EQ(kv.length(seq->kv_seq), n_computed);
  }
}

TEST_F(SchedulerTest, AForkSharesTheParentsBlocksAndRuns) {
  PagedKvCache kv = small_pool(16);
  Scheduler scheduler({.max_batch_tokens = 64, .max_seqs = 4}, kv);
  Sequence* parent = make_sequence(6);  // two blocks, the second half full
  parent->slots = 2;                    // one held for its sibling
  scheduler.add(parent);
  run_step(scheduler, kv);
  Sequence* child = make_sequence(0);  // a sibling waits without a copy of the prompt
  scheduler.fork(*parent, *child);
  EXPECT_EQ(child->tokens, std::vector<int32_t>(parent->tokens.begin(), parent->tokens.begin() + 6));
  EXPECT_EQ(child->n_prompt, 6);
  EXPECT_EQ(child->status, SequenceStatus::kRunning);
  EXPECT_EQ(scheduler.n_running(), 2);
  EXPECT_EQ(parent->slots, 1);  // the slot is the child's now
  EXPECT_EQ(child->n_computed, 6);
  EXPECT_EQ(kv.block_table(child->kv_seq), kv.block_table(parent->kv_seq));
  EXPECT_EQ(kv.pool().n_used(), 2);  // shared, not copied
  EXPECT_THROW(scheduler.fork(*parent, *make_sequence(6)), Error);  // no slot left for a third

  child->tokens.push_back(8);  // its own sample from the shared logits
  ScheduledStep step = run_step(scheduler, kv);  // both write into the shared second block
  EXPECT_EQ(chunk_of(step, parent), 1);
  EXPECT_EQ(chunk_of(step, child), 1);
  EXPECT_EQ(kv.pool().n_used(), 3);  // so one of them copied it first
  EXPECT_EQ(kv.block_table(child->kv_seq)[0], kv.block_table(parent->kv_seq)[0]);
  EXPECT_NE(kv.block_table(child->kv_seq)[1], kv.block_table(parent->kv_seq)[1]);
  scheduler.finish(parent);
  scheduler.finish(child);
  EXPECT_EQ(kv.pool().n_used(), 0);
}

TEST_F(SchedulerTest, ADraftThatDoesNotFitLeavesTheStepAndPoolAsTheyWere) {
  PagedKvCache kv = small_pool(2);  // 8 positions
  Scheduler scheduler({.max_batch_tokens = 64, .max_seqs = 4}, kv);
  Sequence* seq = start(scheduler, kv, 3);
  ScheduledStep step = scheduler.schedule();  // the decode at position 3: one block
  ASSERT_EQ(step.chunks.size(), 1u);
  const std::vector<int> blocks = kv.block_table(seq->kv_seq);
  EXPECT_FALSE(scheduler.reserve_draft(step, step.chunks[0], 5));  // 9 positions
  EXPECT_EQ(step.chunks[0].n_drafted, 0);
  EXPECT_EQ(step.n_tokens, 1);
  EXPECT_EQ(kv.block_table(seq->kv_seq), blocks);
  EXPECT_EQ(kv.pool().n_used(), 1);

  EXPECT_TRUE(scheduler.reserve_draft(step, step.chunks[0], 4));  // 8 positions
  EXPECT_EQ(step.chunks[0].n_drafted, 4);
  EXPECT_EQ(step.n_tokens, 5);
  play_forward(step, kv);
}

TEST_F(SchedulerTest, RollbackKeepsAcceptedDraftsAndCachesOnlyTheirFullBlocks) {
  PagedKvCache kv = small_pool(8, /*prefix_caching=*/true);
  Scheduler scheduler({.max_batch_tokens = 64, .max_seqs = 4, .prefix_caching = true}, kv);
  Sequence* seq = make_sequence(3);
  scheduler.add(seq);
  run_step(scheduler, kv);  // tokens 1 2 3 7, computed 3
  ScheduledStep step = scheduler.schedule();
  ASSERT_TRUE(scheduler.reserve_draft(step, step.chunks[0], 6));  // positions 3..9
  play_forward(step, kv);
  scheduler.commit(step);
  EXPECT_EQ(seq->n_computed, 3);  // not before verification
  EXPECT_EQ(kv.length(seq->kv_seq), 10);
  EXPECT_EQ(kv.pool().n_cached(), 0);

  for (int32_t token : {20, 21, 22}) seq->tokens.push_back(token);  // 2 accepted, then a bonus
  scheduler.commit_verified(*seq, 2);
  EXPECT_EQ(seq->n_computed, 6);  // the decode token and 2 drafts
  EXPECT_EQ(kv.length(seq->kv_seq), 6);
  const std::vector<int>& blocks = kv.block_table(seq->kv_seq);
  ASSERT_EQ(blocks.size(), 2u);  // the third block went back
  EXPECT_EQ(kv.pool().n_used(), 2);
  // Positions 4..7 were all written, but only 4 and 5 hold output tokens.
  EXPECT_TRUE(kv.pool().cached_hash(blocks[0]).has_value());
  EXPECT_FALSE(kv.pool().cached_hash(blocks[1]).has_value());
  EXPECT_EQ(kv.pool().n_cached(), 1);
}

}  // namespace
}  // namespace skiff
