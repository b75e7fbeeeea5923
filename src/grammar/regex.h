// Regular expressions as JSON Schema's `pattern`, vLLM's guided_regex and
// llguidance take them (the ECMA-262 / Python subset without backtracking
// features): literals and escapes, classes, `.`, groups, alternation and
// greedy or lazy quantifiers. Classes are ASCII as in ECMA-262 (\d is [0-9]).
// Lookaround, backreferences, \b, inline flags and Unicode properties are
// refused with an Error naming them.
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "grammar/char_set.h"

namespace skiff::grammar {

struct RegexNode {
  enum class Kind { Chars, Concat, Alt, Repeat, LineStart, LineEnd };
  Kind kind = Kind::Concat;  // an empty Concat matches the empty string
  CharSet chars;                              // Chars
  std::vector<RegexNode> children;            // Concat, Alt; Repeat: one
  uint32_t min = 0, max = 0;                  // Repeat; max kUnbounded for none
  static constexpr uint32_t kUnbounded = UINT32_MAX;

  static RegexNode of_chars(CharSet set) {
    RegexNode n;
    n.kind = Kind::Chars;
    n.chars = std::move(set);
    return n;
  }
  static RegexNode literal(std::string_view utf8);
  static RegexNode repeat(RegexNode child, uint32_t min, uint32_t max);
  static RegexNode alt(std::vector<RegexNode> children);
  static RegexNode concat(std::vector<RegexNode> children);
  bool matches_empty() const;
};

// Parses a pattern; anchors (^, $) stay as LineStart/LineEnd nodes.
RegexNode parse_regex(std::string_view pattern);

// The pattern as a whole-string match: ^ and $ allowed only at the ends of
// top-level alternatives, where they change nothing.
RegexNode regex_fullmatch(std::string_view pattern);
// The pattern as a search (JSON Schema's `pattern`): each top-level
// alternative is padded with "anything" where it is not anchored.
RegexNode regex_search(std::string_view pattern);
// Any text in which `marker` never occurs. Its first character must occur in
// it only there, as in the closing tags this serves ("</parameter>"): then
// the text splits at that character into pieces, and none may start with the
// rest of the marker.
RegexNode text_without(std::string_view marker);

}  // namespace skiff::grammar
