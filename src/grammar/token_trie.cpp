#include "grammar/token_trie.h"

#include <algorithm>
#include <numeric>

#include "base/error.h"

namespace skiff::grammar {

TokenTrie::TokenTrie(const std::vector<std::string>& token_bytes, std::vector<int32_t> end_tokens)
    : TokenTrie(token_bytes, end_tokens, NoSlices{}) {
  auto is_text = [&](TextClass text_class, const std::string& text) {
    int phase = text.empty() ? -1 : 0;
    for (size_t i = 0; i < text.size() && phase >= 0; ++i)
      phase = text_class_next_phase(text_class, phase, static_cast<uint8_t>(text[i]));
    return phase >= 0;
  };
  const std::pair<TextClass, size_t> kSlices[] = {
      {TextClass::JsonString, kAnyLength}, {TextClass::JsonString, 32}, {TextClass::JsonString, 16},
      {TextClass::Alphanumeric, kAnyLength}};
  for (auto [text_class, max_bytes] : kSlices) {
    Slice slice{text_class, max_bytes, std::vector<uint32_t>((n_vocab_ + 31) / 32, 0), nullptr};
    std::vector<std::string> others(token_bytes.size());
    for (size_t id = 0; id < token_bytes.size(); ++id) {
      if (token_bytes[id].size() <= max_bytes && is_text(text_class, token_bytes[id]))
        slice.tokens[id >> 5] |= 1u << (id & 31);
      else others[id] = token_bytes[id];
    }
    slice.others = std::shared_ptr<const TokenTrie>(new TokenTrie(others, end_tokens_, NoSlices{}));
    slices_.push_back(std::move(slice));
  }
}

TokenTrie::TokenTrie(const std::vector<std::string>& token_bytes, std::vector<int32_t> end_tokens, NoSlices)
    : n_vocab_(static_cast<int32_t>(token_bytes.size())), end_tokens_(std::move(end_tokens)),
      token_bytes_(token_bytes) {
  std::vector<int32_t> order;
  for (int32_t id = 0; id < n_vocab_; ++id)
    if (!token_bytes[id].empty()) order.push_back(id);
  std::sort(order.begin(), order.end(), [&](int32_t a, int32_t b) {
    return token_bytes[a] != token_bytes[b] ? token_bytes[a] < token_bytes[b] : a < b;
  });
  // Sorted texts enter the trie in pre-order: each text shares its longest
  // common prefix with the one before, and new nodes follow.
  std::vector<uint8_t> byte_{0};
  std::vector<uint16_t> depth_{0};
  std::vector<int32_t> node_tokens;  // (node, token) pairs in pre-order of nodes
  std::vector<int32_t> token_node;
  std::vector<int32_t> path{0};  // node at each depth of the previous text
  const std::string* previous = nullptr;
  for (int32_t id : order) {
    const std::string& text = token_bytes[id];
    if (text.size() > 65535) fail("token {} is longer than 65535 bytes", id);
    size_t common = 0;
    if (previous) {
      size_t limit = std::min(previous->size(), text.size());
      while (common < limit && (*previous)[common] == text[common]) ++common;
    }
    path.resize(common + 1);
    for (size_t d = common; d < text.size(); ++d) {
      path.push_back(static_cast<int32_t>(byte_.size()));
      byte_.push_back(static_cast<uint8_t>(text[d]));
      depth_.push_back(static_cast<uint16_t>(d + 1));
    }
    max_depth_ = std::max<int32_t>(max_depth_, static_cast<int32_t>(text.size()));
    token_node.push_back(path.back());
    node_tokens.push_back(id);
    previous = &text;
  }
  int32_t n = static_cast<int32_t>(byte_.size());
  std::vector<int32_t> subtree_end_(n, n);
  std::vector<int32_t> open;  // nodes whose subtree has not ended, by depth
  for (int32_t i = 0; i < n; ++i) {
    while (!open.empty() && depth_[open.back()] >= depth_[i]) {
      subtree_end_[open.back()] = i;
      open.pop_back();
    }
    open.push_back(i);
  }
  std::vector<int32_t> token_begin_(n + 1, 0);
  for (int32_t node : token_node) ++token_begin_[node + 1];
  std::partial_sum(token_begin_.begin(), token_begin_.end(), token_begin_.begin());
  tokens_.resize(node_tokens.size());
  std::vector<int32_t> fill(token_begin_.begin(), token_begin_.end() - 1);
  for (size_t k = 0; k < node_tokens.size(); ++k) tokens_[fill[token_node[k]]++] = node_tokens[k];
  nodes_.resize(n + 1);
  for (int32_t i = 0; i <= n; ++i)
    nodes_[i] = {i < n ? subtree_end_[i] : n, token_begin_[i], static_cast<uint16_t>(i < n ? depth_[i] : 0),
                 i < n ? byte_[i] : uint8_t{0}};
}

}  // namespace skiff::grammar
