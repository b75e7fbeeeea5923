// GBNF text (llama.cpp's grammar format) into a syntax tree, every rule
// reference resolved; compile_gbnf (gbnf.cpp) turns the tree into a Grammar.
// Errors are skiff::Error naming the line and column.
#pragma once
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <unordered_map>
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

// What reading GBNF and Lark text (lark.h) shares: a position in the text,
// its characters and escapes, nodes under a size limit, rules by name.
class SyntaxReader {
 protected:
  // format names the syntax in errors ("gbnf: line 3 column 7: ...").
  SyntaxReader(std::string_view format, std::string_view text, size_t max_nodes, size_t max_rules);
  virtual ~SyntaxReader() = default;
  // Spaces, tabs and the syntax's comments; newlines too where allowed.
  virtual void skip_space(bool newlines) = 0;
  [[noreturn]] void error(size_t at, std::string_view what) const;
  int peek(size_t ahead = 0) const;  // -1 past the end
  bool at(std::string_view s) const { return text_.substr(pos_, s.size()) == s; }
  Node make(Node::Kind kind, size_t offset);
  int32_t rule_index(const std::string& name, size_t offset);  // made (undefined) at its first use
  // One character of a literal or class: an escape (\n \t \r \xHH \uHHHH
  // \UHHHHHHHH, or escaped punctuation), or UTF-8.
  uint32_t character();
  // Alternatives separated by '|', each read by `one`; outside a group
  // (`nested` false) a line that starts with '|' goes on with them.
  Node alternatives_of(const std::function<Node()>& one, bool nested);
  // The syntax, once every rule is defined; `root` is where a text starts.
  Syntax finish(const std::string& root);

  std::string_view format_, text_;
  size_t max_nodes_, max_rules_;
  size_t pos_ = 0;
  Syntax syntax_;

 private:
  uint32_t hex(int digits, size_t start);
  // Pre-order ids, so the compiler keeps its facts about nodes in tables.
  void number(Node& n);

  size_t made_ = 0;
  int32_t next_id_ = 0;
  std::unordered_map<std::string, int32_t> index_;
};

// "line L column C" of a byte offset (columns count code points, from 1).
std::string position(std::string_view text, size_t offset);

}  // namespace skiff::grammar::gbnf
