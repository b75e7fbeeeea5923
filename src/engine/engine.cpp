#include "engine/engine.h"

#include <time.h>

#include <algorithm>

#include "base/byte_size.h"
#include "base/error.h"
#include "engine/draft_length.h"
#include "engine/logprobs.h"
#include "kernels/matmul/matmul.h"
#include "model/parallel_tokens.h"

namespace skiff {
namespace {

constexpr size_t kDefaultKvCap = size_t{4} << 30;

// The calling thread's CPU time: what it ran, not what it waited for a core
// (StepBudget measures steps by it).
double thread_cpu_seconds() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

int resolve_max_model_len(const Model& model, int requested) {
  const int context = model.config().max_ctx;
  if (requested < 0) fail("engine: max_model_len must be >= 0, not {}", requested);
  return requested == 0 ? context : requested;
}

// The default pool: every running sequence at full length, within a quarter
// of the free memory and 4 GiB, but never less than one full sequence.
size_t default_kv_bytes(const EngineOptions& o, size_t bytes_per_token, int max_model_len) {
  const size_t one_sequence = bytes_per_token * (max_model_len + o.block_size);
  const size_t all_sequences = one_sequence * o.scheduler.max_seqs;
  const size_t available = available_memory_bytes();
  const size_t cap = std::min(available ? available / 4 : all_sequences, kDefaultKvCap);
  return std::max(one_sequence, std::min(all_sequences, cap));
}

// The pool's pages are touched lazily: one that would not fit beside the
// loaded weights is refused now, not killed mid-request when a step first
// writes its last pages.
void check_fits_in_memory(size_t bytes, const char* what) {
  const size_t available = available_memory_bytes();
  if (available && bytes > available)
    fail("{} needs {:.2f} GiB but {:.2f} GiB of memory is available (MemAvailable, after loading the "
         "weights): lower --kv-mem, --max-seqs or --max-model-len",
         what, bytes / 1073741824.0, available / 1073741824.0);
}

PagedKvCache make_kv(const Model& model, const EngineOptions& o, int max_model_len) {
  const ModelConfig& c = model.config();
  const KvShape shape{c.n_layers, c.n_kv_heads, c.head_dim};
  const size_t bytes =
      o.kv_mem_bytes ? o.kv_mem_bytes
                     : default_kv_bytes(o, PagedKvCache::bytes_per_token(shape, o.kv_type), max_model_len);
  check_fits_in_memory(bytes, "the KV cache");
  PagedKvCache kv = PagedKvCache::with_memory(shape, o.kv_type, o.block_size, bytes, max_model_len,
                                              o.scheduler.prefix_caching ? PrefixCaching::kOn : PrefixCaching::kOff);
  if (kv.capacity_tokens() < max_model_len)
    fail("the KV cache holds {} tokens ({:.1f} MiB), less than one sequence of max_model_len {}: "
         "give it more memory or lower max_model_len",
         kv.capacity_tokens(), kv.bytes() / 1048576.0, max_model_len);
  return kv;
}

// The draft's pool holds as many tokens as the target's would by default.
DraftKvOptions draft_kv_options(const EngineOptions& o, const Model& target, int max_model_len) {
  DraftKvOptions kv{o.kv_type, o.block_size, 0, max_model_len};
  const Model* draft = o.speculation.draft;
  if (o.speculation.method != SpecMethod::kDraft || !draft) return kv;
  const ModelConfig& t = target.config();
  const ModelConfig& d = draft->config();
  const size_t target_bytes = PagedKvCache::bytes_per_token({t.n_layers, t.n_kv_heads, t.head_dim}, o.kv_type);
  const size_t draft_bytes = PagedKvCache::bytes_per_token({d.n_layers, d.n_kv_heads, d.head_dim}, o.kv_type);
  kv.bytes = o.kv_mem_bytes
                 ? static_cast<size_t>(static_cast<double>(o.kv_mem_bytes) * draft_bytes / target_bytes)
                 : default_kv_bytes(o, draft_bytes, max_model_len);
  kv.bytes = std::max(kv.bytes, draft_bytes * o.block_size);
  check_fits_in_memory(kv.bytes, "the draft model's KV cache");
  return kv;
}

Sampler sampler_for(const SamplingParams& params, int index, int32_t vocab_size,
                    std::span<const int32_t> end_tokens) {
  SamplingParams own = params;
  if (own.seed) *own.seed += index;  // siblings draw different, reproducible streams
  return Sampler(own, vocab_size, end_tokens);
}


}  // namespace

Engine::Engine(Model& model, const Tokenizer& tokenizer, EngineOptions options)
    : model_(model),
      tokenizer_(tokenizer),
      end_tokens_(tokenizer.end_of_generation_ids()),
      max_model_len_(resolve_max_model_len(model, options.max_model_len)),
      kv_(make_kv(model, options, max_model_len_)),
      scheduler_(options.scheduler, kv_),
      proposer_(make_proposer(options.speculation, model,
                              draft_kv_options(options, model, max_model_len_))),
      spec_k_(options.speculation.k),
      spec_step_tokens_(options.speculation.step_tokens),
      jump_forward_(options.jump_forward),
      grammars_(tokenizer) {
  model_.set_context_length(max_model_len_);
  if (options.batch_invariant) set_batch_invariant(true);
}

RequestId Engine::add_request(std::vector<int32_t> prompt, const SamplingParams& params,
                              StreamCallback on_delta) {
  params.validate();
  const int32_t vocab = model_.config().vocab_size;
  if (prompt.empty()) fail("the prompt is empty (no tokens)");
  if (static_cast<int>(prompt.size()) >= max_model_len_)
    fail("the prompt has {} tokens, but max_model_len {} leaves no room for output", prompt.size(),
         max_model_len_);
  for (int32_t t : prompt)
    if (t < 0 || t >= vocab) fail("prompt token id {} is outside the vocabulary of {}", t, vocab);
  if (params.n > scheduler_.options().max_seqs)
    fail("n = {} completions exceed max_seqs {}", params.n, scheduler_.options().max_seqs);
  for (auto [t, bias] : params.logit_bias)
    if (t < 0 || t >= vocab)
      throw FieldError("logit_bias", fmt::format("logit_bias names token id {}, outside the vocabulary of {}", t, vocab));
  for (int32_t t : params.allowed_token_ids)
    if (t < 0 || t >= vocab)
      throw FieldError("allowed_token_ids",
                       fmt::format("allowed_token_ids names token id {}, outside the vocabulary of {}", t, vocab));
  // Compiled on the caller's thread: a schema that cannot be enforced is the caller's error.
  std::shared_ptr<const grammar::CompiledGrammar> grammar = grammars_.get(params.structured_outputs);
  const bool constrained = grammar || !params.logit_bias.empty() || !params.allowed_token_ids.empty() ||
                           !params.bad_words.empty();

  auto request = std::make_unique<Request>();
  request->params = params;
  request->on_delta = std::move(on_delta);
  request->arrival_time = now();
  request->n_unfinished = params.n;
  for (int i = 0; i < params.n; ++i) {
    auto c = std::make_unique<Completion>(
        Completion{Sequence{}, request.get(), sampler_for(params, i, vocab, end_tokens_),
                   OutputText(tokenizer_, params.stop, params.min_tokens, !params.skip_special_tokens), {}, i > 0,
                   0, {}, {}, {}, {}, {}});
    c->index = c->result.index = i;
    if (constrained) c->processors = std::make_unique<LogitsProcessors>(params, tokenizer_, grammar);
    request->completions.push_back(std::move(c));
  }
  // One copy of the prompt while the request waits: its siblings take theirs
  // when they fork from the first (Scheduler::fork), once it has run.
  request->completions[0]->n_prompt = static_cast<int>(prompt.size());
  request->completions[0]->tokens = std::move(prompt);
  request->completions[0]->slots = params.n;

  std::lock_guard lock(pending_mutex_);
  request->id = next_id_++;
  for (auto& c : request->completions) c->request_id = request->id;
  pending_requests_.push_back(std::move(request));
  ++n_unfinished_;
  return pending_requests_.back()->id;
}

void Engine::cancel(RequestId id) {
  std::lock_guard lock(pending_mutex_);
  pending_cancels_.push_back(id);
}

std::optional<RequestOutput> Engine::withdraw(RequestId id) {
  std::unique_ptr<Request> request;
  {
    std::lock_guard lock(pending_mutex_);
    const auto it = std::ranges::find_if(pending_requests_, [&](const auto& r) { return r->id == id; });
    if (it == pending_requests_.end()) return std::nullopt;
    request = std::move(*it);
    pending_requests_.erase(it);
    ++pending_withdrawn_;
    --n_unfinished_;
  }
  RequestOutput out;
  out.request_id = id;
  const std::span<const int32_t> prompt = request->completions[0]->prompt();
  out.prompt_token_ids.assign(prompt.begin(), prompt.end());
  for (auto& c : request->completions) {
    c->result.finish_reason = FinishReason::kCancelled;
    out.outputs.push_back(std::move(c->result));
  }
  return out;
}

std::vector<RequestOutput> Engine::step() {
  std::vector<RequestOutput> finished;
  take_pending(finished);
  const Timer timer;
  const double cpu_start = thread_cpu_seconds();
  ScheduledStep step = schedule_step();
  if (step.chunks.empty()) return finished;
  if (proposer_) propose_drafts(step);
  run_forward(step);
  scheduler_.commit(step);
  std::vector<SampleJob> jobs = plan_sampling(step);
  sample(jobs);
  for (SampleJob& job : jobs) apply(job, finished);
  scheduler_.observe(step, StepBudget::step_seconds(timer.seconds(), thread_cpu_seconds() - cpu_start));
  return finished;
}

std::vector<RequestOutput> Engine::run_to_completion() {
  std::vector<RequestOutput> finished;
  while (has_unfinished())
    for (RequestOutput& out : step()) finished.push_back(std::move(out));
  return finished;
}

void Engine::take_pending(std::vector<RequestOutput>& finished) {
  std::vector<std::unique_ptr<Request>> requests;
  std::vector<RequestId> cancels;
  {
    std::lock_guard lock(pending_mutex_);
    requests.swap(pending_requests_);
    cancels.swap(pending_cancels_);
    metrics_.requests_finished += pending_withdrawn_;
    metrics_.requests_cancelled += pending_withdrawn_;
    pending_withdrawn_ = 0;
  }
  for (auto& request : requests) {
    scheduler_.add(request->completions[0].get());
    const RequestId id = request->id;
    requests_.emplace(id, std::move(request));
  }
  for (RequestId id : cancels) cancel_now(id, finished);
}

ScheduledStep Engine::schedule_step() {
  ScheduledStep step = scheduler_.schedule();
  metrics_.preemptions += static_cast<int64_t>(step.preempted.size());
  metrics_.prefix_cache_queries += step.prefix_query_tokens;
  metrics_.prefix_cache_hits += step.prefix_hit_tokens;
  if (proposer_)
    for (const Sequence* seq : step.preempted) proposer_->forget(*seq);
  return step;
}

int Engine::request_k(const Completion& c) const {
  const int asked = c.sampler.params().speculative_tokens;
  return asked < 0 ? spec_k_ : std::min(spec_k_, asked);
}

// Drafted tokens worth asking for: the sequence's draft length now, within
// what max_tokens and max_model_len leave after this step's one sure token.
int Engine::draft_budget(const Completion& c) const {
  const SamplingParams& params = c.sampler.params();
  const int output_left = params.max_tokens - static_cast<int>(c.result.token_ids.size()) - 1;
  const int context_left = max_model_len_ - static_cast<int>(c.tokens.size());
  const int length = c.draft_length > 0 ? c.draft_length : request_k(c);
  return std::max(0, std::min({length, output_left, context_left}));
}

void Engine::propose_drafts(ScheduledStep& step) {
  // Decodes only; not while siblings wait to fork this sequence's KV.
  auto drafting = [](const ScheduledChunk& chunk) {
    return chunk.n_tokens == 1 && chunk.seq->n_uncomputed() == 1 && chunk.seq->slots == 1;
  };
  std::vector<Completion*> candidates;
  std::vector<int> wanted;
  for (ScheduledChunk& chunk : step.chunks) {
    if (!drafting(chunk)) continue;
    Completion& c = completion_of(chunk);
    c.draft.tokens.clear();
    candidates.push_back(&c);
    wanted.push_back(draft_budget(c));
  }
  const int budget = std::min(step_draft_budget(step.n_tokens, spec_k_, spec_step_tokens_),
                              scheduler_.options().max_batch_tokens - step.n_tokens);
  const std::vector<int> lengths = share_draft_budget(wanted, budget);
  std::vector<Draft*> drafts;
  for (size_t i = 0; i < candidates.size(); ++i) {
    if (lengths[i] == 0) continue;
    Completion& c = *candidates[i];
    c.draft.max_tokens = lengths[i];
    c.draft.seq = &c;
    c.draft.params = &c.sampler.params();
    drafts.push_back(&c.draft);
  }
  if (drafts.empty()) return;
  proposer_->propose(drafts);
  for (ScheduledChunk& chunk : step.chunks) {
    if (!drafting(chunk)) continue;
    Completion& c = completion_of(chunk);
    trim_draft_to_grammar(c);
    if (c.draft.tokens.empty()) continue;
    if (!scheduler_.reserve_draft(step, chunk, static_cast<int>(c.draft.tokens.size()))) {
      // No room in the pool: decode plainly; the drafter forgets its guesses.
      c.draft.tokens.clear();
      proposer_->rollback(c, static_cast<int>(c.tokens.size()));
    }
  }
}

void Engine::run_forward(const ScheduledStep& step) {
  Batch batch;
  for (const ScheduledChunk& chunk : step.chunks) {
    const Sequence& seq = *chunk.seq;
    const auto first = seq.tokens.begin() + seq.n_computed;
    batch.tokens.insert(batch.tokens.end(), first, first + chunk.n_tokens);
    const int n_drafted = chunk.n_drafted;
    if (n_drafted) {
      const std::vector<int32_t>& drafted = completion_of(chunk).draft.tokens;
      batch.tokens.insert(batch.tokens.end(), drafted.begin(), drafted.end());
    }
    const int n_new = chunk.n_tokens + n_drafted;
    batch.seqs.push_back({seq.kv_seq, seq.n_computed, n_new, chunk.samples() ? 1 + n_drafted : 0});
    const int64_t n = n_new;
    metrics_.attended_positions += n * seq.n_computed + n * (n + 1) / 2;
  }
  logits_.resize(static_cast<size_t>(batch.n_logits()) * model_.config().vocab_size);
  Timer timer;
  model_.forward(batch, kv_, logits_.data());
  metrics_.forward_seconds += timer.seconds();
  metrics_.steps += 1;
  metrics_.step_tokens += step.n_tokens;
}

std::vector<Engine::SampleJob> Engine::plan_sampling(const ScheduledStep& step) {
  std::vector<SampleJob> jobs;
  const size_t vocab = model_.config().vocab_size;
  size_t row = 0;
  for (const ScheduledChunk& chunk : step.chunks) {
    // Mid-prompt: no logits. (A drafted chunk is committed only once verified.)
    if (chunk.seq->n_uncomputed() != 0 && !chunk.n_drafted) continue;
    Completion& c = completion_of(chunk);
    const float* logits = logits_.data() + row * vocab;
    row += 1 + chunk.n_drafted;
    jobs.push_back({&c, logits, chunk.n_drafted ? &c.draft : nullptr, {}, {}, 0, {}});
    if (c.index != 0) continue;
    fork_siblings(c, logits, jobs);
    // The prompt counts once it has been computed (vLLM counts it at its
    // first token), never for a request cancelled before, nor again after a
    // preemption.
    if (!c.request->prompt_counted) metrics_.prompt_tokens += c.n_prompt;
    c.request->prompt_counted = true;
  }
  return jobs;
}

void Engine::fork_siblings(Completion& first, const float* logits, std::vector<SampleJob>& jobs) {
  for (auto& sibling : first.request->completions) {
    if (!sibling->awaits_fork) continue;
    sibling->awaits_fork = false;
    scheduler_.fork(first, *sibling);
    jobs.push_back({sibling.get(), logits, nullptr, {}, {}, 0, {}});
  }
}

void Engine::sample(std::span<SampleJob> jobs) {
  const int32_t vocab = model_.config().vocab_size;
  // Each job has its own sampler, so the rows sample in parallel, one per "token".
  for_each_token(static_cast<int>(jobs.size()), vocab, [&](int i) {
    try {
      sample_job(jobs[i]);
    } catch (const Error& e) {  // this completion's failure, not the batch's
      jobs[i].error = e.what();
    }
  });
}

void Engine::trim_draft_to_grammar(Completion& c) {
  GrammarProcessor* grammar = c.processors ? c.processors->grammar() : nullptr;
  if (!grammar || c.draft.tokens.empty()) return;
  // A refused token would be rejected at verification: it and what follows cost positions for nothing.
  // A token after which the grammar forces tokens goes too: plain decoding jumps forward there,
  // so the rows after it would verify the draft in a context plain decoding never has (greedy
  // output would change); the step's own token takes its place, and the jump follows.
  const bool jumps = jump_forward_ && !c.sampler.params().logprobs;
  size_t kept = 0, accepted = 0;
  try {
    while (kept < c.draft.tokens.size() && grammar->try_accept(c.draft.tokens[kept])) {
      ++accepted;
      if (jumps && !grammar->forced_tokens().empty()) break;
      ++kept;
    }
  } catch (const Error&) {
    kept = 0;  // a grammar past its limits: no draft; the next mask fails this completion alone
  }
  grammar->rollback(static_cast<int>(accepted));
  if (kept == c.draft.tokens.size()) return;
  c.draft.tokens.resize(kept);
  if (!c.draft.probs.empty()) c.draft.probs.resize(kept * static_cast<size_t>(model_.config().vocab_size));
  if (proposer_) proposer_->rollback(c, static_cast<int>(c.tokens.size()) + static_cast<int>(kept));
}

void Engine::sample_job(SampleJob& job) {
  Completion& c = *job.completion;
  const size_t vocab = model_.config().vocab_size;
  if (job.draft) {
    job.n_accepted = verify_draft(c.sampler, job.logits, *job.draft, c.verify, c.processors.get(), job.tokens);
  } else if (c.processors) {
    // On the completion's own copy: siblings share the first one's row, and
    // logprobs are of the model's distribution.
    c.processed.assign(job.logits, job.logits + vocab);
    c.processors->apply(c.processed, c.output());
    job.tokens = {c.sampler.sample(c.processed, c.prompt(), c.output())};
  } else {
    job.tokens = {c.sampler.sample({job.logits, vocab}, c.prompt(), c.output())};
  }
  const std::optional<int32_t>& top_n = c.sampler.params().logprobs;
  if (!top_n) return;
  for (size_t i = 0; i < job.tokens.size(); ++i)  // token i comes from row i
    job.logprobs.push_back(token_logprob({job.logits + i * vocab, vocab}, job.tokens[i], *top_n));
}

void Engine::apply(SampleJob& job, std::vector<RequestOutput>& finished) {
  Completion& c = *job.completion;
  Request& request = *c.request;
  StreamDelta delta;
  delta.request_id = request.id;
  delta.index = c.index;
  if (!job.error.empty()) {
    c.result.error = std::move(job.error);
    delta.text = c.text.finish();
    return finish(request, c, FinishReason::kError, delta, finished);
  }
  if (job.draft) {
    count_verification(job);
    const int drafted = static_cast<int>(job.draft->tokens.size());
    c.draft_length = adapt_draft_length(job.draft->max_tokens, drafted, job.n_accepted, request_k(c));
  }
  // Tokens after a stop are never output: the completion ends where plain
  // decoding would have ended it.
  for (size_t i = 0; i < job.tokens.size(); ++i) {
    TokenLogprob* logprob = job.logprobs.empty() ? nullptr : &job.logprobs[i];
    if (!output_token(request, c, job.tokens[i], logprob, delta, finished)) return;
  }
  if (job.draft) {
    // The sure token and the accepted drafts have their K/V now; the rest go.
    scheduler_.commit_verified(c, job.n_accepted);
    proposer_->rollback(c, c.n_computed);
  }
  if (!jump_forward(request, c, delta, finished)) return;
  emit(request, delta);
}

bool Engine::jump_forward(Request& request, Completion& c, StreamDelta& delta, std::vector<RequestOutput>& finished) {
  GrammarProcessor* grammar = c.processors ? c.processors->grammar() : nullptr;
  if (!jump_forward_ || !grammar || request.params.logprobs) return true;
  std::vector<int32_t> forced;
  try {
    forced = grammar->forced_tokens();
  } catch (const Error&) {
    return true;  // a grammar past its limits: the next mask fails this completion alone (sample())
  }
  for (int32_t token : forced) {
    ++metrics_.jump_forward_tokens;
    if (!output_token(request, c, token, nullptr, delta, finished)) return false;
  }
  return true;
}

bool Engine::output_token(Request& request, Completion& c, int32_t token, TokenLogprob* logprob,
                          StreamDelta& delta, std::vector<RequestOutput>& finished) {
  const SamplingParams& params = request.params;
  // A grammar allows an end only where it is complete: that end ends the
  // output even under ignore_eos, since nothing could follow it.
  const GrammarProcessor* grammar = c.processors ? c.processors->grammar() : nullptr;
  const bool eos = tokenizer_.is_end_of_generation(token) && (!params.ignore_eos || (grammar && grammar->started()));
  const bool stop_token = std::ranges::count(params.stop_token_ids, token) > 0;
  if (eos || stop_token) {
    if (stop_token) c.result.stop_token = token;
    delta.text += c.text.finish();
    finish(request, c, FinishReason::kStop, delta, finished);
    return false;
  }
  if (c.processors) {
    try {
      c.processors->accept(token);
    } catch (const Error& e) {
      c.result.error = e.what();
      delta.text += c.text.finish();
      finish(request, c, FinishReason::kError, delta, finished);
      return false;
    }
  }
  observe_latency(request, c);
  c.tokens.push_back(token);
  c.result.token_ids.push_back(token);
  delta.token_ids.push_back(token);
  if (logprob) {
    c.result.logprobs.push_back(*logprob);
    delta.logprobs.push_back(std::move(*logprob));
  }
  ++metrics_.generation_tokens;
  delta.text += c.text.push(token);
  if (c.text.stopped()) {
    c.result.stop_reason = c.text.stop_reason();
    finish(request, c, FinishReason::kStop, delta, finished);
    return false;
  }
  if (static_cast<int>(c.result.token_ids.size()) >= params.max_tokens ||
      static_cast<int>(c.tokens.size()) >= max_model_len_) {
    delta.text += c.text.finish();
    finish(request, c, FinishReason::kLength, delta, finished);
    return false;
  }
  return true;
}

void Engine::count_verification(const SampleJob& job) {
  const int n_drafted = static_cast<int>(job.draft->tokens.size());
  metrics_.spec_verifications += 1;
  metrics_.spec_drafted_tokens += n_drafted;
  metrics_.spec_accepted_tokens += job.n_accepted;
  if (static_cast<int>(metrics_.spec_drafted_at.size()) < n_drafted) {
    metrics_.spec_drafted_at.resize(n_drafted);
    metrics_.spec_accepted_at.resize(n_drafted);
  }
  for (int i = 0; i < n_drafted; ++i) {
    metrics_.spec_drafted_at[i] += 1;
    metrics_.spec_accepted_at[i] += i < job.n_accepted;
  }
}

void Engine::observe_latency(Request& request, Completion& c) {
  const double t = now();
  if (!request.produced_token) metrics_.time_to_first_token.observe(t - request.arrival_time);
  if (c.last_token_time > 0) metrics_.time_per_output_token.observe(t - c.last_token_time);
  request.produced_token = true;
  c.last_token_time = t;
}

void Engine::finish(Request& request, Completion& c, FinishReason reason, StreamDelta& delta,
                    std::vector<RequestOutput>& finished) {
  scheduler_.finish(&c);
  if (proposer_) proposer_->forget(c);
  c.sampler.release_scratch();  // siblings may run on: keep only running sequences' scratch
  c.result.text = c.text.text();
  c.result.finish_reason = reason;
  delta.finish_reason = reason;
  emit(request, delta);
  if (--request.n_unfinished > 0) return;

  RequestOutput out;
  out.request_id = request.id;
  const std::span<const int32_t> prompt = request.completions[0]->prompt();
  out.prompt_token_ids.assign(prompt.begin(), prompt.end());
  for (auto& completion : request.completions) out.outputs.push_back(std::move(completion->result));
  ++metrics_.requests_finished;
  metrics_.requests_cancelled += reason == FinishReason::kCancelled;
  finished.push_back(std::move(out));
  requests_.erase(request.id);  // destroys request and c
  --n_unfinished_;
}

void Engine::cancel_now(RequestId id, std::vector<RequestOutput>& finished) {
  const auto it = requests_.find(id);
  if (it == requests_.end()) return;
  Request& request = *it->second;
  // finish() erases the request with its last completion: stop before that.
  for (size_t i = 0, n = request.completions.size(); i < n; ++i) {
    Completion& c = *request.completions[i];
    if (c.result.finish_reason) continue;
    StreamDelta delta;
    delta.request_id = id;
    delta.index = c.index;
    const bool last = request.n_unfinished == 1;
    finish(request, c, FinishReason::kCancelled, delta, finished);
    if (last) return;
  }
}

void Engine::emit(Request& request, const StreamDelta& delta) {
  if (request.on_delta) request.on_delta(delta);
}

double Engine::now() const { return clock_.seconds(); }

EngineMetrics Engine::metrics() const {
  EngineMetrics m = metrics_;
  for (const auto& [id, request] : requests_) {
    const bool running = std::ranges::any_of(request->completions, [](const auto& c) {
      return c->status == SequenceStatus::kRunning;
    });
    (running ? m.requests_running : m.requests_waiting) += 1;
  }
  {
    std::lock_guard lock(pending_mutex_);
    m.requests_waiting += static_cast<int>(pending_requests_.size());
  }
  m.kv_blocks_used = kv_.pool().n_used();
  m.kv_blocks_total = kv_.pool().n_blocks();
  return m;
}

}  // namespace skiff
