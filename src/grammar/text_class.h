// Kinds of text whole runs of tokens are often all allowed in: JSON string
// text (any character a JSON string holds unescaped: not '"', '\\' or a
// control character) and ASCII letters and digits (words, names, emails).
// The token trie slices the vocabulary by them, and the lexer tells which of
// its states take any such text.
#pragma once
#include <cstdint>

namespace skiff::grammar {

enum class TextClass { JsonString, Alphanumeric };
constexpr int kTextClasses = 2;
constexpr int kTextClassPhases = 8;

// The class's text as a byte automaton over well-formed UTF-8 (Unicode's
// table 3-7): the phase after `byte` from `phase` (0: between characters), or
// -1 when the byte cannot come there.
constexpr int text_class_phase_after(TextClass text_class, int phase, uint8_t b) {
  if (text_class == TextClass::Alphanumeric)
    return (b >= '0' && b <= '9') || (b >= 'A' && b <= 'Z') || (b >= 'a' && b <= 'z') ? 0 : -1;
  switch (phase) {
    case 0:
      if (b < 0x80) return b < 0x20 || b == '"' || b == '\\' ? -1 : 0;
      if (b >= 0xC2 && b <= 0xDF) return 1;
      if (b == 0xE0) return 2;
      if (b == 0xED) return 4;
      if (b >= 0xE1 && b <= 0xEF) return 3;
      if (b == 0xF0) return 5;
      if (b >= 0xF1 && b <= 0xF3) return 6;
      if (b == 0xF4) return 7;
      return -1;
    case 1: return b >= 0x80 && b <= 0xBF ? 0 : -1;
    case 2: return b >= 0xA0 && b <= 0xBF ? 1 : -1;
    case 3: return b >= 0x80 && b <= 0xBF ? 1 : -1;
    case 4: return b >= 0x80 && b <= 0x9F ? 1 : -1;
    case 5: return b >= 0x90 && b <= 0xBF ? 3 : -1;
    case 6: return b >= 0x80 && b <= 0xBF ? 3 : -1;
    case 7: return b >= 0x80 && b <= 0x8F ? 3 : -1;
    default: return -1;
  }
}

namespace detail {
struct TextClassMoves {
  int8_t next[kTextClasses][kTextClassPhases][256];
};
constexpr TextClassMoves text_class_moves() {
  TextClassMoves moves{};
  for (int c = 0; c < kTextClasses; ++c)
    for (int phase = 0; phase < kTextClassPhases; ++phase)
      for (int b = 0; b < 256; ++b)
        moves.next[c][phase][b] = static_cast<int8_t>(text_class_phase_after(static_cast<TextClass>(c), phase, uint8_t(b)));
  return moves;
}
inline constexpr TextClassMoves kTextClassMoves = text_class_moves();
}  // namespace detail

// The same from a table: mask walks take millions of these.
inline int text_class_next_phase(TextClass text_class, int phase, uint8_t byte) {
  return detail::kTextClassMoves.next[static_cast<int>(text_class)][phase][byte];
}

}  // namespace skiff::grammar
