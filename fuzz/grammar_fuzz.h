// What the grammar harnesses (grammar_compile.cpp, grammar_matcher.cpp)
// share: a small vocabulary and the checks a Matcher must pass at any point.
// A failed check prints what disagreed and aborts, which libFuzzer reports
// as a crash with its input.
#pragma once
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "grammar/matcher.h"

namespace skiff::fuzz {

// Tokens 0 and 1 end a text; 2..257 are the 256 bytes; then multi-byte
// tokens of JSON, tool calls, UTF-8 and words; the last one is a control
// token (no bytes), which no grammar may allow.
inline constexpr int32_t kEndToken = 0, kSecondEndToken = 1, kFirstByteToken = 2;

inline const std::vector<std::string>& vocab_texts() {
  static const std::vector<std::string> texts = [] {
    std::vector<std::string> t{"", ""};
    for (int b = 0; b < 256; ++b) t.push_back(std::string(1, static_cast<char>(b)));
    for (const char* s :
         {"{\"", "\":", "\": ", "\",\"", "\"}", "\"]", "\",", "\"", "[\"", "[{", "}]", "},", "],", "{}", "[]",
          "{\n", "\n}", "\n  ", "  ", "    ", "\t", "\r\n", "true", "false", "null", "tru", "nul", "0", "12",
          "123", "-1", ".5", "1.0", "e+", "E-", "00", "\\n", "\\\"", "\\\\", "\\u", "\\u00e9", "\\ud83d",
          "\xc3\xa9", "\xe2\x82\xac", "\xf0\x9f\x98\x80", "\xc3", "\x82\xac", "\xf0\x9f", "abc", "name",
          "\"name\"", "type", "value", "ab", "aa", "aaaa", "xyz", "com", ".org", "@", "http://", "2024-",
          "-01-", "T12:", ":00Z", "<tool_call>", "</tool_call>", "<function=", "a\"", "a\",", "1,",
          " [", " {", "a b", "hello world"})
      t.push_back(s);
    t.push_back("");  // a control token
    return t;
  }();
  return texts;
}

inline std::shared_ptr<const grammar::TokenTrie> small_vocab() {
  static const auto trie = std::make_shared<const grammar::TokenTrie>(
      vocab_texts(), std::vector<int32_t>{kEndToken, kSecondEndToken});
  return trie;
}

inline int32_t n_vocab() { return static_cast<int32_t>(vocab_texts().size()); }
inline bool is_end(int32_t token) { return token == kEndToken || token == kSecondEndToken; }
inline bool has_bit(const std::vector<uint32_t>& bits, int32_t token) { return bits[token >> 5] >> (token & 31) & 1; }

[[noreturn]] inline void finding(const char* what, int32_t token = -1, std::string_view detail = {}) {
  std::fprintf(stderr, "grammar fuzz: %s (token %d '%.*s')\n", what, token, static_cast<int>(detail.size()),
               detail.data());
  std::abort();
}

inline std::vector<uint32_t> mask_of(grammar::Matcher& m) {
  std::vector<uint32_t> bits((n_vocab() + 31) / 32);
  m.fill_mask(bits);
  return bits;
}

// Checks of a mask against the matcher it came from, in any state:
// - a control token is never allowed; an end token exactly where the text is complete;
// - with forced bytes f (the only continuation), every allowed token is a
//   prefix of f or starts with f, and no end token is allowed;
// - a terminated matcher allows nothing and takes nothing.
inline void check_mask_shape(grammar::Matcher& m, const std::vector<uint32_t>& bits, std::string_view forced) {
  if (has_bit(bits, n_vocab() - 1)) finding("a control token is allowed", n_vocab() - 1);
  for (int32_t w = n_vocab(); w < static_cast<int32_t>(bits.size()) * 32; ++w)
    if (has_bit(bits, w)) finding("a bit past the vocabulary is set", w);
  if (m.is_terminated()) {
    for (uint32_t word : bits)
      if (word) finding("a terminated matcher allows a token");
    if (m.accept_token(kFirstByteToken + 'a') || m.accept_bytes("a")) finding("a terminated matcher takes text");
    return;
  }
  const bool complete = m.is_complete();
  if (has_bit(bits, kEndToken) != complete || has_bit(bits, kSecondEndToken) != complete)
    finding(complete ? "complete, but the end tokens are not allowed" : "not complete, but an end token is allowed");
  if (forced.empty()) return;
  if (complete) finding("forced bytes where the text may end", -1, forced);
  for (int32_t t = 0; t < n_vocab(); ++t) {
    if (!has_bit(bits, t)) continue;
    const std::string& text = vocab_texts()[t];
    const size_t n = std::min(text.size(), forced.size());
    if (text.empty() || text.compare(0, n, forced, 0, n) != 0) finding("an allowed token leaves the forced bytes", t, text);
  }
}

// The mask bit of every token equals whether `judge` (m itself, or a second
// matcher fed the same history) takes the token; judge is rolled back after
// each token it takes, and must then give the same mask again.
inline void check_mask_against(const std::vector<uint32_t>& bits, grammar::Matcher& judge) {
  for (int32_t t = 0; t < n_vocab(); ++t) {
    const bool allowed = has_bit(bits, t);
    const int before = judge.n_tokens();
    const bool taken = judge.accept_token(t);
    if (taken != allowed) finding(allowed ? "the mask allows a token accept_token refuses" : "accept_token takes a token the mask refuses",
                                  t, vocab_texts()[t]);
    if (judge.n_tokens() != before + (taken ? 1 : 0)) finding("accept_token counted wrongly", t);
    if (taken) judge.rollback(1);
  }
  if (mask_of(judge) != bits) finding("the mask changed after accepting and rolling back each token");
}

}  // namespace skiff::fuzz
