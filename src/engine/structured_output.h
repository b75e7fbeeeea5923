// Structured outputs into grammars bound to the model's vocabulary, compiled
// once per distinct constraint and kept (least recently used dropped), so
// that requests with the same schema share the lexer states and mask sets
// their matchers have found.
#pragma once
#include <list>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>

#include "engine/sampling_params.h"
#include "grammar/compiled_grammar.h"
#include "tokenizer/tokenizer.h"

namespace skiff {

class GrammarCache {
 public:
  // At most `capacity` grammars, and past `max_bytes` (their lexers and
  // token sets grow with use) the least recently used go first.
  explicit GrammarCache(const Tokenizer& tokenizer, size_t capacity = 64, size_t max_bytes = size_t{512} << 20);

  // The compiled constraint, or null when none is set. Throws Error naming
  // what cannot be compiled. Safe to call from any thread; compiling does not
  // hold up other callers.
  std::shared_ptr<const grammar::CompiledGrammar> get(const StructuredOutputs& so);

 private:
  const std::shared_ptr<const grammar::TokenTrie>& vocab();
  void evict();  // under mutex_: down to capacity_ and max_bytes_, keeping the newest

  const Tokenizer& tokenizer_;
  size_t capacity_, max_bytes_;
  std::mutex mutex_;
  std::shared_ptr<const grammar::TokenTrie> vocab_;  // built at the first constrained request
  std::list<std::pair<std::string, std::shared_ptr<const grammar::CompiledGrammar>>> lru_;
  std::unordered_map<std::string, decltype(lru_)::iterator> by_key_;
};

}  // namespace skiff
