// A model's vocabulary as the grammar engine sees it: each token's bytes
// (control tokens none, so no grammar ever allows them) and the tokens that
// may end a constrained text. Built once per tokenizer and shared.
#pragma once
#include <memory>

#include "grammar/token_trie.h"
#include "tokenizer/tokenizer.h"

namespace skiff {

std::shared_ptr<const grammar::TokenTrie> grammar_vocab(const Tokenizer& tokenizer);

}  // namespace skiff
