#include "engine/grammar_vocab.h"

#include <string>
#include <vector>

namespace skiff {

std::shared_ptr<const grammar::TokenTrie> grammar_vocab(const Tokenizer& tokenizer) {
  const Vocab& vocab = tokenizer.vocab();
  std::vector<std::string> bytes(tokenizer.n_vocab());
  for (int32_t id = 0; id < tokenizer.n_vocab(); ++id) {
    TokenType type = vocab.types.empty() ? TokenType::Normal : vocab.types[id];
    if (type == TokenType::Control || type == TokenType::Unknown || type == TokenType::Unused) continue;
    bytes[id] = tokenizer.token_to_piece(id);
  }
  return std::make_shared<grammar::TokenTrie>(bytes, tokenizer.end_of_generation_ids());
}

}  // namespace skiff
