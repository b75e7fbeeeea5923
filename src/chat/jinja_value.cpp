#include "chat/jinja_value.h"

#include <algorithm>
#include <cstring>

#include "base/error.h"

namespace skiff::jinja {

namespace {

// Lookups scan small dicts (messages have a handful of keys); past this size
// they go through a hash index, so a hostile dict of many keys stays linear.
constexpr size_t kIndexThreshold = 16;

}  // namespace

size_t DictData::position(std::string_view key) const {
  if (!index_.empty()) {
    const auto it = index_.find(std::string(key));
    return it == index_.end() ? items_.size() : it->second;
  }
  for (size_t i = 0; i < items_.size(); ++i)
    if (items_[i].first == key) return i;
  return items_.size();
}

const Value* DictData::find(std::string_view key) const {
  const size_t at = position(key);
  return at == items_.size() ? nullptr : &items_[at].second;
}

void DictData::set(const std::string& key, Value value) {
  depth = std::max(depth, value.depth() + 1);
  if (depth > kMaxValueDepth) fail("a value nests deeper than {} levels", kMaxValueDepth);
  if (const size_t at = position(key); at != items_.size()) {
    items_[at].second = std::move(value);
    return;
  }
  items_.emplace_back(key, std::move(value));
  if (!index_.empty()) {
    index_.emplace(key, items_.size() - 1);
  } else if (items_.size() > kIndexThreshold) {
    for (size_t i = 0; i < items_.size(); ++i) index_.emplace(items_[i].first, i);
  }
}

void DictData::clear() {
  items_.clear();
  index_.clear();
}

Value Value::undefined(std::string message) {
  Value v;
  v.data_ = Undefined{std::make_shared<const std::string>(std::move(message))};
  return v;
}

Value Value::list(std::vector<Value> items, bool is_tuple) {
  auto data = std::make_shared<ListData>();
  int depth = 0;
  for (const Value& item : items) depth = std::max(depth, item.depth());
  if (depth + 1 > kMaxValueDepth) fail("a value nests deeper than {} levels", kMaxValueDepth);
  data->items = std::move(items);
  data->is_tuple = is_tuple;
  data->depth = depth + 1;
  return Value(ListPtr(std::move(data)));
}

Value Value::generator(std::vector<Value> items) {
  Value v = list(std::move(items));
  const_cast<ListData&>(v.as_list()).is_generator = true;  // just built: no one else holds it
  return v;
}

Value Value::dict(DictData dict) { return Value(std::make_shared<const DictData>(std::move(dict))); }

Value Value::with_markup(bool markup) const {
  Value v = *this;
  std::get<Str>(v.data_).markup = markup;
  return v;
}

int64_t Value::as_int() const {
  if (is_bool()) return as_bool() ? 1 : 0;
  return std::get<int64_t>(data_);
}

double Value::as_float() const {
  if (is_float()) return std::get<double>(data_);
  return static_cast<double>(as_int());
}

const std::string& Value::undefined_message() const {
  static const std::string kGeneric = "value is undefined";
  const auto& message = std::get<Undefined>(data_).message;
  return message ? *message : kGeneric;
}

int Value::depth() const {
  switch (kind()) {
    case Kind::kList: return as_list().depth;
    case Kind::kDict: return as_dict().depth;
    case Kind::kNamespace: return 1;  // a reference: its contents are not part of this value's tree
    default: return 0;
  }
}

bool Value::truthy() const {
  switch (kind()) {
    case Kind::kUndefined:
    case Kind::kNone: return false;
    case Kind::kBool: return as_bool();
    case Kind::kInt: return as_int() != 0;
    case Kind::kFloat: return as_float() != 0.0;
    case Kind::kString: return !as_string().empty();
    case Kind::kList: return as_list().is_generator || !as_list().items.empty();
    case Kind::kDict: return as_dict().size() != 0;
    default: return true;
  }
}

const char* type_name(const Value& v) {
  switch (v.kind()) {
    case Value::Kind::kUndefined: return "Undefined";
    case Value::Kind::kNone: return "NoneType";
    case Value::Kind::kBool: return "bool";
    case Value::Kind::kInt: return "int";
    case Value::Kind::kFloat: return "float";
    case Value::Kind::kString: return v.is_markup() ? "Markup" : "str";
    case Value::Kind::kList:
      return v.as_list().is_generator ? "generator" : v.as_list().is_tuple ? "tuple" : "list";
    case Value::Kind::kDict: return "dict";
    case Value::Kind::kNamespace: return "Namespace";
    case Value::Kind::kCallable: return "function";
  }
  return "object";
}

namespace {

// Non-string keys start with a NUL byte, then a type letter and the value.
constexpr char kKeyMark = '\0';

}  // namespace

std::string encode_dict_key(const Value& key) {
  switch (key.kind()) {
    case Value::Kind::kString: return key.as_string();
    case Value::Kind::kBool:
    case Value::Kind::kInt: return std::string(1, kKeyMark) + "i" + std::to_string(key.as_int());
    case Value::Kind::kFloat: {
      const double f = key.as_float();
      if (f == static_cast<double>(static_cast<int64_t>(f)))  // Python: 1.0 and 1 are one key
        return std::string(1, kKeyMark) + "i" + std::to_string(static_cast<int64_t>(f));
      char buffer[32];
      std::memcpy(buffer, &f, sizeof f);
      return std::string(1, kKeyMark) + "f" + std::string(buffer, sizeof f);
    }
    case Value::Kind::kNone: return std::string(1, kKeyMark) + "n";
    default: fail("unhashable type: '{}'", type_name(key));
  }
}

Value decode_dict_key(const std::string& key) {
  if (key.empty() || key[0] != kKeyMark) return Value(key);
  if (key.size() > 1 && key[1] == 'i') return Value(static_cast<int64_t>(std::stoll(key.substr(2))));
  if (key.size() == 2 + sizeof(double) && key[1] == 'f') {
    double f = 0;
    std::memcpy(&f, key.data() + 2, sizeof f);
    return Value(f);
  }
  return Value::none();
}

namespace {

Value from_json_at(const nlohmann::ordered_json& j, int depth) {
  if (depth > kMaxValueDepth) fail("input JSON nests deeper than {} levels", kMaxValueDepth);
  using T = nlohmann::ordered_json::value_t;
  switch (j.type()) {
    case T::null: return Value::none();
    case T::boolean: return Value(j.get<bool>());
    case T::number_integer: return Value(j.get<int64_t>());
    case T::number_unsigned: {
      const uint64_t u = j.get<uint64_t>();
      if (u > static_cast<uint64_t>(INT64_MAX)) return Value(static_cast<double>(u));
      return Value(static_cast<int64_t>(u));
    }
    case T::number_float: return Value(j.get<double>());
    case T::string: return Value(j.get<std::string>());
    case T::array: {
      std::vector<Value> items;
      items.reserve(j.size());
      for (const auto& item : j) items.push_back(from_json_at(item, depth + 1));
      return Value::list(std::move(items));
    }
    case T::object: {
      DictData dict;
      for (const auto& [key, item] : j.items()) dict.set(key, from_json_at(item, depth + 1));
      return Value::dict(std::move(dict));
    }
    default: fail("input JSON holds a value templates cannot see (binary data)");
  }
}

}  // namespace

Value from_json(const nlohmann::ordered_json& j) { return from_json_at(j, 0); }

}  // namespace skiff::jinja
