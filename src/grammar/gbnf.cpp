// GBNF syntax tree -> Grammar.
//
// Greedy lexing is exact when, at every lexeme boundary of a valid text, no
// lexeme the parser allows at the start of the finished one could still take
// the next byte. Lexemes of one code point never break this among themselves
// (UTF-8 is prefix-free), so they are the default. A regular part X becomes
// one lexeme only if, for X and every lexeme Y that may start where it does,
// no nonempty string t of X and byte b that may follow X has t·b a prefix Y
// can still extend (and the same with the roles swapped). "May start where X
// does" is approximated from bytes: Y's first bytes meet X's, and the byte
// before them (or the start of the text) may be the same. The products of the
// lexemes' automata decide the rest. Whatever is unsure, or past the work
// budget, stays one code point per lexeme: slower, never wrong.
#include "grammar/gbnf.h"

#include <fmt/format.h>

#include <algorithm>
#include <optional>
#include <unordered_map>

#include "base/error.h"
#include "grammar/gbnf_analysis.h"

namespace skiff::grammar {
namespace {

using gbnf::ByteSet;
using gbnf::Dfa;
using gbnf::first_byte;
using gbnf::last_byte;
using gbnf::lead_bytes;
using gbnf::Node;
using Kind = gbnf::Node::Kind;

constexpr size_t kMaxNodes = 1 << 19;
constexpr uint64_t kWorkBudget = 50'000'000;  // steps of the collapse analysis per grammar (~0.1 s)
constexpr size_t kMaxLexemeDfa = 2048;         // DFA states of one collapsed lexeme
constexpr uint64_t kMaxLexemeSize = 1 << 14;   // its NFA states, about
constexpr uint64_t kSizeCap = uint64_t{1} << 40;
constexpr int kMaxInlineDepth = 1000;  // a collapsed lexeme's regex nesting, rules inlined

uint64_t sat(uint64_t v) { return std::min(v, kSizeCap); }

std::string set_key(const CharSet& set) {
  std::string key;
  for (auto [lo, hi] : set.ranges()) key += fmt::format("{:x}-{:x},", lo, hi);
  return key;
}

class Compiler {
 public:
  Compiler(std::string_view text, gbnf::Syntax syntax, Limits limits, GbnfOptions options)
      : text_(text), limits_(limits), collapse_(options.collapse_regular), syntax_(std::move(syntax)), an_(syntax_),
        builder_(limits) {
    size_t n_rules = syntax_.rules.size();
    node_entries_.assign(syntax_.n_nodes, {});
    rule_lexeme_.assign(n_rules, std::nullopt);
    absorbed_.assign(n_rules, 0);
    rule_cp_.assign(n_rules, -1);
    rule_size_.assign(n_rules, kSizeCap);
    rule_depth_.assign(n_rules, kMaxInlineDepth + 1);
    cfg_rule_.assign(n_rules, -1);
    budget_.limit = kWorkBudget;
  }

  std::shared_ptr<const Grammar> compile() {
    record_entries();
    if (collapse_) collapse_rules();
    int32_t root = syntax_.root;
    current_ = root;
    Symbol start = at_rule(root, [&] { return rule_symbol(root); });
    while (!pending_.empty()) {
      int32_t r = pending_.back();
      pending_.pop_back();
      current_ = r;
      at_rule(r, [&] {
        emit_alternatives(cfg_rule_[r], body(r), an_.follow_rule[r], an_.prev_rule[r]);
        return 0;
      });
    }
    return at_rule(root, [&] { return builder_.build(start); });
  }

 private:
  struct Entry {  // single-code-point lexeme occurrences alike in set and context
    int32_t charset;
    ByteSet follow, prev;
    int32_t live = 0;  // occurrences that may still be emitted as such
  };
  struct Collapsed {
    std::unique_ptr<Dfa> dfa;
    ByteSet first, follow, prev;
  };
  struct Candidate {
    std::vector<const Node*> items;  // consecutive items of one sequence
    ByteSet follow, prev, first;
  };

  const Node& body(int32_t rule) const { return syntax_.rules[rule].body; }

