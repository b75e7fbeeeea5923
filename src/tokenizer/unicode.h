// Unicode helpers for the tokenizers: UTF-8 coding, the character classes the
// pre-tokenizer regexes use (\p{L}, \p{N}, \p{P}, \s, general categories) and GPT-2's byte-to-
// unicode mapping. Categories come from utf8proc.
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace skiff::unicode {

// Invalid bytes decode to U+FFFD, one per byte, as llama.cpp does.
std::vector<uint32_t> decode_utf8(std::string_view text);
void append_utf8(std::string& out, uint32_t codepoint);
std::string encode_utf8(const std::vector<uint32_t>& codepoints, size_t begin, size_t end);
// Bytes of the character a lead byte starts (1 for stray continuation bytes).
size_t utf8_sequence_length(uint8_t lead);
// Whether text is entirely well-formed UTF-8.
bool is_valid_utf8(std::string_view text);
// The text with each ill-formed sequence replaced by U+FFFD.
std::string sanitize_utf8(std::string_view text);
// Length of the last bytes of text that begin a character not yet complete
// (0 when text ends on a character boundary).
size_t incomplete_utf8_suffix(std::string_view text);

bool is_letter(uint32_t cp);       // \p{L}
bool is_number(uint32_t cp);       // \p{N}
bool is_punctuation(uint32_t cp);  // \p{P}
bool is_whitespace(uint32_t cp);
bool is_symbol(uint32_t cp);       // \p{S}
// \p{C} less the unassigned code points (Cc, Cf, Co, Cs): llama.cpp's "control" flag,
// whose tables leave unassigned code points undefined rather than control.
bool is_control(uint32_t cp);
// Simple (one code point) lowercase mapping; cp itself when it has none.
uint32_t to_lower(uint32_t cp);
// The first code point of cp's canonical decomposition (NFD): 'e' for U+00E9, the
// leading jamo for a Hangul syllable; cp itself when it does not decompose. llama.cpp's
// "NFD" maps each code point to this one, so text keeps its length.
uint32_t canonical_decomposition_head(uint32_t cp);
// The two-letter Unicode general category ("Lu", "Nd", "Mn", ...; "Cn" when unassigned).
const char* general_category(uint32_t cp);   // \s: the Unicode White_Space property

// GPT-2 byte-level BPE maps every byte to a printable character so vocab
// entries never hold raw control bytes or spaces.
const std::string& byte_to_unicode(uint8_t byte);
// The byte a mapped character stands for, or -1 if it is not one.
int unicode_to_byte(uint32_t codepoint);

}  // namespace skiff::unicode
