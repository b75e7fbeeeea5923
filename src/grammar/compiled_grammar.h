// A grammar bound to a model's vocabulary, with what every matcher of it
// shares: per lexer state, the tokens the current lexeme alone decides.
//
// A token mask splits in two. Tokens whose bytes all stay inside the current
// lexeme depend only on the lexer state, never on the parser: they are found
// once per state by walking the whole trie through the DFA and kept as a set
// (`inside`). The rest leave the lexeme somewhere (`exits`: the trie node
// where the lexeme must end and the state it ends in); only their subtrees
// need the parser, at every step. Inside a JSON string almost every token is
// of the first kind and a few dozen subtrees (those with a '"') are walked.
#pragma once
#include <cstdint>
#include <memory>
#include <mutex>
#include <span>
#include <unordered_map>
#include <vector>

#include "grammar/grammar.h"
#include "grammar/token_trie.h"

namespace skiff::grammar {

class CompiledGrammar {
 public:
  CompiledGrammar(std::shared_ptr<const Grammar> grammar, std::shared_ptr<const TokenTrie> vocab);

  struct LexemeTokens {
    // Tokens that stay inside the lexeme: a bitset, or a list when few.
    std::vector<uint32_t> bits;
    std::vector<int32_t> ids;
    // (trie node, lexer state before its byte): the lexeme ends before the
    // node's byte. The nodes are exit_trie's: the vocabulary's, or the trie
    // of the tokens outside a string-text slice the state takes whole.
    std::vector<std::pair<int32_t, int32_t>> exits;
    const TokenTrie* exit_trie = nullptr;
  };
  // Computed the first time a state is asked for; thread-safe.
  const LexemeTokens& lexeme_tokens(int32_t state, bool in_lexeme) const;

  const std::shared_ptr<const Grammar>& grammar() const { return grammar_; }
  // What the lexer's states and the cached token sets take, about: they grow
  // as texts visit new states, so a cache of grammars must watch it.
  size_t memory_bytes() const;
  const std::shared_ptr<const TokenTrie>& vocab() const { return vocab_; }

 private:
  std::unique_ptr<LexemeTokens> walk(int32_t state, bool in_lexeme) const;
  // How many bytes of any text of the class keep the lexer alive from
  // `state` (between characters): TokenTrie::kAnyLength when there is no
  // limit; at most 32 otherwise.
  size_t text_reach(TextClass text_class, int32_t state) const;

  std::shared_ptr<const Grammar> grammar_;
  std::shared_ptr<const TokenTrie> vocab_;
  mutable std::mutex mutex_;
  mutable std::unordered_map<int64_t, std::unique_ptr<LexemeTokens>> by_state_;
  mutable size_t tokens_bytes_ = 0;  // of by_state_, under mutex_
};

}  // namespace skiff::grammar