  // Builder errors (limits) named at the rule being compiled.
  template <class F>
  auto at_rule(int32_t rule, F&& f) -> decltype(f()) {
    try {
      return f();
    } catch (const Error& e) {
      std::string_view what = e.what();
      if (what.starts_with("gbnf:")) throw;
      const gbnf::Rule& r = syntax_.rules[rule];
      fail("gbnf: {} (rule '{}'): {}", gbnf::position(text_, r.offset), r.name, what);
    }
  }

  int32_t charset_id(const CharSet& set) {
    auto [it, added] = charset_index_.try_emplace(set_key(set), static_cast<int32_t>(charsets_.size()));
    if (added) {
      charsets_.push_back(set);
      charset_first_.push_back(lead_bytes(set));
      cp_symbol_.push_back(0);
      cp_dfa_.emplace_back();
    }
    return it->second;
  }

  void add_entry(int32_t node, int32_t charset, const ByteSet& follow, const ByteSet& prev) {
    std::string key(reinterpret_cast<const char*>(&charset), sizeof charset);
    for (const ByteSet* s : {&follow, &prev})
      for (size_t i = 0; i < s->size(); i += 8) {
        char c = 0;
        for (size_t k = i; k < std::min(i + 8, s->size()); ++k) c = static_cast<char>(c | (*s)[k] << (k - i));
        key += c;
      }
    auto [it, added] = entry_index_.try_emplace(key, static_cast<int32_t>(entries_.size()));
    if (added) {
      entries_.push_back({charset, follow, prev, 0});
      for (size_t b = 0; b < 256; ++b)
        if (charset_first_[charset][b]) entries_by_first_[b].push_back(it->second);
    }
    entries_[it->second].live += 1;
    node_entries_[node].push_back(it->second);
  }

  // Every one-code-point terminal as it occurs, with its context; and what
  // collapsing needs of regular rules.
  void record_entries() {
    auto visit = [&](const Node& n, const ByteSet& f, const ByteSet& p) {
      if (n.kind == Kind::Chars) add_entry(n.id, charset_id(n.chars), f, p);
      if (n.kind != Kind::Literal) return;
      for (size_t i = 0; i < n.text.size(); ++i) {
        ByteSet fi = f, pi = p;
        if (i + 1 < n.text.size()) fi.reset(), fi.set(first_byte(n.text[i + 1]));
        if (i > 0) pi.reset(), pi.set(last_byte(n.text[i - 1]));
        add_entry(n.id, charset_id(CharSet{{n.text[i], n.text[i]}}), fi, pi);
      }
    };
    for (int32_t r : an_.order) {
      ByteSet f = an_.follow_rule[r], p = an_.prev_rule[r];
      an_.walk(body(r), f, p, visit);
      if (!an_.regular_rule[r]) continue;  // callees first: a regular rule's callees are measured
      CharSet set;
      if (single_cp(body(r), set)) rule_cp_[r] = charset_id(set);
      rule_size_[r] = regex_size(body(r));
      rule_depth_[r] = regex_depth(body(r));
    }
  }

  // The node always matches exactly one code point of `out`.
  bool single_cp(const Node& n, CharSet& out) const {
    switch (n.kind) {
      case Kind::Chars: out.add(n.chars); return true;
      case Kind::Literal:
        if (n.text.size() != 1) return false;
        out.add(n.text[0]);
        return true;
      case Kind::Ref:
        if (rule_cp_[n.rule] < 0) return false;
        out.add(charsets_[rule_cp_[n.rule]]);
        return true;
      case Kind::Alt:
        for (const Node& c : n.children)
          if (!single_cp(c, out)) return false;
        return true;
      case Kind::Repeat: return n.min == 1 && n.max == 1 && single_cp(n.children[0], out);
      case Kind::Seq: return false;
    }
    return false;
  }

