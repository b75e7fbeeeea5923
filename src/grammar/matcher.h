// A grammar's state for one text being generated: the lexer position inside
// the current lexeme over the Earley parser's rows. It takes tokens (or
// bytes), rolls back a number of tokens (rejected speculative drafts), says
// whether the text may end here, and fills the token mask: one bit per
// vocabulary token whose bytes keep the grammar alive, found by walking the
// vocabulary's trie.
#pragma once
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "grammar/compiled_grammar.h"
#include "grammar/earley.h"

namespace skiff::grammar {

class Matcher {
 public:
  explicit Matcher(std::shared_ptr<const CompiledGrammar> compiled);
  // A matcher of its own, sharing no mask work with others.
  Matcher(std::shared_ptr<const Grammar> grammar, std::shared_ptr<const TokenTrie> vocab);

  // False, and nothing changes, when the token is not allowed here. An end
  // token is allowed where the text is complete, and ends it.
  bool accept_token(int32_t token);
  bool accept_bytes(std::string_view bytes);  // all or nothing; not counted as tokens
  void rollback(int n_tokens);
  void reset();  // back to the start, no text read
  int n_tokens() const { return static_cast<int>(token_marks_.size()); }

  const std::shared_ptr<const TokenTrie>& vocab() const { return vocab_; }
  bool is_complete() const;      // the text so far is a whole sentence of the grammar
  bool is_terminated() const { return terminated_; }  // an end token was accepted
  // bits[id / 32] >> (id % 32) & 1 for every token allowed next; bits has
  // (n_vocab + 31) / 32 words. A grammar past its limits (lexer states,
  // parser completions) throws Error from here, accept_* and forced_bytes,
  // leaving the matcher as it was.
  void fill_mask(std::span<uint32_t> bits);
  // The bytes the grammar allows as the only continuation from here (up to
  // max_bytes), stopping where it could also end: what jump-forward appends
  // without sampling.
  std::string forced_bytes(size_t max_bytes = 256);

 private:
  struct Position {
    int32_t state;      // lexer DFA state
    int32_t rows;       // parser rows
    bool in_lexeme;     // some bytes of the current lexeme were read
  };
  bool step(const Position& from, uint8_t byte, Position& to);
  void fill_mask_walk(std::span<uint32_t> bits);
  bool complete_at(const Position& at) const;
  int only_next_byte(const Position& at);
  // Marks the tokens of the trie subtree at `node` allowed from `from` (the
  // position before the node's byte), with the parser.
  void walk_subtree(const TokenTrie& trie, int32_t node, const Position& from, std::span<uint32_t> bits);
  // step() for the walk's node at `depth` from the frame above it. Where the
  // frame's lexeme ends, the parser's row for that end is made once and kept
  // for its other children (hundreds of tokens begin with ",").
  bool step_in_walk(int32_t depth, uint8_t byte);

  std::shared_ptr<const CompiledGrammar> compiled_;
  std::shared_ptr<const Grammar> grammar_;
  std::shared_ptr<const TokenTrie> vocab_;
  const Lexer& lexer_;
  mutable EarleyParser parser_;
  std::vector<Position> positions_;  // one per byte read, and the start
  std::vector<int32_t> token_marks_;  // positions_ size before each token
  bool terminated_ = false;
  std::vector<Position> frames_;  // the trie walk's stack
  struct LexemeEnd {
    static constexpr int32_t kUnknown = -1, kCannot = -2;
    int32_t rows = kUnknown;  // the parser's rows after it, or kUnknown / kCannot
    uint32_t serial = 0;      // of the last of those rows
    int32_t start = 0;        // the lexer state the next lexeme begins in
  };
  std::vector<LexemeEnd> ends_;  // per frame: where its lexeme would end
};

}  // namespace skiff::grammar
