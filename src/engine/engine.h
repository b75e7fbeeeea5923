// The continuous-batching engine: requests come in at any time; every step()
// the scheduler picks a ragged batch (decodes of running sequences, prompt
// chunks of new ones), the model runs it in one forward pass, and each
// sequence that reached its last token samples its next one with its own
// sampler and random stream, so its output does not depend on the batch.
// Finished sequences leave at once and free their KV blocks. With
// speculation, a decoding sequence's step carries up to k drafted tokens,
// verified in the same forward pass (engine/speculative.h); rejected
// positions are rolled back from the KV caches.
#pragma once
#include <cstddef>
#include <memory>
#include <atomic>
#include <mutex>
#include <optional>
#include <span>
#include <unordered_map>
#include <vector>

#include "base/timer.h"
#include "engine/logits_processor.h"
#include "engine/metrics.h"
#include "engine/output_text.h"
#include "engine/proposer.h"
#include "engine/request.h"
#include "engine/sampler.h"
#include "engine/sampling_params.h"
#include "engine/scheduler.h"
#include "engine/sequence.h"
#include "engine/speculative.h"
#include "engine/structured_output.h"
#include "kv/paged_kv_cache.h"
#include "model/model.h"
#include "tokenizer/tokenizer.h"

namespace skiff {

struct EngineOptions {
  SchedulerOptions scheduler;
  KvType kv_type = KvType::kF16;
  int block_size = 16;
  // KV pool size, mapped when the engine starts (address space only) and
  // committed page by page as its blocks are first written (see commit_kv_memory). 0: room for max_seqs
  // sequences of max_model_len tokens, but at most a quarter of the memory
  // available and 4 GiB, and at least one full sequence.
  size_t kv_mem_bytes = 0;
  // Prompt + output tokens of one sequence at most. 0: the model's context.
  int max_model_len = 0;
  // Speculative decoding (off by default). The draft model's KV pool gets
  // kv_mem_bytes scaled by its bytes per token, or the same default.
  SpeculationOptions speculation;
  // Set: turns on the kernels' batch-invariant mode (kernels/matmul/matmul.h) for the
  // process, so that weights as stored (AVX2, --mmap, shapes that are not
  // whole panels) also give a sequence the same logits in any batch, at the
  // cost of their prefill speed. Panels are invariant without it.
  bool batch_invariant = false;
  // Structured outputs: where the grammar allows one continuation only, its
  // tokens are appended without sampling and computed with the next step's
  // forward pass (jump-forward). Not for requests that ask for logprobs.
  bool jump_forward = true;
};

class Engine {
 public:
  // The model and tokenizer must outlive the engine.
  Engine(Model& model, const Tokenizer& tokenizer, EngineOptions options = {});

  // Queues a request. Throws Error, queuing nothing, when the parameters are
  // invalid or the request could never fit (prompt empty or longer than
  // max_model_len, n above max_seqs). on_delta, if set, gets each step's new
  // text and tokens of each completion. Safe to call from any thread.
  RequestId add_request(std::vector<int32_t> prompt, const SamplingParams& params,
                        StreamCallback on_delta = {});
  // Stops a request at the next step boundary and frees its blocks; its
  // completions finish with FinishReason::kCancelled. Unknown or finished ids
  // are ignored. Safe to call from any thread, and from on_delta.
  void cancel(RequestId id);
  // A request no step has taken yet leaves at once, without waiting for the
  // step in progress: its cancelled output (no deltas are emitted). nullopt,
  // changing nothing, once a step has taken it (cancel() then). Safe to call
  // from any thread.
  std::optional<RequestOutput> withdraw(RequestId id);

  // Runs one scheduler step (one forward pass). Returns the requests that
  // finished during it, cancelled ones included.
  std::vector<RequestOutput> step();
  // Steps until every queued request has finished.
  std::vector<RequestOutput> run_to_completion();
  // Queued or running requests remain. Safe to call from any thread.
  bool has_unfinished() const { return n_unfinished_.load() > 0; }

  // Touches every page of the KV pool now. Otherwise the kernel zeroes each
  // page when a step first writes it: a start that is seconds faster for a
  // large pool, and a footprint of what is used. Benchmarks call this before
  // timing, so that no timed step pays for first use.
  void commit_kv_memory() { kv_.prefault(); }

  // A snapshot, taken on the thread that runs step().
  EngineMetrics metrics() const;
  const PagedKvCache& kv_cache() const { return kv_; }
  int max_model_len() const { return max_model_len_; }
  const Model& model() const { return model_; }

