#include "chat/jinja_format.h"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstring>

#include "tokenizer/unicode.h"

namespace skiff::jinja {

namespace {

// Containers print their elements recursively; namespaces can hold
// themselves, so printing counts levels as Python's recursion limit would.
constexpr int kMaxPrintDepth = kMaxValueDepth + 8;

void check_depth(int depth) {
  if (depth > kMaxPrintDepth) fail("chat template: a value nests deeper than {} levels", kMaxPrintDepth);
}

void check_size(const std::string& out, Budget& budget) {
  if (out.size() > budget.limits().max_output_bytes)
    fail("chat template: a string would exceed {} bytes", budget.limits().max_output_bytes);
}

// Python's str.isprintable() for one code point.
bool is_printable(uint32_t cp) {
  if (cp == ' ') return true;
  const char* category = unicode::general_category(cp);
  return !(category[0] == 'C' || category[0] == 'Z');
}

void append_escaped_code_point(std::string& out, uint32_t cp) {
  if (cp < 0x100)
    out += fmt::format("\\x{:02x}", cp);
  else if (cp < 0x10000)
    out += fmt::format("\\u{:04x}", cp);
  else
    out += fmt::format("\\U{:08x}", cp);
}

void append_string_repr(std::string& out, const std::string& text) {
  const bool has_single = text.find('\'') != std::string::npos;
  const bool has_double = text.find('"') != std::string::npos;
  const char quote = has_single && !has_double ? '"' : '\'';
  out += quote;
  for (const uint32_t cp : unicode::decode_utf8(text)) {
    if (cp == static_cast<uint32_t>(quote) || cp == '\\') {
      out += '\\';
      out += static_cast<char>(cp);
    } else if (cp == '\n') {
      out += "\\n";
    } else if (cp == '\r') {
      out += "\\r";
    } else if (cp == '\t') {
      out += "\\t";
    } else if (is_printable(cp)) {
      unicode::append_utf8(out, cp);
    } else {
      append_escaped_code_point(out, cp);
    }
  }
  out += quote;
}

void append_repr_at(std::string& out, const Value& v, Budget& budget, int depth);

void append_list_repr(std::string& out, const ListData& list, Budget& budget, int depth) {
  if (list.is_generator) {  // Python prints an address here
    out += "<generator object>";
    return;
  }
  out += list.is_tuple ? '(' : '[';
  for (size_t i = 0; i < list.items.size(); ++i) {
    if (i) out += ", ";
    append_repr_at(out, list.items[i], budget, depth + 1);
  }
  if (list.is_tuple && list.items.size() == 1) out += ',';
  out += list.is_tuple ? ')' : ']';
}

void append_dict_repr(std::string& out, const DictData& dict, Budget& budget, int depth) {
  out += '{';
  bool first = true;
  for (const auto& [key, item] : dict.items()) {
    if (!first) out += ", ";
    first = false;
    append_repr_at(out, decode_dict_key(key), budget, depth + 1);
    out += ": ";
    append_repr_at(out, item, budget, depth + 1);
  }
  out += '}';
}

void append_repr_at(std::string& out, const Value& v, Budget& budget, int depth) {
  check_depth(depth);
  budget.step();
  check_size(out, budget);
  switch (v.kind()) {
    case Value::Kind::kUndefined: out += "Undefined"; return;
    case Value::Kind::kString:
      if (v.is_markup()) {
        out += "Markup(";
        append_string_repr(out, v.as_string());
        out += ')';
      } else {
        append_string_repr(out, v.as_string());
      }
      return;
    case Value::Kind::kList: append_list_repr(out, v.as_list(), budget, depth); return;
    case Value::Kind::kDict: append_dict_repr(out, v.as_dict(), budget, depth); return;
    case Value::Kind::kNamespace:
      out += "<Namespace ";
      append_dict_repr(out, v.as_namespace().attrs, budget, depth);
      out += '>';
      return;
    case Value::Kind::kCallable: out += "<function " + v.as_callable().name() + ">"; return;
    default: append_str(out, v, budget); return;
  }
}

void append_json_string(std::string& out, const std::string& text, bool ensure_ascii) {
  out += '"';
  for (const uint32_t cp : unicode::decode_utf8(text)) {
    switch (cp) {
      case '"': out += "\\\""; continue;
      case '\\': out += "\\\\"; continue;
      case '\n': out += "\\n"; continue;
      case '\r': out += "\\r"; continue;
      case '\t': out += "\\t"; continue;
      case '\b': out += "\\b"; continue;
      case '\f': out += "\\f"; continue;
      default: break;
    }
    if (cp < 0x20) {
      out += fmt::format("\\u{:04x}", cp);
    } else if (ensure_ascii && cp > 0x7F) {
      if (cp >= 0x10000) {
        const uint32_t v = cp - 0x10000;
        out += fmt::format("\\u{:04x}\\u{:04x}", 0xD800 + (v >> 10), 0xDC00 + (v & 0x3FF));
      } else {
        out += fmt::format("\\u{:04x}", cp);
      }
    } else {
      unicode::append_utf8(out, cp);
    }
  }
  out += '"';
}

void append_json_float(std::string& out, double x) {
  if (std::isnan(x)) out += "NaN";
  else if (std::isinf(x)) out += x > 0 ? "Infinity" : "-Infinity";
  else out += float_repr(x);
}

struct JsonWriter {
  const JsonStyle& style;
  Budget& budget;
  std::string& out;

