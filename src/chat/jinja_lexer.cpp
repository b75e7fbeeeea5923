#include "chat/jinja_lexer.h"

#include <algorithm>
#include <cstring>

#include "base/error.h"
#include "tokenizer/unicode.h"

namespace skiff::jinja {

bool is_python_space(uint32_t cp) {
  return (cp >= 0x09 && cp <= 0x0D) || (cp >= 0x1C && cp <= 0x20) || cp == 0x85 || cp == 0xA0 ||
         cp == 0x1680 || (cp >= 0x2000 && cp <= 0x200A) || cp == 0x2028 || cp == 0x2029 || cp == 0x202F ||
         cp == 0x205F || cp == 0x3000;
}

namespace {

// The code point whose encoding starts at s[i], and its byte length.
uint32_t decode_at(const std::string& s, size_t i, size_t* length) {
  const size_t n = std::min(unicode::utf8_sequence_length(static_cast<uint8_t>(s[i])), s.size() - i);
  *length = n;
  const auto cps = unicode::decode_utf8(std::string_view(s).substr(i, n));
  return cps.empty() ? 0xFFFD : cps[0];
}

size_t skip_spaces(const std::string& s, size_t i) {
  while (i < s.size()) {
    size_t n = 0;
    if (!is_python_space(decode_at(s, i, &n))) break;
    i += n;
  }
  return i;
}

// Where text[begin, end) ends once trailing Python whitespace is removed.
size_t rstrip_end(const std::string& s, size_t begin, size_t end) {
  while (end > begin) {
    size_t lead = end - 1;
    while (lead > begin && (static_cast<uint8_t>(s[lead]) & 0xC0) == 0x80) --lead;
    size_t n = 0;
    if (!is_python_space(decode_at(s, lead, &n))) break;
    end = lead;
  }
  return end;
}

// jinja2 splits on \r\n, \r and \n, joins with \n and drops one trailing newline.
std::string normalize_newlines(const std::string& source) {
  std::string out;
  out.reserve(source.size());
  for (size_t i = 0; i < source.size(); ++i) {
    if (source[i] == '\r') {
      out += '\n';
      if (i + 1 < source.size() && source[i + 1] == '\n') ++i;
    } else {
      out += source[i];
    }
  }
  if (!out.empty() && out.back() == '\n') out.pop_back();
  return out;
}

class Lexer {
 public:
  explicit Lexer(std::string source) : src_(normalize_newlines(source)) {
    line_starts_.push_back(0);
    for (size_t i = 0; i < src_.size(); ++i)
      if (src_[i] == '\n') line_starts_.push_back(i + 1);
  }

  std::vector<Token> run() {
    while (pos_ < src_.size()) lex_text_and_tag();
    emit(TokenType::kEnd, "", src_.size());
    return std::move(tokens_);
  }

 private:
  Position position_at(size_t offset) const {
    const auto it = std::upper_bound(line_starts_.begin(), line_starts_.end(), offset);
    const size_t line = static_cast<size_t>(it - line_starts_.begin());
    return {static_cast<int>(line), static_cast<int>(offset - line_starts_[line - 1]) + 1};
  }

  [[noreturn]] void error_at(size_t offset, const std::string& message) const {
    const Position p = position_at(offset);
    fail("chat template syntax error at line {}, column {}: {}", p.line, p.column, message);
  }

  void emit(TokenType type, std::string text, size_t offset) {
    const Position p = position_at(offset);
    tokens_.push_back({type, std::move(text), p.line, p.column});
  }

  // The earliest "{{", "{%" or "{#" at or after from (npos when none).
  size_t find_tag(size_t from) const {
    for (size_t i = src_.find('{', from); i != std::string::npos; i = src_.find('{', i + 1)) {
      if (i + 1 < src_.size() && (src_[i + 1] == '{' || src_[i + 1] == '%' || src_[i + 1] == '#')) return i;
    }
    return std::string::npos;
  }

