#include "chat/reply_scanner.h"

#include <nlohmann/json.hpp>

namespace skiff::chat_syntax {

namespace {

// Deeper than any call's arguments; past it the text is not taken for JSON
// rather than walked without end.
constexpr size_t kMaxJsonNesting = 512;

bool is_digit(char c) { return c >= '0' && c <= '9'; }
bool is_hex(char c) { return is_digit(c) || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F'); }

// A JSON string token at pos (text[pos] == '"').
JsonExtent string_extent(std::string_view text, size_t pos) {
  const size_t n = text.size();
  size_t i = pos + 1;
  while (i < n) {
    const unsigned char c = static_cast<unsigned char>(text[i]);
    if (c == '"') return {Reach::kWhole, i + 1};
    if (c < 0x20) return {Reach::kAbsent, i};
    if (c != '\\') {
      ++i;
      continue;
    }
    if (i + 1 == n) return {Reach::kCut, n};
    const char e = text[i + 1];
    if (e == 'u') {
      for (size_t k = 0; k < 4; ++k) {
        if (i + 2 + k == n) return {Reach::kCut, n};
        if (!is_hex(text[i + 2 + k])) return {Reach::kAbsent, i};
      }
      i += 6;
    } else if (std::string_view("\"\\/bfnrt").find(e) != std::string_view::npos) {
      i += 2;
    } else {
      return {Reach::kAbsent, i};
    }
  }
  return {Reach::kCut, n};
}

// digits+ at i; kCut when the text ends before the first.
JsonExtent digits_extent(std::string_view text, size_t i) {
  if (i == text.size()) return {Reach::kCut, i};
  if (!is_digit(text[i])) return {Reach::kAbsent, i};
  while (i < text.size() && is_digit(text[i])) ++i;
  return {Reach::kWhole, i};
}

JsonExtent number_extent(std::string_view text, size_t pos, bool partial) {
  const size_t n = text.size();
  size_t i = pos;
  if (text[i] == '-') ++i;
  if (i == n) return {Reach::kCut, n};
  if (text[i] == '0') {
    ++i;
  } else {
    const JsonExtent whole = digits_extent(text, i);
    if (whole.reach != Reach::kWhole) return whole;
    i = whole.end;
  }
  if (i < n && text[i] == '.') {
    const JsonExtent fraction = digits_extent(text, i + 1);
    if (fraction.reach != Reach::kWhole) return fraction;
    i = fraction.end;
  }
  if (i < n && (text[i] == 'e' || text[i] == 'E')) {
    ++i;
    if (i < n && (text[i] == '+' || text[i] == '-')) ++i;
    const JsonExtent exponent = digits_extent(text, i);
    if (exponent.reach != Reach::kWhole) return exponent;
    i = exponent.end;
  }
  if (i == n && partial) return {Reach::kCut, n};
  return {Reach::kWhole, i};
}

JsonExtent scalar_extent(std::string_view text, size_t pos, bool partial) {
  const char c = text[pos];
  if (c == '"') return string_extent(text, pos);
  if (c == '-' || is_digit(c)) return number_extent(text, pos, partial);
  for (std::string_view word : {"true", "false", "null"}) {
    if (word[0] != c) continue;
    const Reach reach = literal_at(text, pos, word);
    return {reach, reach == Reach::kWhole ? pos + word.size() : (reach == Reach::kCut ? text.size() : pos)};
  }
  return {Reach::kAbsent, pos};
}

}  // namespace

bool is_space(char c) { return c == ' ' || c == '\n' || c == '\t' || c == '\r'; }

size_t skip_space(std::string_view text, size_t pos) {
  while (pos < text.size() && is_space(text[pos])) ++pos;
  return pos;
}

std::string_view trim_end(std::string_view text) {
  size_t end = text.size();
  while (end > 0 && is_space(text[end - 1])) --end;
  return text.substr(0, end);
}

std::string_view trim(std::string_view text) { return trim_end(text.substr(skip_space(text, 0))); }

Reach literal_at(std::string_view text, size_t pos, std::string_view literal) {
  const std::string_view rest = text.substr(std::min(pos, text.size()));
  if (rest.starts_with(literal)) return Reach::kWhole;
  if (rest.size() < literal.size() && literal.starts_with(rest)) return Reach::kCut;
  return Reach::kAbsent;
}

Reach literal_after_space(std::string_view text, size_t pos, std::string_view literal, size_t* end) {
  const size_t at = skip_space(text, pos);
  const Reach reach = literal_at(text, at, literal);
  if (reach == Reach::kWhole) *end = at + literal.size();
  return reach;
}

MarkerHit find_marker(std::string_view text, size_t from, const std::vector<std::string>& markers) {
  MarkerHit best;
  for (size_t k = 0; k < markers.size(); ++k) {
    if (markers[k].empty()) continue;
    const size_t at = text.find(markers[k], from);
    if (at == kNone) continue;
    if (at < best.pos || (at == best.pos && markers[k].size() > markers[best.index].size())) best = {at, k};
  }
  return best;
}

size_t cut_marker_length(std::string_view text, size_t from, const std::vector<std::string>& markers) {
  size_t longest = 0;
  for (const std::string& marker : markers) longest = std::max(longest, marker.size());
  const size_t available = text.size() - std::min(from, text.size());
  for (size_t k = std::min(longest == 0 ? 0 : longest - 1, available); k > 0; --k) {
    const std::string_view end = text.substr(text.size() - k);
    for (const std::string& marker : markers)
      if (marker.size() > k && std::string_view(marker).starts_with(end)) return k;
  }
  return 0;
}

Reach text_until(std::string_view text, size_t pos, const std::vector<std::string>& markers, bool partial,
                 size_t* marker_pos, size_t* index) {
  const MarkerHit hit = find_marker(text, pos, markers);
  if (hit.pos != kNone) {
    *marker_pos = hit.pos;
    if (index) *index = hit.index;
    return Reach::kWhole;
  }
  *marker_pos = text.size() - (partial ? cut_marker_length(text, pos, markers) : 0);
  return Reach::kCut;
}

JsonExtent json_value_extent(std::string_view text, size_t pos, bool partial) {
  enum class Want { kValue, kValueOrClose, kKey, kKeyOrClose, kColon, kCommaOrClose };
  const size_t n = text.size();
  std::vector<char> open;  // '{' or '[' per enclosing container
  Want want = Want::kValue;
  size_t i = pos;
  for (;;) {
    i = skip_space(text, i);
    if (i == n) return {Reach::kCut, n};
    const char c = text[i];
    bool value_done = false;
    switch (want) {
      case Want::kKeyOrClose:
      case Want::kKey: {
        if (want == Want::kKeyOrClose && c == '}') {
          open.pop_back();
          ++i;
          value_done = true;
          break;
        }
        if (c != '"') return {Reach::kAbsent, i};
        const JsonExtent key = string_extent(text, i);
        if (key.reach != Reach::kWhole) return key;
        i = key.end;
        want = Want::kColon;
        break;
      }
      case Want::kColon:
        if (c != ':') return {Reach::kAbsent, i};
        ++i;
        want = Want::kValue;
        break;
      case Want::kCommaOrClose:
        if (c == ',') {
          ++i;
          want = open.back() == '{' ? Want::kKey : Want::kValue;
        } else if (c == (open.back() == '{' ? '}' : ']')) {
          open.pop_back();
          ++i;
          value_done = true;
        } else {
          return {Reach::kAbsent, i};
        }
        break;
      case Want::kValueOrClose:
      case Want::kValue:
        if (want == Want::kValueOrClose && c == ']') {
          open.pop_back();
          ++i;
          value_done = true;
        } else if (c == '{' || c == '[') {
          if (open.size() == kMaxJsonNesting) return {Reach::kAbsent, i};
          open.push_back(c);
          ++i;
          want = c == '{' ? Want::kKeyOrClose : Want::kValueOrClose;
        } else {
          // A number ends a value inside a container only at its delimiter.
          const JsonExtent scalar = scalar_extent(text, i, partial || !open.empty());
          if (scalar.reach != Reach::kWhole) return scalar;
          i = scalar.end;
          value_done = true;
        }
        break;
    }
    if (value_done) {
      if (open.empty()) return {Reach::kWhole, i};
      want = Want::kCommaOrClose;
    }
  }
}

JsonObjectWalk walk_json_object(std::string_view text, size_t pos) {
  JsonObjectWalk walk;
  const size_t n = text.size();
  size_t i = skip_space(text, pos);
  auto stop = [&](Reach reach, size_t at) {
    walk.reach = reach;
    walk.end = at;
    return walk;
  };
  if (i == n) return stop(Reach::kCut, n);
  if (text[i] != '{') return stop(Reach::kAbsent, i);
  i = skip_space(text, i + 1);
  if (i < n && text[i] == '}') return stop(Reach::kWhole, i + 1);
  for (;;) {
    if (i == n) return stop(Reach::kCut, n);
    if (text[i] != '"') return stop(Reach::kAbsent, i);
    const JsonExtent key = string_extent(text, i);
    if (key.reach != Reach::kWhole) return stop(key.reach, key.end);
    JsonMember member;
    member.key = decode_json_string(text.substr(i, key.end - i)).value_or("");
    size_t colon_end = 0;
    const Reach colon = literal_after_space(text, key.end, ":", &colon_end);
    if (colon != Reach::kWhole) return stop(colon, colon == Reach::kCut ? n : key.end);
    member.value_begin = skip_space(text, colon_end);
    // Inside the object a value at the end of the text may go on.
    member.value = json_value_extent(text, member.value_begin, true);
    walk.members.push_back(member);
    if (member.value.reach != Reach::kWhole) return stop(member.value.reach, member.value.end);
    i = skip_space(text, member.value.end);
    if (i == n) return stop(Reach::kCut, n);
    if (text[i] == '}') return stop(Reach::kWhole, i + 1);
    if (text[i] != ',') return stop(Reach::kAbsent, i);
    i = skip_space(text, i + 1);
  }
}

std::optional<std::string> decode_json_string(std::string_view token) {
  try {
    const nlohmann::json value = nlohmann::json::parse(token);
    if (value.is_string()) return value.get<std::string>();
  } catch (const nlohmann::json::exception&) {
  }
  return std::nullopt;
}

}  // namespace skiff::chat_syntax
