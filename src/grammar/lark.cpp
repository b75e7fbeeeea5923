#include "grammar/lark.h"

#include <fmt/format.h>

#include <cctype>
#include <utility>
#include <vector>

#include "base/error.h"
#include "grammar/gbnf.h"
#include "grammar/gbnf_syntax.h"
#include "grammar/regex.h"

namespace skiff::grammar {
namespace {

using gbnf::Node;

constexpr int kMaxDepth = 100;
constexpr uint32_t kMaxRepeat = 10000;

// Lark's common.lark, the terminals grammars import most, in the syntax read
// here (its ESCAPED_STRING and C_COMMENT need lookbehind or lazy matching
// there; these match the same texts).
constexpr std::string_view kCommon = R"(
DIGIT: "0".."9"
HEXDIGIT: "a".."f" | "A".."F" | DIGIT
INT: DIGIT+
SIGNED_INT: ["+" | "-"] INT
DECIMAL: INT "." INT? | "." INT
_EXP: ("e" | "E") SIGNED_INT
FLOAT: INT _EXP | DECIMAL _EXP?
SIGNED_FLOAT: ["+" | "-"] FLOAT
NUMBER: FLOAT | INT
SIGNED_NUMBER: ["+" | "-"] NUMBER
ESCAPED_STRING: "\"" /([^"\\\n]|\\.)*/ "\""
LCASE_LETTER: "a".."z"
UCASE_LETTER: "A".."Z"
LETTER: UCASE_LETTER | LCASE_LETTER
WORD: LETTER+
CNAME: ("_" | LETTER) ("_" | LETTER | DIGIT)*
WS_INLINE: (" " | /\t/)+
WS: /[ \t\f\r\n]/+
CR: /\r/
LF: /\n/
NEWLINE: (CR? LF)+
SH_COMMENT: /#[^\n]*/
CPP_COMMENT: /\/\/[^\n]*/
C_COMMENT: /\/\*([^*]|\*+[^*\/])*\*+\//
SQL_COMMENT: /--[^\n]*/
)";
constexpr std::string_view kCommonPrefix = "common.";

bool is_name_start(int c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_'; }
bool is_name_char(int c) { return is_name_start(c) || (c >= '0' && c <= '9'); }

// Terminals are named in capitals (after any leading underscores).
bool is_terminal_name(std::string_view name) {
  const size_t first = name.find_first_not_of('_', name.rfind('.') == std::string_view::npos ? 0 : name.rfind('.') + 1);
  return first != std::string_view::npos && name[first] >= 'A' && name[first] <= 'Z';
}

class LarkParser : public gbnf::SyntaxReader {
 public:
  LarkParser(std::string_view text, size_t max_nodes, size_t max_rules)
      : SyntaxReader("lark", text, max_nodes, max_rules), user_text_(text) {}

  gbnf::Syntax parse() {
    statements();
    if (imported_) {  // the library's rules under "common.", read from its own text
      text_ = kCommon;
      pos_ = 0;
      prefix_ = kCommonPrefix;
      statements();
      text_ = user_text_;
    }
    add_ignores();
    return finish("start");
  }

 private:
  void statements() {
    skip_space(true);
    while (pos_ < text_.size()) {
      statement();
      skip_space(false);
      if (peek() != -1 && peek() != '\n' && peek() != '\r') error(pos_, "unexpected text; a definition ends at a newline");
      skip_space(true);
    }
  }

  // Spaces, tabs and // comments; newlines too where allowed.
  void skip_space(bool newlines) override {
    while (true) {
      const int c = peek();
      if (c == ' ' || c == '\t' || (newlines && (c == '\n' || c == '\r'))) {
        ++pos_;
      } else if (c == '/' && peek(1) == '/') {
        while (peek() != -1 && peek() != '\n' && peek() != '\r') ++pos_;
      } else {
        return;
      }
    }
  }

  std::string name() {
    const size_t start = pos_;
    while (is_name_char(peek())) ++pos_;
    return std::string(text_.substr(start, pos_ - start));
  }

  uint32_t number() {
    if (!(peek() >= '0' && peek() <= '9')) error(pos_, "expected a number");
    uint64_t v = 0;
    while (peek() >= '0' && peek() <= '9') v = std::min<uint64_t>(v * 10 + (text_[pos_++] - '0'), kMaxRepeat + 1);
    if (v > kMaxRepeat) error(pos_, fmt::format("count over {}", kMaxRepeat));
    return static_cast<uint32_t>(v);
  }

  void statement() {
    const size_t start = pos_;
    if (peek() == '%') return directive();
    if (peek() == '?' || peek() == '!') ++pos_;
    const std::string n = name();
    if (n.empty()) error(start, "expected a rule or terminal name");
    skip_space(false);
    if (peek() == '.') {  // a priority: it orders Lark's lexer, not what a text may be
      ++pos_;
      if (peek() == '-') ++pos_;
      number();
      skip_space(false);
    }
    if (peek() == '{') error(pos_, "rule templates ({...}) are not supported");
    if (peek() != ':') error(pos_, fmt::format("expected ':' after '{}'", n));
    ++pos_;
    skip_space(false);
    define(prefix_ + n, expansions(0, false), start);
  }

  void define(const std::string& full_name, Node body, size_t at) {
    const int32_t id = rule_index(full_name, at);
    gbnf::Rule& r = syntax_.rules[id];
    if (r.defined) error(at, fmt::format("'{}' is defined twice", full_name));
    r.defined = true;
    r.offset = static_cast<uint32_t>(at);
    r.body = std::move(body);
  }

  void directive() {
    const size_t start = pos_++;
    const std::string d = name();
    skip_space(false);
    if (d == "ignore") {
      ignores_.push_back(expansions(0, false));
    } else if (d == "import") {
      import();
    } else {
      error(start, fmt::format("%{} is not supported (only %import and %ignore)", d));
    }
  }

  // %import common.NAME [-> ALIAS], or %import common (A, B, ...).
  void import() {
    const size_t start = pos_;
    const std::string module = name();
    if (module != "common") error(start, "only Lark's common library can be imported (%import common.NAME)");
    imported_ = true;
    auto take = [&](const std::string& what, const std::string& as, size_t at) {
      Node ref = make(Node::Kind::Ref, at);
      ref.rule = rule_index(std::string(kCommonPrefix) + what, at);
      define(as, std::move(ref), at);
    };
    if (peek() == '.') {
      ++pos_;
      const size_t at = pos_;
      const std::string what = name();
      if (what.empty()) error(at, "expected a name after 'common.'");
      skip_space(false);
      std::string as = what;
      if (at_arrow()) as = name();
      take(what, as, at);
      return;
    }
    skip_space(false);
    if (peek() != '(') error(pos_, "expected '.NAME' or '(NAME, ...)' after 'common'");
    do {
      ++pos_;
      skip_space(true);
      const size_t at = pos_;
      const std::string what = name();
      if (what.empty()) error(at, "expected a name to import");
      take(what, what, at);
      skip_space(true);
    } while (peek() == ',');
    if (peek() != ')') error(pos_, "expected ')' to end the imported names");
    ++pos_;
  }

  bool at_arrow() {
    if (!at("->")) return false;
    pos_ += 2;
    skip_space(false);
    if (!is_name_start(peek())) error(pos_, "expected a name after '->'");
    return true;
  }

  Node expansions(int depth, bool nested) {
    if (depth > kMaxDepth) error(pos_, fmt::format("groups nested more than {} deep", kMaxDepth));
    return alternatives_of(
        [&] {
          Node one = expansion(depth, nested);
          if (at_arrow()) name();  // an alias names the tree's node: the language is the same
          skip_space(nested);
          return one;
        },
        nested);
  }

  Node expansion(int depth, bool nested) {
    Node seq = make(Node::Kind::Seq, pos_);
    while (true) {
      skip_space(nested);
      const int c = peek();
      if (c == -1 || c == '|' || c == ')' || c == ']' || c == '\n' || c == '\r' || at("->")) break;
      Node item = atom(depth);
      skip_space(nested);
      item = postfix(std::move(item));
      seq.children.push_back(std::move(item));
    }
    if (seq.children.size() == 1) return std::move(seq.children[0]);
    return seq;
  }

  Node postfix(Node item) {
    const size_t start = pos_;
    const int c = peek();
    if (c != '?' && c != '*' && c != '+' && c != '~') return item;
    ++pos_;
    Node rep = make(Node::Kind::Repeat, start);
    rep.min = c == '+' ? 1 : 0;
    rep.max = c == '?' ? 1 : gbnf::kUnbounded;
    if (c == '~') {
      skip_space(false);
      rep.min = rep.max = number();
      if (at("..")) {
        pos_ += 2;
        rep.max = number();
        if (rep.max < rep.min) error(start, "a repetition's maximum is under its minimum");
      }
    }
    rep.children.push_back(std::move(item));
    skip_space(false);
    return rep;
  }

  Node atom(int depth) {
    const size_t start = pos_;
    const int c = peek();
    if (c == '(' || c == '[') {
      ++pos_;
      skip_space(true);
      Node inner = expansions(depth + 1, true);
      skip_space(true);
      if (peek() != (c == '(' ? ')' : ']')) error(pos_, fmt::format("expected '{}' to close the group", c == '(' ? ')' : ']'));
      ++pos_;
      if (c == '(') return inner;
      Node optional = make(Node::Kind::Repeat, start);
      optional.min = 0;
      optional.max = 1;
      optional.children.push_back(std::move(inner));
      return optional;
    }
    if (c == '"') return string_atom();
    if (c == '/') return regex_atom();
    if (is_name_start(c)) {
      Node ref = make(Node::Kind::Ref, start);
      ref.rule = rule_index(prefix_ + name(), start);
      return ref;
    }
    error(start, c == -1 ? "the grammar ends in the middle of a definition" : "unexpected character");
  }

  std::vector<uint32_t> quoted() {
    const size_t start = pos_++;
    std::vector<uint32_t> text;
    while (peek() != '"') {
      if (peek() == -1 || peek() == '\n') error(start, "unterminated string");
      text.push_back(character());
    }
    ++pos_;
    return text;
  }

  // "text", "text"i, or a range "a".."z".
  Node string_atom() {
    const size_t start = pos_;
    std::vector<uint32_t> text = quoted();
    if (at("..")) {
      pos_ += 2;
      if (peek() != '"') error(pos_, "expected a string after '..'");
      std::vector<uint32_t> last = quoted();
      if (text.size() != 1 || last.size() != 1 || last[0] < text[0])
        error(start, "a range is two single characters in order (\"a\"..\"z\")");
      Node range = make(Node::Kind::Chars, start);
      range.chars = CharSet{{text[0], last[0]}};
      return range;
    }
    if (peek() == 'i' && !is_name_char(peek(1))) {  // case-insensitive: each ASCII letter either way
      ++pos_;
      Node seq = make(Node::Kind::Seq, start);
      for (uint32_t ch : text) {
        Node one = make(Node::Kind::Chars, start);
        one.chars = CharSet{{ch, ch}};
        if (ch < 128 && std::isalpha(static_cast<int>(ch))) {
          one.chars.add(static_cast<uint32_t>(std::tolower(static_cast<int>(ch))));
          one.chars.add(static_cast<uint32_t>(std::toupper(static_cast<int>(ch))));
        }
        seq.children.push_back(std::move(one));
      }
      return seq;
    }
    if (text.empty()) return make(Node::Kind::Seq, start);  // "" matches the empty text
    Node literal = make(Node::Kind::Literal, start);
    literal.text = std::move(text);
    return literal;
  }

  Node regex_atom() {
    const size_t start = pos_++;
    std::string pattern;
    while (peek() != '/') {
      if (peek() == -1 || peek() == '\n') error(start, "unterminated regular expression");
      if (peek() == '\\' && peek(1) == '/') ++pos_;  // \/ is a slash
      else if (peek() == '\\') pattern += text_[pos_++];
      pattern += text_[pos_++];
    }
    ++pos_;
    if (is_name_char(peek())) error(pos_, "regular expression flags are not supported");
    RegexNode regex;
    try {
      regex = regex_fullmatch(pattern);
    } catch (const Error& e) {
      error(start, e.what());
    }
    return from_regex(regex, start, 0);
  }

  Node from_regex(const RegexNode& r, size_t at, int depth) {
    if (depth > kMaxDepth) error(at, "regular expression nested too deep");
    switch (r.kind) {
      case RegexNode::Kind::Chars: {
        Node n = make(Node::Kind::Chars, at);
        n.chars = r.chars;
        return n;
      }
      case RegexNode::Kind::Repeat: {
        Node n = make(Node::Kind::Repeat, at);
        n.min = r.min;
        n.max = r.max == RegexNode::kUnbounded ? gbnf::kUnbounded : r.max;
        n.children.push_back(from_regex(r.children[0], at, depth + 1));
        return n;
      }
      case RegexNode::Kind::Concat:
      case RegexNode::Kind::Alt: {
        if (r.children.size() == 1) return from_regex(r.children[0], at, depth + 1);
        Node n = make(r.kind == RegexNode::Kind::Alt ? Node::Kind::Alt : Node::Kind::Seq, at);
        for (const RegexNode& c : r.children) n.children.push_back(from_regex(c, at, depth + 1));
        return n;
      }
      default:
        error(at, "anchors (^, $) inside a regular expression are not supported");
    }
  }

  // What %ignore names may come before each terminal of a rule, and at the end.
  void add_ignores() {
    if (ignores_.empty()) return;
    const size_t n_rules = syntax_.rules.size();
    Node all = make(Node::Kind::Alt, 0);
    all.children = std::move(ignores_);
    if (all.children.size() == 1) all = std::move(all.children[0]);
    define("%ignore", std::move(all), 0);
    const int32_t ignore = static_cast<int32_t>(syntax_.rules.size() - 1);
    for (size_t r = 0; r < n_rules; ++r) {
      const std::string& rule_name = syntax_.rules[r].name;
      if (!is_terminal_name(rule_name)) syntax_.rules[r].body = with_ignores(std::move(syntax_.rules[r].body), ignore);
    }
    if (gbnf::Rule* start = find("start")) start->body = sequence_of(std::move(start->body), skips(ignore));
  }

  Node skips(int32_t ignore) {
    Node ref = make(Node::Kind::Ref, 0);
    ref.rule = ignore;
    Node any = make(Node::Kind::Repeat, 0);
    any.min = 0;
    any.max = gbnf::kUnbounded;
    any.children.push_back(std::move(ref));
    return any;
  }

  Node sequence_of(Node first, Node second) {
    Node seq = make(Node::Kind::Seq, first.offset);
    seq.children.push_back(std::move(first));
    seq.children.push_back(std::move(second));
    return seq;
  }

  Node with_ignores(Node n, int32_t ignore) {
    const bool terminal = n.kind == Node::Kind::Literal || n.kind == Node::Kind::Chars ||
                          (n.kind == Node::Kind::Ref && is_terminal_name(syntax_.rules[n.rule].name));
    if (terminal) return sequence_of(skips(ignore), std::move(n));
    for (Node& c : n.children) c = with_ignores(std::move(c), ignore);
    return n;
  }

  gbnf::Rule* find(const std::string& n) {
    for (gbnf::Rule& r : syntax_.rules)
      if (r.name == n) return &r;
    return nullptr;
  }

  std::string_view user_text_;
  std::string prefix_;  // "common." while reading the library
  bool imported_ = false;
  std::vector<Node> ignores_;
};

}  // namespace

std::shared_ptr<const Grammar> compile_lark(std::string_view text, Limits limits) {
  return compile_syntax(text, LarkParser(text, syntax_node_limit(limits), limits.max_rules).parse(), limits);
}

std::shared_ptr<const Grammar> compile_gbnf_or_lark(std::string_view text, Limits limits) {
  return text.find("::=") != std::string_view::npos ? compile_gbnf(text, limits) : compile_lark(text, limits);
}

}  // namespace skiff::grammar