  uint64_t regex_size(const Node& n) const {  // about its NFA states
    uint64_t size = 2;
    switch (n.kind) {
      case Kind::Chars: return sat(2 + 8 * n.chars.ranges().size());
      case Kind::Literal: return sat(2 + 4 * n.text.size());
      case Kind::Ref: return an_.regular_rule[n.rule] ? rule_size_[n.rule] : kSizeCap;
      case Kind::Repeat: {
        uint64_t copies = n.max == gbnf::kUnbounded ? uint64_t{n.min} + 1 : n.max;
        return sat(2 + regex_size(n.children[0]) * copies);
      }
      default:
        for (const Node& c : n.children) size = sat(size + regex_size(c));
        return size;
    }
  }
  int regex_depth(const Node& n) const {
    if (n.kind == Kind::Ref) return an_.regular_rule[n.rule] ? rule_depth_[n.rule] + 1 : kMaxInlineDepth + 1;
    int depth = 0;
    for (const Node& c : n.children) depth = std::max(depth, regex_depth(c));
    return depth + 1;
  }

  RegexNode to_regex(const Node& n) const {
    std::vector<RegexNode> parts;
    switch (n.kind) {
      case Kind::Chars: return RegexNode::of_chars(n.chars);
      case Kind::Literal:
        for (uint32_t c : n.text) parts.push_back(RegexNode::of_chars(CharSet{{c, c}}));
        return RegexNode::concat(std::move(parts));
      case Kind::Ref: return to_regex(body(n.rule));
      case Kind::Repeat:
        return RegexNode::repeat(to_regex(n.children[0]), n.min,
                                 n.max == gbnf::kUnbounded ? RegexNode::kUnbounded : n.max);
      default:
        for (const Node& c : n.children) parts.push_back(to_regex(c));
        return n.kind == Kind::Alt ? RegexNode::alt(std::move(parts)) : RegexNode::concat(std::move(parts));
    }
  }

  void serialize(const Node& n, std::string& out) const {
    switch (n.kind) {
      case Kind::Chars: out += "[" + set_key(n.chars) + "]"; return;
      case Kind::Literal:
        out += '"';
        for (uint32_t c : n.text) out += fmt::format("{:x},", c);
        out += '"';
        return;
      case Kind::Ref: out += "<" + syntax_.rules[n.rule].name + ">"; return;
      case Kind::Repeat:
        serialize(n.children[0], out);
        out += fmt::format("{{{},{}}}", n.min, n.max);
        return;
      default:
        out += '(';
        for (const Node& c : n.children) {
          serialize(c, out);
          if (n.kind == Kind::Alt) out += '|';
        }
        out += ')';
    }
  }

  const Dfa* cp_dfa(int32_t charset) {  // null past the budget
    if (!cp_dfa_[charset]) {
      auto dfa = std::make_unique<Dfa>();
      size_t unused;
      if (!build_dfa(RegexNode::of_chars(charsets_[charset]), kMaxLexemeDfa, budget_, *dfa, unused)) return nullptr;
      cp_dfa_[charset] = std::move(dfa);
    }
    return cp_dfa_[charset].get();
  }

  bool safe(const Candidate& c, const Dfa& dfa) {
    if (conflict(dfa, dfa, c.follow, budget_)) return false;
    // One-code-point lexemes that may start where it does, by set.
    ++stamp_;
    entry_stamp_.resize(entries_.size(), 0);
    std::unordered_map<int32_t, ByteSet> follows;
    for (size_t b = 0; b < 256; ++b) {
      if (!c.first[b]) continue;
      for (int32_t e : entries_by_first_[b]) {
        ++budget_.used;
        if (entry_stamp_[e] == stamp_) continue;
        entry_stamp_[e] = stamp_;
        const Entry& en = entries_[e];
        if (en.live > 0 && (en.prev & c.prev).any()) follows[en.charset] |= en.follow;
      }
    }
    for (auto& [charset, follow] : follows) {
      const Dfa* one = cp_dfa(charset);
      if (!one || conflict(*one, dfa, follow, budget_)) return false;
    }
    for (const Collapsed& o : collapsed_) {
      ++budget_.used;
      if ((o.first & c.first).none() || (o.prev & c.prev).none()) continue;
      if (conflict(dfa, *o.dfa, c.follow, budget_) || conflict(*o.dfa, dfa, o.follow, budget_)) return false;
    }
    return !budget_.spent();
  }

