// A model's vocabulary as a byte trie, built once per tokenizer and shared by
// every grammar: the token mask walks it, so tokens sharing a prefix share the
// work of matching it. Nodes are stored in pre-order with the index just past
// each subtree, so a rejected prefix skips its whole subtree in one step.
#pragma once
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "grammar/text_class.h"

namespace skiff::grammar {

class TokenTrie {
 public:
  // token_bytes[id]: the bytes the token stands for; empty for a token no
  // grammar may produce (control tokens). end_tokens: those that may end a
  // constrained text where the grammar is complete.
  TokenTrie(const std::vector<std::string>& token_bytes, std::vector<int32_t> end_tokens);

  // Slices of the vocabulary: the tokens that are text of a class (from
  // phase 0; a last character may be cut) of at most max_bytes bytes
  // (kAnyLength: any), as a bitset, and the other tokens as a trie of their
  // own with the same ids. Where a lexer state takes any text of the class
  // that long, a slice's tokens are all inside its lexeme at once and only
  // the rest are walked.
  struct Slice {
    TextClass text_class;
    size_t max_bytes;
    std::vector<uint32_t> tokens;
    std::shared_ptr<const TokenTrie> others;
  };
  static constexpr size_t kAnyLength = SIZE_MAX;
  const std::vector<Slice>& slices() const { return slices_; }  // largest first

  int32_t n_vocab() const { return n_vocab_; }
  // A node's fields together: the mask walk reads them all, node after node.
  struct Node {
    int32_t subtree_end;  // the node after its subtree
    int32_t token_begin;  // its tokens: tokens_[token_begin, next node's token_begin)
    uint16_t depth;       // its byte's position in the token (root: 0)
    uint8_t byte;
  };
  int32_t n_nodes() const { return static_cast<int32_t>(nodes_.size()) - 1; }
  const Node* nodes() const { return nodes_.data(); }
  uint8_t byte(int32_t node) const { return nodes_[node].byte; }
  int32_t depth(int32_t node) const { return nodes_[node].depth; }
  int32_t subtree_end(int32_t node) const { return nodes_[node].subtree_end; }
  std::span<const int32_t> tokens_at(int32_t node) const {
    return {tokens_.data() + nodes_[node].token_begin, tokens_.data() + nodes_[node + 1].token_begin};
  }
  const int32_t* token_ids() const { return tokens_.data(); }
  int32_t max_depth() const { return max_depth_; }
  // The child of `node` reached by `byte`, or -1.
  int32_t child(int32_t node, uint8_t byte) const {
    for (int32_t c = node + 1; c < nodes_[node].subtree_end; c = nodes_[c].subtree_end)
      if (nodes_[c].byte == byte) return c;
    return -1;
  }
  const std::vector<int32_t>& end_tokens() const { return end_tokens_; }
  const std::string& bytes_of(int32_t token) const { return token_bytes_[token]; }

 private:
  int32_t n_vocab_;
  int32_t max_depth_ = 0;
  std::vector<Node> nodes_;  // in pre-order, and one past the last (its token_begin ends the last node's tokens)
  std::vector<int32_t> tokens_;
  std::vector<int32_t> end_tokens_;
  std::vector<std::string> token_bytes_;
  std::vector<Slice> slices_;  // empty in a slice's own trie of others

  struct NoSlices {};
  TokenTrie(const std::vector<std::string>& token_bytes, std::vector<int32_t> end_tokens, NoSlices);
};

}  // namespace skiff::grammar
