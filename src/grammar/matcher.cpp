#include "grammar/matcher.h"

#include <algorithm>

#include "base/error.h"

namespace skiff::grammar {

Matcher::Matcher(std::shared_ptr<const Grammar> grammar, std::shared_ptr<const TokenTrie> vocab)
    : Matcher(std::make_shared<CompiledGrammar>(std::move(grammar), std::move(vocab))) {}

Matcher::Matcher(std::shared_ptr<const CompiledGrammar> compiled)
    : compiled_(std::move(compiled)), grammar_(compiled_->grammar()), vocab_(compiled_->vocab()),
      lexer_(grammar_->lexer()), parser_(grammar_) {
  positions_.push_back({parser_.lexer_start(), parser_.n_rows(), false});
  frames_.resize(vocab_->max_depth() + 1);
  ends_.resize(vocab_->max_depth() + 1);
}

// Greedy lexing: a byte the current lexeme can take extends it; otherwise the
// lexeme ends there (if it is complete) and the byte begins the next one.
bool Matcher::step(const Position& from, uint8_t byte, Position& to) {
  if (from.state != Lexer::kDead) {
    int32_t t = lexer_.next(from.state, byte);
    if (t != Lexer::kDead) {
      to = {t, from.rows, true};
      return true;
    }
  }
  if (!from.in_lexeme) return false;
  std::span<const int32_t> lexemes = lexer_.accepts(from.state);
  if (lexemes.empty() || !parser_.scan(lexemes)) return false;
  int32_t start = parser_.lexer_start();
  int32_t t = start == Lexer::kDead ? Lexer::kDead : lexer_.next(start, byte);
  if (t == Lexer::kDead) {
    parser_.truncate(from.rows);
    return false;
  }
  to = {t, parser_.n_rows(), true};
  return true;
}

bool Matcher::complete_at(const Position& at) const {
  if (!at.in_lexeme) return parser_.accepting();
  std::span<const int32_t> lexemes = lexer_.accepts(at.state);
  if (lexemes.empty() || !parser_.scan(lexemes)) return false;
  bool accepting = parser_.accepting();
  parser_.truncate(at.rows);
  return accepting;
}

bool Matcher::is_complete() const { return !terminated_ && complete_at(positions_.back()); }

bool Matcher::accept_bytes(std::string_view bytes) {
  if (terminated_) return false;
  size_t mark = positions_.size();
  auto restore = [&] {
    positions_.resize(mark);
    parser_.truncate(positions_.back().rows);
  };
  try {  // a grammar past its limits throws: the matcher stays as it was
    for (char c : bytes) {
      Position next;
      if (!step(positions_.back(), static_cast<uint8_t>(c), next)) {
        restore();
        return false;
      }
      positions_.push_back(next);
    }
  } catch (...) {
    restore();
    throw;
  }
  return true;
}

bool Matcher::accept_token(int32_t token) {
  if (terminated_ || token < 0 || token >= vocab_->n_vocab()) return false;
  const std::vector<int32_t>& ends = vocab_->end_tokens();
  if (std::find(ends.begin(), ends.end(), token) != ends.end()) {
    if (!is_complete()) return false;
    token_marks_.push_back(static_cast<int32_t>(positions_.size()));
    terminated_ = true;
    return true;
  }
  const std::string& bytes = vocab_->bytes_of(token);
  if (bytes.empty()) return false;
  int32_t mark = static_cast<int32_t>(positions_.size());
  if (!accept_bytes(bytes)) return false;
  token_marks_.push_back(mark);
  return true;
}

void Matcher::reset() {
  positions_.resize(1);
  token_marks_.clear();
  parser_.truncate(positions_[0].rows);
  terminated_ = false;
}

void Matcher::rollback(int n_tokens) {
  if (n_tokens <= 0) return;
  if (n_tokens > static_cast<int>(token_marks_.size()))
    fail("grammar matcher: cannot roll back {} tokens of {}", n_tokens, token_marks_.size());
  int32_t mark = token_marks_[token_marks_.size() - n_tokens];
  token_marks_.resize(token_marks_.size() - n_tokens);
  positions_.resize(mark);
  parser_.truncate(positions_.back().rows);
  terminated_ = false;
}

void Matcher::fill_mask(std::span<uint32_t> bits) {
  try {
    fill_mask_walk(bits);
  } catch (...) {  // a grammar past its limits: leave the parser as the text has it
    parser_.truncate(positions_.back().rows);
    throw;
  }
}

void Matcher::fill_mask_walk(std::span<uint32_t> bits) {
  std::fill(bits.begin(), bits.end(), 0);
  if (terminated_) return;
  const Position root = positions_.back();
  if (root.state != Lexer::kDead) {
    const CompiledGrammar::LexemeTokens& inside = compiled_->lexeme_tokens(root.state, root.in_lexeme);
    if (!inside.bits.empty()) std::copy(inside.bits.begin(), inside.bits.end(), bits.begin());
    for (int32_t token : inside.ids) bits[token >> 5] |= 1u << (token & 31);
    // Where the lexeme ends, the parser decides. Exits that end it in the
    // same state share one scan.
    int32_t scanned_state = Lexer::kDead;
    Position next_lexeme{};
    bool can_follow = false;
    for (auto [node, state] : inside.exits) {
      if (state != scanned_state) {
        parser_.truncate(root.rows);
        scanned_state = state;
        can_follow = parser_.scan(lexer_.accepts(state)) && parser_.lexer_start() != Lexer::kDead;
        next_lexeme = {parser_.lexer_start(), parser_.n_rows(), false};
      }
      if (can_follow) walk_subtree(*inside.exit_trie, node, next_lexeme, bits);
    }
    parser_.truncate(root.rows);
  }
  if (complete_at(root))
    for (int32_t token : vocab_->end_tokens()) bits[token >> 5] |= 1u << (token & 31);
}

void Matcher::walk_subtree(const TokenTrie& trie, int32_t node, const Position& from, std::span<uint32_t> bits) {
  int32_t base = trie.depth(node) - 1;
  frames_[base] = from;
  ends_[base] = {};
  int32_t end = trie.subtree_end(node);
  for (int32_t i = node; i < end;) {
    if (!step_in_walk(trie.depth(i), trie.byte(i))) {
      i = trie.subtree_end(i);
      continue;
    }
    for (int32_t token : trie.tokens_at(i)) bits[token >> 5] |= 1u << (token & 31);
    ++i;
  }
}

// The parser keeps every row at or below the frame's; rows above it may be
// another path's, which the serial number tells.
bool Matcher::step_in_walk(int32_t depth, uint8_t byte) {
  const Position& parent = frames_[depth - 1];
  if (parent.state != Lexer::kDead) {
    int32_t t = lexer_.next(parent.state, byte);
    if (t != Lexer::kDead) {
      frames_[depth] = {t, parent.rows, true};
      ends_[depth] = {};
      return true;
    }
  }
  if (!parent.in_lexeme) return false;
  LexemeEnd& ended = ends_[depth - 1];
  if (ended.rows == LexemeEnd::kUnknown || (ended.rows >= 0 && !parser_.has_rows(ended.rows, ended.serial))) {
    parser_.truncate(parent.rows);
    std::span<const int32_t> lexemes = lexer_.accepts(parent.state);
    if (!lexemes.empty() && parser_.scan(lexemes) && parser_.lexer_start() != Lexer::kDead) {
      ended = {parser_.n_rows(), parser_.serial(), parser_.lexer_start()};
    } else {
      ended.rows = LexemeEnd::kCannot;
      parser_.truncate(parent.rows);
    }
  }
  if (ended.rows == LexemeEnd::kCannot) return false;
  int32_t t = lexer_.next(ended.start, byte);
  if (t == Lexer::kDead) return false;
  parser_.truncate(ended.rows);
  frames_[depth] = {t, ended.rows, true};
  ends_[depth] = {};
  return true;
}

// The one byte that may come after `at`, or -1 when none or several may.
// Bytes that extend the current lexeme come from the lexer alone; those that
// begin the next one from one scan of the lexeme, not one per byte.
int Matcher::only_next_byte(const Position& at) {
  int only = -1;
  auto offer = [&](int b) {
    if (only == -1) only = b;
    else if (only != b) only = -2;
  };
  if (at.state != Lexer::kDead)
    for (int b = 0; b < 256 && only != -2; ++b)
      if (lexer_.next(at.state, static_cast<uint8_t>(b)) != Lexer::kDead) offer(b);
  if (only != -2 && at.in_lexeme && !lexer_.accepts(at.state).empty() && parser_.scan(lexer_.accepts(at.state))) {
    const int32_t start = parser_.lexer_start();
    if (start != Lexer::kDead)
      for (int b = 0; b < 256 && only != -2; ++b)
        if (lexer_.next(at.state, static_cast<uint8_t>(b)) == Lexer::kDead &&
            lexer_.next(start, static_cast<uint8_t>(b)) != Lexer::kDead)
          offer(b);
    parser_.truncate(at.rows);
  }
  return only < 0 ? -1 : only;
}

std::string Matcher::forced_bytes(size_t max_bytes) {
  std::string forced;
  if (terminated_) return forced;
  size_t mark = positions_.size();
  auto restore = [&] {
    positions_.resize(mark);
    parser_.truncate(positions_.back().rows);
  };
  try {
    while (forced.size() < max_bytes && !complete_at(positions_.back())) {
      const int only = only_next_byte(positions_.back());
      Position next;
      if (only < 0 || !step(positions_.back(), static_cast<uint8_t>(only), next)) break;
      positions_.push_back(next);
      forced += static_cast<char>(only);
    }
  } catch (...) {
    restore();
    throw;
  }
  restore();
  return forced;
}

}  // namespace skiff::grammar
