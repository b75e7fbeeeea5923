#include "grammar/compiled_grammar.h"

#include <algorithm>
#include <unordered_set>

namespace skiff::grammar {

CompiledGrammar::CompiledGrammar(std::shared_ptr<const Grammar> grammar, std::shared_ptr<const TokenTrie> vocab)
    : grammar_(std::move(grammar)), vocab_(std::move(vocab)) {}

const CompiledGrammar::LexemeTokens& CompiledGrammar::lexeme_tokens(int32_t state, bool in_lexeme) const {
  int64_t key = int64_t{state} * 2 + in_lexeme;
  {
    std::lock_guard lock(mutex_);
    if (auto it = by_state_.find(key); it != by_state_.end()) return *it->second;
  }
  // Walk without the lock: two threads may both walk a new state; one result is kept.
  std::unique_ptr<LexemeTokens> tokens = walk(state, in_lexeme);
  std::lock_guard lock(mutex_);
  auto [it, inserted] = by_state_.emplace(key, std::move(tokens));
  if (inserted) {
    const LexemeTokens& t = *it->second;
    tokens_bytes_ += sizeof t + t.bits.size() * sizeof(uint32_t) + t.ids.size() * sizeof(int32_t) +
                     t.exits.size() * sizeof(t.exits[0]);
  }
  return *it->second;
}

size_t CompiledGrammar::memory_bytes() const {
  constexpr size_t kPerLexerState = 256 * sizeof(int32_t) + 64;  // a row of transitions and its set
  std::lock_guard lock(mutex_);
  return tokens_bytes_ + grammar_->lexer().n_states() * kPerLexerState;
}

size_t CompiledGrammar::text_reach(TextClass text_class, int32_t state) const {
  const Lexer& lexer = grammar_->lexer();
  if (lexer.takes_any_text(state, text_class)) return TokenTrie::kAnyLength;
  // Level by level over (lexer state, UTF-8 phase): the first level where
  // some text dies bounds the reach; a level adding no new pair closes it.
  // A string with a length bound adds about one lexer state per level.
  constexpr size_t kMaxLengthChecked = 32, kMaxPairs = 512;
  std::unordered_set<int64_t> seen{int64_t{state} * kTextClassPhases};
  std::vector<std::pair<int32_t, int>> level{{state, 0}}, next;
  for (size_t depth = 0; depth <= kMaxLengthChecked; ++depth) {
    next.clear();
    for (auto [s, phase] : level) {
      const Lexer::Row row = lexer.row(s);
      int64_t previous = -1;  // bytes in a run mostly move alike: one lookup for the run
      for (int b = 0; b < 256; ++b) {
        int next_phase = text_class_next_phase(text_class, phase, static_cast<uint8_t>(b));
        if (next_phase < 0) continue;
        int32_t t = lexer.next(row, s, static_cast<uint8_t>(b));
        if (t == Lexer::kDead) return depth;
        const int64_t pair = int64_t{t} * kTextClassPhases + next_phase;
        if (pair == previous) continue;
        previous = pair;
        if (!seen.insert(pair).second) continue;
        if (seen.size() > kMaxPairs) return depth;
        next.push_back({t, next_phase});
      }
    }
    if (next.empty()) return TokenTrie::kAnyLength;
    level.swap(next);
  }
  return kMaxLengthChecked;
}

std::unique_ptr<CompiledGrammar::LexemeTokens> CompiledGrammar::walk(int32_t state, bool in_lexeme) const {
  const Lexer& lexer = grammar_->lexer();
  auto out = std::make_unique<LexemeTokens>();
  const int32_t n_vocab = vocab_->n_vocab();
  const TokenTrie* trie = vocab_.get();
  size_t reach[2] = {0, 0};
  bool reach_known[2] = {false, false};
  for (const TokenTrie::Slice& slice : vocab_->slices()) {
    int k = static_cast<int>(slice.text_class);
    if (!reach_known[k]) reach[k] = text_reach(slice.text_class, state), reach_known[k] = true;
    if (slice.max_bytes > reach[k]) continue;
    out->bits = slice.tokens;
    trie = slice.others.get();
    break;
  }
  if (out->bits.empty()) out->bits.assign((n_vocab + 31) / 32, 0);
  out->exit_trie = trie;
  // The walk: per depth, the state reached and its row of transitions.
  const TokenTrie::Node* nodes = trie->nodes();
  const int32_t* ids = trie->token_ids();
  std::vector<int32_t> states(trie->max_depth() + 1);
  std::vector<Lexer::Row> rows(trie->max_depth() + 1);
  states[0] = state;
  rows[0] = lexer.row(state);
  uint32_t* bits = out->bits.data();
  const int32_t n = trie->n_nodes();
  for (int32_t i = 1; i < n;) {
    const TokenTrie::Node& node = nodes[i];
    const int32_t d = node.depth;
    const int32_t to = lexer.next(rows[d - 1], states[d - 1], node.byte);
    if (to == Lexer::kDead) {
      if ((d > 1 || in_lexeme) && !lexer.accepts(states[d - 1]).empty()) out->exits.push_back({i, states[d - 1]});
      i = node.subtree_end;
      continue;
    }
    for (int32_t k = node.token_begin; k < nodes[i + 1].token_begin; ++k) bits[ids[k] >> 5] |= 1u << (ids[k] & 31);
    if (node.subtree_end > i + 1) {  // the row only for a node with children
      states[d] = to;
      rows[d] = lexer.row(to);
    }
    ++i;
  }
  // A list when that is smaller than the bitset.
  size_t count = 0;
  for (uint32_t w : out->bits) count += static_cast<size_t>(__builtin_popcount(w));
  if (count < static_cast<size_t>(n_vocab) / 32) {
    for (int32_t w = 0; w < static_cast<int32_t>(out->bits.size()); ++w)
      for (uint32_t bits = out->bits[w]; bits; bits &= bits - 1) out->ids.push_back(w * 32 + __builtin_ctz(bits));
    out->bits = {};
  }
  return out;
}

}  // namespace skiff::grammar
