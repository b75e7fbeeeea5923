#include "grammar/compiled_grammar.h"

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
  return *it->second;
}

std::unique_ptr<CompiledGrammar::LexemeTokens> CompiledGrammar::walk(int32_t state, bool in_lexeme) const {
  const TokenTrie& trie = *vocab_;
  const Lexer& lexer = grammar_->lexer();
  auto out = std::make_unique<LexemeTokens>();
  std::vector<int32_t> states(trie.max_depth() + 1);
  states[0] = state;
  int32_t n = trie.n_nodes();
  for (int32_t i = 1; i < n;) {
    int32_t d = trie.depth(i);
    int32_t from = states[d - 1];
    int32_t to = lexer.next(from, trie.byte(i));
    if (to == Lexer::kDead) {
      if ((d > 1 || in_lexeme) && !lexer.accepts(from).empty()) out->exits.push_back({i, from});
      i = trie.subtree_end(i);
      continue;
    }
    states[d] = to;
    for (int32_t token : trie.tokens_at(i)) out->ids.push_back(token);
    ++i;
  }
  // A list when it is shorter than the bitset.
  if (out->ids.size() > static_cast<size_t>(trie.n_vocab()) / 32) {
    out->bits.assign((trie.n_vocab() + 31) / 32, 0);
    for (int32_t token : out->ids) out->bits[token >> 5] |= 1u << (token & 31);
    out->ids.clear();
    out->ids.shrink_to_fit();
  }
  return out;
}

}  // namespace skiff::grammar
