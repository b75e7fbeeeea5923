#include "grammar/grammar.h"

#include <fmt/format.h>

#include <algorithm>

#include "base/error.h"

namespace skiff::grammar {

GrammarBuilder::GrammarBuilder(Limits limits) : limits_(limits), nfa_(limits.max_nfa_states) {}

int32_t GrammarBuilder::add_rule(std::string name) {
  if (rule_names_.size() >= limits_.max_rules) fail("grammar too large: more than {} rules", limits_.max_rules);
  rule_names_.push_back(std::move(name));
  return static_cast<int32_t>(rule_names_.size() - 1);
}

void GrammarBuilder::add_production(int32_t rule, std::vector<Symbol> body) {
  n_symbols_ += body.size() + 1;
  if (n_symbols_ > limits_.max_symbols) fail("grammar too large: more than {} symbols", limits_.max_symbols);
  productions_.emplace_back(rule, std::move(body));
}

Symbol GrammarBuilder::rule_of(std::string name, std::vector<std::vector<Symbol>> alternatives) {
  int32_t rule = add_rule(std::move(name));
  for (auto& body : alternatives) add_production(rule, std::move(body));
  return rule;
}

Symbol GrammarBuilder::literal(std::string_view bytes) {
  std::string key = "lit\x01" + std::string(bytes);
  if (auto it = lexeme_by_key_.find(key); it != lexeme_by_key_.end()) return it->second;
  Lexeme l;
  l.name = fmt::format("\"{}\"", bytes);
  Lexeme::Part part{nfa_.add_state(), nfa_.add_state()};
  nfa_.add_literal(part.start, bytes, part.accept);
  l.required.push_back(part);
  l.nullable = bytes.empty();
  return add_lexeme(key, std::move(l));
}

Symbol GrammarBuilder::regex(const RegexNode& node, TextEncoding encoding, const std::string& key) {
  std::string full_key = fmt::format("re{}\x01{}", int(encoding), key);
  if (auto it = lexeme_by_key_.find(full_key); it != lexeme_by_key_.end()) return it->second;
  Lexeme l;
  l.name = key;
  l.required.push_back(add_part(node, encoding, false));
  l.nullable = node.matches_empty();
  return add_lexeme(full_key, std::move(l));
}

Symbol GrammarBuilder::lexeme(const std::string& key, const std::vector<const RegexNode*>& required,
                              const std::vector<const RegexNode*>& excluded, bool quoted_json) {
  std::string full_key = "lx\x01" + key;
  if (auto it = lexeme_by_key_.find(full_key); it != lexeme_by_key_.end()) return it->second;
  if (required.empty() || required.size() > Lexeme::kMaxParts || excluded.size() > Lexeme::kMaxParts)
    fail("grammar: too many constraints on one string ({} required, {} excluded)", required.size(), excluded.size());
  Lexeme l;
  l.name = key;
  TextEncoding encoding = quoted_json ? TextEncoding::JsonString : TextEncoding::Utf8;
  l.nullable = !quoted_json;
  for (const RegexNode* node : required) {
    l.required.push_back(add_part(*node, encoding, quoted_json));
    l.nullable = l.nullable && node->matches_empty();
  }
  for (const RegexNode* node : excluded) l.excluded.push_back(add_part(*node, encoding, quoted_json));
  if (l.nullable)
    for (const RegexNode* node : excluded) l.nullable = l.nullable && !node->matches_empty();
  return add_lexeme(full_key, std::move(l));
}

Lexeme::Part GrammarBuilder::add_part(const RegexNode& node, TextEncoding encoding, bool quoted_json) {
  Lexeme::Part part{nfa_.add_state(), nfa_.add_state()};
  if (!quoted_json) {
    add_regex(nfa_, node, part.start, part.accept, encoding);
    return part;
  }
  int32_t open = nfa_.add_state(), close = nfa_.add_state();
  nfa_.add_bytes(part.start, '"', '"', open);
  add_regex(nfa_, node, open, close, TextEncoding::JsonString);
  nfa_.add_bytes(close, '"', '"', part.accept);
  return part;
}

Symbol GrammarBuilder::add_lexeme(const std::string& key, Lexeme lexeme) {
  lexemes_.push_back(std::move(lexeme));
  Symbol s = -static_cast<Symbol>(lexemes_.size());
  lexeme_by_key_.emplace(key, s);
  return s;
}

std::shared_ptr<const Grammar> GrammarBuilder::build(Symbol start) {
  auto g = std::make_shared<Grammar>();
  // A start rule of its own, so that "complete" is one production's end.
  int32_t root = add_rule("<start>");
  add_production(root, {start});
  size_t n_rules = rule_names_.size();
  for (auto& [rule, body] : productions_)
    for (Symbol s : body)
      if (s >= static_cast<Symbol>(n_rules) || (is_lexeme(s) && lexeme_of(s) >= static_cast<int32_t>(lexemes_.size())))
        fail("grammar: production of '{}' names an unknown symbol", rule_names_[rule]);
  g->lexer_ = std::make_unique<Lexer>(nfa_, std::move(lexemes_));
  const Lexer& lexer = *g->lexer_;
  // A grammar no text satisfies is refused here, not found out by a request
  // that can never end. Productions that can never end (a rule that recurses
  // forever, a lexeme no text matches) are dropped, so that the parser never
  // enters a text it cannot finish.
  std::vector<uint8_t> productive(n_rules, 0);
  auto ends = [&](Symbol s) { return is_lexeme(s) ? lexer.may_match(lexeme_of(s)) : productive[s] != 0; };
  for (bool changed = true; changed;) {
    changed = false;
    for (auto& [rule, body] : productions_) {
      if (productive[rule]) continue;
      if (std::all_of(body.begin(), body.end(), ends)) productive[rule] = 1, changed = true;
    }
  }
  if (!productive[root]) fail("grammar: no text satisfies it (every alternative is impossible or recurses forever)");
  std::erase_if(productions_, [&](const auto& p) { return !std::all_of(p.second.begin(), p.second.end(), ends); });
  std::vector<std::vector<int32_t>> by_rule(n_rules);
  for (size_t p = 0; p < productions_.size(); ++p) {
    auto& [rule, body] = productions_[p];
    by_rule[rule].push_back(static_cast<int32_t>(p));
    g->productions_.push_back({rule, static_cast<int32_t>(g->symbols_.size())});
    g->symbols_.insert(g->symbols_.end(), body.begin(), body.end());
    g->symbols_.push_back(Grammar::kEnd);
    g->production_at_.resize(g->symbols_.size(), static_cast<int32_t>(p));
  }
  g->rule_begin_.push_back(0);
  for (auto& list : by_rule) {
    g->rule_productions_.insert(g->rule_productions_.end(), list.begin(), list.end());
    g->rule_begin_.push_back(static_cast<int32_t>(g->rule_productions_.size()));
  }
  g->start_production_ = by_rule[root][0];
  // Nullable rules, to a fixed point.
  g->nullable_.assign(n_rules, 0);
  for (bool changed = true; changed;) {
    changed = false;
    for (auto& [rule, body] : productions_) {
      if (g->nullable_[rule]) continue;
      bool all = true;
      for (Symbol s : body) {
        all = is_lexeme(s) ? lexer.lexeme(lexeme_of(s)).nullable : g->nullable_[s];
        if (!all) break;
      }
      if (all) g->nullable_[rule] = 1, changed = true;
    }
  }
  g->rule_names_ = std::move(rule_names_);
  return g;
}

}  // namespace skiff::grammar
