// The values a Jinja template computes with, modelled on the Python objects
// jinja2 hands templates: undefined, None, bool, int, float, str (with
// markupsafe's Markup flag: `|safe` strings HTML-escape what `+` joins to
// them), list and tuple, dict (insertion-ordered, string keys), namespace and
// callables. Lists and dicts are immutable once built (the sandbox forbids
// mutating them) and shared; namespaces are the one mutable kind.
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <variant>
#include <vector>

#include <nlohmann/json.hpp>

namespace skiff::jinja {

class Value;
class Interpreter;

// Lists, dicts and namespaces nest at most this deep when built: deeper values
// would make printing, comparing and destroying them recurse without bound.
inline constexpr int kMaxValueDepth = 256;

// A generator (what jinja2's map, select, selectattr, unique, reverse, ...
// return) holds its items but acts as a Python iterator: no len(), no
// indexing, always true, and iterating it consumes what it yields.
struct ListData {
  std::vector<Value> items;
  bool is_tuple = false;
  bool is_generator = false;
  mutable size_t consumed = 0;  // generators: items already yielded
  int depth = 1;
};

class DictData {
 public:
  const Value* find(std::string_view key) const;
  // Replaces the value of an existing key in place (Python keeps its position).
  void set(const std::string& key, Value value);
  const std::vector<std::pair<std::string, Value>>& items() const { return items_; }
  size_t size() const;  // defined below Value: clang instantiates it here
  int depth = 1;
  void clear();

 private:
  size_t position(std::string_view key) const;  // items_.size() when absent
  std::vector<std::pair<std::string, Value>> items_;
  std::unordered_map<std::string, size_t> index_;  // built once the dict is big
};

struct NamespaceData {
  DictData attrs;
};

struct CallArgs;

struct Callable {
  virtual ~Callable() = default;
  virtual Value call(Interpreter& interp, CallArgs& args) = 0;
  virtual std::string name() const = 0;
};

// Why a value is undefined: the message jinja2's UndefinedError (or, for an
// unsafe attribute, SecurityError) carries when the value is used.
struct Undefined {
  std::shared_ptr<const std::string> message;
};

// Shared: copying a value never copies its text, so a list of one long string
// repeated costs one string.
struct Str {
  std::shared_ptr<const std::string> text;
  bool markup = false;
};

using ListPtr = std::shared_ptr<const ListData>;
using DictPtr = std::shared_ptr<const DictData>;
using NamespacePtr = std::shared_ptr<NamespaceData>;
using CallablePtr = std::shared_ptr<Callable>;

class Value {
 public:
  enum class Kind { kUndefined, kNone, kBool, kInt, kFloat, kString, kList, kDict, kNamespace, kCallable };

  Value() : data_(Undefined{}) {}
  static Value undefined(std::string message);
  static Value none() { return Value(nullptr); }
  Value(bool b) : data_(b) {}
  Value(int64_t i) : data_(i) {}
  Value(int i) : data_(static_cast<int64_t>(i)) {}
  Value(double f) : data_(f) {}
  Value(std::string s, bool markup = false)
      : data_(Str{std::make_shared<const std::string>(std::move(s)), markup}) {}
  Value(const char* s) : Value(std::string(s)) {}
  Value with_markup(bool markup) const;  // the same text, marked safe or not
  Value(ListPtr list) : data_(std::move(list)) {}
  Value(DictPtr dict) : data_(std::move(dict)) {}
  Value(NamespacePtr ns) : data_(std::move(ns)) {}
  Value(CallablePtr fn) : data_(std::move(fn)) {}
  // Builders check the nesting depth (kMaxValueDepth).
  static Value list(std::vector<Value> items, bool is_tuple = false);
  static Value generator(std::vector<Value> items);
  static Value dict(DictData dict);

  Kind kind() const { return static_cast<Kind>(data_.index()); }
  bool is_undefined() const { return kind() == Kind::kUndefined; }
  bool is_none() const { return kind() == Kind::kNone; }
  bool is_bool() const { return kind() == Kind::kBool; }
  bool is_int() const { return kind() == Kind::kInt; }
  bool is_float() const { return kind() == Kind::kFloat; }
  bool is_number() const { return is_int() || is_float() || is_bool(); }  // Python: bool is an int
  bool is_string() const { return kind() == Kind::kString; }
  bool is_list() const { return kind() == Kind::kList; }  // list, tuple or generator
  bool is_generator() const { return is_list() && as_list().is_generator; }
  bool is_dict() const { return kind() == Kind::kDict; }
  bool is_namespace() const { return kind() == Kind::kNamespace; }
  bool is_callable() const { return kind() == Kind::kCallable; }
  bool is_markup() const { return is_string() && std::get<Str>(data_).markup; }

  bool as_bool() const { return std::get<bool>(data_); }
  int64_t as_int() const;  // int or bool
  double as_float() const;  // int, bool or float
  const std::string& as_string() const { return *std::get<Str>(data_).text; }
  const ListData& as_list() const { return *std::get<ListPtr>(data_); }
  const DictData& as_dict() const { return *std::get<DictPtr>(data_); }
  NamespaceData& as_namespace() const { return *std::get<NamespacePtr>(data_); }
  const NamespacePtr& namespace_ptr() const { return std::get<NamespacePtr>(data_); }
  Callable& as_callable() const { return *std::get<CallablePtr>(data_); }
  const std::string& undefined_message() const;
  int depth() const;  // nesting depth: 0 for scalars

  bool truthy() const;  // Python's bool()

 private:
  Value(std::nullptr_t) : data_(nullptr) {}
  std::variant<Undefined, std::nullptr_t, bool, int64_t, double, Str, ListPtr, DictPtr, NamespacePtr, CallablePtr>
      data_;
};

// Dict keys are strings; the other hashable keys templates write (ints,
// floats, bools, None: `{0: 128, 512: 256}`) are stored encoded in a string no
// text key starts with. Lists and dicts are unhashable: Error.
std::string encode_dict_key(const Value& key);
Value decode_dict_key(const std::string& key);

// Python's type name ("str", "int", "list", "dict", "NoneType", ...).
const char* type_name(const Value& v);

// Turns the data given to a template into values, and values back (tojson).
Value from_json(const nlohmann::ordered_json& j);

inline size_t DictData::size() const { return items_.size(); }

}  // namespace skiff::jinja
