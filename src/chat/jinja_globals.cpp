#include "chat/jinja_globals.h"

#include <vector>

#include "base/error.h"
#include "chat/jinja_format.h"

namespace skiff::jinja {

namespace {

// jinja2's sandbox refuses ranges longer than this (MAX_RANGE).
constexpr int64_t kMaxRange = 100000;

int64_t int_argument(const Value& v, const char* function) {
  if (!v.is_int() && !v.is_bool()) fail("'{}' object cannot be interpreted as an integer ({})", type_name(v), function);
  return v.as_int();
}

Value range(Interpreter& interp, CallArgs& args) {
  if (!args.keyword.empty()) fail("range() takes no keyword arguments");
  const auto& p = args.positional;
  if (p.empty() || p.size() > 3) fail("range expected 1 to 3 arguments, got {}", p.size());
  int64_t start = 0, stop = 0, step = 1;
  if (p.size() == 1) {
    stop = int_argument(p[0], "range");
  } else {
    start = int_argument(p[0], "range");
    stop = int_argument(p[1], "range");
    if (p.size() == 3) step = int_argument(p[2], "range");
  }
  if (step == 0) fail("range() arg 3 must not be zero");
  // Lengths computed in long double: start and stop may be anywhere in int64.
  const long double span = step > 0 ? static_cast<long double>(stop) - start : static_cast<long double>(start) - stop;
  const long double length = span <= 0 ? 0 : (span + (step > 0 ? step : -step) - 1) / (step > 0 ? step : -step);
  if (length > kMaxRange)
    fail("Range too big. The sandbox blocks ranges larger than MAX_RANGE ({}).", kMaxRange);
  const auto n = static_cast<int64_t>(length);
  interp.budget().step(static_cast<uint64_t>(n));
  std::vector<Value> items;
  items.reserve(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) items.emplace_back(start + i * step);
  return Value::list(std::move(items));
}

// dict(mapping or pairs, **kwargs) and namespace(...) take the same arguments.
DictData dict_arguments(Interpreter& interp, const CallArgs& args, const char* function) {
  if (args.positional.size() > 1) fail("{} expected at most 1 argument, got {}", function, args.positional.size());
  DictData dict;
  if (!args.positional.empty()) {
    const Value& source = args.positional[0];
    if (source.is_dict()) {
      for (const auto& [key, value] : source.as_dict().items()) dict.set(key, value);
    } else if (source.is_namespace()) {
      for (const auto& [key, value] : source.as_namespace().attrs.items()) dict.set(key, value);
    } else {
      for (const Value& pair : interp.iterate(source)) {
        if (!pair.is_list() || pair.as_list().items.size() != 2)
          fail("{}: each element must be a (key, value) pair", function);
        dict.set(encode_dict_key(pair.as_list().items[0]), pair.as_list().items[1]);
      }
    }
  }
  for (const auto& [key, value] : args.keyword) dict.set(key, value);
  return dict;
}

Value make_namespace(Interpreter& interp, CallArgs& args) {
  DictData attrs = dict_arguments(interp, args, "namespace");
  for (const auto& [key, value] : attrs.items())
    if (!key.empty() && key[0] == '_')
      fail("Chat templates cannot store underscore-prefixed attributes on a namespace, but got '{}'. "
           "Please rename the attribute.", key);
  return interp.make_namespace(std::move(attrs));
}

Value raise_exception(Interpreter& interp, CallArgs& args) {
  const auto bound = args.bind("raise_exception", {"message"});
  if (!bound[0]) fail("raise_exception() missing 1 required positional argument: 'message'");
  throw RaisedError(to_str(*bound[0], interp.budget()));
}

Value strftime_now(Interpreter& interp, CallArgs& args) {
  const auto bound = args.bind("strftime_now", {"format"});
  if (!bound[0] || !bound[0]->is_string()) fail("strftime_now() takes a format string");
  const std::string& format = bound[0]->as_string();
  if (format.size() > 1024) fail("strftime_now(): the format is longer than 1024 bytes");
  if (format.empty()) return Value("");
  std::vector<char> buffer(format.size() * 64 + 64);
  const size_t n = std::strftime(buffer.data(), buffer.size(), format.c_str(), &interp.now());
  return Value(std::string(buffer.data(), n));
}

}  // namespace

Value make_builtin(std::string name, Builtin::Function fn) {
  return Value(CallablePtr(std::make_shared<Builtin>(std::move(name), std::move(fn))));
}

std::shared_ptr<Scope> make_globals() {
  auto globals = std::make_shared<Scope>();
  globals->set("range", make_builtin("range", range));
  globals->set("dict", make_builtin("dict", [](Interpreter& interp, CallArgs& args) {
    return Value::dict(dict_arguments(interp, args, "dict"));
  }));
  globals->set("namespace", make_builtin("namespace", make_namespace));
  globals->set("raise_exception", make_builtin("raise_exception", raise_exception));
  globals->set("strftime_now", make_builtin("strftime_now", strftime_now));
  return globals;
}

Value make_loop_cycle(std::shared_ptr<const size_t> index) {
  return make_builtin("cycle", [index](Interpreter&, CallArgs& args) {
    if (args.positional.empty()) fail("no items for cycling given");
    return args.positional[*index % args.positional.size()];
  });
}

}  // namespace skiff::jinja
