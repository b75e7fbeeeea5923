// The one internal grammar every constraint compiles to: a context-free
// grammar whose terminals are lexemes (regular languages over bytes, lexed
// greedily by `Lexer`). JSON Schema, regexes, choices and GBNF all build one
// with GrammarBuilder; Earley parsing over it is in earley.h.
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "grammar/lexer.h"
#include "grammar/regex.h"
#include "grammar/regex_nfa.h"

namespace skiff::grammar {

// A grammar symbol: a rule (>= 0) or a lexeme (-1 - id).
using Symbol = int32_t;
inline bool is_lexeme(Symbol s) { return s < 0; }
inline int32_t lexeme_of(Symbol s) { return -1 - s; }

struct Limits {
  size_t max_nfa_states = 1u << 20;
  size_t max_rules = 1u << 18;
  size_t max_symbols = 1u << 21;
};

class Grammar {
 public:
  static constexpr Symbol kEnd = INT32_MIN;  // ends each production's symbols

  struct Production {
    int32_t rule;
    int32_t begin;  // index into symbols(); symbols()[begin + len] == kEnd
  };

  const Lexer& lexer() const { return *lexer_; }
  // Productions' bodies, each followed by kEnd; production_at(pos) names the
  // production a position belongs to.
  const std::vector<Symbol>& symbols() const { return symbols_; }
  int32_t production_at(int32_t pos) const { return production_at_[pos]; }
  const Production& production(int32_t id) const { return productions_[id]; }
  std::span<const int32_t> productions_of(int32_t rule) const {
    return {rule_productions_.data() + rule_begin_[rule], rule_productions_.data() + rule_begin_[rule + 1]};
  }
  bool nullable(Symbol s) const { return is_lexeme(s) ? lexer_->lexeme(lexeme_of(s)).nullable : nullable_[s]; }
  int32_t start_production() const { return start_production_; }
  size_t n_rules() const { return rule_names_.size(); }
  const std::string& rule_name(int32_t rule) const { return rule_names_[rule]; }

 private:
  friend class GrammarBuilder;
  std::unique_ptr<Lexer> lexer_;
  std::vector<Symbol> symbols_;
  std::vector<int32_t> production_at_;
  std::vector<Production> productions_;
  std::vector<int32_t> rule_begin_, rule_productions_;
  std::vector<uint8_t> nullable_;
  std::vector<std::string> rule_names_;
  int32_t start_production_ = -1;
};

class GrammarBuilder {
 public:
  explicit GrammarBuilder(Limits limits = {});

  int32_t add_rule(std::string name);
  void add_production(int32_t rule, std::vector<Symbol> body);
  // A rule with these alternatives, each a sequence.
  Symbol rule_of(std::string name, std::vector<std::vector<Symbol>> alternatives);

  // Lexemes, shared by key: equal keys give the same lexeme.
  Symbol literal(std::string_view bytes);
  Symbol regex(const RegexNode& node, TextEncoding encoding, const std::string& key);
  // Texts every `required` regex matches and no `excluded` one does; with
  // quoted_json, each regex is about a JSON string's decoded value and the
  // lexeme is the whole string literal, quotes included.
  Symbol lexeme(const std::string& key, const std::vector<const RegexNode*>& required,
                const std::vector<const RegexNode*>& excluded, bool quoted_json);

  std::shared_ptr<const Grammar> build(Symbol start);

 private:
  Lexeme::Part add_part(const RegexNode& node, TextEncoding encoding, bool quoted_json);
  Symbol add_lexeme(const std::string& key, Lexeme lexeme);

  Limits limits_;
  Nfa nfa_;
  std::vector<Lexeme> lexemes_;
  std::unordered_map<std::string, Symbol> lexeme_by_key_;
  std::vector<std::string> rule_names_;
  std::vector<std::pair<int32_t, std::vector<Symbol>>> productions_;
  size_t n_symbols_ = 0;
};

}  // namespace skiff::grammar
