#include "tokenizer/regex.h"

#include <array>
#include <utility>

#include "base/error.h"
#include "tokenizer/unicode.h"

namespace skiff {

namespace {

// Character properties a class can test, as bits.
enum Property : uint32_t {
  kLetter = 1 << 0, kNumber = 1 << 1, kPunctuation = 1 << 2, kMark = 1 << 3, kSymbol = 1 << 4,
  kUppercase = 1 << 5, kLowercase = 1 << 6, kTitlecase = 1 << 7, kModifierLetter = 1 << 8, kOtherLetter = 1 << 9,
  kSpace = 1 << 10,  // \s
  kDigit = 1 << 11,  // \d: ASCII digits, as std::regex sees them
  kWord = 1 << 12,   // \w: [A-Za-z0-9_]
};

uint32_t classify(uint32_t cp) {
  const char* category = unicode::general_category(cp);
  uint32_t p = 0;
  switch (category[0]) {
    case 'L': {
      p |= kLetter;
      const char sub = category[1];
      p |= sub == 'u' ? kUppercase : sub == 'l' ? kLowercase : sub == 't' ? kTitlecase : sub == 'm' ? kModifierLetter : kOtherLetter;
      break;
    }
    case 'N': p |= kNumber; break;
    case 'P': p |= kPunctuation; break;
    case 'M': p |= kMark; break;
    case 'S': p |= kSymbol; break;
    default: break;
  }
  if (unicode::is_whitespace(cp)) p |= kSpace;
  const bool digit = cp >= '0' && cp <= '9';
  if (digit) p |= kDigit;
  if (digit || (cp >= 'a' && cp <= 'z') || (cp >= 'A' && cp <= 'Z') || cp == '_') p |= kWord;
  return p;
}

uint32_t properties_of(uint32_t cp) {
  static const auto ascii = [] {
    std::array<uint32_t, 128> table{};
    for (uint32_t c = 0; c < 128; ++c) table[c] = classify(c);
    return table;
  }();
  return cp < 128 ? ascii[cp] : classify(cp);
}

// One bracketed class, or a single escape or literal outside brackets.
struct CharSet {
  bool negated = false;
  std::vector<std::pair<uint32_t, uint32_t>> ranges;
  uint32_t with = 0;     // characters having any of these properties are in
  uint32_t without = 0;  // characters lacking any of these are in (\S, \D, \W, \P{..})

  bool contains(uint32_t cp) const {
    bool in = false;
    for (const auto& [lo, hi] : ranges) in = in || (cp >= lo && cp <= hi);
    if (!in && (with | without) != 0) {
      const uint32_t p = properties_of(cp);
      in = (p & with) != 0 || (~p & without) != 0;
    }
    return in != negated;
  }
};

struct Node {
  enum Kind { kSet, kSequence, kAlternation, kRepeat, kLookahead, kNegativeLookahead, kWordBoundary, kEnd };
  explicit Node(Kind k) : kind(k) {}
  Kind kind;
  int set = -1;
  int min = 1;
  int max = 1;  // -1: unbounded
  std::vector<Node> children;
};

struct Inst {
  enum Op { kSet, kSplit, kJump, kLookahead, kNegativeLookahead, kWordBoundary, kEnd, kMatch };
  Inst(Op o, int first = 0) : op(o), a(first) {}
  Op op;
  int a = 0;     // kSet: set; kSplit: preferred target; kJump: target; lookaheads: code
  int b = 0;     // kSplit: the other target
  int slot = 0;  // kSplit: its row in the memo of failed states
};

}  // namespace

struct Regex::Program {
  std::vector<CharSet> sets;
  std::vector<std::vector<Inst>> codes;  // codes[0] is the pattern; the others its lookaheads
  int n_splits = 0;
};

namespace {

class Parser {
 public:
  Parser(std::string_view pattern, std::vector<CharSet>& sets)
      : pattern_(pattern), cps_(unicode::decode_utf8(pattern)), sets_(sets) {}

  Node parse() {
    Node node = parse_alternation();
    if (pos_ < cps_.size()) error("unbalanced ')'");
    return node;
  }

 private:
  [[noreturn]] void error(std::string_view what) const {
    fail("pre-tokenizer regex '{}': {} at character {}", pattern_, what, pos_);
  }
  bool at(uint32_t cp) const { return pos_ < cps_.size() && cps_[pos_] == cp; }
  uint32_t next() {
    if (pos_ >= cps_.size()) error("unexpected end");
    return cps_[pos_++];
  }

  Node parse_alternation() {
    Node alternation{Node::kAlternation};
    alternation.children.push_back(parse_sequence());
    while (at('|')) {
      ++pos_;
      alternation.children.push_back(parse_sequence());
    }
    return alternation.children.size() == 1 ? std::move(alternation.children[0]) : alternation;
  }