  void lex_text_and_tag() {
    const size_t tag = find_tag(pos_);
    if (tag == std::string::npos) {
      emit_data(pos_, src_.size());
      pos_ = src_.size();
      return;
    }
    const char kind = src_[tag + 1];
    const char sign = tag + 2 < src_.size() ? src_[tag + 2] : '\0';
    size_t text_end = tag;
    if (sign == '-') {
      text_end = rstrip_end(src_, pos_, tag);
    } else if (sign != '+' && kind != '{') {
      text_end = lstrip_end(pos_, tag);
    }
    emit_data(pos_, text_end);
    const size_t after = tag + 2 + (sign == '-' || sign == '+' ? 1 : 0);
    if (kind == '#') {
      lex_comment(after);
    } else if (kind == '%' && lex_raw(tag, after)) {
      // a raw block's text went out as data
    } else {
      lex_tag(tag, after, kind == '%');
    }
  }

  // lstrip_blocks: spaces between a line's start and a block or comment tag go.
  size_t lstrip_end(size_t begin, size_t tag) const {
    const size_t newline = src_.rfind('\n', tag == 0 ? 0 : tag - 1);
    size_t line_begin = (newline == std::string::npos || newline < begin) ? begin : newline + 1;
    if (line_begin == begin && !line_starting_) return tag;
    if (skip_spaces(src_, line_begin) != tag) return tag;
    return line_begin;
  }

  void emit_data(size_t begin, size_t end) {
    if (end > begin) emit(TokenType::kData, src_.substr(begin, end - begin), begin);
  }

  // After a closing tag: "-" strips all whitespace, trim_blocks one newline, "+" nothing.
  size_t after_close(size_t close_end, char sign) {
    size_t next = close_end;
    if (sign == '-') next = skip_spaces(src_, close_end);
    else if (sign != '+' && next < src_.size() && src_[next] == '\n') ++next;
    line_starting_ = next > 0 && src_[next - 1] == '\n';
    return next;
  }

  void lex_comment(size_t from) {
    const size_t close = src_.find("#}", from);
    if (close == std::string::npos) error_at(from, "missing end of comment tag");
    const char sign = close > from ? src_[close - 1] : '\0';
    pos_ = after_close(close + 2, sign == '-' || sign == '+' ? sign : '\0');
  }

  // {% raw %}...{% endraw %}: the text between goes out untouched.
  bool lex_raw(size_t tag, size_t after) {
    size_t i = skip_spaces(src_, after);
    if (src_.compare(i, 3, "raw") != 0) return false;
    i = skip_spaces(src_, i + 3);
    const bool strip = src_.compare(i, 3, "-%}") == 0;
    if (!strip && src_.compare(i, 2, "%}") != 0) return false;
    size_t body = strip ? skip_spaces(src_, i + 3) : i + 2;
    for (size_t end = src_.find("{%", body); end != std::string::npos; end = src_.find("{%", end + 2)) {
      size_t j = end + 2;
      const char sign = j < src_.size() && (src_[j] == '-' || src_[j] == '+') ? src_[j++] : '\0';
      j = skip_spaces(src_, j);
      if (src_.compare(j, 6, "endraw") != 0) continue;
      j = skip_spaces(src_, j + 6);
      const char close_sign = (src_[j] == '-' || src_[j] == '+') ? src_[j] : '\0';
      if (close_sign) ++j;
      if (src_.compare(j, 2, "%}") != 0) error_at(j, "expected end of raw block");
      emit_data(body, sign == '-' ? rstrip_end(src_, body, end) : end);
      pos_ = after_close(j + 2, close_sign);
      return true;
    }
    error_at(tag, "missing end of raw directive");
  }

