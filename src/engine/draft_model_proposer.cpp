#include "engine/draft_model_proposer.h"

#include <algorithm>

#include "model/model.h"

namespace skiff {
namespace {

PagedKvCache make_draft_kv(const Model& draft, KvType type, int block_size, size_t bytes,
                           int max_model_len) {
  const ModelConfig& c = draft.config();
  const int max_len = std::min(max_model_len, c.max_ctx);
  return PagedKvCache::with_memory({c.n_layers, c.n_kv_heads, c.head_dim}, type, block_size, bytes,
                                   max_len);
}

SamplingParams drafting_params(const SamplingParams& params) {
  SamplingParams own = params;
  // Its own stream, reproducible with the request's seed, apart from the target's.
  if (own.seed) *own.seed ^= 0x5DEECE66DULL;
  return own;
}

}  // namespace

DraftModelProposer::DraftModelProposer(Model& draft, KvType kv_type, int block_size,
                                       size_t kv_bytes, int max_model_len)
    : model_(draft), kv_(make_draft_kv(draft, kv_type, block_size, kv_bytes, max_model_len)) {
  model_.set_context_length(kv_.max_seq_len());
}

void DraftModelProposer::propose(std::span<Draft* const> drafts) {
  std::vector<Active> active = start_round(drafts);
  int rounds = 0;
  for (const Active& a : active) rounds = std::max(rounds, a.n_rounds);
  for (int round = 0; round < rounds; ++round) run_round(active, round);
}

DraftModelProposer::State& DraftModelProposer::state_for(const Draft& draft) {
  auto it = states_.find(draft.seq);
  if (it == states_.end()) {
    State fresh{kv_.create_sequence(), Sampler(drafting_params(*draft.params), model_.config().vocab_size), {}};
    it = states_.emplace(draft.seq, std::move(fresh)).first;
  }
  return it->second;
}

// Which drafts run, and for how many rounds: the draft's KV must hold the
// sequence plus all but the last drafted token.
std::vector<DraftModelProposer::Active> DraftModelProposer::start_round(std::span<Draft* const> drafts) {
  std::vector<Active> active;
  for (Draft* draft : drafts) {
    draft->tokens.clear();
    draft->probs.clear();
    const int n_tokens = static_cast<int>(draft->seq->tokens.size());
    const int n_rounds = std::min(draft->max_tokens, kv_.max_seq_len() - n_tokens + 1);
    if (n_rounds <= 0) continue;
    State& state = state_for(*draft);
    // The last token always runs: its logits draft the first token.
    if (kv_.length(state.kv_seq) >= n_tokens) kv_.truncate(state.kv_seq, n_tokens - 1);
    if (!kv_.reserve(state.kv_seq, n_tokens + n_rounds - 1)) continue;  // pool full: no draft
    state.context = draft->seq->tokens;
    active.push_back({draft, &state, n_rounds});
  }
  return active;
}

void DraftModelProposer::run_round(std::span<Active> active, int round) {
  Batch batch;
  std::vector<Active*> in_batch;
  for (Active& a : active) {
    if (a.n_rounds <= round) continue;
    const int first = kv_.length(a.state->kv_seq);
    const int n_new = static_cast<int>(a.state->context.size()) - first;
    batch.tokens.insert(batch.tokens.end(), a.state->context.begin() + first, a.state->context.end());
    batch.seqs.push_back({a.state->kv_seq, first, n_new, 1});
    in_batch.push_back(&a);
  }
  const size_t vocab = model_.config().vocab_size;
  logits_.resize(in_batch.size() * vocab);
  model_.forward_and_append(batch, kv_, logits_.data());  // already reserved by start_round: no copy, no failure
  for (size_t i = 0; i < in_batch.size(); ++i) draw(*in_batch[i], logits_.data() + i * vocab);
}

// Draws the next drafted token from the draft's distribution after the
// request's transforms, and records that distribution as q for verification.
void DraftModelProposer::draw(Active& a, const float* logits) {
  State& s = *a.state;
  const Sequence& seq = *a.draft->seq;
  const std::span<const int32_t> prompt(s.context.data(), seq.n_prompt);
  const std::span<const int32_t> output = std::span<const int32_t>(s.context).subspan(seq.n_prompt);
  const size_t vocab = model_.config().vocab_size;
  const std::span<const float> row(logits, vocab);
  int32_t token;
  if (s.sampler.params().is_greedy()) {
    token = s.sampler.sample(row, prompt, output);  // q one-hot: no probabilities needed
  } else {
    probs_.resize(vocab);
    s.sampler.probabilities(row, prompt, output, probs_);
    token = s.sampler.draw_from(probs_);
    a.draft->probs.insert(a.draft->probs.end(), probs_.begin(), probs_.end());
  }
  a.draft->tokens.push_back(token);
  s.context.push_back(token);
}

void DraftModelProposer::rollback(const Sequence& seq, int n_final) {
  const auto it = states_.find(&seq);
  if (it == states_.end()) return;
  const int kv_seq = it->second.kv_seq;
  kv_.truncate(kv_seq, std::min(kv_.length(kv_seq), n_final));
}

void DraftModelProposer::forget(const Sequence& seq) {
  const auto it = states_.find(&seq);
  if (it == states_.end()) return;
  kv_.free_sequence(it->second.kv_seq);
  states_.erase(it);
}

}  // namespace skiff
