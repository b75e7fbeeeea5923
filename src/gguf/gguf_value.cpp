// Typed access to GGUF metadata values.
#include "base/error.h"
#include "gguf/gguf.h"

namespace skiff::gguf {

const char* value_type_name(ValueType type) {
  static const char* const kNames[] = {"uint8", "int8",  "uint16", "int16", "uint32",
                                       "int32", "float32", "bool", "string", "array",
                                       "uint64", "int64", "float64"};
  const auto i = static_cast<uint32_t>(type);
  return i < std::size(kNames) ? kNames[i] : "unknown";
}

bool Value::is_integer() const {
  return std::holds_alternative<uint64_t>(data) || std::holds_alternative<int64_t>(data);
}

int64_t Value::as_int() const {
  if (const auto* u = std::get_if<uint64_t>(&data)) {
    if (*u > static_cast<uint64_t>(INT64_MAX)) fail("integer value {} is too large", *u);
    return static_cast<int64_t>(*u);
  }
  if (const auto* i = std::get_if<int64_t>(&data)) return *i;
  fail("expected an integer, found {}", value_type_name(type));
}

double Value::as_float() const {
  if (const auto* d = std::get_if<double>(&data)) return *d;
  if (is_integer()) return static_cast<double>(as_int());
  fail("expected a number, found {}", value_type_name(type));
}

bool Value::as_bool() const {
  if (const auto* b = std::get_if<bool>(&data)) return *b;
  fail("expected a bool, found {}", value_type_name(type));
}

const std::string& Value::as_string() const {
  if (const auto* s = std::get_if<std::string>(&data)) return *s;
  fail("expected a string, found {}", value_type_name(type));
}

const Array& Value::as_array() const {
  if (const auto* a = std::get_if<Array>(&data)) return *a;
  fail("expected an array, found {}", value_type_name(type));
}

namespace {
template <typename F>
auto with_key(const std::string& key, F&& f) -> decltype(f()) {
  try {
    return f();
  } catch (const Error& e) {
    fail("metadata '{}': {}", key, e.what());
  }
}
}  // namespace

int64_t GgufFile::get_int(const std::string& key, int64_t fallback) const {
  const Value* v = find(key);
  return v ? with_key(key, [&] { return v->as_int(); }) : fallback;
}

double GgufFile::get_float(const std::string& key, double fallback) const {
  const Value* v = find(key);
  return v ? with_key(key, [&] { return v->as_float(); }) : fallback;
}

bool GgufFile::get_bool(const std::string& key, bool fallback) const {
  const Value* v = find(key);
  return v ? with_key(key, [&] { return v->as_bool(); }) : fallback;
}

std::string GgufFile::get_string(const std::string& key, const std::string& fallback) const {
  const Value* v = find(key);
  return v ? with_key(key, [&] { return v->as_string(); }) : fallback;
}

std::vector<std::string> GgufFile::get_string_array(const std::string& key) const {
  std::vector<std::string> out;
  if (const Value* v = find(key))
    with_key(key, [&] {
      for (const Value& item : v->as_array().items) out.push_back(item.as_string());
    });
  return out;
}

std::vector<float> GgufFile::get_float_array(const std::string& key) const {
  std::vector<float> out;
  if (const Value* v = find(key))
    with_key(key, [&] {
      for (const Value& item : v->as_array().items) out.push_back(static_cast<float>(item.as_float()));
    });
  return out;
}

std::vector<int64_t> GgufFile::get_int_array(const std::string& key) const {
  std::vector<int64_t> out;
  if (const Value* v = find(key))
    with_key(key, [&] {
      for (const Value& item : v->as_array().items) out.push_back(item.as_int());
    });
  return out;
}

}  // namespace skiff::gguf
