#include "grammar/regex_nfa.h"

#include <algorithm>

#include "base/error.h"

namespace skiff::grammar {
namespace {

// One hex digit in [lo, hi] (0..15), either case for a-f.
void add_hex_digit(Nfa& nfa, uint32_t lo, uint32_t hi, int32_t from, int32_t to) {
  if (lo <= 9) nfa.add_bytes(from, uint8_t('0' + lo), uint8_t('0' + std::min(hi, 9u)), to);
  if (hi >= 10) {
    uint32_t a = std::max(lo, 10u) - 10, b = hi - 10;
    nfa.add_bytes(from, uint8_t('a' + a), uint8_t('a' + b), to);
    nfa.add_bytes(from, uint8_t('A' + a), uint8_t('A' + b), to);
  }
}

// The values [lo, hi] written as `digits` hex digits, split like UTF-8 ranges.
void add_hex_range(Nfa& nfa, uint32_t lo, uint32_t hi, int digits, int32_t from, int32_t to) {
  if (lo > hi) return;
  if (digits == 1) {
    add_hex_digit(nfa, lo, hi, from, to);
    return;
  }
  int shift = 4 * (digits - 1);
  uint32_t low_mask = (1u << shift) - 1;
  if ((lo >> shift) == (hi >> shift)) {
    int32_t mid = nfa.add_state();
    add_hex_digit(nfa, lo >> shift, lo >> shift, from, mid);
    add_hex_range(nfa, lo & low_mask, hi & low_mask, digits - 1, mid, to);
    return;
  }
  if ((lo & low_mask) != 0) {
    add_hex_range(nfa, lo, lo | low_mask, digits, from, to);
    lo = (lo | low_mask) + 1;
  }
  if ((hi & low_mask) != low_mask) {
    add_hex_range(nfa, hi & ~low_mask, hi, digits, from, to);
    hi = (hi & ~low_mask) - 1;
  }
  if (lo > hi) return;
  int32_t mid = nfa.add_state();
  add_hex_digit(nfa, lo >> shift, hi >> shift, from, mid);
  add_hex_range(nfa, 0, low_mask, digits - 1, mid, to);
}

void add_json_chars(Nfa& nfa, const CharSet& set, int32_t from, int32_t to) {
  CharSet raw = set.minus(CharSet{{0, 0x1F}, {'"', '"'}, {'\\', '\\'}});
  for (auto [lo, hi] : raw.ranges()) nfa.add_code_points(from, lo, hi, to);
  static constexpr std::pair<uint32_t, char> kShortEscapes[] = {
      {'"', '"'}, {'\\', '\\'}, {'/', '/'}, {'\b', 'b'}, {'\f', 'f'}, {'\n', 'n'}, {'\r', 'r'}, {'\t', 't'}};
  CharSet bmp = set.intersect(CharSet{{0, 0xD7FF}, {0xE000, 0xFFFF}});
  if (bmp.empty()) return;  // every short escape's character is in the BMP
  int32_t escape = nfa.add_state();
  nfa.add_bytes(from, '\\', '\\', escape);
  for (auto [c, letter] : kShortEscapes)
    if (set.contains(c)) nfa.add_bytes(escape, uint8_t(letter), uint8_t(letter), to);
  int32_t hex = nfa.add_state();
  nfa.add_bytes(escape, 'u', 'u', hex);
  for (auto [lo, hi] : bmp.ranges()) add_hex_range(nfa, lo, hi, 4, hex, to);
}

}  // namespace

void add_chars(Nfa& nfa, const CharSet& set, int32_t from, int32_t to, TextEncoding encoding) {
  if (encoding == TextEncoding::JsonString) {
    add_json_chars(nfa, set, from, to);
    return;
  }
  for (auto [lo, hi] : set.ranges()) nfa.add_code_points(from, lo, hi, to);
}

void add_regex(Nfa& nfa, const RegexNode& node, int32_t from, int32_t to, TextEncoding encoding) {
  using Kind = RegexNode::Kind;
  switch (node.kind) {
    case Kind::Chars:
      add_chars(nfa, node.chars, from, to, encoding);
      return;
    case Kind::Alt:
      for (const RegexNode& child : node.children) add_regex(nfa, child, from, to, encoding);
      return;
    case Kind::Concat: {
      int32_t at = from;
      for (size_t i = 0; i < node.children.size(); ++i) {
        int32_t next = i + 1 == node.children.size() ? to : nfa.add_state();
        add_regex(nfa, node.children[i], at, next, encoding);
        at = next;
      }
      if (node.children.empty()) nfa.add_epsilon(from, to);
      return;
    }
    case Kind::Repeat: {
      const RegexNode& child = node.children[0];
      int32_t at = from;
      for (uint32_t i = 0; i < node.min; ++i) {
        int32_t next = nfa.add_state();
        add_regex(nfa, child, at, next, encoding);
        at = next;
      }
      if (node.max == RegexNode::kUnbounded) {
        int32_t loop = nfa.add_state();
        nfa.add_epsilon(at, loop);
        add_regex(nfa, child, loop, loop, encoding);
        nfa.add_epsilon(loop, to);
        return;
      }
      nfa.add_epsilon(at, to);
      for (uint32_t i = node.min; i < node.max; ++i) {
        int32_t next = i + 1 == node.max ? to : nfa.add_state();
        add_regex(nfa, child, at, next, encoding);
        if (next != to) nfa.add_epsilon(next, to);
        at = next;
      }
      return;
    }
    case Kind::LineStart:
    case Kind::LineEnd:
      fail("regex: anchors (^, $) are supported only at the start and end of the pattern");
  }
}

}  // namespace skiff::grammar