  Node parse_sequence() {
    Node sequence{Node::kSequence};
    while (pos_ < cps_.size() && !at('|') && !at(')')) sequence.children.push_back(parse_repeat());
    return sequence;
  }

  Node parse_repeat() {
    Node atom = parse_atom();
    while (pos_ < cps_.size()) {
      int min = 0;
      int max = -1;
      if (at('*')) {
        ++pos_;
      } else if (at('+')) {
        ++pos_;
        min = 1;
      } else if (at('?')) {
        ++pos_;
        max = 1;
      } else if (at('{')) {
        ++pos_;
        min = parse_count();
        max = min;
        if (at(',')) {
          ++pos_;
          max = at('}') ? -1 : parse_count();
        }
        if (next() != '}' || (max >= 0 && max < min)) error("bad {n,m}");
      } else {
        break;
      }
      if (at('?') || at('+')) error("lazy and possessive quantifiers are not supported");
      Node repeat{Node::kRepeat};
      repeat.min = min;
      repeat.max = max;
      repeat.children.push_back(std::move(atom));
      atom = std::move(repeat);
    }
    return atom;
  }

  int parse_count() {
    int n = 0;
    const size_t start = pos_;
    while (pos_ < cps_.size() && cps_[pos_] >= '0' && cps_[pos_] <= '9' && n < 100000) n = n * 10 + static_cast<int>(cps_[pos_++] - '0');
    if (pos_ == start || n > 4096) error("bad repeat count");
    return n;
  }

  Node parse_atom() {
    const uint32_t cp = next();
    switch (cp) {
      case '(': {
        Node::Kind kind = Node::kSequence;
        if (at('?')) {
          ++pos_;
          const uint32_t what = next();
          if (what == '=') {
            kind = Node::kLookahead;
          } else if (what == '!') {
            kind = Node::kNegativeLookahead;
          } else if (what != ':') {
            error("only (?:...), (?=...) and (?!...) groups are supported");
          }
        }
        Node inner = parse_alternation();
        if (next() != ')') error("missing ')'");
        if (kind == Node::kSequence) return inner;
        Node look{kind};
        look.children.push_back(std::move(inner));
        return look;
      }
      case '[':
        return set_node(parse_class());
      case '$':
        return Node{Node::kEnd};
      case '\\':
        if (at('b')) {
          ++pos_;
          return Node{Node::kWordBoundary};
        }
        return set_node(parse_escape());
      case '.': case '^': case ')': case '*': case '+': case '?': case '{': case '|':
        --pos_;
        error("unsupported or misplaced operator");
      default: {
        CharSet literal;
        literal.ranges.push_back({cp, cp});
        return set_node(std::move(literal));
      }
    }
  }

  Node set_node(CharSet set) {
    Node node{Node::kSet};
    node.set = static_cast<int>(sets_.size());
    sets_.push_back(std::move(set));
    return node;
  }

  // After a backslash: a class escape (\s \p{L} ...) or one escaped character.
  CharSet parse_escape() {
    CharSet set;
    const uint32_t cp = next();
    switch (cp) {
      case 's': set.with = kSpace; break;
      case 'S': set.without = kSpace; break;
      case 'd': set.with = kDigit; break;
      case 'D': set.without = kDigit; break;
      case 'w': set.with = kWord; break;
      case 'W': set.without = kWord; break;
      case 'p': set.with = parse_category(); break;
      case 'P': set.without = parse_category(); break;
      default: {
        const uint32_t literal = escaped_character(cp);
        set.ranges.push_back({literal, literal});
      }
    }
    return set;
  }

  uint32_t escaped_character(uint32_t cp) {
    switch (cp) {
      case 'x': {  // \x{HHHH}: a code point by number
        if (next() != '{') error("expected '{' after \\x");
        uint32_t value = 0;
        for (uint32_t digit; (digit = next()) != '}';) {
          const int v = digit <= '9' ? static_cast<int>(digit) - '0' : static_cast<int>(digit | 0x20) - 'a' + 10;
          if (v < 0 || v > 15 || value > 0x10FFFF) error("bad \\x{...}");
          value = value * 16 + static_cast<uint32_t>(v);
        }
        return value;
      }
      case 'r': return '\r';
      case 'n': return '\n';
      case 't': return '\t';
      case 'f': return '\f';
      case 'v': return '\v';
      default:
        if ((cp >= 'a' && cp <= 'z') || (cp >= 'A' && cp <= 'Z') || (cp >= '0' && cp <= '9')) {
          error("unsupported escape");
        }
        return cp;  // an escaped punctuation character stands for itself
    }
  }

