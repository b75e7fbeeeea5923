// String and number filters, tojson, and the filter table.
#include "chat/jinja_filters.h"

#include <cmath>
#include <cstdio>
#include <set>
#include <unordered_map>

#include "chat/jinja_format.h"
#include "chat/jinja_methods.h"
#include "chat/jinja_operators.h"
#include "chat/jinja_text.h"
#include "tokenizer/unicode.h"

namespace skiff::jinja {

std::string soft_str(const Value& v, Budget& budget) { return to_str(v, budget); }

Value soft_str_value(const Value& v, Budget& budget) {
  if (v.is_string()) return v;
  return Value(to_str(v, budget));
}

int64_t integer_argument(const std::optional<Value>& v, int64_t fallback, const char* what) {
  if (!v || v->is_none()) return fallback;
  if (!v->is_int() && !v->is_bool()) fail("{} must be an integer, got {}", what, type_name(*v));
  return v->as_int();
}

namespace {

// A filter whose result is str(value) transformed, keeping Markup marked.
template <std::string (*F)(const std::string&)>
Value text_filter(Interpreter& interp, const Value& v, CallArgs& args) {
  args.bind("filter", {});
  const Value s = soft_str_value(v, interp.budget());
  return Value(F(s.as_string()), s.is_markup());
}

Value filter_trim(Interpreter& interp, const Value& v, CallArgs& args) {
  const auto a = args.bind("trim", {"chars"});
  std::optional<std::string> chars;
  if (a[0] && !a[0]->is_none()) chars = soft_str(*a[0], interp.budget());
  const Value s = soft_str_value(v, interp.budget());
  return Value(py_strip(s.as_string(), chars, true, true), s.is_markup());
}

Value filter_string(Interpreter& interp, const Value& v, CallArgs& args) {
  args.bind("string", {});
  return soft_str_value(v, interp.budget());
}

Value filter_safe(Interpreter& interp, const Value& v, CallArgs& args) {
  args.bind("safe", {});
  return Value(to_str(v, interp.budget()), /*markup=*/true);
}

Value filter_escape(Interpreter& interp, const Value& v, CallArgs& args) {
  args.bind("escape", {});
  if (v.is_markup()) return v;
  return Value(html_escape(to_str(v, interp.budget())), /*markup=*/true);
}

Value filter_forceescape(Interpreter& interp, const Value& v, CallArgs& args) {
  args.bind("forceescape", {});
  return Value(html_escape(to_str(v, interp.budget())), /*markup=*/true);
}

Value filter_default(Interpreter&, const Value& v, CallArgs& args) {
  const auto a = args.bind("default", {"default_value", "boolean"});
  const bool boolean = a[1] && a[1]->truthy();
  if (v.is_undefined() || (boolean && !v.truthy())) return a[0] ? *a[0] : Value("");
  return v;
}

Value filter_replace(Interpreter& interp, const Value& v, CallArgs& args) {
  const auto a = args.bind("replace", {"old", "new", "count"});
  if (!a[0] || !a[1]) fail("replace() needs the old and the new string");
  Budget& budget = interp.budget();
  const int64_t count = integer_argument(a[2], -1, "replace's count");
  std::string out = py_replace(to_str(v, budget), to_str(*a[0], budget), to_str(*a[1], budget), count);
  budget.build_string(out.size());
  return Value(std::move(out));  // without autoescape jinja2 returns a plain str
}

// Python's int() of a string: optional sign, digits with single underscores, spaces around.
std::optional<int64_t> parse_python_int(const std::string& text, int base) {
  std::string s = py_strip(text, std::nullopt, true, true);
  if (s.empty()) return std::nullopt;
  std::string digits;
  size_t i = (s[0] == '+' || s[0] == '-') ? 1 : 0;
  if (base != 10 && s.size() > i + 1 && s[i] == '0' && std::tolower(static_cast<unsigned char>(s[i + 1])) == "xob"[base == 16 ? 0 : base == 8 ? 1 : 2])
    i += 2;
  for (; i < s.size(); ++i) {
    if (s[i] == '_' && !digits.empty() && i + 1 < s.size() && s[i + 1] != '_') continue;
    if (!std::isxdigit(static_cast<unsigned char>(s[i]))) return std::nullopt;
    digits += s[i];
  }
  if (digits.empty()) return std::nullopt;
  errno = 0;
  char* end = nullptr;
  const std::string number = (s[0] == '-' ? "-" : "") + digits;  // end points into it
  const long long v = std::strtoll(number.c_str(), &end, base);
  if (errno == ERANGE || *end != '\0') return std::nullopt;
  return v;
}

std::optional<double> parse_python_float(const std::string& text) {
  const std::string s = py_strip(text, std::nullopt, true, true);
  if (s.empty()) return std::nullopt;
  char* end = nullptr;
  const double v = std::strtod(s.c_str(), &end);
  if (*end != '\0') return std::nullopt;
  return v;
}

Value filter_int(Interpreter&, const Value& v, CallArgs& args) {
  const auto a = args.bind("int", {"default", "base"});
  const Value fallback = a[0] ? *a[0] : Value(0);
  if (v.is_undefined()) fail_undefined(v);
  if (v.is_int() || v.is_bool()) return Value(v.as_int());
  if (v.is_float()) {
    if (!std::isfinite(v.as_float()) || std::fabs(v.as_float()) >= 9.2e18) return fallback;
    return Value(static_cast<int64_t>(v.as_float()));
  }
  if (!v.is_string()) return fallback;
  if (auto i = parse_python_int(v.as_string(), static_cast<int>(integer_argument(a[1], 10, "int's base")))) return Value(*i);
  if (auto f = parse_python_float(v.as_string()); f && std::isfinite(*f) && std::fabs(*f) < 9.2e18)
    return Value(static_cast<int64_t>(*f));  // jinja2's quirk: "42.23"|int is 42
  return fallback;
}

Value filter_float(Interpreter&, const Value& v, CallArgs& args) {
  const auto a = args.bind("float", {"default"});
  const Value fallback = a[0] ? *a[0] : Value(0.0);
  if (v.is_undefined()) fail_undefined(v);
  if (v.is_number()) return Value(v.as_float());
  if (v.is_string())
    if (auto f = parse_python_float(v.as_string())) return Value(*f);
  return fallback;
}

Value filter_abs(Interpreter&, const Value& v, CallArgs& args) {
  args.bind("abs", {});
  if (v.is_float()) return Value(std::fabs(v.as_float()));
  if (v.is_int() || v.is_bool()) return v.as_int() < 0 ? negate(v) : Value(v.as_int());
  fail("bad operand type for abs(): '{}'", type_name(v));
}

// Python's round(x, digits): the exact binary value rounded half to even,
// which is what glibc's printf does.
double python_round(double x, int64_t digits) {
  if (!std::isfinite(x)) return x;
  if (digits < 0) {
    const double scale = std::pow(10.0, static_cast<double>(-digits));
    return std::nearbyint(x / scale) * scale;
  }
  if (digits > 300) return x;
  char buffer[512];
  std::snprintf(buffer, sizeof buffer, "%.*f", static_cast<int>(digits), x);
  return std::strtod(buffer, nullptr);
}

Value filter_round(Interpreter&, const Value& v, CallArgs& args) {
  const auto a = args.bind("round", {"precision", "method"});
  const int64_t precision = integer_argument(a[0], 0, "round's precision");
  const std::string method = a[1] && a[1]->is_string() ? a[1]->as_string() : "common";
  if (method != "common" && method != "ceil" && method != "floor") fail("method must be common, ceil or floor");
  if (v.is_undefined()) fail_undefined(v);
  if (!v.is_number()) fail("type {} doesn't define __round__ method", type_name(v));
  if (method == "common") {
    if (!v.is_float() && precision >= 0) return Value(v.as_int());  // int.__round__ keeps an int
    return Value(python_round(v.as_float(), precision));
  }
  const double scale = std::pow(10.0, static_cast<double>(precision));
  const double scaled = v.as_float() * scale;
  return Value((method == "ceil" ? std::ceil(scaled) : std::floor(scaled)) / scale);
}

Value filter_indent(Interpreter& interp, const Value& v, CallArgs& args) {
  const auto a = args.bind("indent", {"width", "first", "blank"});
  if (v.is_undefined()) fail_undefined(v);  // jinja2 appends to it: Undefined + str fails
  std::string indention;
  if (a[0] && a[0]->is_string()) indention = a[0]->as_string();
  else indention = std::string(static_cast<size_t>(std::max<int64_t>(0, integer_argument(a[0], 4, "indent's width"))), ' ');
  const Value s = soft_str_value(v, interp.budget());
  const std::vector<std::string> lines = py_splitlines(s.as_string() + "\n", false);
  std::string out;
  for (size_t i = 0; i < lines.size(); ++i) {
    if (i > 0) out += '\n';
    const bool indent_line = (a[2] && a[2]->truthy()) || !lines[i].empty();
    if (i > 0 && indent_line) out += indention;
    out += lines[i];
    interp.budget().build_string(out.size());
  }
  if (a[1] && a[1]->truthy()) out.insert(0, indention);
  return Value(std::move(out), s.is_markup());
}

Value filter_center(Interpreter& interp, const Value& v, CallArgs& args) {
  const auto a = args.bind("center", {"width"});
  CallArgs method_args;
  method_args.positional.push_back(Value(integer_argument(a[0], 80, "center's width")));
  return call_string_method(interp, soft_str_value(v, interp.budget()), "center", method_args);
}

Value filter_wordcount(Interpreter& interp, const Value& v, CallArgs& args) {
  args.bind("wordcount", {});
  int64_t words = 0;
  bool in_word = false;
  for (const uint32_t cp : unicode::decode_utf8(to_str(v, interp.budget()))) {
    const bool word_char = cp == '_' || unicode::is_letter(cp) || unicode::is_number(cp);
    if (word_char && !in_word) ++words;
    in_word = word_char;
  }
  return Value(words);
}

Value filter_truncate(Interpreter& interp, const Value& v, CallArgs& args) {
  const auto a = args.bind("truncate", {"length", "killwords", "end", "leeway"});
  const int64_t length = integer_argument(a[0], 255, "truncate's length");
  const std::string end = a[2] ? to_str(*a[2], interp.budget()) : "...";
  const int64_t leeway = integer_argument(a[3], 5, "truncate's leeway");
  const auto cps = unicode::decode_utf8(to_str(v, interp.budget()));
  const auto end_length = static_cast<int64_t>(code_point_count(end));
  if (length < end_length) fail("expected length >= {}, got {}", end_length, length);
  if (static_cast<int64_t>(cps.size()) <= length + leeway) return soft_str_value(v, interp.budget());
  std::string head = unicode::encode_utf8(cps, 0, static_cast<size_t>(length - end_length));
  if (!(a[1] && a[1]->truthy())) head = py_rsplit(head, std::string(" "), 1)[0];
  return Value(head + end);
}

// transformers' tojson: json.dumps(x, ensure_ascii=False, indent=None, separators=None, sort_keys=False).
Value filter_tojson(Interpreter& interp, const Value& v, CallArgs& args) {
  const auto a = args.bind("tojson", {"ensure_ascii", "indent", "separators", "sort_keys"});
  JsonStyle style;
  style.ensure_ascii = a[0] && a[0]->truthy();
  if (a[1] && !a[1]->is_none()) {
    style.has_indent = true;
    style.item_separator = std::string(1, ',');  // not = ",": GCC 12 warns wrongly (-Wrestrict)
    if (a[1]->is_string()) style.indent = a[1]->as_string();
    else style.indent = std::string(static_cast<size_t>(std::max<int64_t>(0, integer_argument(a[1], 0, "indent"))), ' ');
  }
  if (a[2] && !a[2]->is_none()) {
    if (!a[2]->is_list() || a[2]->as_list().items.size() != 2 || !a[2]->as_list().items[0].is_string() ||
        !a[2]->as_list().items[1].is_string())
      fail("tojson's separators must be a pair of strings");
    style.item_separator = a[2]->as_list().items[0].as_string();
    style.key_separator = a[2]->as_list().items[1].as_string();
  }
  style.sort_keys = a[3] && a[3]->truthy();
  std::string out;
  append_json(out, v, style, interp.budget());
  return Value(std::move(out));
}

const std::unordered_map<std::string, FilterFunction>& filter_table() {
  static const std::unordered_map<std::string, FilterFunction> table = [] {
    std::unordered_map<std::string, FilterFunction> t = {
        {"trim", filter_trim},         {"string", filter_string},       {"safe", filter_safe},
        {"escape", filter_escape},     {"e", filter_escape},            {"forceescape", filter_forceescape},
        {"default", filter_default},   {"d", filter_default},           {"replace", filter_replace},
        {"int", filter_int},           {"float", filter_float},         {"abs", filter_abs},
        {"round", filter_round},       {"indent", filter_indent},       {"center", filter_center},
        {"wordcount", filter_wordcount}, {"truncate", filter_truncate}, {"tojson", filter_tojson},
        {"upper", text_filter<py_upper>}, {"lower", text_filter<py_lower>},
        {"title", text_filter<py_title>}, {"capitalize", text_filter<py_capitalize>},
    };
    for (const auto& [name, fn] : sequence_filters()) t.emplace(name, fn);
    return t;
  }();
  return table;
}

// jinja2's filters skiff does not implement: known names, so a template using
// one compiles as it does in jinja2 and fails only when the filter runs.
const std::set<std::string> kUnsupportedFilters = {"filesizeformat", "format", "groupby", "pprint", "random",
                                                   "striptags", "urlencode", "urlize", "wordwrap", "xmlattr"};

}  // namespace

FilterFunction find_filter(const std::string& name) {
  const auto& table = filter_table();
  const auto it = table.find(name);
  return it == table.end() ? nullptr : it->second;
}

bool is_jinja2_filter(const std::string& name) { return find_filter(name) || kUnsupportedFilters.count(name); }

}  // namespace skiff::jinja
