#include "chat/jinja_text.h"

#include <utf8proc.h>

#include <algorithm>

#include "base/error.h"
#include "chat/jinja_lexer.h"
#include "tokenizer/unicode.h"

namespace skiff::jinja {

namespace {

std::string encode(const std::vector<uint32_t>& cps) { return unicode::encode_utf8(cps, 0, cps.size()); }

bool is_cased_upper(uint32_t cp) { return utf8proc_category(static_cast<utf8proc_int32_t>(cp)) == UTF8PROC_CATEGORY_LU; }
bool is_cased_lower(uint32_t cp) { return utf8proc_category(static_cast<utf8proc_int32_t>(cp)) == UTF8PROC_CATEGORY_LL; }
bool is_cased(uint32_t cp) {
  const auto c = utf8proc_category(static_cast<utf8proc_int32_t>(cp));
  return c == UTF8PROC_CATEGORY_LU || c == UTF8PROC_CATEGORY_LL || c == UTF8PROC_CATEGORY_LT;
}
uint32_t upper(uint32_t cp) { return static_cast<uint32_t>(utf8proc_toupper(static_cast<utf8proc_int32_t>(cp))); }
uint32_t lower(uint32_t cp) { return static_cast<uint32_t>(utf8proc_tolower(static_cast<utf8proc_int32_t>(cp))); }
uint32_t title(uint32_t cp) { return static_cast<uint32_t>(utf8proc_totitle(static_cast<utf8proc_int32_t>(cp))); }

std::string map_code_points(const std::string& s, uint32_t (*f)(uint32_t)) {
  std::vector<uint32_t> cps = unicode::decode_utf8(s);
  for (uint32_t& cp : cps) cp = f(cp);
  return encode(cps);
}

template <typename Predicate>
bool all_of_nonempty(const std::string& s, Predicate p) {
  const auto cps = unicode::decode_utf8(s);
  return !cps.empty() && std::all_of(cps.begin(), cps.end(), p);
}

std::vector<std::string> split_on_whitespace(const std::vector<uint32_t>& cps, int64_t maxsplit) {
  std::vector<std::string> parts;
  size_t i = 0;
  while (i < cps.size()) {
    while (i < cps.size() && is_python_space(cps[i])) ++i;
    if (i == cps.size()) break;
    if (maxsplit >= 0 && static_cast<int64_t>(parts.size()) == maxsplit) {
      size_t end = cps.size();
      while (end > i && is_python_space(cps[end - 1])) --end;
      parts.push_back(unicode::encode_utf8(cps, i, end));
      break;
    }
    size_t j = i;
    while (j < cps.size() && !is_python_space(cps[j])) ++j;
    parts.push_back(unicode::encode_utf8(cps, i, j));
    i = j;
  }
  return parts;
}

}  // namespace

size_t code_point_count(std::string_view s) {
  size_t n = 0;
  for (const char c : s) n += (static_cast<uint8_t>(c) & 0xC0) != 0x80;
  return n;
}

int64_t code_point_index(std::string_view s, size_t byte) {
  return static_cast<int64_t>(code_point_count(s.substr(0, byte)));
}

std::string py_strip(const std::string& s, const std::optional<std::string>& chars, bool left, bool right) {
  const auto cps = unicode::decode_utf8(s);
  const auto strip_set = chars ? unicode::decode_utf8(*chars) : std::vector<uint32_t>{};
  auto strippable = [&](uint32_t cp) {
    return chars ? std::find(strip_set.begin(), strip_set.end(), cp) != strip_set.end() : is_python_space(cp);
  };
  size_t begin = 0, end = cps.size();
  if (left) while (begin < end && strippable(cps[begin])) ++begin;
  if (right) while (end > begin && strippable(cps[end - 1])) --end;
  if (begin == 0 && end == cps.size()) return s;
  return unicode::encode_utf8(cps, begin, end);
}

std::vector<std::string> py_split(const std::string& s, const std::optional<std::string>& sep, int64_t maxsplit) {
  if (!sep) return split_on_whitespace(unicode::decode_utf8(s), maxsplit);
  if (sep->empty()) fail("empty separator");
  std::vector<std::string> parts;
  size_t start = 0;
  while (maxsplit < 0 || static_cast<int64_t>(parts.size()) < maxsplit) {
    const size_t at = s.find(*sep, start);
    if (at == std::string::npos) break;
    parts.push_back(s.substr(start, at - start));
    start = at + sep->size();
  }
  parts.push_back(s.substr(start));
  return parts;
}

std::vector<std::string> py_rsplit(const std::string& s, const std::optional<std::string>& sep, int64_t maxsplit) {
  if (maxsplit < 0) return py_split(s, sep, maxsplit);
  if (!sep) {  // split from the right on whitespace: mirror the code points
    auto cps = unicode::decode_utf8(s);
    std::reverse(cps.begin(), cps.end());
    auto parts = split_on_whitespace(cps, maxsplit);
    for (auto& part : parts) {
      auto p = unicode::decode_utf8(part);
      std::reverse(p.begin(), p.end());
      part = encode(p);
    }
    std::reverse(parts.begin(), parts.end());
    return parts;
  }
  if (sep->empty()) fail("empty separator");
  std::vector<std::string> parts;
  size_t end = s.size();
  while (static_cast<int64_t>(parts.size()) < maxsplit && end >= sep->size()) {
    const size_t at = s.rfind(*sep, end - sep->size());
    if (at == std::string::npos) break;
    parts.push_back(s.substr(at + sep->size(), end - at - sep->size()));
    end = at;
  }
  parts.push_back(s.substr(0, end));
  std::reverse(parts.begin(), parts.end());
  return parts;
}

std::vector<std::string> py_splitlines(const std::string& s, bool keepends) {
  const auto cps = unicode::decode_utf8(s);
  std::vector<std::string> lines;
  size_t start = 0, i = 0;
  while (i < cps.size()) {
    const uint32_t c = cps[i];
    const bool boundary = c == '\n' || c == '\r' || c == 0x0B || c == 0x0C || (c >= 0x1C && c <= 0x1E) ||
                          c == 0x85 || c == 0x2028 || c == 0x2029;
    if (!boundary) {
      ++i;
      continue;
    }
    size_t end = i + 1;
    if (c == '\r' && end < cps.size() && cps[end] == '\n') ++end;
    lines.push_back(unicode::encode_utf8(cps, start, keepends ? end : i));
    start = i = end;
  }
  if (start < cps.size()) lines.push_back(unicode::encode_utf8(cps, start, cps.size()));
  return lines;
}

std::string py_replace(const std::string& s, const std::string& old, const std::string& replacement, int64_t count) {
  std::string out;
  if (old.empty()) {  // Python inserts the replacement around every character
    const auto cps = unicode::decode_utf8(s);
    int64_t done = 0;
    for (size_t i = 0; i <= cps.size(); ++i) {
      if (count < 0 || done < count) {
        out += replacement;
        ++done;
      }
      if (i < cps.size()) unicode::append_utf8(out, cps[i]);
    }
    return out;
  }
  size_t start = 0;
  int64_t done = 0;
  while (count < 0 || done < count) {
    const size_t at = s.find(old, start);
    if (at == std::string::npos) break;
    out.append(s, start, at - start);
    out += replacement;
    start = at + old.size();
    ++done;
  }
  out.append(s, start, std::string::npos);
  return out;
}

size_t py_count(const std::string& s, const std::string& sub) {
  if (sub.empty()) return code_point_count(s) + 1;
  size_t n = 0;
  for (size_t at = s.find(sub); at != std::string::npos; at = s.find(sub, at + sub.size())) ++n;
  return n;
}

std::string py_upper(const std::string& s) { return map_code_points(s, upper); }
std::string py_lower(const std::string& s) { return map_code_points(s, lower); }

std::string py_swapcase(const std::string& s) {
  return map_code_points(s, [](uint32_t cp) { return is_cased_upper(cp) ? lower(cp) : is_cased_lower(cp) ? upper(cp) : cp; });
}

std::string py_title(const std::string& s) {
  std::vector<uint32_t> cps = unicode::decode_utf8(s);
  bool previous_cased = false;
  for (uint32_t& cp : cps) {
    if (is_cased(cp)) {
      cp = previous_cased ? lower(cp) : title(cp);
      previous_cased = true;
    } else {
      previous_cased = false;
    }
  }
  return encode(cps);
}

std::string py_capitalize(const std::string& s) {
  std::vector<uint32_t> cps = unicode::decode_utf8(s);
  for (size_t i = 0; i < cps.size(); ++i) cps[i] = i == 0 ? title(cps[i]) : lower(cps[i]);
  return encode(cps);
}

bool py_is_space(const std::string& s) { return all_of_nonempty(s, is_python_space); }

bool py_is_lower(const std::string& s) {
  const auto cps = unicode::decode_utf8(s);
  return std::any_of(cps.begin(), cps.end(), is_cased_lower) && std::none_of(cps.begin(), cps.end(), [](uint32_t cp) {
           return is_cased_upper(cp) || utf8proc_category(static_cast<utf8proc_int32_t>(cp)) == UTF8PROC_CATEGORY_LT;
         });
}

bool py_is_upper(const std::string& s) {
  const auto cps = unicode::decode_utf8(s);
  return std::any_of(cps.begin(), cps.end(), is_cased_upper) && std::none_of(cps.begin(), cps.end(), [](uint32_t cp) {
           return is_cased_lower(cp) || utf8proc_category(static_cast<utf8proc_int32_t>(cp)) == UTF8PROC_CATEGORY_LT;
         });
}

bool py_is_alpha(const std::string& s) { return all_of_nonempty(s, [](uint32_t cp) { return unicode::is_letter(cp); }); }
bool py_is_digit(const std::string& s) {
  return all_of_nonempty(s, [](uint32_t cp) {
    return utf8proc_category(static_cast<utf8proc_int32_t>(cp)) == UTF8PROC_CATEGORY_ND;
  });
}
bool py_is_alnum(const std::string& s) {
  return all_of_nonempty(s, [](uint32_t cp) { return unicode::is_letter(cp) || unicode::is_number(cp); });
}

}  // namespace skiff::jinja
