#include "api/client_text.h"

#include <algorithm>
#include <utility>

namespace skiff {
namespace {

// Supplementary Private Use Area-A: code points no tokenizer or template
// gives a meaning, 65,534 of them, so two unused ones always exist below any
// body size the server admits.
constexpr uint32_t kPrivateFirst = 0xF0000;
constexpr uint32_t kPrivateCount = 0xFFFFE - kPrivateFirst;

bool in_private_range(uint32_t cp) { return cp >= kPrivateFirst && cp - kPrivateFirst < kPrivateCount; }

int hex_digit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

// The UTF-16 unit of "\uXXXX" at text[i] (the 'u'), or -1.
int32_t utf16_unit_at(std::string_view text, size_t i) {
  if (i + 5 > text.size() || text[i] != 'u') return -1;
  int32_t unit = 0;
  for (size_t k = 1; k < 5; ++k) {
    const int d = hex_digit(text[i + k]);
    if (d < 0) return -1;
    unit = unit * 16 + d;
  }
  return unit;
}

// A code point past U+FFFF as a JSON string escapes it (tojson with
// ensure_ascii: "\udb80\udc00"), at text[i], escaped once or more (each
// tojson doubling the backslashes): {code point, bytes}, or {0, 0}.
std::pair<uint32_t, size_t> escaped_code_point(std::string_view text, size_t i) {
  size_t slashes = 0;
  while (i + slashes < text.size() && text[i + slashes] == '\\') ++slashes;
  if (slashes == 0) return {0, 0};
  const int32_t high = utf16_unit_at(text, i + slashes);
  if (high < 0xD800 || high > 0xDBFF) return {0, 0};
  const size_t after_high = i + slashes + 5;
  for (size_t k = 0; k < slashes; ++k)
    if (after_high + k >= text.size() || text[after_high + k] != '\\') return {0, 0};
  const int32_t low = utf16_unit_at(text, after_high + slashes);
  if (low < 0xDC00 || low > 0xDFFF) return {0, 0};
  return {0x10000 + ((static_cast<uint32_t>(high) - 0xD800) << 10) + (static_cast<uint32_t>(low) - 0xDC00),
          after_high + slashes + 5 - i};
}

// Marks the plane-15 code points text holds, as UTF-8 (4-byte sequences led
// by 0xF3 0xB0-0xBF) or JSON-escaped: a mark must not be spelled either way.
void note_text(std::string_view text, std::vector<bool>& used) {
  for (size_t i = text.find('\xF3'); i != std::string_view::npos && i + 3 < text.size(); i = text.find('\xF3', i + 1)) {
    const auto b = [&](size_t k) { return static_cast<uint32_t>(static_cast<unsigned char>(text[i + k])); };
    const uint32_t cp = ((b(0) & 0x07) << 18) | ((b(1) & 0x3F) << 12) | ((b(2) & 0x3F) << 6) | (b(3) & 0x3F);
    if (in_private_range(cp)) used[cp - kPrivateFirst] = true;
  }
  for (size_t i = text.find('\\'); i != std::string_view::npos; i = text.find('\\', i + 1))
    if (const uint32_t cp = escaped_code_point(text, i).first; in_private_range(cp)) used[cp - kPrivateFirst] = true;
}

void note_private_use(const ojson& value, std::vector<bool>& used) {
  if (value.is_string()) {
    note_text(value.get_ref<const std::string&>(), used);
  } else if (value.is_object()) {
    for (const auto& [key, v] : value.items()) {
      note_text(key, used);
      note_private_use(v, used);
    }
  } else if (value.is_array()) {
    for (const ojson& v : value) note_private_use(v, used);
  }
}

std::string utf8(uint32_t cp) {
  return {static_cast<char>(0xF0 | (cp >> 18)), static_cast<char>(0x80 | ((cp >> 12) & 0x3F)),
          static_cast<char>(0x80 | ((cp >> 6) & 0x3F)), static_cast<char>(0x80 | (cp & 0x3F))};
}

// Appends [offset, offset + length) to sorted spans, merged with the last one where they meet.
void add_span(std::vector<TextSpan>& spans, size_t offset, size_t length) {
  if (length == 0) return;
  if (!spans.empty() && spans.back().offset + spans.back().length >= offset) {
    TextSpan& last = spans.back();
    const size_t end = std::max(last.offset + last.length, offset + length);
    last.offset = std::min(last.offset, offset);
    last.length = end - last.offset;
    return;
  }
  spans.push_back({offset, length});
}

}  // namespace

ClientTextMarks::ClientTextMarks(const Tokenizer& tokenizer, std::string_view template_source,
                                 const std::vector<const ojson*>& inputs)
    : spellings_(tokenizer.control_spellings()) {
  if (spellings_.empty()) return;
  std::vector<bool> used(kPrivateCount);
  note_text(template_source, used);
  for (const ojson* input : inputs) note_private_use(*input, used);
  for (uint32_t i = 0; i + 1 < kPrivateCount; i += 2) {
    if (used[i] || used[i + 1]) continue;
    open_code_point_ = kPrivateFirst + i;
    open_ = utf8(open_code_point_);
    close_ = utf8(open_code_point_ + 1);
    return;
  }
  // Unreachable below 128 KiB of distinct private-use characters; were it
  // reached, client text would be read as the flag's old behaviour reads it.
  throw RequestError(400, "the request uses every code point of Supplementary Private Use Area-A");
}

std::string ClientTextMarks::mark_string(const std::string& s) const {
  std::vector<std::pair<size_t, size_t>> wrap;  // [begin, end) to enclose
  for (const std::string_view spelling : spellings_) {
    for (size_t hit = s.find(spelling); hit != std::string::npos; hit = s.find(spelling, hit + 1))
      wrap.emplace_back(hit, hit + spelling.size());
    // The longest proper prefix of the spelling that ends the string, and
    // proper suffix that starts it: text after or before it could complete it.
    for (size_t k = std::min(spelling.size() - 1, s.size()); k > 0; --k)
      if (s.compare(s.size() - k, k, spelling.substr(0, k)) == 0) {
        wrap.emplace_back(s.size() - k, s.size());
        break;
      }
    for (size_t k = std::min(spelling.size() - 1, s.size()); k > 0; --k)
      if (s.compare(0, k, spelling.substr(spelling.size() - k)) == 0) {
        wrap.emplace_back(0, k);
        break;
      }
  }
  if (wrap.empty()) return s;
  std::sort(wrap.begin(), wrap.end());
  std::string out;
  out.reserve(s.size() + 8 * wrap.size());
  size_t copied = 0;
  for (size_t i = 0; i < wrap.size();) {
    const size_t begin = wrap[i].first;
    size_t end = wrap[i].second;
    for (++i; i < wrap.size() && wrap[i].first <= end; ++i) end = std::max(end, wrap[i].second);
    out.append(s, copied, begin - copied);
    out += open_;
    out.append(s, begin, end - begin);
    out += close_;
    copied = end;
  }
  out.append(s, copied);
  return out;
}

void ClientTextMarks::mark(ojson& value) {
  if (spellings_.empty()) return;
  if (value.is_string()) {
    std::string marked = mark_string(value.get_ref<const std::string&>());
    if (marked.size() != value.get_ref<const std::string&>().size()) {
      value = std::move(marked);
      marked_any_ = true;
    }
  } else if (value.is_array()) {
    for (ojson& v : value) mark(v);
  } else if (value.is_object()) {
    ojson rebuilt = ojson::object();  // keys in their order, marked where needed
    for (auto& [key, v] : value.items()) {
      mark(v);
      std::string marked_key = mark_string(key);
      if (marked_key.size() != key.size()) marked_any_ = true;
      rebuilt[std::move(marked_key)] = std::move(v);
    }
    value = std::move(rebuilt);
  }
}

MarkedPrompt ClientTextMarks::unmark(std::string_view rendered) const {
  MarkedPrompt out;
  if (!marked_any_) {
    out.text = rendered;
    return out;
  }
  out.text.reserve(rendered.size());
  // Templates copy strings whole; one that slices a string may drop a mark,
  // and then the marked spelling beside the other one is kept plain still.
  constexpr size_t kNone = std::string::npos;
  size_t open = kNone;  // where the open span starts in out.text
  const auto longest_ending_here = [&] {
    size_t longest = 0;
    for (const std::string_view spelling : spellings_)
      if (std::string_view(out.text).ends_with(spelling)) longest = std::max(longest, spelling.size());
    return longest;
  };
  // The mark at rendered[i], as written or as tojson(ensure_ascii=True)
  // escapes it (the spelling it encloses is left as it is): {open?, bytes}.
  const auto mark_at = [&](size_t i) -> std::pair<bool, size_t> {
    if (rendered.compare(i, open_.size(), open_) == 0) return {true, open_.size()};
    if (rendered.compare(i, close_.size(), close_) == 0) return {false, close_.size()};
    if (rendered[i] != '\\') return {false, 0};
    const auto [cp, bytes] = escaped_code_point(rendered, i);
    return {cp == open_code_point_, cp == open_code_point_ || cp == open_code_point_ + 1 ? bytes : 0};
  };
  for (size_t i = 0; i < rendered.size();) {
    const auto [opens, bytes] = mark_at(i);
    if (bytes > 0 && opens) {
      if (open != kNone) add_span(out.plain, open, out.text.size() - open);
      open = out.text.size();
    } else if (bytes > 0) {
      const size_t begin = open != kNone ? open : out.text.size() - longest_ending_here();
      add_span(out.plain, begin, out.text.size() - begin);
      open = kNone;
    } else {
      // Up to the next byte a mark may start at (a mark's lead byte or a backslash).
      const size_t next = rendered.find_first_of(std::string_view("\\\xF3"), i + 1);
      const size_t end = std::min(next, rendered.size());
      out.text.append(rendered, i, end - i);
      i = end;
      continue;
    }
    i += bytes;
  }
  if (open != kNone) add_span(out.plain, open, out.text.size() - open);
  return out;
}

}  // namespace skiff
