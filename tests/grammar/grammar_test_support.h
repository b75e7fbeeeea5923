// Helpers for the grammar tests: a toy vocabulary (every byte, plus some
// multi-byte tokens) and a reference check of a mask against trying each
// token on a copy of the matcher.
#pragma once
#include <gtest/gtest.h>
#include <fmt/format.h>

#include <memory>
#include <set>
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

inline std::string escaped(const std::string& s) {
  std::string out;
  for (unsigned char c : s)
    out += c >= 0x20 && c < 0x7F && c != '\\' ? std::string(1, char(c)) : fmt::format("\\x{:02x}", c);
  return out;
}

// A vocabulary of every byte, the texts' pieces of 2 to 10 bytes (partial
// UTF-8 among them; with long_pieces, of 17 and 33 bytes too, beyond the
// token trie's slices of short text), every pair of a few structural
// characters and some longer pieces; token 0 ends the text.
inline std::shared_ptr<const TokenTrie> pieces_vocab(const std::vector<std::string>& texts, bool long_pieces = false) {
  std::set<std::string> pieces;
  std::vector<size_t> lengths{2, 3, 4, 5, 6, 7, 8, 9, 10};
  if (long_pieces) lengths.insert(lengths.end(), {17, 33});
  for (const std::string& t : texts)
    for (size_t i = 0; i < t.size(); ++i)
      for (size_t n : lengths)
        if (i + n <= t.size()) pieces.insert(t.substr(i, n));
  const std::string structural = "{}[](),:;=\"\\ \n\t-+*/.0123456789aeitx";
  for (char a : structural)
    for (char b : structural) pieces.insert(std::string{a, b});
  for (const char* p : {"\n  ", "\": \"", "true", "false", "null", ", \"", "}}", "]]", "1.5e", "\\u00", "int ",
                        "return "})
    pieces.insert(p);
  std::vector<std::string> tokens{""};
  for (int b = 0; b < 256; ++b) tokens.push_back(std::string(1, char(b)));
  tokens.insert(tokens.end(), pieces.begin(), pieces.end());
  tokens.push_back("");  // a control token: never allowed
  return std::make_shared<TokenTrie>(tokens, std::vector<int32_t>{0});
}

// fill_mask against accept_token on a fresh copy of the matcher, token by token.
inline void expect_mask_is_brute_force(const Matcher& m, const TokenTrie& vocab, const std::string& where) {
  Matcher probe = m;
  std::vector<uint32_t> bits((vocab.n_vocab() + 31) / 32);
  probe.fill_mask(bits);
  for (int32_t t = 0; t < vocab.n_vocab(); ++t) {
    Matcher copy = m;
    ASSERT_EQ(mask_has(bits, t), copy.accept_token(t))
        << "token " << t << " \"" << escaped(vocab.bytes_of(t)) << "\" after \"" << where << "\"";
  }
}

// Along each text, at every byte: the mask against accept_token, the
// matchers sharing one CompiledGrammar as the engine's do.
inline void expect_masks_along(const std::shared_ptr<const Grammar>& g, const std::vector<std::string>& texts,
                        const std::shared_ptr<const TokenTrie>& vocab) {
  auto compiled = std::make_shared<const CompiledGrammar>(g, vocab);
  for (const std::string& text : texts) {
    Matcher m(compiled);
    for (size_t i = 0; i <= text.size(); ++i) {
      ASSERT_NO_FATAL_FAILURE(expect_mask_is_brute_force(m, *vocab, escaped(text.substr(0, i))));
      if (i == text.size()) break;
      ASSERT_TRUE(m.accept_token(byte_token(text[i]))) << escaped(text.substr(0, i + 1));
    }
  }
}

}  // namespace skiff::grammar
