// GBNF text (llama.cpp's grammar format) into a syntax tree, every rule
// reference resolved; compile_gbnf (gbnf.cpp) turns the tree into a Grammar.
// Errors are skiff::Error naming the line and column.
#pragma once
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "grammar/char_set.h"

namespace skiff::grammar::gbnf {

inline constexpr uint32_t kUnbounded = UINT32_MAX;  // a repetition's max, as RegexNode's

struct Node {
  enum class Kind : uint8_t { Chars, Literal, Ref, Seq, Alt, Repeat };
  Kind kind = Kind::Seq;  // an empty Seq matches the empty string
  int32_t id = -1;        // pre-order number over all rules, for per-node tables
  uint32_t offset = 0;    // byte in the text, for messages
  int32_t rule = -1;      // Ref
  uint32_t min = 0, max = 0;   // Repeat
  CharSet chars;               // Chars: one code point of the set
  std::vector<uint32_t> text;  // Literal: its code points
  std::vector<Node> children;  // Seq, Alt (two or more); Repeat: one
};

struct Rule {
  std::string name;
  uint32_t offset = 0;  // its definition, or its first use while undefined
  bool defined = false;
  Node body;
};

struct Syntax {
  std::vector<Rule> rules;
  int32_t root = -1;
  size_t n_nodes = 0;
};

Syntax parse(std::string_view text, size_t max_nodes, size_t max_rules);

// "line L column C" of a byte offset (columns count code points, from 1).
std::string position(std::string_view text, size_t offset);

}  // namespace skiff::grammar::gbnf
