#include "grammar/regex.h"

#include <fmt/format.h>

#include <algorithm>

#include "base/error.h"

namespace skiff::grammar {
namespace {

constexpr size_t kMaxPatternChars = 1 << 16;
constexpr uint32_t kMaxRepeat = 10000;
constexpr int kMaxNesting = 200;

std::vector<uint32_t> decode_utf8(std::string_view s) {
  std::vector<uint32_t> out;
  for (size_t i = 0; i < s.size();) {
    auto b = static_cast<uint8_t>(s[i]);
    int n = b < 0x80 ? 1 : (b >> 5) == 6 ? 2 : (b >> 4) == 14 ? 3 : (b >> 3) == 30 ? 4 : 0;
    if (n == 0 || i + n > s.size()) fail("regex: invalid UTF-8 at byte {}", i);
    uint32_t c = n == 1 ? b : b & (0x7F >> n);
    for (int k = 1; k < n; ++k) {
      auto cb = static_cast<uint8_t>(s[i + k]);
      if ((cb & 0xC0) != 0x80) fail("regex: invalid UTF-8 at byte {}", i);
      c = (c << 6) | (cb & 0x3F);
    }
    out.push_back(c);
    i += n;
  }
  return out;
}

CharSet digits() { return CharSet{{'0', '9'}}; }
CharSet word() { return CharSet{{'0', '9'}, {'A', 'Z'}, {'_', '_'}, {'a', 'z'}}; }
CharSet spaces() { return CharSet{{'\t', '\r'}, {' ', ' '}}; }

class Parser {
 public:
  explicit Parser(std::string_view pattern) : text_(decode_utf8(pattern)) {
    if (text_.size() > kMaxPatternChars) fail("regex: longer than {} characters", kMaxPatternChars);
  }

  RegexNode parse() {
    RegexNode node = alternation(0);
    if (pos_ < text_.size()) error("unbalanced ')'");
    return node;
  }

 private:
  [[noreturn]] void error(std::string_view what) const {
    fail("regex: {} at character {}", what, pos_);
  }
  bool at_end() const { return pos_ >= text_.size(); }
  uint32_t peek() const { return text_[pos_]; }
  bool accept(uint32_t c) {
    if (!at_end() && peek() == c) {
      ++pos_;
      return true;
    }
    return false;
  }

  RegexNode alternation(int depth) {
    if (depth > kMaxNesting) error("groups nested too deeply");
    std::vector<RegexNode> branches;
    branches.push_back(sequence(depth));
    while (accept('|')) branches.push_back(sequence(depth));
    return RegexNode::alt(std::move(branches));
  }

  RegexNode sequence(int depth) {
    std::vector<RegexNode> items;
    while (!at_end() && peek() != '|' && peek() != ')') items.push_back(quantified(depth));
    return RegexNode::concat(std::move(items));
  }

  // An atom and at most one quantifier: a second one (a**, a{2}{3}) is an
  // error, as in Python and ECMA-262; a group can repeat a repetition.
  RegexNode quantified(int depth) {
    RegexNode node = atom(depth);
    uint32_t min = 0, max = 0;
    size_t start = pos_;
    if (!quantifier(min, max)) return node;
    if (node.kind == RegexNode::Kind::LineStart || node.kind == RegexNode::Kind::LineEnd) {
      pos_ = start;
      error("quantifier after an anchor");
    }
    if (!at_end() && peek() == '+') error("possessive quantifiers are not supported");
    accept('?');  // lazy: the same set of strings
    if (quantifier_ahead()) error("a quantifier after a quantifier (put the first in a group)");
    return RegexNode::repeat(std::move(node), min, max);
  }

  bool quantifier(uint32_t& min, uint32_t& max) {
    if (accept('*')) min = 0, max = RegexNode::kUnbounded;
    else if (accept('+')) min = 1, max = RegexNode::kUnbounded;
    else if (accept('?')) min = 0, max = 1;
    else return counted(min, max);
    return true;
  }

  bool quantifier_ahead() {
    size_t saved = pos_;
    uint32_t min = 0, max = 0;
    bool found = !at_end() && quantifier(min, max);
    pos_ = saved;
    return found;
  }

