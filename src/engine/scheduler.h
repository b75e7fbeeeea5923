// The continuous-batching scheduler: every step it picks which tokens of
// which sequences run through the model together, under a token budget and a
// cap on running sequences. It is the one owner of its sequences' KV: it
// reserves every position a step writes (drafts included; copy-on-write of a
// shared block happens there), forks, and after the forward pass commits
// (n_computed and the KV length move together) or rolls back rejected drafts.
// The model only checks that what it writes was reserved.
//
// Order within a step: the decode token of every running sequence first,
// then the next prompt chunk of running sequences still in prefill, then new
// sequences from the waiting queue, first come first served (the queue's head
// is never skipped, so a stream of short requests cannot starve a long one).
// A long prompt is split into chunks across steps, so it never stalls the
// decodes of others: a step's prompt tokens are bounded by the token budget
// and, with a step_target_seconds, by the time they are measured to take. When the pool runs out of blocks the most recently
// admitted running sequence is preempted: its blocks are freed and it returns
// to the head of the waiting queue, to be recomputed. The oldest running
// sequence always fits by itself (the engine caps a sequence at the pool's
// capacity), so every step makes progress.
#pragma once
#include <deque>
#include <vector>

#include "engine/sequence.h"
#include "engine/step_budget.h"
#include "kv/paged_kv_cache.h"

namespace skiff {

struct SchedulerOptions {
  int max_batch_tokens = 2048;  // tokens per forward pass, all sequences together
  int max_seqs = 64;            // running sequences at once
  bool prefix_caching = true;   // reuse cached blocks of a prompt's prefix on admission
  // Seconds a step should last at most, its prompt tokens sized from the
  // steps measured before (StepBudget), so that a long prompt never holds
  // running streams for long between two tokens. 0: tokens alone bound a step.
  double step_target_seconds = 0;
};

// One sequence's part of a step: its next n_tokens uncomputed tokens.
struct ScheduledChunk {
  Sequence* seq = nullptr;
  int n_tokens = 0;
  // Drafted tokens the engine verifies after a decode's one token (set by
  // reserve_draft); such a chunk's n_computed moves in commit_verified.
  int n_drafted = 0;
  // The chunk reaches the sequence's last token, so its logits are sampled.
  bool samples() const { return seq->n_computed + n_tokens == static_cast<int>(seq->tokens.size()); }
};

struct ScheduledStep {
  std::vector<ScheduledChunk> chunks;  // decodes first, in admission order
  std::vector<Sequence*> preempted;    // sent back to waiting during this step
  int n_tokens = 0;
  int n_decodes = 0;  // chunks of one token that samples (the rest of n_tokens: prompt tokens, drafts)
  // Prefix-cache accounting of the sequences admitted this step.
  int prefix_query_tokens = 0;
  int prefix_hit_tokens = 0;
};

class Scheduler {
 public:
  Scheduler(SchedulerOptions options, PagedKvCache& kv);

  // Queues a new sequence at the back of the waiting queue.
  void add(Sequence* seq);
  // Builds the next step, reserving KV blocks for every chunk.
  ScheduledStep schedule();
  // Extends a scheduled decode by n_drafted drafted positions, reserving
  // their KV. False, changing nothing, when the pool has no room: the chunk
  // then decodes plainly (drafts never preempt anyone).
  bool reserve_draft(ScheduledStep& step, ScheduledChunk& chunk, int n_drafted);
  // After the forward pass wrote the step's K/V: sets each sequence's KV
  // length past what was written, advances n_computed of undrafted chunks and
  // offers their newly full blocks to the prefix cache.
  void commit(const ScheduledStep& step);
  // After verifying a drafted chunk: its decode token and the first n_accepted
  // drafts keep their K/V; the rejected positions are dropped from the cache
  // before any block is offered to the prefix cache, so a registered block
  // holds only tokens that were output.
  void commit_verified(Sequence& seq, int n_accepted);
  // Starts child running on parent's KV (shared blocks, copied when either
  // writes into one) at parent's n_computed, with a copy of those tokens;
  // the running slot parent held for it (Sequence::slots) passes to child.
  void fork(Sequence& parent, Sequence& child);
  // Retires a sequence (finished or cancelled) from wherever it is, freeing its blocks.
  void finish(Sequence* seq);
  // How long a step took (schedule to sampled tokens), for sizing the next ones.
  void observe(const ScheduledStep& step, double seconds);

  int n_waiting() const { return static_cast<int>(waiting_.size()); }
  int n_running() const { return static_cast<int>(running_.size()); }
  const SchedulerOptions& options() const { return options_; }

 private:
  void schedule_running(ScheduledStep& step, bool decodes, int& budget);
  void admit_waiting(ScheduledStep& step, int& budget);
  // Reserves KV for a running sequence's chunk, preempting from the back of
  // running until it fits; false if the sequence itself was preempted.
  bool reserve_or_preempt(ScheduledStep& step, Sequence* seq, int n_tokens, int& budget);
  void preempt(ScheduledStep& step, int& budget);
  void release_kv(Sequence* seq);
  int running_slots() const;

  SchedulerOptions options_;
  StepBudget step_budget_;
  PagedKvCache& kv_;
  std::deque<Sequence*> waiting_;
  std::vector<Sequence*> running_;  // in admission order
};

}  // namespace skiff