  void set_live(const Node& n, int delta) {
    for (int32_t e : node_entries_[n.id]) entries_[e].live += delta;
    for (const Node& c : n.children) set_live(c, delta);
  }

  // The regular rules that collapsing `r` leaves unused: every caller
  // collapsed, absorbed, or among them (callers first, so one pass).
  std::vector<int32_t> absorbed_with(int32_t r) {
    std::vector<int32_t> below{r}, out;
    std::vector<uint8_t>& in = scratch_flags_;
    in.assign(syntax_.rules.size(), 0);
    in[r] = 1;
    for (size_t i = 0; i < below.size(); ++i)
      for (int32_t q : an_.callees[below[i]]) {
        ++budget_.used;
        if (!in[q]) in[q] = 2, below.push_back(q);  // 2: below r, not yet known unused
      }
    std::sort(below.begin() + 1, below.end(),
              [&](int32_t a, int32_t b) { return an_.order_pos[a] > an_.order_pos[b]; });
    for (size_t i = 1; i < below.size(); ++i) {
      int32_t q = below[i];
      if (q == syntax_.root || absorbed_[q] || rule_lexeme_[q]) continue;
      if (std::all_of(an_.callers[q].begin(), an_.callers[q].end(),
                      [&](int32_t c) { return in[c] == 1 || rule_lexeme_[c] || absorbed_[c]; }))
        in[q] = 1, out.push_back(q);
    }
    return out;
  }

  std::optional<Symbol> try_collapse(const Candidate& c, const std::string& key, int32_t rule = -1) {
    if (!collapse_ || budget_.spent()) return std::nullopt;
    uint64_t size = 0;
    int depth = 0;
    for (const Node* n : c.items) {
      if (!an_.regular[n->id]) return std::nullopt;
      size = sat(size + regex_size(*n));
      depth = std::max(depth, regex_depth(*n));
    }
    if (size > kMaxLexemeSize || depth > kMaxInlineDepth) return std::nullopt;
    std::vector<RegexNode> parts;
    for (const Node* n : c.items) parts.push_back(to_regex(*n));
    RegexNode re = RegexNode::concat(std::move(parts));
    auto dfa = std::make_unique<Dfa>();
    size_t nfa_states = 0;
    if (!build_dfa(re, kMaxLexemeDfa, budget_, *dfa, nfa_states)) return std::nullopt;
    // Collapsed lexemes take at most half the grammar's NFA, so collapsing never makes it too large.
    if (nfa_used_ + nfa_states > limits_.max_nfa_states / 2) return std::nullopt;
    std::vector<int32_t> absorbs;
    if (rule >= 0) absorbs = absorbed_with(rule);
    for (const Node* n : c.items) set_live(*n, -1);
    for (int32_t q : absorbs) set_live(body(q), -1);
    if (!safe(c, *dfa)) {
      for (const Node* n : c.items) set_live(*n, +1);
      for (int32_t q : absorbs) set_live(body(q), +1);
      return std::nullopt;
    }
    for (int32_t q : absorbs) absorbed_[q] = 1;
    nfa_used_ += nfa_states;
    collapsed_.push_back({std::move(dfa), c.first, c.follow, c.prev});
    return builder_.regex(re, TextEncoding::Utf8, key);
  }

  // Regular rules as one lexeme wherever they are used; callers first, again
  // while any succeeds (each one collapsed retires one-code-point terminals
  // that might have stood in another's way).
  void collapse_rules() {
    for (bool progress = true; progress;) {
      progress = false;
      for (auto it = an_.order.rbegin(); it != an_.order.rend(); ++it) {
        int32_t r = *it;
        if (!an_.regular_rule[r] || rule_cp_[r] >= 0 || rule_lexeme_[r] || absorbed_[r]) continue;
        // Used only inside collapsed rules: never emitted, so its terminals stand in no one's way.
        if (r != syntax_.root && std::all_of(an_.callers[r].begin(), an_.callers[r].end(),
                                             [&](int32_t c) { return rule_lexeme_[c] || absorbed_[c]; })) {
          absorbed_[r] = 1;
          set_live(body(r), -1);
          progress = true;
          continue;
        }
        const Node& b = body(r);
        Candidate c{{&b}, an_.follow_rule[r], an_.prev_rule[r], an_.first[b.id]};
        rule_lexeme_[r] = at_rule(r, [&] { return try_collapse(c, "rule:" + syntax_.rules[r].name, r); });
        progress = progress || rule_lexeme_[r];
      }
    }
  }

