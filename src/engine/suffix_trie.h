// Suffix decoding's index (SuffixDecoding, Oliaro et al. 2024): a trie of
// every suffix of the token streams put in it, each cut at max_depth tokens,
// so that a node is one substring of at most max_depth tokens and its count
// is how often that substring occurs. A draft matches the context's last
// tokens and walks down the most frequent continuation.
//
// Unlike ArcticInference's suffix tree, paths are not compressed: simpler,
// removable stream by stream, at a bounded cost. Memory: at most
// max_depth nodes of 32 bytes per token held (a path per suffix; repeated
// text shares nodes), plus a map of the root's children. Time, with c the
// children scanned at a node (at most the distinct tokens that followed its
// substring): appending a token O(max_depth * c), a draft
// O(max_depth^2 * c / 2 + max_depth * max_tokens), removing a stream of n
// tokens O(n * max_depth * c).
#pragma once
#include <algorithm>
#include <cstdint>
#include <span>
#include <unordered_map>
#include <vector>

namespace skiff {

// How a context becomes a draft, SuffixDecoding's rule as ArcticInference
// applies it: for each match length m from 1 up (the context's last m tokens
// occur in the trie, m < max_depth), walk from the match to its most frequent
// child, then that child's, ..., while the product of count(child) /
// count(parent) stays at least min_prob, for at most min(max_tokens,
// spec_factor * m) tokens; keep the walk whose probabilities sum highest,
// the longer match on ties. Ties between children go to the one seen last.
struct SuffixDraftRule {
  int max_tokens = 4;
  float spec_factor = 1.0f;
  float min_prob = 0.1f;
  // The most tokens a match of match_len may propose.
  int limit(int match_len) const {
    return std::min(max_tokens, static_cast<int>(match_len * spec_factor + 1e-6f));
  }
};

struct SuffixDraft {
  std::vector<int32_t> tokens;
  double score = 0;   // the sum of the tokens' estimated probabilities
  int match_len = 0;  // the matched suffix's length (0: no draft)
};

class SuffixTrie {
 public:
  // A stream being appended token by token: the nodes where its suffixes
  // shorter than max_depth end, longest first.
  struct Stream {
    std::vector<int32_t> open;
  };

  explicit SuffixTrie(int max_depth);  // max_depth >= 2: one token matched, one proposed

  // Every suffix of the stream shorter than max_depth grows by token, and
  // token starts one of its own.
  void append(Stream& stream, int32_t token);
  void insert(std::span<const int32_t> tokens);  // a whole stream
  // A stream inserted earlier, whole. Streams leave in the order they came,
  // so a node's latest occurrence (the tie-break) stays one that remains.
  void remove(std::span<const int32_t> tokens);

  SuffixDraft draft(std::span<const int32_t> context, const SuffixDraftRule& rule) const;

  int max_depth() const { return max_depth_; }
  size_t n_nodes() const { return nodes_.size() - 1 - free_.size(); }  // the root not counted

 private:
  struct Node {
    int32_t token = 0;
    int32_t count = 0;          // occurrences of the substring that ends here
    int32_t first_child = -1;   // children: a list through next_sibling
    int32_t next_sibling = -1;
    int32_t best_child = -1;    // the largest (count, last)
    int64_t last = 0;           // when the latest occurrence ended (the trie's clock)
  };
  static constexpr int32_t kRoot = 0;

  int32_t child(int32_t node, int32_t token) const;
  int32_t find(std::span<const int32_t> tokens) const;
  bool better(int32_t a, int32_t b) const;
  int32_t add_occurrence(int32_t parent, int32_t token);
  int32_t new_child(int32_t parent, int32_t token);
  void remove_occurrence(int32_t parent, int32_t node);
  void unlink(int32_t parent, int32_t node);
  void choose_best_child(int32_t node);
  SuffixDraft walk(int32_t node, int max_tokens, float min_prob) const;

  int max_depth_;
  int64_t clock_ = 0;  // tokens appended so far
  std::vector<Node> nodes_;  // nodes_[kRoot] is the root
  std::vector<int32_t> free_;
  std::unordered_map<int32_t, int32_t> root_children_;  // token -> node: the root has many
};

}  // namespace skiff
