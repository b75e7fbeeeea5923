// Speculative decoding's drafters behind one interface: each step, the engine
// asks its proposer for up to k next tokens of every decoding sequence that
// speculates, verifies them all in the step's one forward pass, and tells the
// proposer how much of each sequence is final. Nothing else in the engine
// knows which drafter it was (a draft model, n-gram prompt lookup, ...).
#pragma once
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string_view>
#include <vector>

#include "kv/paged_kv_cache.h"

#include "engine/draft_length.h"
#include "engine/sampling_params.h"
#include "engine/sequence.h"

namespace skiff {

class Model;

// One sequence's proposal for this step.
struct Draft {
  const Sequence* seq = nullptr;
  // The request's parameters (with this completion's seed): a drafter that
  // samples draws from its distribution after the same transforms.
  const SamplingParams* params = nullptr;
  int max_tokens = 0;            // k for this sequence this step
  std::vector<int32_t> tokens;   // out: at most max_tokens
  // out: [tokens.size()][vocab] the distribution q each token was drawn from.
  // Empty: the tokens were chosen deterministically (q one-hot on each).
  std::vector<float> probs;
};

class Proposer {
 public:
  virtual ~Proposer() = default;
  // Fills each draft's tokens (possibly none) continuing seq->tokens.
  virtual void propose(std::span<Draft* const> drafts) = 0;
  // After a step that drafted for seq: its first n_final tokens are final,
  // any state past them (rejected drafts) is stale.
  virtual void rollback(const Sequence& seq, int n_final) { (void)seq, (void)n_final; }
  // seq finished (seq.status is kFinished: its tokens are final) or was
  // preempted (kWaiting: it comes back with the same tokens): drop its state.
  virtual void forget(const Sequence& seq) { (void)seq; }
};

enum class SpecMethod { kNone, kDraft, kNgram, kSuffix };
const char* spec_method_name(SpecMethod method);  // "none", "draft", "ngram", "suffix"
std::optional<SpecMethod> spec_method_from_name(std::string_view name);

constexpr int kMaxSpecK = 32;

// Suffix decoding (SuffixProposer), with vLLM's defaults for depth and the
// draft rule (engine/suffix_trie.h).
struct SuffixOptions {
  // Substrings of at most this many tokens are indexed: a match plus its
  // continuation fit in it. Memory is up to max_depth trie nodes per token.
  int max_depth = 24;
  // Finished outputs kept for every sequence's drafts, oldest evicted first;
  // 0: each sequence drafts from its own prompt and output only.
  int cache_tokens = 1 << 15;
  float min_prob = 0.1f;     // a continuation's least estimated probability
  float spec_factor = 1.0f;  // a match of m tokens proposes spec_factor * m at most
};

struct SpeculationOptions {
  SpecMethod method = SpecMethod::kNone;
  // kDraft: a model with the target's vocabulary, outliving the engine.
  Model* draft = nullptr;
  int k = 4;  // tokens proposed per step at most (a request may ask for fewer)
  // Most tokens a step holds once drafts are in, max(step_tokens, k + 1)
  // (draft_length.h); 0: no limit (tests that speculate in large batches).
  int step_tokens = kSpecStepTokens;
  // A drafter of the caller's own, used instead of the method's (tests).
  std::shared_ptr<Proposer> custom;
  // kNgram: the longest and shortest suffix looked up in the sequence.
  int ngram_max = 3;
  int ngram_min = 1;
  SuffixOptions suffix;  // kSuffix
};

// The draft model's KV pool, shaped like the engine's.
struct DraftKvOptions {
  KvType type = KvType::kF16;
  int block_size = 16;
  size_t bytes = 0;
  int max_model_len = 0;
};

// Throws Error when the draft's vocabulary differs from the target's.
void check_draft_compatible(const Model& target, const Model& draft);
// The options' drafter (nullptr for kNone); throws Error on bad options.
std::shared_ptr<Proposer> make_proposer(const SpeculationOptions& options, const Model& target,
                                        const DraftKvOptions& kv);

}  // namespace skiff
