#include "chat/jinja_methods.h"

#include <fmt/format.h>

#include <set>

#include "chat/jinja_format.h"
#include "chat/jinja_operators.h"
#include "chat/jinja_text.h"

namespace skiff::jinja {

namespace {

const std::set<std::string> kStringMethods = {
    "capitalize", "casefold", "center", "count", "encode", "endswith", "expandtabs", "find", "format",
    "format_map", "index", "isalnum", "isalpha", "isascii", "isdecimal", "isdigit", "isidentifier", "islower",
    "isnumeric", "isprintable", "isspace", "istitle", "isupper", "join", "ljust", "lower", "lstrip",
    "maketrans", "partition", "removeprefix", "removesuffix", "replace", "rfind", "rindex", "rjust",
    "rpartition", "rsplit", "rstrip", "split", "splitlines", "startswith", "strip", "swapcase", "title",
    "translate", "upper", "zfill"};
const std::set<std::string> kDictMethods = {"clear", "copy", "fromkeys", "get", "items", "keys",
                                            "pop", "popitem", "setdefault", "update", "values"};
const std::set<std::string> kUnsafeDictMethods = {"clear", "pop", "popitem", "setdefault", "update"};
const std::set<std::string> kListMethods = {"append", "clear", "copy", "count", "extend", "index",
                                            "insert", "pop", "remove", "reverse", "sort"};
const std::set<std::string> kUnsafeListMethods = {"append", "clear", "extend", "insert", "pop", "remove",
                                                  "reverse", "sort"};

class BoundMethod : public Callable {
 public:
  BoundMethod(Value self, std::string name) : self_(std::move(self)), name_(std::move(name)) {}
  Value call(Interpreter& interp, CallArgs& args) override;
  std::string name() const override { return std::string(type_name(self_)) + "." + name_; }