  uint32_t parse_category() {
    if (next() != '{') error("expected '{' after \\p");
    std::string name;
    while (!at('}')) unicode::append_utf8(name, next());
    ++pos_;
    if (name == "L") return kLetter;
    if (name == "N") return kNumber;
    if (name == "P") return kPunctuation;
    if (name == "M") return kMark;
    if (name == "S") return kSymbol;
    if (name == "Lu") return kUppercase;
    if (name == "Ll") return kLowercase;
    if (name == "Lt") return kTitlecase;
    if (name == "Lm") return kModifierLetter;
    if (name == "Lo") return kOtherLetter;
    error("unsupported category \\p{" + name + "}");
  }

  CharSet parse_class() {
    CharSet set;
    if (at('^')) {
      ++pos_;
      set.negated = true;
    }
    while (!at(']')) {
      uint32_t lo = next();
      if (lo == '\\') {
        if (pos_ < cps_.size() && std::string_view("sSdDwWpP").find(static_cast<char>(cps_[pos_])) != std::string_view::npos) {
          const CharSet inner = parse_escape();
          set.with |= inner.with;
          set.without |= inner.without;
          continue;
        }
        lo = escaped_character(next());
      }
      uint32_t hi = lo;
      if (at('-') && pos_ + 1 < cps_.size() && cps_[pos_ + 1] != ']') {
        ++pos_;
        hi = next();
        if (hi == '\\') hi = escaped_character(next());
        if (hi < lo) error("bad range");
      }
      set.ranges.push_back({lo, hi});
    }
    ++pos_;
    return set;
  }

  std::string_view pattern_;
  std::vector<uint32_t> cps_;
  std::vector<CharSet>& sets_;
  size_t pos_ = 0;
};

int min_width(const Node& node) {
  switch (node.kind) {
    case Node::kSet: return 1;
    case Node::kSequence: {
      int sum = 0;
      for (const Node& child : node.children) sum += min_width(child);
      return sum;
    }
    case Node::kAlternation: {
      int least = min_width(node.children[0]);
      for (const Node& child : node.children) least = std::min(least, min_width(child));
      return least;
    }
    case Node::kRepeat: return node.min * min_width(node.children[0]);
    default: return 0;
  }
}

class Compiler {
 public:
  explicit Compiler(Regex::Program& program) : program_(program) {}

  int compile_code(const Node& node) {
    const int index = static_cast<int>(program_.codes.size());
    program_.codes.emplace_back();
    std::vector<Inst> code;
    emit(node, code);
    code.push_back({Inst::kMatch});
    program_.codes[index] = std::move(code);
    return index;
  }

 private:
  static int here(const std::vector<Inst>& code) { return static_cast<int>(code.size()); }

  void emit(const Node& node, std::vector<Inst>& code) {
    switch (node.kind) {
      case Node::kSet:
        code.push_back({Inst::kSet, node.set});
        break;
      case Node::kSequence:
        for (const Node& child : node.children) emit(child, code);
        break;
      case Node::kAlternation: {
        std::vector<int> jumps;
        for (size_t i = 0; i + 1 < node.children.size(); ++i) {
          const int split = here(code);
          code.push_back({Inst::kSplit, split + 1});
          emit(node.children[i], code);
          jumps.push_back(here(code));
          code.push_back({Inst::kJump});
          code[split].b = here(code);
        }
        emit(node.children.back(), code);
        for (const int jump : jumps) code[jump].a = here(code);
        break;
      }
      case Node::kRepeat:
        emit_repeat(node, code);
        break;
      case Node::kLookahead:
      case Node::kNegativeLookahead: {
        const int sub = compile_code(node.children[0]);
        code.push_back({node.kind == Node::kLookahead ? Inst::kLookahead : Inst::kNegativeLookahead, sub});
        break;
      }
      case Node::kWordBoundary:
        code.push_back({Inst::kWordBoundary});
        break;
      case Node::kEnd:
        code.push_back({Inst::kEnd});
        break;
    }
  }

  // Greedy: each optional copy is tried before skipping to the end.
  void emit_repeat(const Node& node, std::vector<Inst>& code) {
    const Node& child = node.children[0];
    for (int i = 0; i < node.min; ++i) emit(child, code);
    if (node.max < 0) {
      if (min_width(child) == 0) fail("pre-tokenizer regex: a repeated part that can match empty is not supported");
      const int split = here(code);
      code.push_back({Inst::kSplit, split + 1});
      emit(child, code);
      code.push_back({Inst::kJump, split});
      code[split].b = here(code);
      return;
    }
    std::vector<int> splits;
    for (int i = node.min; i < node.max; ++i) {
      splits.push_back(here(code));
      code.push_back({Inst::kSplit, here(code) + 1});
      emit(child, code);
    }
    for (const int split : splits) code[split].b = here(code);
  }

