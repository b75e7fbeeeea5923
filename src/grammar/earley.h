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
  // Each row made gets a serial number of its own, so that a caller keeping
  // a row count can tell whether those rows are still the ones it saw.
  uint32_t serial() const { return row_info_.back().serial; }
  bool has_rows(int32_t n_rows, uint32_t serial) const {
    return n_rows <= this->n_rows() && row_info_[n_rows - 1].serial == serial;
  }
  const Grammar& grammar() const { return *grammar_; }

 private:
  struct Item {
    int32_t pos;     // into grammar symbols(): the symbol after the dot
    int32_t origin;  // row the production began in
  };
  struct RowInfo {
    int32_t lexer_start;
    bool accepting;
    uint32_t serial;
  };
  uint32_t rows_made_ = 0;
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
  // Duplicate check for the row being built: an open-addressing set of
  // items; a slot is in use when its stamp is the row's, so clearing the set
  // for the next row is one increment, however large the set grew.
  std::vector<uint64_t> seen_;
  std::vector<uint32_t> seen_stamp_;
  uint32_t stamp_ = 1;
  size_t n_seen_ = 0;
  void clear_seen();
  std::vector<uint64_t> expected_;  // scratch: lexeme bitset
  // A large row's items by the symbol after their dot, built the first time
  // a completion looks into it: a rule completed over a row of hundreds of
  // items (an object's optional members, right recursion) would scan them
  // all, at every lexeme end of every mask. Kept until the row is truncated.
  static constexpr int32_t kIndexedRowSize = 32;
  struct RowIndex {
    bool valid = false;
    std::vector<std::pair<Symbol, int32_t>> items;  // (symbol after the dot, item), sorted
  };
  std::vector<RowIndex> row_index_;
  size_t indexed_end_ = 0;  // rows past it have no valid index
  const RowIndex& index_of(int32_t row);
};

}  // namespace skiff::grammar
