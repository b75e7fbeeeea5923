#include "engine/suffix_trie.h"

#include <algorithm>

#include "base/error.h"

namespace skiff {

SuffixTrie::SuffixTrie(int max_depth) : max_depth_(max_depth), nodes_(1) {
  if (max_depth < 2) fail("suffix trie: max_depth must be at least 2, not {}", max_depth);
}

int32_t SuffixTrie::child(int32_t node, int32_t token) const {
  if (node == kRoot) {
    const auto it = root_children_.find(token);
    return it == root_children_.end() ? -1 : it->second;
  }
  int32_t c = nodes_[node].first_child;
  while (c >= 0 && nodes_[c].token != token) c = nodes_[c].next_sibling;
  return c;
}

int32_t SuffixTrie::find(std::span<const int32_t> tokens) const {
  int32_t node = kRoot;
  for (int32_t t : tokens) {
    node = child(node, t);
    if (node < 0) return -1;
  }
  return node;
}

// The draft's order of children: more occurrences first, then the latest.
bool SuffixTrie::better(int32_t a, int32_t b) const {
  const Node &x = nodes_[a], &y = nodes_[b];
  return x.count != y.count ? x.count > y.count : x.last > y.last;
}

void SuffixTrie::append(Stream& stream, int32_t token) {
  ++clock_;
  std::vector<int32_t>& open = stream.open;
  for (int32_t& node : open) node = add_occurrence(node, token);
  // The longest reached max_depth: it grows no more.
  if (static_cast<int>(open.size()) == max_depth_ - 1) open.erase(open.begin());
  open.push_back(add_occurrence(kRoot, token));
}

void SuffixTrie::insert(std::span<const int32_t> tokens) {
  Stream stream;
  for (int32_t t : tokens) append(stream, t);
}

// One more occurrence of parent's substring followed by token; the node of
// that longer substring. The newest occurrence is the latest, so the child
// becomes its parent's best once it has as many occurrences.
int32_t SuffixTrie::add_occurrence(int32_t parent, int32_t token) {
  int32_t node = child(parent, token);
  if (node < 0) node = new_child(parent, token);
  Node& n = nodes_[node];
  n.count += 1;
  n.last = clock_;
  int32_t& best = nodes_[parent].best_child;
  if (parent != kRoot && (best < 0 || n.count >= nodes_[best].count)) best = node;
  return node;
}

int32_t SuffixTrie::new_child(int32_t parent, int32_t token) {
  int32_t node;
  if (free_.empty()) {
    node = static_cast<int32_t>(nodes_.size());
    nodes_.emplace_back();
  } else {
    node = free_.back();
    free_.pop_back();
    nodes_[node] = Node{};
  }
  nodes_[node].token = token;
  if (parent == kRoot) {
    root_children_.emplace(token, node);
  } else {
    nodes_[node].next_sibling = nodes_[parent].first_child;
    nodes_[parent].first_child = node;
  }
  return node;
}

void SuffixTrie::remove(std::span<const int32_t> tokens) {
  std::vector<int32_t> path;
  for (size_t start = 0; start < tokens.size(); ++start) {
    const size_t end = std::min(tokens.size(), start + max_depth_);
    path.assign(1, kRoot);
    for (size_t i = start; i < end; ++i) {
      const int32_t node = child(path.back(), tokens[i]);
      if (node < 0) fail("suffix trie: removing tokens that were never inserted");
      path.push_back(node);
    }
    // Deepest first: a node whose count falls to 0 has no children left.
    for (size_t j = path.size() - 1; j > 0; --j) remove_occurrence(path[j - 1], path[j]);
  }
}

void SuffixTrie::remove_occurrence(int32_t parent, int32_t node) {
  if (--nodes_[node].count == 0) {
    unlink(parent, node);
    free_.push_back(node);
  }
  if (parent != kRoot && nodes_[parent].best_child == node) choose_best_child(parent);
}

void SuffixTrie::unlink(int32_t parent, int32_t node) {
  if (parent == kRoot) {
    root_children_.erase(nodes_[node].token);
    return;
  }
  int32_t* link = &nodes_[parent].first_child;
  while (*link != node) link = &nodes_[*link].next_sibling;
  *link = nodes_[node].next_sibling;
}

void SuffixTrie::choose_best_child(int32_t node) {
  int32_t best = -1;
  for (int32_t c = nodes_[node].first_child; c >= 0; c = nodes_[c].next_sibling)
    if (best < 0 || better(c, best)) best = c;
  nodes_[node].best_child = best;
}

SuffixDraft SuffixTrie::draft(std::span<const int32_t> context, const SuffixDraftRule& rule) const {
  SuffixDraft best;
  const int longest = std::min(static_cast<int>(context.size()), max_depth_ - 1);
  for (int m = 1; m <= longest; ++m) {
    const int32_t node = find(context.last(m));
    if (node < 0) break;  // a longer suffix contains this one: none occurs either
    SuffixDraft d = walk(node, rule.limit(m), rule.min_prob);
    if (d.score >= best.score) {
      best = std::move(d);
      best.match_len = m;
    }
  }
  if (best.tokens.empty()) best.match_len = 0;
  return best;
}

SuffixDraft SuffixTrie::walk(int32_t node, int max_tokens, float min_prob) const {
  SuffixDraft d;
  double prob = 1;
  while (static_cast<int>(d.tokens.size()) < max_tokens) {
    const int32_t next = nodes_[node].best_child;
    if (next < 0) break;
    prob *= static_cast<double>(nodes_[next].count) / nodes_[node].count;
    if (prob < min_prob) break;
    d.tokens.push_back(nodes_[next].token);
    d.score += prob;
    node = next;
  }
  return d;
}

}  // namespace skiff
