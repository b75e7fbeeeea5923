#include "grammar/nfa.h"

#include <string_view>

#include "base/error.h"

namespace skiff::grammar {

int encode_utf8(uint32_t c, uint8_t out[4]) {
  if (c < 0x80) {
    out[0] = static_cast<uint8_t>(c);
    return 1;
  }
  if (c < 0x800) {
    out[0] = static_cast<uint8_t>(0xC0 | (c >> 6));
    out[1] = static_cast<uint8_t>(0x80 | (c & 0x3F));
    return 2;
  }
  if (c < 0x10000) {
    out[0] = static_cast<uint8_t>(0xE0 | (c >> 12));
    out[1] = static_cast<uint8_t>(0x80 | ((c >> 6) & 0x3F));
    out[2] = static_cast<uint8_t>(0x80 | (c & 0x3F));
    return 3;
  }
  out[0] = static_cast<uint8_t>(0xF0 | (c >> 18));
  out[1] = static_cast<uint8_t>(0x80 | ((c >> 12) & 0x3F));
  out[2] = static_cast<uint8_t>(0x80 | ((c >> 6) & 0x3F));
  out[3] = static_cast<uint8_t>(0x80 | (c & 0x3F));
  return 4;
}

int32_t Nfa::add_state() {
  if (states_.size() >= max_states_)
    fail("grammar too large: more than {} automaton states (simplify the schema, regex or grammar)", max_states_);
  states_.emplace_back();
  return static_cast<int32_t>(states_.size() - 1);
}

void Nfa::add_literal(int32_t from, std::string_view bytes, int32_t to) {
  if (bytes.empty()) {
    add_epsilon(from, to);
    return;
  }
  int32_t at = from;
  for (size_t i = 0; i < bytes.size(); ++i) {
    int32_t next = i + 1 == bytes.size() ? to : add_state();
    auto b = static_cast<uint8_t>(bytes[i]);
    add_bytes(at, b, b, next);
    at = next;
  }
}

void Nfa::add_code_points(int32_t from, uint32_t lo, uint32_t hi, int32_t to) {
  if (hi > kMaxCodePoint) hi = kMaxCodePoint;
  if (lo > hi) return;
  // Split where the encoded length changes, and around the surrogates.
  static constexpr uint32_t kBounds[] = {0x7F, 0x7FF, 0xD7FF, 0xDFFF, 0xFFFF};
  for (uint32_t bound : kBounds) {
    if (lo <= bound && hi > bound) {
      add_code_points(from, lo, bound, to);
      add_code_points(from, bound + 1, hi, to);
      return;
    }
  }
  if (lo >= 0xD800 && hi <= 0xDFFF) return;
  add_utf8_same_length(from, lo, hi, to);
}

// lo and hi encode to the same length; split until every byte position is a
// plain range, then add one chain of byte ranges.
void Nfa::add_utf8_same_length(int32_t from, uint32_t lo, uint32_t hi, int32_t to) {
  uint8_t a[4], b[4];
  int n = encode_utf8(lo, a);
  for (int i = 1; i < n; ++i) {
    uint32_t m = (1u << (6 * i)) - 1;
    if ((lo & ~m) != (hi & ~m)) {
      if ((lo & m) != 0) {
        add_utf8_same_length(from, lo, lo | m, to);
        add_utf8_same_length(from, (lo | m) + 1, hi, to);
        return;
      }
      if ((hi & m) != m) {
        add_utf8_same_length(from, lo, (hi & ~m) - 1, to);
        add_utf8_same_length(from, hi & ~m, hi, to);
        return;
      }
    }
  }
  encode_utf8(hi, b);
  int32_t at = from;
  for (int i = 0; i < n; ++i) {
    int32_t next = i + 1 == n ? to : add_state();
    add_bytes(at, a[i], b[i], next);
    at = next;
  }
}

}  // namespace skiff::grammar
