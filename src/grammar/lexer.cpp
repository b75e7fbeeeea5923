#include "grammar/lexer.h"

#include <algorithm>
#include <climits>
#include <unordered_set>

#include "base/error.h"

namespace skiff::grammar {

Lexer::Chunk::Chunk() {
  for (auto& row : next)
    for (auto& t : row) t.store(kUnknown, std::memory_order_relaxed);
}

Lexer::Lexer(const Nfa& nfa, std::vector<Lexeme> lexemes) : lexemes_(std::move(lexemes)) {
  size_t n = nfa.size();
  epsilon_begin_.assign(n + 1, 0);
  edge_begin_.assign(n + 1, 0);
  for (size_t s = 0; s < n; ++s) {
    epsilon_begin_[s + 1] = epsilon_begin_[s] + static_cast<uint32_t>(nfa.epsilon(s).size());
    edge_begin_[s + 1] = edge_begin_[s] + static_cast<uint32_t>(nfa.edges(s).size());
    epsilon_.insert(epsilon_.end(), nfa.epsilon(s).begin(), nfa.epsilon(s).end());
    edges_.insert(edges_.end(), nfa.edges(s).begin(), nfa.edges(s).end());
  }
  // Each part of each lexeme owns the states reachable from its start.
  owner_.assign(n, -1);
  part_of_.assign(n, 0);
  is_accept_.assign(n, 0);
  auto claim = [&](int32_t start, int32_t lexeme, int8_t part) {
    std::vector<int32_t> stack{start};
    while (!stack.empty()) {
      int32_t s = stack.back();
      stack.pop_back();
      if (owner_[s] == lexeme && part_of_[s] == part) continue;
      if (owner_[s] != -1) fail("grammar: lexemes share automaton states (internal error)");
      owner_[s] = lexeme;
      part_of_[s] = part;
      ++n_states_of_[lexeme];
      for (uint32_t i = epsilon_begin_[s]; i < epsilon_begin_[s + 1]; ++i) stack.push_back(epsilon_[i]);
      for (uint32_t i = edge_begin_[s]; i < edge_begin_[s + 1]; ++i) stack.push_back(edges_[i].target);
    }
  };
  n_states_of_.assign(lexemes_.size(), 0);
  for (size_t id = 0; id < lexemes_.size(); ++id) {
    const Lexeme& l = lexemes_[id];
    if (l.required.empty() || l.required.size() > Lexeme::kMaxParts || l.excluded.size() > Lexeme::kMaxParts)
      fail("grammar: lexeme '{}' has {} parts", l.name, l.required.size());
    for (size_t p = 0; p < l.required.size(); ++p) {
      claim(l.required[p].start, static_cast<int32_t>(id), static_cast<int8_t>(p));
      is_accept_[l.required[p].accept] = 1;
    }
    for (size_t p = 0; p < l.excluded.size(); ++p) {
      claim(l.excluded[p].start, static_cast<int32_t>(id), static_cast<int8_t>(-1 - int(p)));
      is_accept_[l.excluded[p].accept] = 1;
    }
    all_required_.push_back(l.required.size() == 32 ? ~0u : (1u << l.required.size()) - 1);
  }
  // Backwards from the accept states (over the reversed moves, in one array);
  // parts share no states, so a state that reaches one reaches its own part's.
  std::vector<uint32_t> into_begin(n + 2, 0);
  std::vector<int32_t> into(epsilon_.size() + edges_.size());
  for (int32_t t : epsilon_) ++into_begin[t + 2];
  for (const ByteEdge& e : edges_) ++into_begin[e.target + 2];
  for (size_t s = 2; s < n + 2; ++s) into_begin[s] += into_begin[s - 1];
  for (size_t s = 0; s < n; ++s) {
    for (uint32_t i = epsilon_begin_[s]; i < epsilon_begin_[s + 1]; ++i) into[into_begin[epsilon_[i] + 1]++] = int32_t(s);
    for (uint32_t i = edge_begin_[s]; i < edge_begin_[s + 1]; ++i) into[into_begin[edges_[i].target + 1]++] = int32_t(s);
  }
  can_accept_.assign(n, 0);
  std::vector<int32_t> stack;
  for (size_t s = 0; s < n; ++s)
    if (is_accept_[s]) can_accept_[s] = 1, stack.push_back(int32_t(s));
  while (!stack.empty()) {
    int32_t s = stack.back();
    stack.pop_back();
    for (uint32_t i = into_begin[s]; i < into_begin[s + 1]; ++i)
      if (!can_accept_[into[i]]) can_accept_[into[i]] = 1, stack.push_back(into[i]);
  }
  // The states from which texts may go on without end: peel off, from the
  // back, those whose every move leads to a state already peeled.
  std::vector<uint32_t> moves_out(n, 0);
  for (size_t s = 0; s < n; ++s) {
    for (uint32_t i = epsilon_begin_[s]; i < epsilon_begin_[s + 1]; ++i) moves_out[s] += can_accept_[epsilon_[i]];
    for (uint32_t i = edge_begin_[s]; i < edge_begin_[s + 1]; ++i) moves_out[s] += can_accept_[edges_[i].target];
    if (can_accept_[s] && moves_out[s] == 0) stack.push_back(int32_t(s));
  }
  while (!stack.empty()) {
    int32_t s = stack.back();
    stack.pop_back();
    for (uint32_t i = into_begin[s]; i < into_begin[s + 1]; ++i)
      if (--moves_out[into[i]] == 0 && can_accept_[into[i]]) stack.push_back(into[i]);
  }
  seen_.assign(std::max(n, lexemes_.size()), 0);
  goes_on_.assign(n, 0);
  for (size_t s = 0; s < n; ++s) goes_on_[s] = can_accept_[s] && moves_out[s] > 0;
  for (auto& memo : follows_any_) memo.assign(n, -1);
}

bool Lexer::may_match(int32_t id) const {
  const Lexeme& l = lexemes_[id];
  for (const Lexeme::Part& p : l.required)
    if (!can_accept_[p.start]) return false;
  if (l.required.size() == 1 || n_states_of_[id] > kMaxStatesMet) return true;
  std::lock_guard lock(mutex_);
  std::vector<int32_t> seeds;
  for (const Lexeme::Part& p : l.required) seeds.push_back(p.start);
  std::vector<int32_t> starts = epsilon_closure(seeds);
  return parts_can_meet(id, starts);
}

int32_t Lexer::start_state(std::span<const uint64_t> allowed) const {
  // Trailing zero words do not change the set: leave them out of hash and key.
  size_t n_words = allowed.size();
  while (n_words > 0 && allowed[n_words - 1] == 0) --n_words;
  allowed = allowed.first(n_words);
  uint64_t hash = n_words;
  for (uint64_t w : allowed) hash = (hash ^ w) * 0x9E3779B97F4A7C15ull;
  std::lock_guard lock(mutex_);
  for (auto [it, end] = start_of_allowed_.equal_range(hash); it != end; ++it)
    if (std::equal(allowed.begin(), allowed.end(), it->second.allowed.begin(), it->second.allowed.end()))
      return it->second.state;
  std::vector<int32_t> seeds;
  for (size_t id = 0; id < lexemes_.size(); ++id) {
    if (id / 64 < allowed.size() && (allowed[id / 64] >> (id % 64) & 1)) {
      for (const Lexeme::Part& p : lexemes_[id].required) seeds.push_back(p.start);
      for (const Lexeme::Part& p : lexemes_[id].excluded) seeds.push_back(p.start);
    }
  }
  int32_t state = intern(seeds);
  start_of_allowed_.emplace(hash, StartState{{allowed.begin(), allowed.end()}, state});
  return state;
}

std::vector<int32_t> Lexer::epsilon_closure(std::vector<int32_t>& seeds) const {
  if (++seen_stamp_ == 0) {
    std::fill(seen_.begin(), seen_.end(), 0);
    seen_stamp_ = 1;
  }
  std::vector<int32_t> set;
  while (!seeds.empty()) {
    int32_t s = seeds.back();
    seeds.pop_back();
    if (seen_[s] == seen_stamp_ || !can_accept_[s]) continue;  // nothing it reaches can accept either
    seen_[s] = seen_stamp_;
    set.push_back(s);
    for (uint32_t i = epsilon_begin_[s]; i < epsilon_begin_[s + 1]; ++i) seeds.push_back(epsilon_[i]);
  }
  return set;
}

int32_t Lexer::intern(std::vector<int32_t>& seeds) const {
  std::vector<int32_t> set = epsilon_closure(seeds);
  // A lexeme lives while every one of its required parts has a live state
  // and some text finishes them all at once.
  std::sort(set.begin(), set.end(), [&](int32_t a, int32_t b) { return owner_[a] < owner_[b]; });
  size_t kept = 0;
  for (size_t i = 0; i < set.size();) {
    size_t j = i;
    uint32_t parts = 0;
    for (; j < set.size() && owner_[set[j]] == owner_[set[i]]; ++j)
      if (part_of_[set[j]] >= 0) parts |= 1u << part_of_[set[j]];
    const int32_t lexeme = owner_[set[i]];
    if (lexeme >= 0 && parts == all_required_[lexeme] &&
        (lexemes_[lexeme].required.size() == 1 || n_states_of_[lexeme] > kMaxStatesMet ||
         parts_can_meet(lexeme, {set.data() + i, j - i})))
      for (size_t k = i; k < j; ++k) set[kept++] = set[k];
    i = j;
  }
  set.resize(kept);
  if (set.empty()) return kDead;
  std::sort(set.begin(), set.end());
  std::string key(reinterpret_cast<const char*>(set.data()), set.size() * sizeof(int32_t));
  auto it = state_of_set_.find(key);
  if (it != state_of_set_.end()) return it->second;

  size_t id = n_states_.load(std::memory_order_relaxed);
  if (id >= kMaxChunks << kChunkBits) fail("grammar: lexer automaton past {} states", kMaxChunks << kChunkBits);
  if ((id & kChunkMask) == 0) chunks_[id >> kChunkBits] = std::make_unique<Chunk>();
  Chunk& chunk = *chunks_[id >> kChunkBits];
  // Accepting: every required part's accept state is in the set, no excluded one's.
  std::vector<int32_t>& accepts = chunk.accepts[id & kChunkMask];
  for (size_t i = 0; i < set.size();) {
    int32_t lexeme = owner_[set[i]];
    uint32_t parts = 0;
    bool excluded = false;
    size_t j = i;
    for (; j < set.size() && owner_[set[j]] == lexeme; ++j) {
      if (!is_accept_[set[j]]) continue;
      if (part_of_[set[j]] >= 0) parts |= 1u << part_of_[set[j]];
      else excluded = true;
    }
    if (parts == all_required_[lexeme] && !excluded) accepts.push_back(lexeme);
    i = j;
  }
  std::sort(accepts.begin(), accepts.end());
  chunk.nfa_states[id & kChunkMask] = std::move(set);
  state_of_set_.emplace(std::move(key), static_cast<int32_t>(id));
  n_states_.store(id + 1, std::memory_order_release);
  return static_cast<int32_t>(id);
}

int32_t Lexer::build_transitions(int32_t state, uint8_t byte) const {
  std::lock_guard lock(mutex_);
  Chunk& chunk = *chunks_[state >> kChunkBits];
  auto& row = chunk.next[state & kChunkMask];
  int32_t done = row[byte].load(std::memory_order_relaxed);
  if (done != kUnknown) return done;
  // The edges of the set split 0..255 into intervals that move alike.
  std::vector<ByteEdge> out;
  std::vector<uint16_t> cuts{0, 256};
  for (int32_t s : chunk.nfa_states[state & kChunkMask]) {
    for (uint32_t i = edge_begin_[s]; i < edge_begin_[s + 1]; ++i) {
      out.push_back(edges_[i]);
      cuts.push_back(edges_[i].lo);
      cuts.push_back(uint16_t(edges_[i].hi + 1));
    }
  }
  std::sort(cuts.begin(), cuts.end());
  cuts.erase(std::unique(cuts.begin(), cuts.end()), cuts.end());
  for (size_t k = 0; k + 1 < cuts.size(); ++k) {
    std::vector<int32_t> seeds;
    for (const ByteEdge& e : out)
      if (e.lo <= cuts[k] && cuts[k] <= e.hi) seeds.push_back(e.target);
    int32_t target = seeds.empty() ? kDead : intern(seeds);
    for (int b = cuts[k]; b < cuts[k + 1]; ++b) row[b].store(target, std::memory_order_release);
  }
  return row[byte].load(std::memory_order_relaxed);
}

bool Lexer::takes_any_text(int32_t state, TextClass text_class) const {
  const std::vector<int32_t>& set = chunks_[state >> kChunkBits]->nfa_states[state & kChunkMask];
  // Per lexeme, the required parts with a state that follows any text.
  std::unordered_map<int32_t, uint32_t> parts;
  for (int32_t s : set) {
    if (part_of_[s] < 0 || !follows_any_text(s, text_class)) continue;
    uint32_t& mask = parts[owner_[s]];
    mask |= 1u << part_of_[s];
    if (mask == all_required_[owner_[s]]) return true;
  }
  return false;
}

// A greatest fixed point over (NFA state, UTF-8 phase) pairs: a pair stays
// while, for every byte the class allows in its phase, a move of its closure
// reaches a pair that stays. Threads are followed one at a time, which is
// what lets the answer be kept per NFA state.
bool Lexer::follows_any_text(int32_t nfa_state, TextClass text_class) const {
  std::lock_guard lock(mutex_);  // epsilon_closure's scratch, and the memo
  std::vector<int8_t>& memo = follows_any_[static_cast<int>(text_class)];
  if (memo[nfa_state] >= 0) return memo[nfa_state];
  if (!goes_on_[nfa_state]) return false;
  constexpr size_t kMaxPairs = 256;  // beyond it, no: a loop is small
  std::vector<std::pair<int32_t, int>> pairs{{nfa_state, 0}};
  std::unordered_map<int64_t, int32_t> index{{int64_t{nfa_state} * kTextClassPhases, 0}};
  struct Move {
    uint8_t byte;
    int32_t to;  // a pair
  };
  std::vector<std::vector<Move>> moves;
  for (size_t p = 0; p < pairs.size(); ++p) {
    auto [from, phase] = pairs[p];
    std::vector<int32_t> seeds{from};
    const std::vector<int32_t> closure = epsilon_closure(seeds);
    std::vector<Move> out;
    for (int32_t s : closure) {
      for (uint32_t i = edge_begin_[s]; i < edge_begin_[s + 1]; ++i) {
        const ByteEdge& e = edges_[i];
        if (!goes_on_[e.target]) continue;  // no text goes on without end from there
        for (int b = e.lo; b <= e.hi; ++b) {
          int next_phase = text_class_next_phase(text_class, phase, static_cast<uint8_t>(b));
          if (next_phase < 0) continue;
          auto [it, inserted] = index.emplace(int64_t{e.target} * kTextClassPhases + next_phase,
                                              static_cast<int32_t>(pairs.size()));
          if (inserted) {
            if (pairs.size() == kMaxPairs) return (memo[nfa_state] = 0);
            pairs.push_back({e.target, next_phase});
          }
          out.push_back({static_cast<uint8_t>(b), it->second});
        }
      }
    }
    std::sort(out.begin(), out.end(), [](const Move& a, const Move& b) { return a.byte < b.byte; });
    moves.push_back(std::move(out));
  }
  std::vector<uint8_t> stays(pairs.size(), 1);
  for (bool changed = true; changed;) {
    changed = false;
    for (size_t p = 0; p < pairs.size(); ++p) {
      if (!stays[p]) continue;
      const std::vector<Move>& out = moves[p];
      size_t k = 0;
      for (int b = 0; b < 256 && stays[p]; ++b) {
        if (text_class_next_phase(text_class, pairs[p].second, static_cast<uint8_t>(b)) < 0) continue;
        while (k < out.size() && out[k].byte < b) ++k;
        bool followed = false;
        for (size_t j = k; j < out.size() && out[j].byte == b && !followed; ++j) followed = stays[out[j].to];
        if (!followed) stays[p] = 0, changed = true;
      }
    }
  }
  // The pairs explored are closed under moves, so every answer found is exact.
  for (size_t p = 0; p < pairs.size(); ++p)
    if (pairs[p].second == 0) memo[pairs[p].first] = static_cast<int8_t>(stays[p]);
  return memo[nfa_state];
}

// Breadth first over tuples of per-part state sets (the product of the parts'
// automata, built as far as needed): the shortest text that finishes every
// part is found within a few levels where there is one.
bool Lexer::parts_can_meet(int32_t lexeme, std::span<const int32_t> states) const {
  std::string memo_key(reinterpret_cast<const char*>(&lexeme), sizeof lexeme);
  {
    std::vector<int32_t> sorted(states.begin(), states.end());
    std::sort(sorted.begin(), sorted.end());
    memo_key.append(reinterpret_cast<const char*>(sorted.data()), sorted.size() * sizeof(int32_t));
  }
  if (auto it = parts_meet_.find(memo_key); it != parts_meet_.end()) return it->second;
  const Lexeme& l = lexemes_[lexeme];
  using Node = std::vector<std::vector<int32_t>>;  // per required part, its sorted states
  auto key_of = [](const Node& node) {
    std::string key;
    for (const std::vector<int32_t>& part : node) {
      uint32_t n = static_cast<uint32_t>(part.size());
      key.append(reinterpret_cast<const char*>(&n), sizeof n);
      key.append(reinterpret_cast<const char*>(part.data()), part.size() * sizeof(int32_t));
    }
    return key;
  };
  Node start(l.required.size());
  for (int32_t s : states)
    if (part_of_[s] >= 0) start[part_of_[s]].push_back(s);
  for (std::vector<int32_t>& part : start) std::sort(part.begin(), part.end());
  constexpr size_t kMaxNodes = 512;  // beyond it, assume they can
  std::vector<Node> queue{start};
  std::unordered_set<std::string> visited{key_of(start)};
  bool meet = false;
  for (size_t q = 0; q < queue.size() && !meet; ++q) {
    const Node node = queue[q];
    bool finished = true;
    for (size_t p = 0; p < node.size() && finished; ++p)
      finished = std::binary_search(node[p].begin(), node[p].end(), l.required[p].accept);
    if (finished || queue.size() >= kMaxNodes) {
      meet = true;
      break;
    }
    // The bytes split into intervals that move every part alike.
    std::vector<uint16_t> cuts{0, 256};
    for (const std::vector<int32_t>& part : node)
      for (int32_t s : part)
        for (uint32_t i = edge_begin_[s]; i < edge_begin_[s + 1]; ++i)
          cuts.insert(cuts.end(), {edges_[i].lo, uint16_t(edges_[i].hi + 1)});
    std::sort(cuts.begin(), cuts.end());
    cuts.erase(std::unique(cuts.begin(), cuts.end()), cuts.end());
    for (size_t k = 0; k + 1 < cuts.size(); ++k) {
      const uint16_t b = cuts[k];
      Node next(node.size());
      bool alive = true;
      for (size_t p = 0; p < node.size() && alive; ++p) {
        std::vector<int32_t> seeds;
        for (int32_t s : node[p])
          for (uint32_t i = edge_begin_[s]; i < edge_begin_[s + 1]; ++i)
            if (edges_[i].lo <= b && b <= edges_[i].hi) seeds.push_back(edges_[i].target);
        next[p] = epsilon_closure(seeds);
        std::sort(next[p].begin(), next[p].end());
        alive = !next[p].empty();
      }
      if (alive && visited.insert(key_of(next)).second) queue.push_back(std::move(next));
    }
  }
  parts_meet_.emplace(std::move(memo_key), meet);
  return meet;
}

}  // namespace skiff::grammar
