// A model's vocabulary as a byte trie, built once per tokenizer and shared by
// every grammar: the token mask walks it, so tokens sharing a prefix share the
// work of matching it. Nodes are stored in pre-order with the index just past
// each subtree, so a rejected prefix skips its whole subtree in one step.
#pragma once
#include <cstdint>
#include <span>
#include <string>
#include <vector>

namespace skiff::grammar {

class TokenTrie {
 public:
  // token_bytes[id]: the bytes the token stands for; empty for a token no
  // grammar may produce (control tokens). end_tokens: those that may end a
  // constrained text where the grammar is complete.
  TokenTrie(const std::vector<std::string>& token_bytes, std::vector<int32_t> end_tokens);

  int32_t n_vocab() const { return n_vocab_; }
  int32_t n_nodes() const { return static_cast<int32_t>(byte_.size()); }
  uint8_t byte(int32_t node) const { return byte_[node]; }
  int32_t depth(int32_t node) const { return depth_[node]; }
  int32_t subtree_end(int32_t node) const { return subtree_end_[node]; }
  std::span<const int32_t> tokens_at(int32_t node) const {
    return {tokens_.data() + token_begin_[node], tokens_.data() + token_begin_[node + 1]};
  }
  int32_t max_depth() const { return max_depth_; }
  // The child of `node` reached by `byte`, or -1.
  int32_t child(int32_t node, uint8_t byte) const {
    for (int32_t c = node + 1; c < subtree_end_[node]; c = subtree_end_[c])
      if (byte_[c] == byte) return c;
    return -1;
  }
  const std::vector<int32_t>& end_tokens() const { return end_tokens_; }
  const std::string& bytes_of(int32_t token) const { return token_bytes_[token]; }

 private:
  int32_t n_vocab_;
  int32_t max_depth_ = 0;
  std::vector<uint8_t> byte_;
  std::vector<uint16_t> depth_;
  std::vector<int32_t> subtree_end_;
  std::vector<int32_t> token_begin_;  // tokens ending at node i: tokens_[token_begin_[i], token_begin_[i + 1])
  std::vector<int32_t> tokens_;
  std::vector<int32_t> end_tokens_;
  std::vector<std::string> token_bytes_;
};

}  // namespace skiff::grammar
