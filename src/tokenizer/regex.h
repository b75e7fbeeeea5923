// A small regular-expression engine over code points for the pre-tokenizer
// regexes llama.cpp lists (llama-vocab.cpp keeps them as data, and so does
// pretokenizer.cpp). It knows the syntax those regexes use: alternation,
// groups (capturing or (?:...)), lookahead (?=...) (?!...), greedy * + ?
// {n} {n,} {n,m}, classes with ranges and negation, \s \S \d \D \w \W,
// \p{L} \p{N} \p{P} \p{M} \p{S} \p{Lu} \p{Ll} \p{Lt} \p{Lm} \p{Lo} (and
// \P{..}), \b, $, \x{HHHH} and escaped characters.
// Matching is leftmost-first backtracking, as std::regex (ECMAScript) does,
// run on an explicit stack so a megabyte-long run cannot exhaust the C++
// stack, with failed states remembered so no text is rescanned (RegexSearch).
#pragma once
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string_view>
#include <vector>

namespace skiff {

class Regex {
 public:
  // Throws Error naming the pattern for syntax outside that subset.
  explicit Regex(std::string_view pattern);
  ~Regex();
  Regex(Regex&&) noexcept;
  Regex& operator=(Regex&&) noexcept;

  // The length of the match that starts exactly at pos, inside the stretch
  // [begin, end) of cps, or -1. Text outside the stretch is invisible ($,
  // lookaheads and \b stop at its edges), as for std::regex run on the
  // stretch alone. A match may be empty (a bare lookahead).
  ptrdiff_t match_at(const std::vector<uint32_t>& cps, size_t begin, size_t pos, size_t end) const;

  struct Program;  // the compiled pattern (regex.cpp)

 private:
  friend class RegexSearch;
  std::unique_ptr<Program> program_;
};

// Matches of one regex at successive positions of one stretch of text, as a
// split by the regex tries them. It remembers what failed from one position
// to the next, so trying every position of the stretch costs time linear in
// its length for a given pattern (Regex::match_at alone may rescan).
class RegexSearch {
 public:
  RegexSearch(const Regex& regex, const std::vector<uint32_t>& cps, size_t begin, size_t end);
  ~RegexSearch();
  // As Regex::match_at, pos in [begin, end).
  ptrdiff_t match_at(size_t pos);

 private:
  class FailedSplits;
  bool run(int code_index, size_t start, size_t& match_end);

  const Regex::Program& program_;
  const std::vector<uint32_t>& cps_;
  size_t begin_;
  size_t end_;
  std::unique_ptr<FailedSplits> failed_;
};

}  // namespace skiff
