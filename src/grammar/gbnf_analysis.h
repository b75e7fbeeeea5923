// What compile_gbnf (gbnf.cpp) needs to know of a GBNF syntax tree to decide
// which regular parts may be single lexemes: the rules reachable from root in
// dependency order, which are regular; per node, whether it matches the empty
// string and the bytes its strings may begin and end with; per rule (and,
// walking a body, per node) the bytes that may follow and precede it. And a
// lexeme's automaton, with the test of whether greedy lexing could carry a
// byte across a boundary the grammar needs.
#pragma once
#include <array>
#include <bitset>
#include <cstdint>
#include <vector>

#include "grammar/gbnf_syntax.h"
#include "grammar/regex.h"

namespace skiff::grammar::gbnf {

// Bytes, and kEdge: the start of the text in a "precede" set, its end in a "follow" set.
using ByteSet = std::bitset<257>;
inline constexpr size_t kEdge = 256;

uint8_t first_byte(uint32_t code_point);
uint8_t last_byte(uint32_t code_point);
ByteSet lead_bytes(const CharSet& set);  // may include a few bytes no code point of it starts with
ByteSet last_bytes(const CharSet& set);

struct Analysis {
  explicit Analysis(const Syntax& syntax);

  // A sequence's items (a node other than a sequence is one item).
  static std::vector<const Node*> items_of(const Node& n);
  // What may follow and precede each item, given what follows and precedes the sequence.
  void contexts(const std::vector<const Node*>& items, const ByteSet& follow, const ByteSet& prev,
                std::vector<ByteSet>& f, std::vector<ByteSet>& p) const;
  ByteSet repeat_follow(const Node& n, const ByteSet& follow) const {
    return n.max > 1 ? follow | first[n.children[0].id] : follow;
  }
  ByteSet repeat_prev(const Node& n, const ByteSet& prev) const {
    return n.max > 1 ? prev | last[n.children[0].id] : prev;
  }
  // Visits every node under `n` with what may follow and precede it.
  template <class Visit>
  void walk(const Node& n, const ByteSet& follow, const ByteSet& prev, Visit& visit) const {
    visit(n, follow, prev);
    if (n.kind == Node::Kind::Seq) {
      std::vector<const Node*> items = items_of(n);
      std::vector<ByteSet> f, p;
      contexts(items, follow, prev, f, p);
      for (size_t i = 0; i < items.size(); ++i) walk(*items[i], f[i], p[i], visit);
    } else if (n.kind == Node::Kind::Alt) {
      for (const Node& c : n.children) walk(c, follow, prev, visit);
    } else if (n.kind == Node::Kind::Repeat && n.max > 0) {
      walk(n.children[0], repeat_follow(n, follow), repeat_prev(n, prev), visit);
    }
  }

  const Syntax& syntax;
  std::vector<int32_t> order;      // rules reachable from root, callees first
  std::vector<int32_t> order_pos;  // each rule's index in `order`, -1 if unreachable
  std::vector<std::vector<int32_t>> callees, callers;
  std::vector<uint8_t> regular_rule;  // reaches no cycle
  // Per node, by id: its strings' first and last bytes, whether "" is one, whether it reaches no cycle.
  std::vector<ByteSet> first, last;
  std::vector<uint8_t> nullable, regular;
  // Per rule: what may follow and precede it anywhere it is used.
  std::vector<ByteSet> follow_rule, prev_rule;

 private:
  void order_rules();
  bool mark_regular(const Node& n);
  void summarize(const Node& n);
  void summarize_rules();
  void propagate_contexts();
};

// Work counted against a limit; past it every answer is the cautious one.
struct Budget {
  uint64_t used = 0, limit = 0;
  bool spent() const { return used > limit; }
};

// A lexeme's automaton over bytes, as the lexer's would be for it alone:
// state 0 starts, a move to an empty set of NFA states is none.
struct Dfa {
  std::vector<std::array<int16_t, 256>> next;  // -1: no move
  std::vector<uint8_t> accept;
};
// False when it would pass max_states (at most 32767), or the NFA kMaxNfa states.
bool build_dfa(const RegexNode& re, size_t max_states, Budget& budget, Dfa& dfa, size_t& nfa_states);

// Whether some nonempty text t of X and byte b of `follow` have Y still
// moving on t·b: greedy lexing would take b into Y where X had to end. True
// when the budget is spent.
bool conflict(const Dfa& x, const Dfa& y, const ByteSet& follow, Budget& budget);

}  // namespace skiff::grammar::gbnf
