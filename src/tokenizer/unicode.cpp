#include "tokenizer/unicode.h"

#include <utf8proc.h>

#include <array>

namespace skiff::unicode {

std::vector<uint32_t> decode_utf8(std::string_view text) {
  std::vector<uint32_t> out;
  out.reserve(text.size());
  const auto* bytes = reinterpret_cast<const utf8proc_uint8_t*>(text.data());
  size_t pos = 0;
  while (pos < text.size()) {
    utf8proc_int32_t cp = 0;
    const utf8proc_ssize_t n = utf8proc_iterate(bytes + pos, static_cast<utf8proc_ssize_t>(text.size() - pos), &cp);
    if (n <= 0) {
      out.push_back(0xFFFD);
      ++pos;
    } else {
      out.push_back(static_cast<uint32_t>(cp));
      pos += static_cast<size_t>(n);
    }
  }
  return out;
}

void append_utf8(std::string& out, uint32_t cp) {
  utf8proc_uint8_t buf[4];
  const utf8proc_ssize_t n = utf8proc_encode_char(static_cast<utf8proc_int32_t>(cp), buf);
  out.append(reinterpret_cast<const char*>(buf), static_cast<size_t>(n));
}

std::string encode_utf8(const std::vector<uint32_t>& codepoints, size_t begin, size_t end) {
  std::string out;
  for (size_t i = begin; i < end; ++i) append_utf8(out, codepoints[i]);
  return out;
}

size_t utf8_sequence_length(uint8_t lead) {
  if (lead < 0xC0) return 1;
  if (lead < 0xE0) return 2;
  if (lead < 0xF0) return 3;
  return 4;
}

bool is_valid_utf8(std::string_view text) {
  return sanitize_utf8(text) == text;
}

std::string sanitize_utf8(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  const auto* bytes = reinterpret_cast<const utf8proc_uint8_t*>(text.data());
  size_t pos = 0;
  while (pos < text.size()) {
    utf8proc_int32_t cp = 0;
    const utf8proc_ssize_t n = utf8proc_iterate(bytes + pos, static_cast<utf8proc_ssize_t>(text.size() - pos), &cp);
    if (n <= 0) {
      append_utf8(out, 0xFFFD);
      ++pos;
    } else {
      out.append(text.substr(pos, static_cast<size_t>(n)));
      pos += static_cast<size_t>(n);
    }
  }
  return out;
}

size_t incomplete_utf8_suffix(std::string_view text) {
  // A character is at most 4 bytes, so only the last 3 can start an unfinished one.
  const size_t lookback = std::min<size_t>(3, text.size());
  for (size_t k = 1; k <= lookback; ++k) {
    const auto byte = static_cast<uint8_t>(text[text.size() - k]);
    if ((byte & 0xC0) == 0x80) continue;  // continuation byte: keep looking for the lead
    const bool lead_of_multibyte = byte >= 0xC2 && byte <= 0xF4;
    return lead_of_multibyte && utf8_sequence_length(byte) > k ? k : 0;
  }
  return 0;
}

namespace {
utf8proc_category_t category(uint32_t cp) {
  return utf8proc_category(static_cast<utf8proc_int32_t>(cp));
}
}  // namespace

bool is_letter(uint32_t cp) {
  switch (category(cp)) {
    case UTF8PROC_CATEGORY_LU: case UTF8PROC_CATEGORY_LL: case UTF8PROC_CATEGORY_LT:
    case UTF8PROC_CATEGORY_LM: case UTF8PROC_CATEGORY_LO:
      return true;
    default:
      return false;
  }
}

bool is_number(uint32_t cp) {
  switch (category(cp)) {
    case UTF8PROC_CATEGORY_ND: case UTF8PROC_CATEGORY_NL: case UTF8PROC_CATEGORY_NO:
      return true;
    default:
      return false;
  }
}

bool is_punctuation(uint32_t cp) {
  switch (category(cp)) {
    case UTF8PROC_CATEGORY_PC: case UTF8PROC_CATEGORY_PD: case UTF8PROC_CATEGORY_PS:
    case UTF8PROC_CATEGORY_PE: case UTF8PROC_CATEGORY_PI: case UTF8PROC_CATEGORY_PF:
    case UTF8PROC_CATEGORY_PO:
      return true;
    default:
      return false;
  }
}

bool is_symbol(uint32_t cp) {
  switch (category(cp)) {
    case UTF8PROC_CATEGORY_SM: case UTF8PROC_CATEGORY_SC: case UTF8PROC_CATEGORY_SK:
    case UTF8PROC_CATEGORY_SO:
      return true;
    default:
      return false;
  }
}

bool is_control(uint32_t cp) {
  switch (category(cp)) {
    case UTF8PROC_CATEGORY_CC: case UTF8PROC_CATEGORY_CF: case UTF8PROC_CATEGORY_CO:
    case UTF8PROC_CATEGORY_CS:
      return true;
    default:
      return false;
  }
}

uint32_t to_lower(uint32_t cp) {
  return static_cast<uint32_t>(utf8proc_tolower(static_cast<utf8proc_int32_t>(cp)));
}

uint32_t canonical_decomposition_head(uint32_t cp) {
  // A canonical decomposition is at most 4 code points (Hangul: 3); 8 leaves room.
  utf8proc_int32_t decomposed[8];
  int last_boundclass = 0;
  const utf8proc_ssize_t n = utf8proc_decompose_char(static_cast<utf8proc_int32_t>(cp), decomposed, 8,
                                                     UTF8PROC_DECOMPOSE, &last_boundclass);
  return n >= 1 && n <= 8 ? static_cast<uint32_t>(decomposed[0]) : cp;
}

const char* general_category(uint32_t cp) {
  return utf8proc_category_string(static_cast<utf8proc_int32_t>(cp));
}

bool is_whitespace(uint32_t cp) {
  // utf8proc has no White_Space property; the set is small and stable.
  return (cp >= 0x09 && cp <= 0x0D) || cp == 0x20 || cp == 0x85 || cp == 0xA0 ||
         cp == 0x1680 || (cp >= 0x2000 && cp <= 0x200A) || cp == 0x2028 || cp == 0x2029 ||
         cp == 0x202F || cp == 0x205F || cp == 0x3000;
}

namespace {
// Printable Latin-1 bytes map to themselves; the others, in byte order, to U+0100 on.
struct ByteMapping {
  std::array<std::string, 256> byte_to_text;
  std::array<int16_t, 512> codepoint_to_byte{};

  ByteMapping() {
    codepoint_to_byte.fill(-1);
    uint32_t next_extra = 256;
    for (uint32_t b = 0; b < 256; ++b) {
      const bool printable = (b >= 33 && b <= 126) || (b >= 161 && b <= 172) || b >= 174;
      const uint32_t cp = printable ? b : next_extra++;
      append_utf8(byte_to_text[b], cp);
      codepoint_to_byte[cp] = static_cast<int16_t>(b);
    }
  }
};
const ByteMapping& byte_mapping() {
  static const ByteMapping mapping;
  return mapping;
}
}  // namespace

const std::string& byte_to_unicode(uint8_t byte) { return byte_mapping().byte_to_text[byte]; }

int unicode_to_byte(uint32_t codepoint) {
  return codepoint < 512 ? byte_mapping().codepoint_to_byte[codepoint] : -1;
}

}  // namespace skiff::unicode