  // {n}, {n,}, {n,m}, {,m}, {,}; anything else leaves `{` a literal, as Python does.
  bool counted(uint32_t& min, uint32_t& max) {
    if (at_end() || peek() != '{') return false;
    size_t p = pos_ + 1;
    auto number = [&](uint32_t& value) {
      size_t begin = p;
      uint64_t v = 0;
      while (p < text_.size() && text_[p] >= '0' && text_[p] <= '9') {
        v = std::min<uint64_t>(v * 10 + (text_[p] - '0'), uint64_t{kMaxRepeat} + 1);
        ++p;
      }
      value = static_cast<uint32_t>(v);
      return p > begin;
    };
    bool has_min = number(min);
    if (p < text_.size() && text_[p] == '}') {
      if (!has_min) return false;
      max = min;
    } else if (p < text_.size() && text_[p] == ',') {
      ++p;
      if (!number(max)) max = RegexNode::kUnbounded;
      if (!has_min) min = 0;  // {,m} and {,} as Python reads them
      if (p >= text_.size() || text_[p] != '}') return false;
    } else {
      return false;
    }
    pos_ = p + 1;
    if (min > kMaxRepeat || (max != RegexNode::kUnbounded && max > kMaxRepeat))
      error(fmt::format("repetition count over {}", kMaxRepeat));
    if (max < min) error("repetition {n,m} with m < n");
    return true;
  }

  RegexNode atom(int depth) {
    uint32_t c = peek();
    ++pos_;
    switch (c) {
      case '(': return group(depth);
      case '[': return RegexNode::of_chars(char_class());
      case '.': return RegexNode::of_chars(CharSet{{'\n', '\n'}}.complement());
      case '^': { RegexNode n; n.kind = RegexNode::Kind::LineStart; return n; }
      case '$': { RegexNode n; n.kind = RegexNode::Kind::LineEnd; return n; }
      case '\\': return RegexNode::of_chars(escape(false));
      case '*': case '+': case '?': --pos_; error("nothing to repeat");
      case '{':
        --pos_;
        if (quantifier_ahead()) error("nothing to repeat");
        ++pos_;
        return RegexNode::of_chars(CharSet{{c, c}});
      default: return RegexNode::of_chars(CharSet{{c, c}});
    }
  }

  RegexNode group(int depth) {
    if (accept('?')) {
      if (accept(':')) {
      } else if (accept('P') || (!at_end() && peek() == '<' && pos_ + 1 < text_.size() &&
                                  text_[pos_ + 1] != '=' && text_[pos_ + 1] != '!')) {
        if (!accept('<')) error("unsupported (?P...) group");
        group_name();
      } else if (!at_end() && (peek() == '=' || peek() == '!' || peek() == '<')) {
        error("lookaround assertions are not supported");
      } else {
        error("inline flags and special groups are not supported");
      }
    }
    RegexNode inner = alternation(depth + 1);
    if (!accept(')')) error("missing ')'");
    return inner;
  }

  // A group's name up to '>': an identifier (letters, digits, '_', any
  // non-ASCII; not a digit first), each name once, as Python and ECMA-262 ask.
  void group_name() {
    size_t begin = pos_;
    while (!at_end() && peek() != '>') {
      uint32_t c = peek();
      bool word = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || c >= 0x80 ||
                  (c >= '0' && c <= '9' && pos_ > begin);
      if (!word) error("bad character in group name");
      ++pos_;
    }
    if (pos_ == begin) error("missing group name");
    std::vector<uint32_t> name(text_.begin() + begin, text_.begin() + pos_);
    if (!accept('>')) error("unterminated group name");
    if (std::find(group_names_.begin(), group_names_.end(), name) != group_names_.end())
      error("group name used twice");
    group_names_.push_back(std::move(name));
  }

  CharSet char_class() {
    bool negate = accept('^');
    CharSet set;
    bool first = true;
    while (true) {
      if (at_end()) error("unterminated character class");
      if (peek() == ']' && !first) {
        ++pos_;
        break;
      }
      first = false;
      CharSet item;
      uint32_t lo = class_atom(item);
      if (!at_end() && peek() == '-' && pos_ + 1 < text_.size() && text_[pos_ + 1] != ']') {
        if (!item.empty()) error("a class like \\d cannot start a range");
        ++pos_;
        CharSet hi_item;
        uint32_t hi = class_atom(hi_item);
        if (!hi_item.empty()) error("a class like \\d cannot end a range");
        if (hi < lo) error("character range out of order");
        set.add(lo, hi);
      } else if (item.empty()) {
        set.add(lo);
      } else {
        set.add(item);
      }
    }
    return negate ? set.complement() : set;
  }

