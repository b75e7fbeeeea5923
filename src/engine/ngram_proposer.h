// N-gram prompt lookup (as vLLM's and llama.cpp's "prompt lookup decoding"):
// find the latest earlier occurrence of the sequence's last n tokens in its
// own prompt and output, longest n first, and propose what followed it. No
// model and no state: where a reply repeats its prompt (code edits, quoting,
// summaries) the guesses are often long and right. Its tokens are chosen
// deterministically, so verification sees q as one-hot on each.
#pragma once
#include "engine/proposer.h"

namespace skiff {

class NgramProposer : public Proposer {
 public:
  NgramProposer(int ngram_min, int ngram_max);
  void propose(std::span<Draft* const> drafts) override;

  // The continuation of the latest earlier match of tokens' last n tokens,
  // at most max_tokens long; empty when there is none.
  std::vector<int32_t> lookup(std::span<const int32_t> tokens, int max_tokens) const;

 private:
  int ngram_min_;
  int ngram_max_;
};

}  // namespace skiff
