#include "grammar/gbnf_syntax.h"

#include <fmt/format.h>

#include <cctype>
#include <unordered_map>

#include "base/error.h"

namespace skiff::grammar::gbnf {
namespace {

constexpr size_t kMaxTextBytes = 1 << 20;
constexpr int kMaxDepth = 100;  // nested groups plus stacked postfix operators: bounds every recursion on the tree
constexpr uint32_t kMaxRepeat = 10000;

bool is_name_char(int c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' || c == '_';
}

class Parser : public SyntaxReader {
 public:
  Parser(std::string_view text, size_t max_nodes, size_t max_rules) : SyntaxReader("gbnf", text, max_nodes, max_rules) {}

  Syntax parse() {
    skip_space(true);
    while (pos_ < text_.size()) {
      parse_rule();
      skip_space(true);
    }
    return finish("root");
  }

 private:
  // Spaces, tabs and # comments; newlines too where the rule continues.
  void skip_space(bool newlines) override {
    while (true) {
      int c = peek();
      if (c == ' ' || c == '\t' || (newlines && (c == '\n' || c == '\r'))) {
        ++pos_;
      } else if (c == '#') {
        while (peek() != -1 && peek() != '\n' && peek() != '\r') ++pos_;
      } else {
        return;
      }
    }
  }

  std::string name() {
    size_t start = pos_;
    while (is_name_char(peek())) ++pos_;
    return std::string(text_.substr(start, pos_ - start));
  }

  void parse_rule() {
    size_t start = pos_;
    std::string n = name();
    if (n.empty()) error(pos_, peek() == '|' ? "'|' outside a rule" : "expected a rule name");
    skip_space(false);
    if (!at("::=")) error(pos_, fmt::format("expected '::=' after the rule name '{}'", n));
    pos_ += 3;
    skip_space(true);
    Node body = alternatives(0, false);
    int c = peek();
    if (c == ')') error(pos_, "unbalanced ')'");
    if (c != -1 && c != '\n' && c != '\r') error(pos_, "unexpected character; a rule ends at a newline");
    int32_t id = rule_index(n, start);
    Rule& r = syntax_.rules[id];
    if (r.defined) error(start, fmt::format("rule '{}' is defined twice (first at {})", n, position(text_, r.offset)));
    r.defined = true;
    r.offset = static_cast<uint32_t>(start);
    r.body = std::move(body);
  }

  Node alternatives(int depth, bool nested) {
    if (depth > kMaxDepth) error(pos_, fmt::format("groups nested more than {} deep", kMaxDepth));
    return alternatives_of([&] { return sequence(depth, nested); }, nested);
  }

  Node sequence(int depth, bool nested) {
    Node seq = make(Node::Kind::Seq, pos_);
    int stacked = 0;  // postfix operators on the last item
    while (true) {
      size_t start = pos_;
      int c = peek();
      Node item;
      if (c == '"') {
        item = literal();
      } else if (c == '[') {
        item = char_class();
      } else if (c == '.') {
        ++pos_;
        item = make(Node::Kind::Chars, start);
        item.chars = CharSet::any();
      } else if (c == '(') {
        ++pos_;
        skip_space(true);
        item = alternatives(depth + 1, true);
        if (peek() != ')') error(pos_, fmt::format("expected ')' to close the group at {}", position(text_, start)));
        ++pos_;
      } else if (is_name_char(c)) {
        std::string n = name();
        size_t after = pos_;
        skip_space(false);
        if (at("::=")) error(start, fmt::format("a newline must come before the rule '{}'", n));
        pos_ = after;
        item = make(Node::Kind::Ref, start);
        item.rule = rule_index(n, start);
      } else if (c == '*' || c == '+' || c == '?' || c == '{') {
        if (seq.children.empty()) error(start, fmt::format("'{}' has nothing to repeat", char(c)));
        if (depth + ++stacked > kMaxDepth) error(start, "too many repetition operators in a row");
        Node rep = repetition();
        Node& last = seq.children.back();
        if (last.kind == Node::Kind::Repeat && plain_repeat(last) && plain_repeat(rep)) {
          // x*, x+ or x? (or x{1}) repeated so again is one of them ((x?)+ is x*): nested
          // stars would make the parse ambiguous in as many ways as they are deep.
          last.min *= rep.min;
          if (rep.max == kUnbounded) last.max = kUnbounded;
        } else {
          rep.children.push_back(std::move(last));
          last = std::move(rep);
        }
        skip_space(nested);
        continue;
      } else if (c == '<' || c == '!') {
        error(start, "token references (<...>, !<...>) are not supported");
      } else {
        break;
      }
      stacked = 0;
      seq.children.push_back(std::move(item));
      skip_space(nested);
    }
    // A group of one alternative (without a postfix) joins the sequence; an empty literal drops out.
    std::vector<Node> flat;
    for (Node& item : seq.children) {
      if (item.kind == Node::Kind::Seq) {
        for (Node& inner : item.children) flat.push_back(std::move(inner));
      } else if (!(item.kind == Node::Kind::Literal && item.text.empty())) {
        flat.push_back(std::move(item));
      }
    }
    if (flat.size() == 1) return std::move(flat[0]);
    seq.children = std::move(flat);
    return seq;
  }