  // One member of a class: a character (returned) or a class escape (into set).
  uint32_t class_atom(CharSet& set) {
    uint32_t c = peek();
    ++pos_;
    if (c != '\\') return c;
    CharSet e = escape(true);
    if (e.size() == 1) return e.ranges()[0].first;
    set = std::move(e);
    return 0;
  }

  uint32_t hex_digits(int n) {
    uint32_t v = 0;
    for (int i = 0; i < n; ++i) {
      if (at_end()) error("truncated hex escape");
      uint32_t c = peek();
      int d = c >= '0' && c <= '9' ? int(c - '0') : c >= 'a' && c <= 'f' ? int(c - 'a' + 10)
              : c >= 'A' && c <= 'F' ? int(c - 'A' + 10) : -1;
      if (d < 0) error("bad hex escape");
      v = v * 16 + d;
      ++pos_;
    }
    return v;
  }

  CharSet escape(bool in_class) {
    if (at_end()) error("pattern ends with '\\'");
    uint32_t c = peek();
    ++pos_;
    auto one = [](uint32_t v) { return CharSet{{v, v}}; };
    switch (c) {
      case 'd': return digits();
      case 'D': return digits().complement();
      case 'w': return word();
      case 'W': return word().complement();
      case 's': return spaces();
      case 'S': return spaces().complement();
      case 'n': return one('\n');
      case 't': return one('\t');
      case 'r': return one('\r');
      case 'f': return one('\f');
      case 'v': return one('\v');
      case '0': {  // and up to two more octal digits: \012 is "\n" in Python and ECMA-262 (Annex B)
        uint32_t v = 0;
        for (int i = 0; i < 2 && !at_end() && peek() >= '0' && peek() <= '7'; ++i) v = v * 8 + (text_[pos_++] - '0');
        return one(v);
      }
      case 'b':
        if (in_class) return one('\b');
        error("word boundaries (\\b) are not supported");
      case 'B': error("\\B is not supported");
      case 'x': return one(hex_digits(2));
      case 'u':
        if (accept('{')) {
          uint32_t v = 0;
          int n = 0;
          while (!at_end() && peek() != '}' && n < 7) v = (v << 4) | hex_digits(1), ++n;
          if (!accept('}') || n == 0 || v > kMaxCodePoint) error("bad \\u{...} escape");
          return one(v);
        }
        return one(hex_digits(4));
      case 'U': {
        uint32_t v = hex_digits(8);
        if (v > kMaxCodePoint) error("escape past U+10FFFF");
        return one(v);
      }
      case 'p': case 'P': error("Unicode property classes (\\p) are not supported");
      case 'k': error("backreferences are not supported");
      default:
        if (c >= '1' && c <= '9') error("backreferences are not supported");
        if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z')) error(fmt::format("unknown escape \\{}", char(c)));
        return one(c);  // an escaped punctuation mark or other character stands for itself
    }
  }

