// Helpers for the grammar tests: a toy vocabulary (every byte, plus some
// multi-byte tokens) and a reference check of a mask against trying each
// token on a copy of the matcher.
#pragma once
#include <memory>
#include <string>
#include <vector>

#include "grammar/matcher.h"

namespace skiff::grammar {

// Token 0 is the end token; 1..256 are the single bytes; then `extra`.
inline std::shared_ptr<const TokenTrie> toy_vocab(const std::vector<std::string>& extra = {}) {
  std::vector<std::string> tokens{""};
  for (int b = 0; b < 256; ++b) tokens.push_back(std::string(1, char(b)));
  tokens.insert(tokens.end(), extra.begin(), extra.end());
  return std::make_shared<TokenTrie>(tokens, std::vector<int32_t>{0});
}

inline int32_t byte_token(char c) { return 1 + static_cast<uint8_t>(c); }

// Feeds the text byte by byte as tokens; true when every byte is allowed and
// the grammar is complete at the end.
inline bool accepts_text(const std::shared_ptr<const Grammar>& g, const std::string& text) {
  Matcher m(g, toy_vocab());
  for (char c : text)
    if (!m.accept_token(byte_token(c))) return false;
  return m.is_complete();
}

inline bool mask_has(const std::vector<uint32_t>& bits, int32_t token) { return bits[token >> 5] >> (token & 31) & 1; }

}  // namespace skiff::grammar
