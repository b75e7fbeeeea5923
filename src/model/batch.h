// The ragged batch: one forward pass serves prefill, decode, many sequences
// and speculative verification (1 + k drafted tokens). See docs/design.md.
#pragma once
#include <cstdint>
#include <vector>

namespace skiff {

struct BatchSeq {
  int seq_id = 0;     // the sequence in the KV cache
  int first_pos = 0;  // position of its first new token (= tokens already cached)
  int n_new = 0;      // new tokens this step: a prompt chunk, 1 for decode
  int n_logits = 0;   // how many of its last new tokens need logits
};

struct Batch {
  std::vector<int32_t> tokens;  // new tokens of all sequences, back to back [n_tokens]
  std::vector<BatchSeq> seqs;

  int n_logits() const {
    int n = 0;
    for (const BatchSeq& s : seqs) n += s.n_logits;
    return n;
  }
};

}  // namespace skiff