  // A repetition whose counts are 0 or 1 at least and 1 or unbounded at most:
  // one inside another is a repetition of the same kind, its counts multiplied.
  static bool plain_repeat(const Node& n) { return n.min <= 1 && (n.max == 1 || n.max == kUnbounded); }

  Node repetition() {
    size_t start = pos_;
    Node rep = make(Node::Kind::Repeat, start);
    int c = text_[pos_++];
    if (c == '*') rep.min = 0, rep.max = kUnbounded;
    else if (c == '+') rep.min = 1, rep.max = kUnbounded;
    else if (c == '?') rep.min = 0, rep.max = 1;
    else {
      skip_space(false);
      rep.min = count(start);
      skip_space(false);
      rep.max = rep.min;
      if (peek() == ',') {
        ++pos_;
        skip_space(false);
        rep.max = peek() >= '0' && peek() <= '9' ? count(start) : kUnbounded;
        skip_space(false);
      }
      if (peek() != '}') error(pos_, "expected '}' to end the repetition count");
      ++pos_;
      if (rep.max < rep.min)
        error(start, fmt::format("repetition {{{},{}}} has its maximum under its minimum", rep.min, rep.max));
    }
    return rep;
  }

  uint32_t count(size_t start) {
    if (!(peek() >= '0' && peek() <= '9')) error(pos_, "expected a repetition count");
    uint64_t v = 0;
    while (peek() >= '0' && peek() <= '9') v = std::min<uint64_t>(v * 10 + (text_[pos_++] - '0'), kMaxRepeat + 1);
    if (v > kMaxRepeat) error(start, fmt::format("repetition count over {}", kMaxRepeat));
    return static_cast<uint32_t>(v);
  }

  Node literal() {
    size_t start = pos_++;
    Node lit = make(Node::Kind::Literal, start);
    while (true) {
      if (peek() == -1) error(start, "unterminated string literal");
      if (peek() == '"') break;
      lit.text.push_back(character());
    }
    ++pos_;
    return lit;
  }