 private:
  Value self_;
  std::string name_;
};

std::optional<std::string> optional_string(const std::optional<Value>& v, const char* what) {
  if (!v || v->is_none()) return std::nullopt;
  if (!v->is_string()) fail("{} must be None or a string, not {}", what, type_name(*v));
  return v->as_string();
}

int64_t optional_int(const std::optional<Value>& v, int64_t fallback) {
  if (!v) return fallback;
  if (!v->is_int() && !v->is_bool()) fail("'{}' object cannot be interpreted as an integer", type_name(*v));
  return v->as_int();
}

const std::string& string_arg(const std::optional<Value>& v, const char* method) {
  if (!v) fail("{}() is missing an argument", method);
  if (!v->is_string()) fail("{}() argument must be str, not {}", method, type_name(*v));
  return v->as_string();
}

Value string_list(const std::vector<std::string>& parts, bool markup) {
  std::vector<Value> items;
  items.reserve(parts.size());
  for (const auto& p : parts) items.emplace_back(p, markup);
  return Value::list(std::move(items));
}

// startswith/endswith take a string or a tuple of them.
bool affix_matches(const Value& self, const Value& affix, bool at_start) {
  const std::string& s = self.as_string();
  if (affix.is_list() && affix.as_list().is_tuple) {
    for (const Value& a : affix.as_list().items)
      if (affix_matches(self, a, at_start)) return true;
    return false;
  }
  if (!affix.is_string()) fail("{} first arg must be str or a tuple of str, not {}", at_start ? "startswith" : "endswith", type_name(affix));
  const std::string& a = affix.as_string();
  if (a.size() > s.size()) return false;
  return at_start ? s.compare(0, a.size(), a) == 0 : s.compare(s.size() - a.size(), a.size(), a) == 0;
}

// str.format with automatic ({}), numbered ({0}) and named ({name}) fields.
Value format_string(Interpreter& interp, const Value& self, CallArgs& args) {
  const std::string& f = self.as_string();
  std::string out;
  size_t next_auto = 0;
  for (size_t i = 0; i < f.size(); ++i) {
    const char c = f[i];
    if ((c == '{' || c == '}') && i + 1 < f.size() && f[i + 1] == c) {
      out += c;
      ++i;
      continue;
    }
    if (c == '}') fail("Single '}}' encountered in format string");
    if (c != '{') {
      out += c;
      continue;
    }
    const size_t close = f.find('}', i);
    if (close == std::string::npos) fail("Single '{{' encountered in format string");
    const std::string field = f.substr(i + 1, close - i - 1);
    if (field.find_first_of(":!.[") != std::string::npos)
      fail("str.format: conversions, format specs and field access ('{{{}}}') are not supported", field);
    const Value* value = nullptr;
    if (field.empty() || std::isdigit(static_cast<unsigned char>(field[0]))) {
      const size_t index = field.empty() ? next_auto++ : std::stoul(field);
      if (index >= args.positional.size()) fail("Replacement index {} out of range for positional args tuple", index);
      value = &args.positional[index];
    } else {
      for (const auto& [key, v] : args.keyword)
        if (key == field) value = &v;
      if (!value) fail("KeyError: '{}'", field);
    }
    append_str(out, self.is_markup() && !value->is_markup() ? Value(html_escape(to_str(*value, interp.budget()))) : *value,
               interp.budget());
    i = close;
  }
  interp.budget().build_string(out.size());
  return Value(std::move(out), self.is_markup());
}

Value join_strings(Interpreter& interp, const Value& self, const Value& iterable) {
  std::string out;
  size_t n = 0;
  for (const Value& item : interp.iterate(iterable)) {
    if (!item.is_string()) fail("sequence item {}: expected str instance, {} found", n, type_name(item));
    if (n++) out += self.as_string();
    out += item.as_string();
    interp.budget().build_string(out.size());
  }
  return Value(std::move(out), self.is_markup());
}

Value find_in(const Value& self, const std::string& sub, bool from_right, bool must_exist, const char* method) {
  const std::string& s = self.as_string();
  const size_t at = from_right ? s.rfind(sub) : s.find(sub);
  if (at == std::string::npos) {
    if (must_exist) fail("substring not found ({})", method);
    return Value(-1);
  }
  return Value(code_point_index(s, at));
}

Value pad(const Value& self, int64_t width, const std::optional<Value>& fill_v, int align) {
  const std::string fill = fill_v ? string_arg(fill_v, "pad") : " ";
  const auto length = static_cast<int64_t>(code_point_count(self.as_string()));
  if (width <= length) return self;
  if (width > (1 << 24)) fail("padding width {} is too large", width);
  const int64_t total = width - length;
  const int64_t left = align < 0 ? 0 : align > 0 ? total : total / 2 + (total & width & 1);
  std::string out;
  for (int64_t i = 0; i < left; ++i) out += fill;
  out += self.as_string();
  for (int64_t i = 0; i < total - left; ++i) out += fill;
  return Value(std::move(out), self.is_markup());
}

Value partition(const Value& self, const std::string& sep, bool from_right) {
  const std::string& s = self.as_string();
  const size_t at = from_right ? s.rfind(sep) : s.find(sep);
  std::vector<Value> parts;
  if (at == std::string::npos) {
    parts = from_right ? std::vector<Value>{Value(""), Value(""), self} : std::vector<Value>{self, Value(""), Value("")};
  } else {
    parts = {Value(s.substr(0, at)), Value(sep), Value(s.substr(at + sep.size()))};
  }
  return Value::list(std::move(parts), /*is_tuple=*/true);
}

Value call_dict_method(Interpreter& interp, const Value& self, const std::string& name, CallArgs& args) {
  const DictData& dict = self.as_dict();
  if (name == "get") {
    const auto a = args.bind("get", {"key", "default"});
    if (!a[0]) fail("get expected at least 1 argument, got 0");
    const Value* v = dict.find(encode_dict_key(*a[0]));
    return v ? *v : a[1] ? *a[1] : Value::none();
  }
  args.bind(name, {});
  std::vector<Value> items;
  for (const auto& [key, value] : dict.items()) {
    if (name == "keys") items.push_back(decode_dict_key(key));
    else if (name == "values") items.push_back(value);
    else if (name == "items") items.push_back(Value::list({decode_dict_key(key), value}, /*is_tuple=*/true));
  }
  interp.budget().step(items.size());
  if (name == "copy") return self;  // dicts are immutable here: a copy is the same value
  if (name == "keys" || name == "values" || name == "items") return Value::list(std::move(items));
  fail("dict.{}() is not supported", name);
}

Value call_list_method(Interpreter& interp, const Value& self, const std::string& name, CallArgs& args) {
  const auto a = args.bind(name, {"value"});
  if (name == "copy") return self;
  if (!a[0]) fail("list.{}() takes exactly one argument (0 given)", name);
  int64_t count = 0;
  const auto& items = self.as_list().items;
  for (size_t i = 0; i < items.size(); ++i) {
    if (!values_equal(items[i], *a[0], interp.budget())) continue;
    if (name == "index") return Value(static_cast<int64_t>(i));
    ++count;
  }
  if (name == "index") fail("{} is not in list", to_str(*a[0], interp.budget()));
  return Value(count);
}

Value BoundMethod::call(Interpreter& interp, CallArgs& args) {
  if (self_.is_string()) return call_string_method(interp, self_, name_, args);
  if (self_.is_dict()) return call_dict_method(interp, self_, name_, args);
  return call_list_method(interp, self_, name_, args);
}

}  // namespace

bool has_method(const Value& object, const std::string& name) {
  if (object.is_string()) return kStringMethods.count(name) > 0;
  if (object.is_dict()) return kDictMethods.count(name) > 0;
  if (object.is_list() && !object.is_generator()) {
    if (object.as_list().is_tuple) return name == "count" || name == "index";
    return kListMethods.count(name) > 0;
  }
  return false;
}

bool is_unsafe_method(const Value& object, const std::string& name) {
  if (object.is_dict()) return kUnsafeDictMethods.count(name) > 0;
  if (object.is_list()) return kUnsafeListMethods.count(name) > 0;
  return false;
}

Value bound_method(const Value& object, const std::string& name) {
  return Value(CallablePtr(std::make_shared<BoundMethod>(object, name)));
}

Value call_string_method(Interpreter& interp, const Value& self, const std::string& name, CallArgs& args) {
  const std::string& s = self.as_string();
  const bool markup = self.is_markup();
  interp.budget().step(s.size() / 64);
  auto text = [&](std::string out) {
    interp.budget().build_string(out.size());
    return Value(std::move(out), markup);
  };
  if (name == "format") return format_string(interp, self, args);
  if (name == "strip" || name == "lstrip" || name == "rstrip") {
    const auto a = args.bind(name, {"chars"});
    return text(py_strip(s, optional_string(a[0], "chars"), name != "rstrip", name != "lstrip"));
  }
  if (name == "split" || name == "rsplit") {
    const auto a = args.bind(name, {"sep", "maxsplit"});
    const auto sep = optional_string(a[0], "sep");
    const int64_t maxsplit = optional_int(a[1], -1);
    return string_list(name == "split" ? py_split(s, sep, maxsplit) : py_rsplit(s, sep, maxsplit), markup);
  }
  if (name == "splitlines") {
    const auto a = args.bind(name, {"keepends"});
    return string_list(py_splitlines(s, a[0] && a[0]->truthy()), markup);
  }
  if (name == "startswith" || name == "endswith") {
    const auto a = args.bind(name, {"prefix"});
    if (!a[0]) fail("{}() takes at least 1 argument (0 given)", name);
    return Value(affix_matches(self, *a[0], name == "startswith"));
  }
  if (name == "replace") {
    const auto a = args.bind(name, {"old", "new", "count"});
    return text(py_replace(s, string_arg(a[0], "replace"), string_arg(a[1], "replace"), optional_int(a[2], -1)));
  }
  if (name == "find" || name == "rfind" || name == "index" || name == "rindex") {
    const auto a = args.bind(name, {"sub"});
    return find_in(self, string_arg(a[0], name.c_str()), name[0] == 'r', name.find("index") != std::string::npos,
                   name.c_str());
  }
  if (name == "count") return Value(static_cast<int64_t>(py_count(s, string_arg(args.bind(name, {"sub"})[0], "count"))));
  if (name == "join") {
    const auto a = args.bind(name, {"iterable"});
    if (!a[0]) fail("join() takes exactly one argument (0 given)");
    return join_strings(interp, self, *a[0]);
  }
  if (name == "removeprefix" || name == "removesuffix") {
    const std::string& affix = string_arg(args.bind(name, {"affix"})[0], name.c_str());
    const bool prefix = name == "removeprefix";
    if (!affix_matches(self, Value(affix), prefix)) return self;
    return text(prefix ? s.substr(affix.size()) : s.substr(0, s.size() - affix.size()));
  }
  if (name == "partition" || name == "rpartition")
    return partition(self, string_arg(args.bind(name, {"sep"})[0], name.c_str()), name[0] == 'r');
  if (name == "center" || name == "ljust" || name == "rjust" || name == "zfill") {
    const auto a = args.bind(name, {"width", "fillchar"});
    const int64_t width = optional_int(a[0], 0);
    if (name == "zfill") return pad(self, width, Value("0"), 1);
    return pad(self, width, a[1], name == "ljust" ? -1 : name == "rjust" ? 1 : 0);
  }
  args.bind(name, {});
  if (name == "upper") return text(py_upper(s));
  if (name == "lower" || name == "casefold") return text(py_lower(s));
  if (name == "title") return text(py_title(s));
  if (name == "capitalize") return text(py_capitalize(s));
  if (name == "swapcase") return text(py_swapcase(s));
  if (name == "isspace") return Value(py_is_space(s));
  if (name == "islower") return Value(py_is_lower(s));
  if (name == "isupper") return Value(py_is_upper(s));
  if (name == "isalpha") return Value(py_is_alpha(s));
  if (name == "isdigit" || name == "isdecimal" || name == "isnumeric") return Value(py_is_digit(s));
  if (name == "isalnum") return Value(py_is_alnum(s));
  if (name == "isascii")
    return Value(std::all_of(s.begin(), s.end(), [](char c) { return static_cast<unsigned char>(c) < 0x80; }));
  fail("str.{}() is not supported", name);
}

}  // namespace skiff::jinja
