// The lexer: every lexeme of a grammar is a regular language over bytes, and
// all of them share one NFA. A DFA state is a set of NFA states, built lazily
// the first time a (state, byte) transition is taken, and shared by every
// matcher of the grammar (threads included: reads are lock-free, building a
// state takes a mutex). The parser tells it which lexemes may come next; the
// start state for that set is cached too.
//
// A lexeme may be an intersection of regular languages less a union of others
// (all `required` parts match, no `excluded` part does): a JSON string with a
// pattern and a length, a JSON key that is none of the listed property names.
#pragma once
#include <array>
#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <unordered_map>
#include <vector>

#include "grammar/nfa.h"
#include "grammar/text_class.h"

namespace skiff::grammar {

struct Lexeme {
  struct Part {
    int32_t start = -1, accept = -1;  // in the shared NFA
  };
  std::string name;  // for errors and debugging
  std::vector<Part> required;  // at most kMaxParts
  std::vector<Part> excluded;
  bool nullable = false;  // matches "": the parser may skip it (the lexer never ends an empty lexeme)
  static constexpr size_t kMaxParts = 32;
};

class Lexer {
 public:
  static constexpr int32_t kDead = -1;

  Lexer(const Nfa& nfa, std::vector<Lexeme> lexemes);
  Lexer(const Lexer&) = delete;

  // The state that begins any one of `allowed` (a bitset over lexemes).
  int32_t start_state(std::span<const uint64_t> allowed) const;
  int32_t next(int32_t state, uint8_t byte) const {
    const Chunk& c = *chunks_[state >> kChunkBits];
    int32_t t = c.next[state & kChunkMask][byte].load(std::memory_order_acquire);
    return t != kUnknown ? t : build_transitions(state, byte);
  }
  // The transitions of one state, for a walk that takes many from it.
  using Row = const std::atomic<int32_t>*;
  Row row(int32_t state) const { return chunks_[state >> kChunkBits]->next[state & kChunkMask]; }
  int32_t next(Row row, int32_t state, uint8_t byte) const {
    int32_t t = row[byte].load(std::memory_order_acquire);
    return t != kUnknown ? t : build_transitions(state, byte);
  }
  // The lexemes a text ending in this state would be.
  std::span<const int32_t> accepts(int32_t state) const {
    return chunks_[state >> kChunkBits]->accepts[state & kChunkMask];
  }
  size_t n_lexemes() const { return lexemes_.size(); }
  const Lexeme& lexeme(int32_t id) const { return lexemes_[id]; }
  // False when no text can be the lexeme: a required part matches nothing,
  // or (for lexemes of up to kMaxStatesMet states) no text matches all parts.
  bool may_match(int32_t id) const;
  size_t n_states() const { return n_states_.load(std::memory_order_acquire); }
  // True when every text of the class, however long, keeps `state` alive:
  // some lexeme of it has, in each of its required parts, one NFA state whose
  // own moves follow any such text (a JSON string's loop, an open object's
  // key beside the listed names, `[a-z0-9]*`). False says nothing.
  bool takes_any_text(int32_t state, TextClass text_class) const;

 private:
  static constexpr int32_t kUnknown = -2;
  static constexpr int kChunkBits = 6;
  static constexpr int32_t kChunkMask = (1 << kChunkBits) - 1;
  static constexpr size_t kMaxChunks = 4096;  // 262,144 states
  struct Chunk {
    Chunk();
    std::atomic<int32_t> next[1 << kChunkBits][256];
    std::vector<int32_t> nfa_states[1 << kChunkBits];  // sorted
    std::vector<int32_t> accepts[1 << kChunkBits];
  };

  int32_t build_transitions(int32_t state, uint8_t byte) const;
  // Closes `seeds` under epsilon moves, drops the states of lexemes that can no
  // longer match (a required part died, or only exclusions are left), and
  // returns the state for that set (kDead if empty).
  int32_t intern(std::vector<int32_t>& seeds) const;
  // The states `seeds` reach by epsilon moves that can still accept (under mutex_).
  std::vector<int32_t> epsilon_closure(std::vector<int32_t>& seeds) const;
  // Whether some text finishes every required part of the lexeme from its
  // states in the set at once (not only each part alone); memoised. Asked
  // only of lexemes of up to kMaxStatesMet NFA states: tight bounds (a
  // number range, a short length) make small automata and are where texts
  // run into dead ends; a loose bound (maxLength 2048) is large, costly to
  // search and reached by almost no text.
  static constexpr uint32_t kMaxStatesMet = 256;
  bool parts_can_meet(int32_t lexeme, std::span<const int32_t> states) const;
  // Whether the NFA state alone follows any text of the class; memoised.
  bool follows_any_text(int32_t nfa_state, TextClass text_class) const;

  // The NFA, flattened.
  std::vector<uint32_t> epsilon_begin_, edge_begin_;
  std::vector<int32_t> epsilon_;
  std::vector<ByteEdge> edges_;
  std::vector<int32_t> owner_;      // lexeme of each NFA state, -1 for none
  std::vector<int8_t> part_of_;     // its part: required i >= 0, excluded -1 - i
  std::vector<uint8_t> is_accept_;  // the accept state of its part
  // Whether its part's accept state can be reached from it: the lexer keeps
  // no other, so a live DFA state always has a way to finish each part.
  std::vector<uint8_t> can_accept_;
  std::vector<uint8_t> goes_on_;  // some text from it may go on without end (it reaches a loop)
  std::vector<uint32_t> all_required_;  // per lexeme: the mask of its required parts
  std::vector<uint32_t> n_states_of_;   // per lexeme: its NFA states, all parts
  std::vector<Lexeme> lexemes_;

  mutable std::mutex mutex_;
  mutable std::array<std::unique_ptr<Chunk>, kMaxChunks> chunks_;
  mutable std::atomic<size_t> n_states_{0};
  mutable std::unordered_map<std::string, int32_t> state_of_set_;
  // Start states by the hash of their set of lexemes: every parser row asks,
  // and a row's lookup should not allocate.
  struct StartState {
    std::vector<uint64_t> allowed;
    int32_t state;
  };
  mutable std::unordered_multimap<uint64_t, StartState> start_of_allowed_;
  mutable std::vector<uint32_t> seen_;  // scratch, stamped with seen_stamp_
  mutable uint32_t seen_stamp_ = 0;
  mutable std::unordered_map<std::string, bool> parts_meet_;
  mutable std::vector<int8_t> follows_any_[kTextClasses];  // per NFA state: -1 unknown, 0 no, 1 yes
};

}  // namespace skiff::grammar