  Regex::Program& program_;
};

struct Thread {
  int pc;
  size_t pos;
  int failed_slot;  // >= 0: not a thread but a marker; popping it means the split at (slot, pos) failed
};

bool is_word_at(const std::vector<uint32_t>& cps, size_t begin, size_t end, size_t i, bool before) {
  if (before ? i <= begin : i >= end) return false;
  return (properties_of(cps[before ? i - 1 : i]) & kWord) != 0;
}

}  // namespace

// Whether the rest of the pattern from a split at a position can match
// depends only on that split and position (no backreferences), not on where
// the match began. Splits whose every continuation failed are remembered, so
// each (split, position) is explored at most once per stretch: without this,
// \s*[\r\n]+ rescans a long whitespace run from every start, which is
// quadratic.
class RegexSearch::FailedSplits {
 public:
  FailedSplits(int n_splits, size_t positions) : positions_(positions), bits_((n_splits * positions + 63) / 64) {}
  bool test(int slot, size_t offset) const { return (bits_[index(slot, offset) / 64] >> (index(slot, offset) % 64)) & 1; }
  void set(int slot, size_t offset) { bits_[index(slot, offset) / 64] |= uint64_t{1} << (index(slot, offset) % 64); }

 private:
  size_t index(int slot, size_t offset) const { return static_cast<size_t>(slot) * positions_ + offset; }
  size_t positions_;
  std::vector<uint64_t> bits_;
};

RegexSearch::RegexSearch(const Regex& regex, const std::vector<uint32_t>& cps, size_t begin, size_t end)
    : program_(*regex.program_), cps_(cps), begin_(begin), end_(end),
      failed_(std::make_unique<FailedSplits>(program_.n_splits, end - begin + 1)) {}

RegexSearch::~RegexSearch() = default;

ptrdiff_t RegexSearch::match_at(size_t pos) {
  size_t match_end = 0;
  if (!run(0, pos, match_end)) return -1;
  return static_cast<ptrdiff_t>(match_end - pos);
}

// Backtracking over an explicit stack; the first thread to reach kMatch wins,
// which is the leftmost-first (ECMAScript) choice. Lookaheads recurse, one
// level per nesting in the pattern.
bool RegexSearch::run(int code_index, size_t start, size_t& match_end) {
  const std::vector<Inst>& code = program_.codes[code_index];
  std::vector<Thread> stack{{0, start, -1}};
  while (!stack.empty()) {
    auto [pc, pos, failed_slot] = stack.back();
    stack.pop_back();
    if (failed_slot >= 0) {
      failed_->set(failed_slot, pos - begin_);
      continue;
    }
    for (bool alive = true; alive;) {
      const Inst& inst = code[pc];
      switch (inst.op) {
        case Inst::kSet:
          alive = pos < end_ && program_.sets[inst.a].contains(cps_[pos]);
          ++pos;
          ++pc;
          break;
        case Inst::kSplit:
          alive = !failed_->test(inst.slot, pos - begin_);
          if (alive) {
            stack.push_back({pc, pos, inst.slot});
            stack.push_back({inst.b, pos, -1});
            pc = inst.a;
          }
          break;
        case Inst::kJump:
          pc = inst.a;
          break;
        case Inst::kLookahead:
        case Inst::kNegativeLookahead: {
          size_t ignored = 0;
          alive = run(inst.a, pos, ignored) == (inst.op == Inst::kLookahead);
          ++pc;
          break;
        }
        case Inst::kWordBoundary:
          alive = is_word_at(cps_, begin_, end_, pos, true) != is_word_at(cps_, begin_, end_, pos, false);
          ++pc;
          break;
        case Inst::kEnd:
          alive = pos == end_;
          ++pc;
          break;
        case Inst::kMatch:
          match_end = pos;
          return true;
      }
    }
  }
  return false;
}

Regex::Regex(std::string_view pattern) : program_(std::make_unique<Program>()) {
  const Node root = Parser(pattern, program_->sets).parse();
  Compiler(*program_).compile_code(root);
  for (auto& code : program_->codes) {
    for (Inst& inst : code) {
      if (inst.op == Inst::kSplit) inst.slot = program_->n_splits++;
    }
  }
}

Regex::~Regex() = default;
Regex::Regex(Regex&&) noexcept = default;
Regex& Regex::operator=(Regex&&) noexcept = default;

ptrdiff_t Regex::match_at(const std::vector<uint32_t>& cps, size_t begin, size_t pos, size_t end) const {
  return RegexSearch(*this, cps, begin, end).match_at(pos);
}

}  // namespace skiff
