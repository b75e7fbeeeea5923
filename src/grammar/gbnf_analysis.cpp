#include "grammar/gbnf_analysis.h"

#include <algorithm>
#include <deque>
#include <string>
#include <unordered_map>
#include <unordered_set>

#include "base/error.h"
#include "grammar/regex_nfa.h"

namespace skiff::grammar::gbnf {
namespace {

using Kind = Node::Kind;

constexpr size_t kMaxNfa = 1 << 15;

void collect_refs(const Node& n, std::vector<int32_t>& out) {
  if (n.kind == Kind::Ref) out.push_back(n.rule);
  for (const Node& c : n.children) collect_refs(c, out);
}

}  // namespace

uint8_t first_byte(uint32_t c) {
  uint8_t b[4];
  encode_utf8(c, b);
  return b[0];
}

uint8_t last_byte(uint32_t c) {
  uint8_t b[4];
  return b[encode_utf8(c, b) - 1];
}

// UTF-8 lead bytes grow with the code point, so a range's lie between its ends'.
ByteSet lead_bytes(const CharSet& set) {
  ByteSet out;
  for (auto [lo, hi] : set.ranges())
    for (int b = first_byte(lo); b <= first_byte(hi); ++b) out.set(b);
  return out;
}

ByteSet last_bytes(const CharSet& set) {
  ByteSet out;
  for (auto [lo, hi] : set.ranges()) {
    for (uint32_t b = lo; b <= std::min(hi, 0x7Fu); ++b) out.set(b);
    if (hi >= 0x80)
      for (int b = 0x80; b <= 0xBF; ++b) out.set(b);
  }
  return out;
}

Analysis::Analysis(const Syntax& s) : syntax(s) {
  size_t n_rules = syntax.rules.size(), n_nodes = syntax.n_nodes;
  first.assign(n_nodes, {});
  last.assign(n_nodes, {});
  nullable.assign(n_nodes, 0);
  regular.assign(n_nodes, 0);
  follow_rule.assign(n_rules, {});
  prev_rule.assign(n_rules, {});
  order_rules();
  summarize_rules();
  propagate_contexts();
}

std::vector<const Node*> Analysis::items_of(const Node& n) {
  std::vector<const Node*> items;
  if (n.kind == Kind::Seq)
    for (const Node& c : n.children) items.push_back(&c);
  else
    items.push_back(&n);
  return items;
}

void Analysis::contexts(const std::vector<const Node*>& items, const ByteSet& follow, const ByteSet& prev,
                        std::vector<ByteSet>& f, std::vector<ByteSet>& p) const {
  size_t n = items.size();
  f.resize(n);
  p.resize(n);
  ByteSet acc = follow;
  for (size_t i = n; i-- > 0;) {
    f[i] = acc;
    acc = nullable[items[i]->id] ? acc | first[items[i]->id] : first[items[i]->id];
  }
  acc = prev;
  for (size_t i = 0; i < n; ++i) {
    p[i] = acc;
    acc = nullable[items[i]->id] ? acc | last[items[i]->id] : last[items[i]->id];
  }
}

// Rules reachable from root, callees first (Tarjan's SCCs, iteratively: a
// chain of rules must not become a chain of stack frames); a rule is regular
// when no cycle is reachable from it.
void Analysis::order_rules() {
  size_t n = syntax.rules.size();
  callees.assign(n, {});
  callers.assign(n, {});
  regular_rule.assign(n, 0);
  std::vector<int32_t> index(n, -1), low(n, 0), stack;
  std::vector<uint8_t> on_stack(n, 0);
  std::vector<std::pair<int32_t, size_t>> calls;
  int32_t counter = 0;
  auto enter = [&](int32_t v) {
    index[v] = low[v] = counter++;
    collect_refs(syntax.rules[v].body, callees[v]);
    std::sort(callees[v].begin(), callees[v].end());
    callees[v].erase(std::unique(callees[v].begin(), callees[v].end()), callees[v].end());
    for (int32_t w : callees[v]) callers[w].push_back(v);
    stack.push_back(v);
    on_stack[v] = 1;
    calls.push_back({v, 0});
  };
  enter(syntax.root);
  while (!calls.empty()) {
    int32_t v = calls.back().first;
    size_t i = calls.back().second;
    if (i < callees[v].size()) {
      ++calls.back().second;
      int32_t w = callees[v][i];
      if (index[w] < 0) enter(w);
      else if (on_stack[w]) low[v] = std::min(low[v], index[w]);
      continue;
    }
    calls.pop_back();
    if (!calls.empty()) low[calls.back().first] = std::min(low[calls.back().first], low[v]);
    if (low[v] != index[v]) continue;
    size_t begin = stack.size() - 1;
    while (stack[begin] != v) --begin;
    bool cyclic = stack.size() - begin > 1 || std::binary_search(callees[v].begin(), callees[v].end(), v);
    for (size_t k = begin; k < stack.size(); ++k) {
      int32_t r = stack[k];
      on_stack[r] = 0;
      order.push_back(r);
      bool reg = !cyclic;
      for (int32_t w : callees[r]) reg = reg && regular_rule[w];
      regular_rule[r] = reg;
    }
    stack.resize(begin);
  }
  order_pos.assign(n, -1);
  for (size_t i = 0; i < order.size(); ++i) order_pos[order[i]] = static_cast<int32_t>(i);
  for (int32_t r : order) mark_regular(syntax.rules[r].body);
}

bool Analysis::mark_regular(const Node& n) {
  bool reg = n.kind != Kind::Ref || regular_rule[n.rule];
  for (const Node& c : n.children) reg = mark_regular(c) && reg;
  regular[n.id] = reg;
  return reg;
}

void Analysis::summarize(const Node& n) {
  ByteSet f, l;
  bool empty = false;
  switch (n.kind) {
    case Kind::Chars:
      f = lead_bytes(n.chars);
      l = last_bytes(n.chars);
      break;
    case Kind::Literal:
      empty = n.text.empty();
      if (!empty) f.set(first_byte(n.text.front())), l.set(last_byte(n.text.back()));
      break;
    case Kind::Ref: {
      int32_t b = syntax.rules[n.rule].body.id;
      f = first[b], l = last[b], empty = nullable[b];
      break;
    }
    case Kind::Seq:
      empty = true;
      for (const Node& c : n.children) {
        summarize(c);
        if (empty) f |= first[c.id];
        empty = empty && nullable[c.id];
      }
      for (size_t i = n.children.size(); i-- > 0;) {
        l |= last[n.children[i].id];
        if (!nullable[n.children[i].id]) break;
      }
      break;
    case Kind::Alt:
      for (const Node& c : n.children) {
        summarize(c);
        f |= first[c.id], l |= last[c.id];
        empty = empty || nullable[c.id];
      }
      break;
    case Kind::Repeat:
      summarize(n.children[0]);
      empty = n.min == 0 || nullable[n.children[0].id];
      if (n.max > 0) f = first[n.children[0].id], l = last[n.children[0].id];
      break;
  }
  first[n.id] = f, last[n.id] = l, nullable[n.id] = empty;
}

// Nullable, first and last bytes to a fixed point: callers again when a callee changes.
void Analysis::summarize_rules() {
  std::deque<int32_t> queue(order.begin(), order.end());
  std::vector<uint8_t> queued(syntax.rules.size(), 0);
  for (int32_t r : order) queued[r] = 1;
  while (!queue.empty()) {
    int32_t r = queue.front();
    queue.pop_front();
    queued[r] = 0;
    int32_t b = syntax.rules[r].body.id;
    ByteSet f = first[b], l = last[b];
    bool empty = nullable[b];
    summarize(syntax.rules[r].body);
    if (f == first[b] && l == last[b] && empty == bool(nullable[b])) continue;
    for (int32_t c : callers[r])
      if (!queued[c]) queued[c] = 1, queue.push_back(c);
  }
}

// What may follow and precede each rule, to a fixed point: callees again when a caller changes.
void Analysis::propagate_contexts() {
  follow_rule[syntax.root].set(kEdge);
  prev_rule[syntax.root].set(kEdge);
  std::deque<int32_t> queue(order.rbegin(), order.rend());
  std::vector<uint8_t> queued(syntax.rules.size(), 0);
  for (int32_t r : order) queued[r] = 1;
  auto visit = [&](const Node& n, const ByteSet& f, const ByteSet& p) {
    if (n.kind != Kind::Ref) return;
    ByteSet nf = follow_rule[n.rule] | f, np = prev_rule[n.rule] | p;
    if (nf == follow_rule[n.rule] && np == prev_rule[n.rule]) return;
    follow_rule[n.rule] = nf, prev_rule[n.rule] = np;
    if (!queued[n.rule]) queued[n.rule] = 1, queue.push_back(n.rule);
  };
  while (!queue.empty()) {
    int32_t r = queue.front();
    queue.pop_front();
    queued[r] = 0;
    ByteSet f = follow_rule[r], p = prev_rule[r];  // copies: the walk may grow r's own sets
    walk(syntax.rules[r].body, f, p, visit);
  }
}

bool build_dfa(const RegexNode& re, size_t max_states, Budget& budget, Dfa& dfa, size_t& nfa_states) {
  Nfa nfa(kMaxNfa);
  int32_t start, accept;
  try {
    start = nfa.add_state(), accept = nfa.add_state();
    add_regex(nfa, re, start, accept, TextEncoding::Utf8);
  } catch (const Error&) {
    return false;
  }
  nfa_states = nfa.size();
  std::unordered_map<std::string, int32_t> ids;
  std::vector<std::vector<int32_t>> sets;
  std::vector<uint32_t> seen(nfa.size(), 0);
  uint32_t stamp = 0;
  auto intern = [&](std::vector<int32_t> seeds) {  // epsilon closure, then the state of that set
    ++stamp;
    std::vector<int32_t> set;
    while (!seeds.empty()) {
      int32_t s = seeds.back();
      seeds.pop_back();
      if (seen[s] == stamp) continue;
      seen[s] = stamp;
      set.push_back(s);
      for (int32_t t : nfa.epsilon(s)) seeds.push_back(t);
    }
    std::sort(set.begin(), set.end());
    std::string key(reinterpret_cast<const char*>(set.data()), set.size() * sizeof(int32_t));
    auto [it, added] = ids.try_emplace(key, static_cast<int32_t>(sets.size()));
    if (added) {
      dfa.accept.push_back(std::binary_search(set.begin(), set.end(), accept));
      dfa.next.emplace_back().fill(-1);
      sets.push_back(std::move(set));
    }
    return it->second;
  };
  intern({start});
  max_states = std::min<size_t>(max_states, INT16_MAX);
  for (size_t i = 0; i < sets.size(); ++i) {
    budget.used += 256;
    if (sets.size() > max_states || budget.spent()) return false;
    std::vector<ByteEdge> edges;
    std::vector<int> cuts{0, 256};  // the edges split the bytes into runs that move alike
    for (int32_t s : sets[i])
      for (const ByteEdge& e : nfa.edges(s)) {
        edges.push_back(e);
        cuts.push_back(e.lo);
        cuts.push_back(e.hi + 1);
      }
    std::sort(cuts.begin(), cuts.end());
    cuts.erase(std::unique(cuts.begin(), cuts.end()), cuts.end());
    for (size_t k = 0; k + 1 < cuts.size(); ++k) {
      std::vector<int32_t> seeds;
      for (const ByteEdge& e : edges)
        if (e.lo <= cuts[k] && cuts[k] <= e.hi) seeds.push_back(e.target);
      if (seeds.empty()) continue;
      auto target = static_cast<int16_t>(intern(std::move(seeds)));
      for (int b = cuts[k]; b < cuts[k + 1]; ++b) dfa.next[i][b] = target;
    }
  }
  return sets.size() <= max_states;
}

bool conflict(const Dfa& x, const Dfa& y, const ByteSet& follow, Budget& budget) {
  // Pairs of states reached by one text, and whether the text is nonempty.
  auto key = [](uint64_t a, uint64_t b, uint64_t nonempty) { return a << 17 | b << 1 | nonempty; };
  std::vector<uint64_t> stack{0};
  std::unordered_set<uint64_t> seen{0};
  while (!stack.empty()) {
    uint64_t k = stack.back();
    stack.pop_back();
    auto a = static_cast<size_t>(k >> 17), b = static_cast<size_t>(k >> 1 & 0xFFFF);
    budget.used += 256;
    if (budget.spent()) return true;
    if ((k & 1) && x.accept[a])
      for (int c = 0; c < 256; ++c)
        if (follow[c] && y.next[b][c] >= 0) return true;
    for (int c = 0; c < 256; ++c) {
      int na = x.next[a][c], nb = y.next[b][c];
      if (na < 0 || nb < 0) continue;
      uint64_t nk = key(na, nb, 1);
      if (seen.insert(nk).second) stack.push_back(nk);
    }
  }
  return false;
}

}  // namespace skiff::grammar::gbnf
