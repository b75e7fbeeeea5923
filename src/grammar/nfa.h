// A nondeterministic automaton over bytes (Thompson's construction): what
// every lexeme compiles to before the lexer determinises it lazily. Code
// points enter as UTF-8 byte sequences (add_code_points), so the lexer and the
// token walk only ever see bytes.
#pragma once
#include <cstdint>
#include <string_view>
#include <vector>

#include "grammar/char_set.h"

namespace skiff::grammar {

struct ByteEdge {
  uint8_t lo, hi;  // inclusive
  int32_t target;
};

class Nfa {
 public:
  explicit Nfa(size_t max_states = 1u << 20) : max_states_(max_states) {}

  int32_t add_state();  // throws Error past max_states
  void add_epsilon(int32_t from, int32_t to) { states_[from].epsilon.push_back(to); }
  void add_bytes(int32_t from, uint8_t lo, uint8_t hi, int32_t to) { states_[from].edges.push_back({lo, hi, to}); }
  // Every code point of [lo, hi] (surrogates skipped) as its UTF-8 bytes.
  void add_code_points(int32_t from, uint32_t lo, uint32_t hi, int32_t to);
  void add_literal(int32_t from, const std::string_view bytes, int32_t to);

  size_t size() const { return states_.size(); }
  const std::vector<int32_t>& epsilon(int32_t s) const { return states_[s].epsilon; }
  const std::vector<ByteEdge>& edges(int32_t s) const { return states_[s].edges; }

 private:
  struct State {
    std::vector<int32_t> epsilon;
    std::vector<ByteEdge> edges;
  };
  void add_utf8_same_length(int32_t from, uint32_t lo, uint32_t hi, int32_t to);

  size_t max_states_;
  std::vector<State> states_;
};

// The bytes of a code point in UTF-8 (1 to 4).
int encode_utf8(uint32_t c, uint8_t out[4]);

}  // namespace skiff::grammar