  void lex_tag(size_t tag, size_t from, bool is_block) {
    emit(is_block ? TokenType::kBlockBegin : TokenType::kVariableBegin, "", tag);
    const char close_char = is_block ? '%' : '}';
    std::vector<char> brackets;
    size_t i = from;
    while (true) {
      i = skip_spaces(src_, i);
      if (i >= src_.size()) error_at(tag, is_block ? "unexpected end of template, expected '%}'"
                                                   : "unexpected end of template, expected '}}'");
      if (brackets.empty()) {
        const char sign = src_[i];
        const size_t close = (sign == '-' || (sign == '+' && is_block)) ? i + 1 : i;
        if (src_.compare(close, 2, std::string{close_char, '}'}) == 0) {
          emit(is_block ? TokenType::kBlockEnd : TokenType::kVariableEnd, "", i);
          const char applied = close == i ? '\0' : sign;
          // "}}" never trims a newline: trim_blocks is for blocks.
          pos_ = is_block || applied == '-' ? after_close(close + 2, applied) : close + 2;
          if (!is_block && applied != '-') line_starting_ = false;
          return;
        }
      }
      i = lex_one(i, brackets);
    }
  }

  size_t lex_one(size_t i, std::vector<char>& brackets) {
    const char c = src_[i];
    if (std::isalpha(static_cast<unsigned char>(c)) || c == '_') return lex_name(i);
    if (std::isdigit(static_cast<unsigned char>(c))) return lex_number(i);
    if (c == '\'' || c == '"') return lex_string(i);
    return lex_operator(i, brackets);
  }

  size_t lex_name(size_t i) {
    size_t j = i;
    while (j < src_.size() && (std::isalnum(static_cast<unsigned char>(src_[j])) || src_[j] == '_')) ++j;
    emit(TokenType::kName, src_.substr(i, j - i), i);
    return j;
  }

  size_t digits_end(size_t j) const {  // (\d+_)*\d+
    while (j < src_.size() && (std::isdigit(static_cast<unsigned char>(src_[j])) ||
                               (src_[j] == '_' && j + 1 < src_.size() &&
                                std::isdigit(static_cast<unsigned char>(src_[j + 1])))))
      ++j;
    return j;
  }

  size_t lex_number(size_t i) {
    if (src_[i] == '0' && i + 1 < src_.size() && std::strchr("xXoObB", src_[i + 1]) && src_[i + 1] != '\0')
      return lex_prefixed_integer(i);
    size_t j = digits_end(i);
    bool is_float = false;
    if (j + 1 < src_.size() && src_[j] == '.' && std::isdigit(static_cast<unsigned char>(src_[j + 1]))) {
      j = digits_end(j + 1);
      is_float = true;
    }
    if (j < src_.size() && (src_[j] == 'e' || src_[j] == 'E')) {
      size_t k = j + 1;
      if (k < src_.size() && (src_[k] == '+' || src_[k] == '-')) ++k;
      if (k < src_.size() && std::isdigit(static_cast<unsigned char>(src_[k]))) {
        j = digits_end(k);
        is_float = true;
      }
    }
    std::string text;
    for (size_t k = i; k < j; ++k)
      if (src_[k] != '_') text += src_[k];
    emit(is_float ? TokenType::kFloat : TokenType::kInteger, text, i);
    return j;
  }

  size_t lex_prefixed_integer(size_t i) {
    const char base = static_cast<char>(std::tolower(static_cast<unsigned char>(src_[i + 1])));
    const char* digits = base == 'x' ? "0123456789abcdefABCDEF" : base == 'o' ? "01234567" : "01";
    size_t j = i + 2;
    std::string text = std::string("0") + base;
    while (j < src_.size() && (std::strchr(digits, src_[j]) || src_[j] == '_') && src_[j] != '\0') {
      if (src_[j] != '_') text += src_[j];
      ++j;
    }
    if (text.size() == 2) error_at(i, "invalid integer literal");
    emit(TokenType::kInteger, text, i);
    return j;
  }

  size_t lex_string(size_t i) {
    const char quote = src_[i];
    std::string raw;
    size_t j = i + 1;
    while (j < src_.size() && src_[j] != quote) {
      if (src_[j] == '\\' && j + 1 < src_.size()) raw += src_[j++];
      raw += src_[j++];
    }
    if (j >= src_.size()) error_at(i, "unexpected end of string");
    emit(TokenType::kString, unescape(raw, i), i);
    return j + 1;
  }

