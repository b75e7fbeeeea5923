#include "grammar/regex_match.h"

#include <algorithm>
#include <vector>

#include "grammar/regex_nfa.h"

namespace skiff::grammar {

bool regex_matches(const RegexNode& node, std::string_view text) {
  Nfa nfa;
  int32_t start = nfa.add_state(), accept = nfa.add_state();
  add_regex(nfa, node, start, accept, TextEncoding::Utf8);
  std::vector<uint8_t> in(nfa.size());
  auto close = [&](std::vector<int32_t> states) {
    std::fill(in.begin(), in.end(), 0);
    std::vector<int32_t> out;
    while (!states.empty()) {
      int32_t s = states.back();
      states.pop_back();
      if (in[s]) continue;
      in[s] = 1;
      out.push_back(s);
      for (int32_t t : nfa.epsilon(s)) states.push_back(t);
    }
    return out;
  };
  std::vector<int32_t> current = close({start});
  for (char c : text) {
    auto b = static_cast<uint8_t>(c);
    std::vector<int32_t> next;
    for (int32_t s : current)
      for (const ByteEdge& e : nfa.edges(s))
        if (e.lo <= b && b <= e.hi) next.push_back(e.target);
    current = close(std::move(next));
    if (current.empty()) return false;
  }
  return std::find(current.begin(), current.end(), accept) != current.end();
}

}  // namespace skiff::grammar