  Symbol cp_lexeme(const CharSet& set) {
    int32_t id = charset_id(set);
    if (cp_symbol_[id] == 0)
      cp_symbol_[id] = builder_.regex(RegexNode::of_chars(set), TextEncoding::Utf8, "cp:" + set_key(set));
    return cp_symbol_[id];
  }

  Symbol rule_symbol(int32_t r) {
    if (rule_lexeme_[r]) return *rule_lexeme_[r];
    if (rule_cp_[r] >= 0) return cp_lexeme(charsets_[rule_cp_[r]]);
    if (cfg_rule_[r] < 0) {
      cfg_rule_[r] = builder_.add_rule(syntax_.rules[r].name);
      pending_.push_back(r);
    }
    return cfg_rule_[r];
  }

  int32_t new_rule() { return builder_.add_rule(fmt::format("{}#{}", syntax_.rules[current_].name, ++generated_)); }

  void emit_alternatives(int32_t rule, const Node& n, const ByteSet& follow, const ByteSet& prev) {
    if (n.kind != Kind::Alt) {
      builder_.add_production(rule, emit_sequence(n, follow, prev));
      return;
    }
    for (const Node& c : n.children) builder_.add_production(rule, emit_sequence(c, follow, prev));
  }

  bool in_run(const Node& n) const {
    return an_.regular[n.id] && !(n.kind == Kind::Ref && rule_lexeme_[n.rule]);
  }

  // Runs of regular items try to become one lexeme, then each item alone.
  std::vector<Symbol> emit_sequence(const Node& n, const ByteSet& follow, const ByteSet& prev) {
    std::vector<const Node*> items = gbnf::Analysis::items_of(n);
    std::vector<ByteSet> f, p;
    an_.contexts(items, follow, prev, f, p);
    std::vector<Symbol> out;
    CharSet scratch;
    for (size_t i = 0; i < items.size();) {
      size_t j = i;
      while (j < items.size() && in_run(*items[j])) ++j;
      if (j == i) {
        emit_item(*items[i], f[i], p[i], false, out);
        ++i;
        continue;
      }
      if (j - i > 1 || !single_cp(*items[i], scratch)) {
        Candidate c{{items.begin() + i, items.begin() + j}, f[j - 1], p[i], {}};
        std::string key = "re:";
        for (const Node* item : c.items) serialize(*item, key);
        for (const Node* item : c.items) {
          c.first |= an_.first[item->id];
          if (!an_.nullable[item->id]) break;
        }
        if (auto s = try_collapse(c, key)) {
          out.push_back(*s);
          i = j;
          continue;
        }
      }
      for (size_t k = i; k < j; ++k) emit_item(*items[k], f[k], p[k], j - i == 1, out);
      i = j;
    }
    return out;
  }

  void emit_item(const Node& n, const ByteSet& follow, const ByteSet& prev, bool tried, std::vector<Symbol>& out) {
    CharSet set;
    if (single_cp(n, set)) {
      out.push_back(cp_lexeme(set));
      return;
    }
    if (!tried && in_run(n)) {
      std::string key = "re:";
      serialize(n, key);
      if (auto s = try_collapse(Candidate{{&n}, follow, prev, an_.first[n.id]}, key)) {
        out.push_back(*s);
        return;
      }
    }
    switch (n.kind) {
      case Kind::Chars: return;  // single_cp above
      case Kind::Literal:
        for (uint32_t c : n.text) out.push_back(cp_lexeme(CharSet{{c, c}}));
        return;
      case Kind::Ref: out.push_back(rule_symbol(n.rule)); return;
      case Kind::Seq: {
        std::vector<Symbol> inner = emit_sequence(n, follow, prev);
        out.insert(out.end(), inner.begin(), inner.end());
        return;
      }
      case Kind::Alt: {
        int32_t r = new_rule();
        emit_alternatives(r, n, follow, prev);
        out.push_back(r);
        return;
      }
      case Kind::Repeat: emit_repeat(n, follow, prev, out); return;
    }
  }