  // Python's "unicode-escape" decoding, which jinja2 applies to string literals.
  std::string unescape(const std::string& raw, size_t offset) const;

  size_t lex_operator(size_t i, std::vector<char>& brackets) {
    static const char* const kTwo[] = {"//", "**", "==", "!=", ">=", "<="};
    for (const char* op : kTwo) {
      if (src_.compare(i, 2, op) == 0) {
        emit(TokenType::kOperator, op, i);
        return i + 2;
      }
    }
    const char c = src_[i];
    if (!std::strchr("+-/*%~[](){}=.:|,;<>", c) || c == '\0') {
      size_t n = 0;
      decode_at(src_, i, &n);
      error_at(i, "unexpected char '" + src_.substr(i, n) + "'");
    }
    if (c == '(' || c == '[' || c == '{') brackets.push_back(c == '(' ? ')' : c == '[' ? ']' : '}');
    if (c == ')' || c == ']' || c == '}') {
      if (brackets.empty()) error_at(i, std::string("unexpected '") + c + "'");
      if (brackets.back() != c)
        error_at(i, std::string("unexpected '") + c + "', expected '" + brackets.back() + "'");
      brackets.pop_back();
    }
    emit(TokenType::kOperator, std::string(1, c), i);
    return i + 1;
  }

  std::string src_;
  std::vector<size_t> line_starts_;
  std::vector<Token> tokens_;
  size_t pos_ = 0;
  bool line_starting_ = true;
};

int hex_value(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

std::string Lexer::unescape(const std::string& raw, size_t offset) const {
  std::string out;
  uint32_t pending_high = 0;  // a \uD8xx waiting for its low surrogate
  auto flush = [&] {
    if (pending_high) unicode::append_utf8(out, 0xFFFD);
    pending_high = 0;
  };
  auto put = [&](uint32_t cp) {
    if (pending_high && cp >= 0xDC00 && cp <= 0xDFFF) {
      unicode::append_utf8(out, 0x10000 + ((pending_high - 0xD800) << 10) + (cp - 0xDC00));
      pending_high = 0;
      return;
    }
    flush();
    if (cp >= 0xD800 && cp <= 0xDBFF) pending_high = cp;
    else if (cp >= 0xD800 && cp <= 0xDFFF) unicode::append_utf8(out, 0xFFFD);
    else unicode::append_utf8(out, cp);
  };
  for (size_t i = 0; i < raw.size(); ++i) {
    if (raw[i] != '\\' || i + 1 == raw.size()) {
      flush();
      out += raw[i];
      continue;
    }
    const char e = raw[++i];
    const char* simple = std::strchr("\\'\"abfnrtv\n", e);
    if (simple && e != '\0') {
      static const char kValues[] = "\\'\"\a\b\f\n\r\t\v";
      if (e != '\n') put(static_cast<unsigned char>(kValues[simple - "\\'\"abfnrtv\n"]));
      continue;
    }
    if (e >= '0' && e <= '7') {
      uint32_t v = 0;
      size_t n = 0;
      while (n < 3 && i < raw.size() && raw[i] >= '0' && raw[i] <= '7') v = v * 8 + (raw[i++] - '0'), ++n;
      --i;
      put(v);
      continue;
    }
    const int width = e == 'x' ? 2 : e == 'u' ? 4 : e == 'U' ? 8 : 0;
    if (width == 0) {  // unknown escapes stay as written
      flush();
      out += '\\';
      out += e;
      continue;
    }
    uint32_t v = 0;
    for (int k = 0; k < width; ++k) {
      const int h = i + 1 + k < raw.size() ? hex_value(raw[i + 1 + k]) : -1;
      if (h < 0) error_at(offset, std::string("truncated \\") + e + " escape in a string");
      v = v * 16 + static_cast<uint32_t>(h);
    }
    if (v > 0x10FFFF) error_at(offset, "illegal Unicode character in a string");
    i += width;
    put(v);
  }
  flush();
  return out;
}

}  // namespace

std::vector<Token> tokenize(const std::string& source) { return Lexer(source).run(); }

}  // namespace skiff::jinja