  Node char_class() {
    size_t start = pos_++;
    Node n = make(Node::Kind::Chars, start);
    bool negate = peek() == '^';
    if (negate) ++pos_;
    CharSet set;
    bool any = false;
    while (true) {
      if (peek() == -1) error(start, "unterminated character class");
      if (peek() == ']') break;
      size_t at_char = pos_;
      uint32_t lo = character(), hi = lo;
      if (peek() == '-' && peek(1) != ']' && peek(1) != -1) {
        ++pos_;
        hi = character();
        if (hi < lo) error(at_char, "character range out of order");
      }
      set.add(lo, hi);
      any = true;
    }
    ++pos_;
    if (!any && !negate) error(start, "empty character class []");
    n.chars = negate ? set.complement() : set;
    return n;
  }

};

}  // namespace

SyntaxReader::SyntaxReader(std::string_view format, std::string_view text, size_t max_nodes, size_t max_rules)
    : format_(format), text_(text), max_nodes_(max_nodes), max_rules_(max_rules) {
  if (text_.size() > kMaxTextBytes) fail("{}: grammar longer than {} bytes", format_, kMaxTextBytes);
}

void SyntaxReader::error(size_t at, std::string_view what) const {
  fail("{}: {}: {}", format_, position(text_, at), what);
}

int SyntaxReader::peek(size_t ahead) const {
  return pos_ + ahead < text_.size() ? static_cast<unsigned char>(text_[pos_ + ahead]) : -1;
}

Node SyntaxReader::make(Node::Kind kind, size_t offset) {
  if (++made_ > max_nodes_) error(offset, fmt::format("grammar too large: more than {} items", max_nodes_));
  Node n;
  n.kind = kind;
  n.offset = static_cast<uint32_t>(offset);
  return n;
}

int32_t SyntaxReader::rule_index(const std::string& name, size_t offset) {
  auto it = index_.find(name);
  if (it != index_.end()) return it->second;
  if (syntax_.rules.size() >= max_rules_) error(offset, fmt::format("grammar too large: more than {} rules", max_rules_));
  Rule r;
  r.name = name;
  r.offset = static_cast<uint32_t>(offset);
  syntax_.rules.push_back(std::move(r));
  int32_t id = static_cast<int32_t>(syntax_.rules.size() - 1);
  index_.emplace(name, id);
  return id;
}

Node SyntaxReader::alternatives_of(const std::function<Node()>& one, bool nested) {
  const size_t start = pos_;
  std::vector<Node> alts;
  alts.push_back(one());
  while (true) {
    if (peek() == '|') {
      ++pos_;
      skip_space(true);
      alts.push_back(one());
      continue;
    }
    if (!nested) {  // a line that starts with '|' goes on with the rule
      const size_t save = pos_;
      skip_space(true);
      if (peek() == '|') continue;
      pos_ = save;
    }
    break;
  }
  if (alts.size() == 1) return std::move(alts[0]);
  Node alt = make(Node::Kind::Alt, start);
  alt.children = std::move(alts);
  return alt;
}

Syntax SyntaxReader::finish(const std::string& root) {
  for (const Rule& r : syntax_.rules)
    if (!r.defined) error(r.offset, fmt::format("undefined rule '{}'", r.name));
  auto it = index_.find(root);
  if (it == index_.end()) error(text_.size(), fmt::format("no rule named '{}' (the rule a text must match)", root));
  syntax_.root = it->second;
  for (Rule& r : syntax_.rules) number(r.body);
  syntax_.n_nodes = static_cast<size_t>(next_id_);
  return std::move(syntax_);
}

uint32_t SyntaxReader::character() {
  size_t start = pos_;
  int c = peek();
  if (c == '\\') {
    int e = peek(1);
    pos_ += 2;
    uint32_t v;
    switch (e) {
      case 'x': v = hex(2, start); break;
      case 'u': v = hex(4, start); break;
      case 'U': v = hex(8, start); break;
      case 'n': return '\n';
      case 't': return '\t';
      case 'r': return '\r';
      default:
        // Any escaped ASCII punctuation stands for itself (\\, \", \[, \], \-, ...).
        if (e > ' ' && e < 0x7F && !std::isalnum(e)) return static_cast<uint32_t>(e);
        error(start, e == -1 ? "the grammar ends with '\\'" : "unknown escape");
    }
    if (v > kMaxCodePoint) error(start, "escape past U+10FFFF");
    if (v >= 0xD800 && v <= 0xDFFF) error(start, "escape of a surrogate (U+D800..U+DFFF), not a character");
    return v;
  }
  auto b = static_cast<uint8_t>(c);
  int n = b < 0x80 ? 1 : (b >> 5) == 6 ? 2 : (b >> 4) == 14 ? 3 : (b >> 3) == 30 ? 4 : 0;
  if (n == 0 || pos_ + n > text_.size()) error(start, "invalid UTF-8");
  uint32_t v = n == 1 ? b : b & (0x7F >> n);
  for (int k = 1; k < n; ++k) {
    auto cb = static_cast<uint8_t>(text_[pos_ + k]);
    if ((cb & 0xC0) != 0x80) error(start, "invalid UTF-8");
    v = (v << 6) | (cb & 0x3F);
  }
  static constexpr uint32_t kMinOfLength[] = {0, 0, 0x80, 0x800, 0x10000};
  if (v < kMinOfLength[n] || v > kMaxCodePoint || (v >= 0xD800 && v <= 0xDFFF)) error(start, "invalid UTF-8");
  pos_ += n;
  return v;
}

uint32_t SyntaxReader::hex(int digits, size_t start) {
  uint32_t v = 0;
  for (int i = 0; i < digits; ++i) {
    int c = peek();
    int d = c >= '0' && c <= '9'   ? c - '0'
            : c >= 'a' && c <= 'f' ? c - 'a' + 10
            : c >= 'A' && c <= 'F' ? c - 'A' + 10
                                   : -1;
    if (d < 0) error(start, fmt::format("escape needs {} hex digits", digits));
    v = v * 16 + d;
    ++pos_;
  }
  return v;
}

void SyntaxReader::number(Node& n) {
  n.id = next_id_++;
  for (Node& c : n.children) number(c);
}

Syntax parse(std::string_view text, size_t max_nodes, size_t max_rules) {
  return Parser(text, max_nodes, max_rules).parse();
}

std::string position(std::string_view text, size_t offset) {
  offset = std::min(offset, text.size());
  size_t line = 1, column = 1;
  for (size_t i = 0; i < offset; ++i) {
    if (text[i] == '\n') line += 1, column = 1;
    else if ((static_cast<uint8_t>(text[i]) & 0xC0) != 0x80) ++column;
  }
  return fmt::format("line {} column {}", line, column);
}

}  // namespace skiff::grammar::gbnf
