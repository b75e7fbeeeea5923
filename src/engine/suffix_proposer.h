// Suffix decoding (SuffixDecoding, Oliaro et al. 2024; as vLLM and Snowflake's
// ArcticInference run it): two suffix tries (engine/suffix_trie.h), one per
// sequence over its prompt and output so far, and one shared by every
// sequence of the engine over the outputs of recently finished ones (at most
// cache_tokens tokens, the oldest output evicted first). Each step a
// sequence's last tokens are matched in both and the draft with the higher
// score (the sum of its tokens' estimated probabilities) is proposed, its
// own trie's on ties. Where requests repeat each other (agents, rewrites,
// the same question asked again) the shared trie guesses what n-gram lookup
// in one sequence cannot. Tokens are chosen deterministically (q one-hot).
#pragma once
#include <deque>
#include <unordered_map>

#include "engine/proposer.h"
#include "engine/suffix_trie.h"

namespace skiff {

class SuffixProposer : public Proposer {
 public:
  explicit SuffixProposer(const SuffixOptions& options);

  void propose(std::span<Draft* const> drafts) override;
  // The tries hold only seq.tokens, which are output and never drafts:
  // rejected drafts leave nothing to undo, and rollback is the default no-op.
  // A finished sequence's output goes into the shared trie (a preempted
  // one's waits for it to finish); its own trie is dropped either way.
  void forget(const Sequence& seq) override;

  size_t cached_tokens() const { return cached_tokens_; }
  const SuffixTrie& shared_trie() const { return shared_; }

 private:
  struct Own {
    SuffixTrie trie;
    SuffixTrie::Stream stream;
    size_t n_seen = 0;  // seq.tokens appended to the trie
  };
  Own& own_trie(const Sequence& seq);
  SuffixDraft best_draft(const SuffixTrie& own, std::span<const int32_t> tokens, int max_tokens) const;
  void cache_output(std::span<const int32_t> output);

  SuffixOptions options_;
  std::unordered_map<const Sequence*, Own> own_;
  SuffixTrie shared_;
  std::deque<std::vector<int32_t>> cached_;  // the outputs in shared_, oldest first
  size_t cached_tokens_ = 0;
};

}  // namespace skiff
