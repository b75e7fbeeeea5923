#include "engine/suffix_proposer.h"

#include "base/error.h"

namespace skiff {
namespace {

const SuffixOptions& checked(const SuffixOptions& o) {
  if (o.max_depth < 2 || o.max_depth > 1024)
    fail("suffix decoding: max_depth must be in [2, 1024], not {}", o.max_depth);
  if (o.cache_tokens < 0) fail("suffix decoding: cache_tokens must be >= 0, not {}", o.cache_tokens);
  if (!(o.min_prob >= 0 && o.min_prob <= 1))
    fail("suffix decoding: min_prob must be in [0, 1], not {}", o.min_prob);
  if (!(o.spec_factor > 0)) fail("suffix decoding: spec_factor must be > 0, not {}", o.spec_factor);
  return o;
}

}  // namespace

SuffixProposer::SuffixProposer(const SuffixOptions& options)
    : options_(checked(options)), shared_(options.max_depth) {}

void SuffixProposer::propose(std::span<Draft* const> drafts) {
  for (Draft* draft : drafts) {
    draft->probs.clear();
    const Own& own = own_trie(*draft->seq);
    draft->tokens = best_draft(own.trie, draft->seq->tokens, draft->max_tokens).tokens;
  }
}

// The higher score of the sequence's own trie and the shared one.
SuffixDraft SuffixProposer::best_draft(const SuffixTrie& own, std::span<const int32_t> tokens,
                                       int max_tokens) const {
  const SuffixDraftRule rule{max_tokens, options_.spec_factor, options_.min_prob};
  SuffixDraft mine = own.draft(tokens, rule);
  SuffixDraft shared = shared_.draft(tokens, rule);
  return shared.score > mine.score ? shared : mine;
}

// The sequence's trie, caught up with its tokens (the prompt at first, then
// what was output since).
SuffixProposer::Own& SuffixProposer::own_trie(const Sequence& seq) {
  auto it = own_.find(&seq);
  if (it == own_.end()) it = own_.emplace(&seq, Own{SuffixTrie(options_.max_depth), {}, 0}).first;
  Own& own = it->second;
  for (; own.n_seen < seq.tokens.size(); ++own.n_seen) own.trie.append(own.stream, seq.tokens[own.n_seen]);
  return own;
}

void SuffixProposer::forget(const Sequence& seq) {
  own_.erase(&seq);
  if (seq.status == SequenceStatus::kFinished) cache_output(seq.output());
}

void SuffixProposer::cache_output(std::span<const int32_t> output) {
  const size_t cap = static_cast<size_t>(options_.cache_tokens);
  if (output.size() > cap) output = output.last(cap);  // none when cap is 0
  if (output.empty()) return;
  while (cached_tokens_ + output.size() > cap) {
    shared_.remove(cached_.front());
    cached_tokens_ -= cached_.front().size();
    cached_.pop_front();
  }
  shared_.insert(output);
  cached_.emplace_back(output.begin(), output.end());
  cached_tokens_ += output.size();
}

}  // namespace skiff