 private:
  struct Request;
  // One completion: the Sequence the scheduler schedules, and what the
  // engine keeps beside it. Being the sequence itself, it is what each
  // scheduled chunk carries (completion_of), with no lookup.
  struct Completion : Sequence {
    Request* request = nullptr;   // the request it belongs to, which owns it
    Sampler sampler;
    OutputText text;
    CompletionOutput result;      // what the request returns for it
    bool awaits_fork = false;     // a sibling not yet forked from completion 0
    double last_token_time = 0;   // seconds since the engine started
    Draft draft;                  // this step's proposal (tokens empty: none)
    int draft_length = 0;         // how long its drafts may be now (draft_length.h; 0: the request's k)
    VerifyScratch verify;
    // Constraints on its tokens (null: none), and its row of logits after them.
    std::unique_ptr<LogitsProcessors> processors;
    std::vector<float> processed;
  };
  struct Request {
    RequestId id = 0;
    SamplingParams params;
    StreamCallback on_delta;
    std::vector<std::unique_ptr<Completion>> completions;
    double arrival_time = 0;
    bool produced_token = false;
    bool prompt_counted = false;  // in metrics_.prompt_tokens
    int n_unfinished = 0;
  };
  // One sequence sampling from its rows of the step's logits: one row, or
  // 1 + its draft's tokens when it verifies a draft.
  struct SampleJob {
    Completion* completion;
    const float* logits;
    const Draft* draft = nullptr;  // set when verifying
    std::vector<int32_t> tokens;   // to output, in order
    std::vector<TokenLogprob> logprobs;
    int n_accepted = 0;            // drafted tokens accepted
    std::string error;  // sampling failed: the completion ends with FinishReason::kError
  };

  // The completion a chunk schedules: every sequence the engine hands its
  // scheduler (add, fork) is a Completion.
  static Completion& completion_of(const ScheduledChunk& chunk) {
    return static_cast<Completion&>(*chunk.seq);
  }
  void take_pending(std::vector<RequestOutput>& finished);
  ScheduledStep schedule_step();
  // Asks the proposer for drafts of the step's speculating decodes and
  // reserves their KV; marks their chunks.
  void propose_drafts(ScheduledStep& step);
  int request_k(const Completion& c) const;
  int draft_budget(const Completion& c) const;
  void run_forward(const ScheduledStep& step);
  std::vector<SampleJob> plan_sampling(const ScheduledStep& step);
  // The prompt of completion 0 is in: its siblings fork its KV and sample
  // from the same logits.
  void fork_siblings(Completion& first, const float* logits, std::vector<SampleJob>& jobs);
  void sample(std::span<SampleJob> jobs);
  void sample_job(SampleJob& job);
  void apply(SampleJob& job, std::vector<RequestOutput>& finished);
  // Outputs one token; false when it finished the completion.
  bool output_token(Request& request, Completion& c, int32_t token, TokenLogprob* logprob,
                    StreamDelta& delta, std::vector<RequestOutput>& finished);
  // Tokens the grammar forces after this step's, output without sampling.
  bool jump_forward(Request& request, Completion& c, StreamDelta& delta, std::vector<RequestOutput>& finished);
  // Cuts a drafted continuation where the completion's grammar refuses it, or
  // before a token after which it would jump forward.
  void trim_draft_to_grammar(Completion& c);
  void count_verification(const SampleJob& job);
  void observe_latency(Request& request, Completion& c);  // a token is output now
  void finish(Request& request, Completion& c, FinishReason reason, StreamDelta& delta,
              std::vector<RequestOutput>& finished);
  void cancel_now(RequestId id, std::vector<RequestOutput>& finished);
  void emit(Request& request, const StreamDelta& delta);
  double now() const;

  Model& model_;
  const Tokenizer& tokenizer_;
  std::vector<int32_t> end_tokens_;  // the vocabulary's end-of-generation ids, masked before min_tokens
  int max_model_len_;
  PagedKvCache kv_;
  Scheduler scheduler_;
  std::shared_ptr<Proposer> proposer_;  // nullptr: no speculation
  int spec_k_ = 0;
  int spec_step_tokens_ = 0;
  bool jump_forward_ = true;
  GrammarCache grammars_;
  EngineMetrics metrics_;
  Timer clock_;
  std::unordered_map<RequestId, std::unique_ptr<Request>> requests_;
  std::vector<float> logits_;  // [rows that sample, vocab], reused every step

  // Requests and cancellations from other threads, taken at each step's start.
  mutable std::mutex pending_mutex_;
  std::atomic<int> n_unfinished_ = 0;  // requests added and not yet finished
  RequestId next_id_ = 1;
  std::vector<std::unique_ptr<Request>> pending_requests_;
  std::vector<RequestId> pending_cancels_;
  int64_t pending_withdrawn_ = 0;  // withdrawn since the last step, for metrics_
};

}  // namespace skiff
