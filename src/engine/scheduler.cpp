#include "engine/scheduler.h"

#include <algorithm>

#include "base/error.h"

namespace skiff {

Scheduler::Scheduler(SchedulerOptions options, PagedKvCache& kv)
    : options_(options), step_budget_(options.step_target_seconds), kv_(kv) {
  if (options_.max_seqs < 1) fail("scheduler: max_seqs must be >= 1, not {}", options_.max_seqs);
  if (options_.max_batch_tokens < options_.max_seqs)
    fail("scheduler: max_batch_tokens ({}) must be at least max_seqs ({}), so every running "
         "sequence can decode in one step",
         options_.max_batch_tokens, options_.max_seqs);
}

void Scheduler::add(Sequence* seq) {
  seq->status = SequenceStatus::kWaiting;
  waiting_.push_back(seq);
}

ScheduledStep Scheduler::schedule() {
  ScheduledStep step;
  int budget = options_.max_batch_tokens;
  schedule_running(step, /*decodes=*/true, budget);
  // Prompt chunks get what the token budget leaves, within the step's time.
  const int prefill = step_budget_.prefill_tokens(budget);
  const int held_back = budget - prefill;
  budget = prefill;
  schedule_running(step, /*decodes=*/false, budget);
  // Admitting now would only take the blocks a preempted sequence just gave up.
  if (step.preempted.empty()) admit_waiting(step, budget);
  budget += held_back;
  step.n_tokens = options_.max_batch_tokens - budget;
  for (const ScheduledChunk& chunk : step.chunks) step.n_decodes += chunk.n_tokens == 1 && chunk.samples();
  return step;
}

void Scheduler::observe(const ScheduledStep& step, double seconds) {
  step_budget_.observe(step.n_tokens - step.n_decodes, seconds);
}

void Scheduler::schedule_running(ScheduledStep& step, bool decodes, int& budget) {
  // Indexing, not iterators: preemption pops from the back of running_.
  for (size_t i = 0; i < running_.size() && budget > 0; ++i) {
    Sequence* seq = running_[i];
    const int uncomputed = seq->n_uncomputed();
    if ((uncomputed == 1) != decodes) continue;
    const int n_tokens = std::min(uncomputed, budget);
    if (reserve_or_preempt(step, seq, n_tokens, budget)) {
      step.chunks.push_back({seq, n_tokens});
      budget -= n_tokens;
    }
  }
}

bool Scheduler::reserve_or_preempt(ScheduledStep& step, Sequence* seq, int n_tokens, int& budget) {
  while (!kv_.reserve(seq->kv_seq, seq->n_computed + n_tokens)) {
    const bool self = running_.back() == seq;
    preempt(step, budget);
    if (self) return false;
  }
  return true;
}

void Scheduler::preempt(ScheduledStep& step, int& budget) {
  Sequence* victim = running_.back();
  running_.pop_back();
  // A victim already scheduled this step gives its chunk back.
  auto chunk = std::find_if(step.chunks.begin(), step.chunks.end(),
                            [&](const ScheduledChunk& c) { return c.seq == victim; });
  if (chunk != step.chunks.end()) {
    budget += chunk->n_tokens;
    step.chunks.erase(chunk);
  }
  release_kv(victim);
  victim->status = SequenceStatus::kWaiting;
  waiting_.push_front(victim);
  step.preempted.push_back(victim);
}

void Scheduler::admit_waiting(ScheduledStep& step, int& budget) {
  while (!waiting_.empty() && budget > 0 &&
         running_slots() + waiting_.front()->slots <= options_.max_seqs) {
    Sequence* seq = waiting_.front();
    seq->kv_seq = kv_.create_sequence();
    const int n_total = static_cast<int>(seq->tokens.size());
    // The last token is always computed: its logits pick the next one.
    seq->n_computed = options_.prefix_caching
                          ? kv_.attach_cached_prefix(seq->kv_seq, seq->tokens, n_total - 1)
                          : 0;
    const int n_tokens = std::min(seq->n_uncomputed(), budget);
    if (!kv_.reserve(seq->kv_seq, seq->n_computed + n_tokens)) {
      release_kv(seq);  // first come, first served: nobody overtakes the head
      return;
    }
    waiting_.pop_front();
    seq->status = SequenceStatus::kRunning;
    running_.push_back(seq);
    step.chunks.push_back({seq, n_tokens});
    step.prefix_query_tokens += n_total;
    step.prefix_hit_tokens += seq->n_computed;
    budget -= n_tokens;
  }
}

bool Scheduler::reserve_draft(ScheduledStep& step, ScheduledChunk& chunk, int n_drafted) {
  Sequence& seq = *chunk.seq;
  if (chunk.n_tokens != 1 || seq.n_uncomputed() != 1 || chunk.n_drafted != 0)
    fail("scheduler: drafts extend a decode, but the chunk has {} tokens of {} uncomputed and {} "
         "drafted",
         chunk.n_tokens, seq.n_uncomputed(), chunk.n_drafted);
  if (!kv_.reserve(seq.kv_seq, seq.n_computed + 1 + n_drafted)) return false;
  chunk.n_drafted = n_drafted;
  step.n_tokens += n_drafted;
  return true;
}

void Scheduler::commit(const ScheduledStep& step) {
  for (const ScheduledChunk& chunk : step.chunks) {
    Sequence& seq = *chunk.seq;
    kv_.set_length(seq.kv_seq, seq.n_computed + chunk.n_tokens + chunk.n_drafted);
    if (chunk.n_drafted) continue;  // what it keeps is known once verified
    seq.n_computed += chunk.n_tokens;
    if (options_.prefix_caching) kv_.cache_full_blocks(seq.kv_seq, seq.tokens);
  }
}

void Scheduler::commit_verified(Sequence& seq, int n_accepted) {
  seq.n_computed += 1 + n_accepted;
  kv_.truncate(seq.kv_seq, seq.n_computed);
  if (options_.prefix_caching) kv_.cache_full_blocks(seq.kv_seq, seq.tokens);
}

void Scheduler::fork(Sequence& parent, Sequence& child) {
  if (parent.slots < 2)
    fail("scheduler: a fork needs a running slot its parent holds for it, but the parent holds {}",
         parent.slots);
  child.kv_seq = kv_.fork_sequence(parent.kv_seq);
  child.tokens.assign(parent.tokens.begin(), parent.tokens.begin() + parent.n_computed);
  child.n_prompt = parent.n_prompt;
  child.n_computed = parent.n_computed;
  child.status = SequenceStatus::kRunning;
  running_.push_back(&child);
  --parent.slots;
}

void Scheduler::finish(Sequence* seq) {
  // A sibling still waiting for its fork is in neither queue.
  if (auto it = std::find(running_.begin(), running_.end(), seq); it != running_.end())
    running_.erase(it);
  if (auto it = std::find(waiting_.begin(), waiting_.end(), seq); it != waiting_.end())
    waiting_.erase(it);
  release_kv(seq);
  seq->status = SequenceStatus::kFinished;
}

void Scheduler::release_kv(Sequence* seq) {
  if (seq->kv_seq >= 0) kv_.free_sequence(seq->kv_seq);
  seq->kv_seq = -1;
  seq->n_computed = 0;
}

int Scheduler::running_slots() const {
  int slots = 0;
  for (const Sequence* seq : running_) slots += seq->slots;
  return slots;
}

}  // namespace skiff