  // x{m,n}: m copies, then n - m nested optionals, or a left-recursive star
  // (which Earley parses in constant work per row).
  void emit_repeat(const Node& n, const ByteSet& follow, const ByteSet& prev, std::vector<Symbol>& out) {
    if (n.max == 0) return;
    std::vector<Symbol> x = emit_sequence(n.children[0], an_.repeat_follow(n, follow), an_.repeat_prev(n, prev));
    if (x.empty()) return;
    if (x.size() > 1) {
      int32_t r = new_rule();
      builder_.add_production(r, std::move(x));
      x = {r};
    }
    Symbol s = x[0];
    out.insert(out.end(), n.min, s);
    if (n.max == gbnf::kUnbounded) {
      int32_t star = new_rule();
      builder_.add_production(star, {});
      builder_.add_production(star, {star, s});
      out.push_back(star);
      return;
    }
    Symbol rest = -1;
    for (uint32_t k = n.min; k < n.max; ++k) {
      int32_t opt = new_rule();
      builder_.add_production(opt, {});
      builder_.add_production(opt, rest < 0 ? std::vector<Symbol>{s} : std::vector<Symbol>{s, rest});
      rest = opt;
    }
    if (rest >= 0) out.push_back(rest);
  }

  std::string_view text_;
  Limits limits_;
  bool collapse_;
  gbnf::Syntax syntax_;
  gbnf::Analysis an_;
  GrammarBuilder builder_;

  std::vector<uint8_t> scratch_flags_;
  std::vector<std::vector<int32_t>> node_entries_;  // per node id: its terminals' entries
  // Per rule.
  std::vector<std::optional<Symbol>> rule_lexeme_;
  std::vector<uint8_t> absorbed_;  // regular rules whose every caller is collapsed
  std::vector<int32_t> rule_cp_;  // charset of a rule that is one code point, or -1
  std::vector<uint64_t> rule_size_;
  std::vector<int> rule_depth_;
  std::vector<int32_t> cfg_rule_;
  std::vector<int32_t> pending_;
  int32_t current_ = 0;
  int generated_ = 0;

  std::vector<CharSet> charsets_;
  std::vector<ByteSet> charset_first_;
  std::vector<Symbol> cp_symbol_;
  std::vector<std::unique_ptr<Dfa>> cp_dfa_;
  std::unordered_map<std::string, int32_t> charset_index_;
  std::vector<Entry> entries_;
  std::unordered_map<std::string, int32_t> entry_index_;
  std::array<std::vector<int32_t>, 256> entries_by_first_;
  std::vector<uint32_t> entry_stamp_;
  uint32_t stamp_ = 0;
  std::vector<Collapsed> collapsed_;
  gbnf::Budget budget_;
  size_t nfa_used_ = 0;
};

}  // namespace

std::shared_ptr<const Grammar> compile_gbnf(std::string_view text, Limits limits) {
  return compile_gbnf(text, limits, GbnfOptions{});
}

std::shared_ptr<const Grammar> compile_gbnf(std::string_view text, Limits limits, GbnfOptions options) {
  return compile_syntax(text, gbnf::parse(text, syntax_node_limit(limits), limits.max_rules), limits, options);
}

size_t syntax_node_limit(const Limits& limits) { return std::min(limits.max_symbols, kMaxNodes); }

std::shared_ptr<const Grammar> compile_syntax(std::string_view text, gbnf::Syntax syntax, Limits limits,
                                              GbnfOptions options) {
  return Compiler(text, std::move(syntax), limits, options).compile();
}

}  // namespace skiff::grammar
