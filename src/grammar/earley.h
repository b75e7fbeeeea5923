// An Earley parser over lexemes (Earley 1970, with Aycock and Horspool's
// handling of nullable symbols): any context-free grammar, ambiguous or left
// recursive, one row per lexeme. Rows are kept so that a matcher can roll
// back (a rejected token, a speculative draft, the token walk's backtracking)
// by truncating. Each row knows the lexer state its next lexeme starts in.
#pragma once
#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "grammar/grammar.h"

namespace skiff::grammar {

class EarleyParser {
 public:
  explicit EarleyParser(std::shared_ptr<const Grammar> grammar);

  int32_t n_rows() const { return static_cast<int32_t>(row_begin_.size()) - 1; }
  // Adds a row for a lexeme that is any one of `lexemes` (sorted); false, and
  // no row, when none of them can come next.
  bool scan(std::span<const int32_t> lexemes);
  void truncate(int32_t n_rows);  // back to the state after that many rows

  bool accepting() const { return row_info_.back().accepting; }  // the text so far is complete
  int32_t lexer_start() const { return row_info_.back().lexer_start; }  // kDead when nothing may follow
  const Grammar& grammar() const { return *grammar_; }

 private:
  struct Item {
    int32_t pos;     // into grammar symbols(): the symbol after the dot
    int32_t origin;  // row the production began in
  };
  struct RowInfo {
    int32_t lexer_start;
    bool accepting;
  };
  // Completions one row may make (items advanced over a rule that ends
  // there, duplicates included). Real grammars make at most about a hundred
  // (111 for the largest schemas of tools/collect_schemas.py's corpus, under
  // 10 for JSON and llama.cpp's sample grammars; right recursion one per
  // level); a highly ambiguous one (root ::= root root | "a") makes more at
  // each row, so that each token costs more than the last (cubic in the
  // text): its text is refused with an Error after about 200 rows. A mask
  // scans many rows (one per lexeme end in the vocabulary's walk), so this
  // bounds its time only as that count times the cost of a row (~0.2 ms here).
  static constexpr size_t kMaxCompletions = 20'000;

  void add(Item item);
  // Predictions and completions of the last row. Throws Error past
  // kMaxCompletions or the lexer's state cap, leaving the parser as before the row.
  void close_row();
  void abandon_row();  // drops the row being built

  std::shared_ptr<const Grammar> grammar_;
  std::vector<Item> items_;
  std::vector<int32_t> row_begin_;  // row r is items_[row_begin_[r], row_begin_[r + 1])
  std::vector<RowInfo> row_info_;
  // Duplicate check for the row being built: an open-addressing set of items.
  std::vector<uint64_t> seen_;
  size_t n_seen_ = 0;
  std::vector<uint64_t> expected_;  // scratch: lexeme bitset
};

}  // namespace skiff::grammar
