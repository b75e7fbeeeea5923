#include "grammar/earley.h"

#include <algorithm>
#include <climits>

#include "base/error.h"

namespace skiff::grammar {
namespace {

uint64_t key_of(int32_t pos, int32_t origin) {
  return (uint64_t(uint32_t(pos)) << 32) | uint32_t(origin);
}

size_t slot_of(uint64_t key, size_t mask) { return (key * 0x9E3779B97F4A7C15ull) >> 20 & mask; }

}  // namespace

EarleyParser::EarleyParser(std::shared_ptr<const Grammar> grammar) : grammar_(std::move(grammar)) {
  expected_.assign((grammar_->lexer().n_lexemes() + 63) / 64, 0);
  row_begin_.push_back(0);
  seen_.assign(64, 0);
  seen_stamp_.assign(64, 0);
  add({grammar_->production(grammar_->start_production()).begin, 0});
  close_row();
}

void EarleyParser::clear_seen() {
  n_seen_ = 0;
  if (++stamp_ == 0) {
    std::fill(seen_stamp_.begin(), seen_stamp_.end(), 0);
    stamp_ = 1;
  }
}

void EarleyParser::add(Item item) {
  // Grow at half full; rows are small, so this rarely runs.
  if (2 * (n_seen_ + 1) > seen_.size()) {
    std::vector<uint64_t> keys;
    for (size_t h = 0; h < seen_.size(); ++h)
      if (seen_stamp_[h] == stamp_) keys.push_back(seen_[h]);
    seen_.assign(seen_.size() * 2, 0);
    seen_stamp_.assign(seen_.size(), 0);
    stamp_ = 1;
    for (uint64_t k : keys) {
      size_t mask = seen_.size() - 1, h = slot_of(k, mask);
      while (seen_stamp_[h] == stamp_) h = (h + 1) & mask;
      seen_[h] = k;
      seen_stamp_[h] = stamp_;
    }
  }
  uint64_t k = key_of(item.pos, item.origin);
  size_t mask = seen_.size() - 1, h = slot_of(k, mask);
  while (seen_stamp_[h] == stamp_) {
    if (seen_[h] == k) return;
    h = (h + 1) & mask;
  }
  seen_[h] = k;
  seen_stamp_[h] = stamp_;
  ++n_seen_;
  items_.push_back(item);
}

void EarleyParser::close_row() {
  const Grammar& g = *grammar_;
  const std::vector<Symbol>& symbols = g.symbols();
  int32_t row = n_rows();  // the row being closed is index row (its begin is row_begin_.back())
  std::fill(expected_.begin(), expected_.end(), 0);
  bool accepting = false;
  size_t completions = 0;
  for (size_t i = row_begin_.back(); i < items_.size(); ++i) {
    Item item = items_[i];
    Symbol next = symbols[item.pos];
    if (next == Grammar::kEnd) {
      const Grammar::Production& p = g.production(g.production_at(item.pos));
      if (item.origin == 0 && g.production_at(item.pos) == g.start_production()) accepting = true;
      if (item.origin == row) continue;  // an empty derivation: prediction already skipped it
      auto complete = [&](int32_t j) {
        if (++completions > kMaxCompletions) {
          abandon_row();
          fail("grammar: the parse makes more than {} completions at one point (the grammar is too ambiguous)",
               kMaxCompletions);
        }
        add({items_[j].pos + 1, items_[j].origin});
      };
      int32_t begin = row_begin_[item.origin], end = row_begin_[item.origin + 1];
      if (end - begin < kIndexedRowSize) {
        for (int32_t j = begin; j < end; ++j)
          if (symbols[items_[j].pos] == p.rule) complete(j);
      } else {
        const auto& waiting = index_of(item.origin).items;
        auto first = std::lower_bound(waiting.begin(), waiting.end(), std::pair<Symbol, int32_t>{p.rule, INT32_MIN});
        for (auto it = first; it != waiting.end() && it->first == p.rule; ++it) complete(it->second);
      }
    } else if (is_lexeme(next)) {
      int32_t l = lexeme_of(next);
      expected_[l / 64] |= uint64_t{1} << (l % 64);
      if (g.nullable(next)) add({item.pos + 1, item.origin});
    } else {
      for (int32_t p : g.productions_of(next)) add({g.production(p).begin, row});
      if (g.nullable(next)) add({item.pos + 1, item.origin});
    }
  }
  clear_seen();  // for the next row
  bool any = std::any_of(expected_.begin(), expected_.end(), [](uint64_t w) { return w != 0; });
  int32_t lexer_start = Lexer::kDead;
  if (any) {
    try {
      lexer_start = g.lexer().start_state(expected_);  // throws past the lexer's state cap
    } catch (...) {
      abandon_row();
      throw;
    }
  }
  row_info_.push_back({lexer_start, accepting, ++rows_made_});
  row_begin_.push_back(static_cast<int32_t>(items_.size()));
}

void EarleyParser::abandon_row() {
  items_.resize(row_begin_.back());
  clear_seen();
}

bool EarleyParser::scan(std::span<const int32_t> lexemes) {
  const std::vector<Symbol>& symbols = grammar_->symbols();
  int32_t begin = row_begin_[n_rows() - 1], end = row_begin_[n_rows()];
  for (int32_t i = begin; i < end; ++i) {
    Symbol next = symbols[items_[i].pos];
    if (is_lexeme(next) && std::binary_search(lexemes.begin(), lexemes.end(), lexeme_of(next)))
      add({items_[i].pos + 1, items_[i].origin});
  }
  if (items_.size() == static_cast<size_t>(end)) {
    clear_seen();
    return false;
  }
  close_row();
  return true;
}

const EarleyParser::RowIndex& EarleyParser::index_of(int32_t row) {
  if (row_index_.size() <= static_cast<size_t>(row)) row_index_.resize(row + 1);
  RowIndex& index = row_index_[row];
  if (index.valid) return index;
  index.items.clear();
  const std::vector<Symbol>& symbols = grammar_->symbols();
  for (int32_t j = row_begin_[row]; j < row_begin_[row + 1]; ++j) index.items.push_back({symbols[items_[j].pos], j});
  std::sort(index.items.begin(), index.items.end());
  index.valid = true;
  indexed_end_ = std::max<size_t>(indexed_end_, row + 1);
  return index;
}

void EarleyParser::truncate(int32_t n_rows) {
  for (size_t r = n_rows; r < indexed_end_; ++r) row_index_[r].valid = false;
  indexed_end_ = std::min<size_t>(indexed_end_, n_rows);
  row_begin_.resize(n_rows + 1);
  row_info_.resize(n_rows);
  items_.resize(row_begin_.back());
}

}  // namespace skiff::grammar