  void newline(int level) {
    if (!style.has_indent) return;
    out += '\n';
    for (int i = 0; i < level; ++i) out += style.indent;
  }

  void write(const Value& v, int level) {
    check_depth(level);
    budget.step();
    check_size(out, budget);
    switch (v.kind()) {
      case Value::Kind::kNone: out += "null"; return;
      case Value::Kind::kBool: out += v.as_bool() ? "true" : "false"; return;
      case Value::Kind::kInt: out += std::to_string(v.as_int()); return;
      case Value::Kind::kFloat: append_json_float(out, v.as_float()); return;
      case Value::Kind::kString: append_json_string(out, v.as_string(), style.ensure_ascii); return;
      case Value::Kind::kList: write_list(v.as_list(), level); return;
      case Value::Kind::kDict: write_dict(v.as_dict(), level); return;
      default: fail("Object of type {} is not JSON serializable", type_name(v));
    }
  }

  // json.dumps writes non-string keys as their JSON text, quoted.
  void append_json_key(const std::string& key) {
    const Value k = decode_dict_key(key);
    std::string text;
    if (k.is_string()) text = k.as_string();
    else if (k.is_none()) text = "null";
    else if (k.is_float()) append_json_float(text, k.as_float());
    else text = std::to_string(k.as_int());
    append_json_string(out, text, style.ensure_ascii);
  }

  void write_list(const ListData& list, int level) {
    if (list.is_generator) fail("Object of type generator is not JSON serializable");
    if (list.items.empty()) {
      out += "[]";
      return;
    }
    out += '[';
    for (size_t i = 0; i < list.items.size(); ++i) {
      if (i) out += style.item_separator;
      newline(level + 1);
      write(list.items[i], level + 1);
    }
    newline(level);
    out += ']';
  }

  void write_dict(const DictData& dict, int level) {
    if (dict.size() == 0) {
      out += "{}";
      return;
    }
    std::vector<const std::pair<std::string, Value>*> entries;
    for (const auto& entry : dict.items()) entries.push_back(&entry);
    if (style.sort_keys)
      std::stable_sort(entries.begin(), entries.end(), [](auto* a, auto* b) { return a->first < b->first; });
    out += '{';
    for (size_t i = 0; i < entries.size(); ++i) {
      if (i) out += style.item_separator;
      newline(level + 1);
      append_json_key(entries[i]->first);
      out += style.key_separator;
      write(entries[i]->second, level + 1);
    }
    newline(level);
    out += '}';
  }
};

}  // namespace

std::string float_repr(double x) {
  if (std::isnan(x)) return "nan";
  if (std::isinf(x)) return x > 0 ? "inf" : "-inf";
  char buffer[64];
  const auto result = std::to_chars(buffer, buffer + sizeof buffer, x, std::chars_format::scientific);
  const std::string scientific(buffer, result.ptr);  // "-1.2345e+02": shortest round-trip digits
  const size_t e = scientific.find('e');
  const bool negative = scientific[0] == '-';
  std::string digits;
  for (size_t i = negative ? 1 : 0; i < e; ++i)
    if (scientific[i] != '.') digits += scientific[i];
  const int exponent = std::stoi(scientific.substr(e + 1));
  std::string out = negative ? "-" : "";
  if (exponent < -4 || exponent >= 16) {  // Python's repr switches to an exponent here
    out += digits.substr(0, 1);
    if (digits.size() > 1) out += "." + digits.substr(1);
    out += fmt::format("e{}{:02d}", exponent < 0 ? '-' : '+', std::abs(exponent));
  } else if (exponent < 0) {
    out += "0." + std::string(-exponent - 1, '0') + digits;
  } else if (static_cast<size_t>(exponent) + 1 >= digits.size()) {
    out += digits + std::string(exponent + 1 - digits.size(), '0') + ".0";
  } else {
    out += digits.substr(0, exponent + 1) + "." + digits.substr(exponent + 1);
  }
  return out;
}

void append_str(std::string& out, const Value& v, Budget& budget) {
  switch (v.kind()) {
    case Value::Kind::kUndefined: return;
    case Value::Kind::kNone: out += "None"; return;
    case Value::Kind::kBool: out += v.as_bool() ? "True" : "False"; return;
    case Value::Kind::kInt: out += std::to_string(v.as_int()); return;
    case Value::Kind::kFloat: out += float_repr(v.as_float()); return;
    case Value::Kind::kString: out += v.as_string(); return;
    default: append_repr_at(out, v, budget, 0); return;
  }
}

std::string to_str(const Value& v, Budget& budget) {
  if (v.is_string()) return v.as_string();
  std::string out;
  append_str(out, v, budget);
  return out;
}

void append_repr(std::string& out, const Value& v, Budget& budget) { append_repr_at(out, v, budget, 0); }

void append_json(std::string& out, const Value& v, const JsonStyle& style, Budget& budget) {
  JsonWriter{style, budget, out}.write(v, 0);
  check_size(out, budget);
}

std::string html_escape(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (const char c : text) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '\'': out += "&#39;"; break;
      case '"': out += "&#34;"; break;
      default: out += c;
    }
  }
  return out;
}

}  // namespace skiff::jinja