  std::vector<uint32_t> text_;
  size_t pos_ = 0;
  std::vector<std::vector<uint32_t>> group_names_;
};

// Splits off ^ and $ at the ends of one top-level branch; any other anchor is refused.
RegexNode strip_anchors(RegexNode branch, bool& at_start, bool& at_end) {
  std::vector<RegexNode> items;
  if (branch.kind == RegexNode::Kind::Concat) items = std::move(branch.children);
  else items.push_back(std::move(branch));
  at_start = !items.empty() && items.front().kind == RegexNode::Kind::LineStart;
  if (at_start) items.erase(items.begin());
  at_end = !items.empty() && items.back().kind == RegexNode::Kind::LineEnd;
  if (at_end) items.pop_back();
  RegexNode out = RegexNode::concat(std::move(items));
  auto check = [](auto& self, const RegexNode& n) -> void {
    if (n.kind == RegexNode::Kind::LineStart || n.kind == RegexNode::Kind::LineEnd)
      fail("regex: anchors (^, $) are supported only at the start and end of the pattern");
    for (const RegexNode& child : n.children) self(self, child);
  };
  check(check, out);
  return out;
}

std::vector<RegexNode> top_branches(std::string_view pattern) {
  RegexNode root = Parser(pattern).parse();
  if (root.kind == RegexNode::Kind::Alt) return std::move(root.children);
  std::vector<RegexNode> one;
  one.push_back(std::move(root));
  return one;
}

}  // namespace

RegexNode text_without(std::string_view marker) {
  const std::vector<uint32_t> m = decode_utf8(marker);
  if (m.empty() || std::find(m.begin() + 1, m.end(), m[0]) != m.end())
    fail("regex: cannot exclude '{}': its first character occurs again in it", marker);
  const CharSet not_first = CharSet{{m[0], m[0]}}.complement();
  if (m.size() == 1) return RegexNode::repeat(RegexNode::of_chars(not_first), 0, RegexNode::kUnbounded);
  // A piece after the first character: a proper prefix of the rest, then
  // nothing or a character that breaks it off and anything after.
  std::vector<RegexNode> pieces;
  for (size_t i = 1; i < m.size(); ++i) {
    std::vector<RegexNode> prefix;
    for (size_t k = 1; k < i; ++k) prefix.push_back(RegexNode::of_chars(CharSet{{m[k], m[k]}}));
    RegexNode broken = RegexNode::concat({RegexNode::of_chars(not_first.minus(CharSet{{m[i], m[i]}})),
                                          RegexNode::repeat(RegexNode::of_chars(not_first), 0, RegexNode::kUnbounded)});
    prefix.push_back(RegexNode::repeat(std::move(broken), 0, 1));
    pieces.push_back(RegexNode::concat(std::move(prefix)));
  }
  RegexNode after_first = RegexNode::concat({RegexNode::of_chars(CharSet{{m[0], m[0]}}), RegexNode::alt(std::move(pieces))});
  return RegexNode::concat({RegexNode::repeat(RegexNode::of_chars(not_first), 0, RegexNode::kUnbounded),
                            RegexNode::repeat(std::move(after_first), 0, RegexNode::kUnbounded)});
}

RegexNode RegexNode::literal(std::string_view utf8) {
  std::vector<RegexNode> items;
  for (uint32_t c : decode_utf8(utf8)) items.push_back(of_chars(CharSet{{c, c}}));
  return concat(std::move(items));
}

RegexNode RegexNode::repeat(RegexNode child, uint32_t min, uint32_t max) {
  RegexNode n;
  n.kind = Kind::Repeat;
  n.min = min;
  n.max = max;
  n.children.push_back(std::move(child));
  return n;
}

RegexNode RegexNode::alt(std::vector<RegexNode> children) {
  if (children.size() == 1) return std::move(children[0]);
  RegexNode n;
  n.kind = Kind::Alt;
  n.children = std::move(children);
  return n;
}

RegexNode RegexNode::concat(std::vector<RegexNode> children) {
  if (children.size() == 1) return std::move(children[0]);
  RegexNode n;
  n.kind = Kind::Concat;
  n.children = std::move(children);
  return n;
}

bool RegexNode::matches_empty() const {
  switch (kind) {
    case Kind::Chars: return false;
    case Kind::Repeat: return min == 0 || children[0].matches_empty();
    case Kind::Alt:
      for (const RegexNode& c : children)
        if (c.matches_empty()) return true;
      return false;
    default:
      for (const RegexNode& c : children)
        if (!c.matches_empty()) return false;
      return true;
  }
}

RegexNode parse_regex(std::string_view pattern) { return Parser(pattern).parse(); }

RegexNode regex_fullmatch(std::string_view pattern) {
  std::vector<RegexNode> branches;
  for (RegexNode& b : top_branches(pattern)) {
    bool s, e;
    branches.push_back(strip_anchors(std::move(b), s, e));
  }
  return RegexNode::alt(std::move(branches));
}

RegexNode regex_search(std::string_view pattern) {
  std::vector<RegexNode> branches;
  for (RegexNode& b : top_branches(pattern)) {
    bool anchored_start, anchored_end;
    RegexNode core = strip_anchors(std::move(b), anchored_start, anchored_end);
    std::vector<RegexNode> parts;
    if (!anchored_start) parts.push_back(RegexNode::repeat(RegexNode::of_chars(CharSet::any()), 0, RegexNode::kUnbounded));
    parts.push_back(std::move(core));
    if (!anchored_end) parts.push_back(RegexNode::repeat(RegexNode::of_chars(CharSet::any()), 0, RegexNode::kUnbounded));
    branches.push_back(RegexNode::concat(std::move(parts)));
  }
  return RegexNode::alt(std::move(branches));
}

}  // namespace skiff::grammar
