// Typed access to GGUF metadata values.
#include <cstring>

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

size_t fixed_value_size(ValueType type) {
  switch (type) {
    case ValueType::UINT8: case ValueType::INT8: case ValueType::BOOL: return 1;
    case ValueType::UINT16: case ValueType::INT16: return 2;
    case ValueType::UINT32: case ValueType::INT32: case ValueType::FLOAT32: return 4;
    case ValueType::UINT64: case ValueType::INT64: case ValueType::FLOAT64: return 8;
    case ValueType::STRING: case ValueType::ARRAY: return 0;
  }
  return 0;
}

namespace {
template <typename T>
T load(const uint8_t* p) {
  T v;
  std::memcpy(&v, p, sizeof(T));
  return v;
}
}  // namespace

size_t Array::size() const {
  if (elem_type == ValueType::STRING) return strings.size();
  if (elem_type == ValueType::ARRAY) return arrays.size();
  return packed.size() / fixed_value_size(elem_type);
}

Value Array::at(size_t i) const {
  if (i >= size()) fail("array index {} is out of range (size {})", i, size());
  if (elem_type == ValueType::STRING) return Value{elem_type, strings[i]};
  if (elem_type == ValueType::ARRAY) return arrays[i];
  const uint8_t* p = packed.data() + i * fixed_value_size(elem_type);
  switch (elem_type) {
    case ValueType::UINT8: return Value{elem_type, uint64_t{load<uint8_t>(p)}};
    case ValueType::INT8: return Value{elem_type, int64_t{load<int8_t>(p)}};
    case ValueType::UINT16: return Value{elem_type, uint64_t{load<uint16_t>(p)}};
    case ValueType::INT16: return Value{elem_type, int64_t{load<int16_t>(p)}};
    case ValueType::UINT32: return Value{elem_type, uint64_t{load<uint32_t>(p)}};
    case ValueType::INT32: return Value{elem_type, int64_t{load<int32_t>(p)}};
    case ValueType::UINT64: return Value{elem_type, load<uint64_t>(p)};
    case ValueType::INT64: return Value{elem_type, load<int64_t>(p)};
    case ValueType::FLOAT32: return Value{elem_type, double{load<float>(p)}};
    case ValueType::FLOAT64: return Value{elem_type, load<double>(p)};
    case ValueType::BOOL: return Value{elem_type, *p != 0};
    default: fail("array of {} holds no packed elements", value_type_name(elem_type));
  }
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
      const Array& a = v->as_array();
      if (a.elem_type != ValueType::STRING) fail("expected an array of strings, found {}s", value_type_name(a.elem_type));
      out = a.strings;
    });
  return out;
}

std::vector<float> GgufFile::get_float_array(const std::string& key) const {
  std::vector<float> out;
  if (const Value* v = find(key))
    with_key(key, [&] {
      const Array& a = v->as_array();
      out.reserve(a.size());
      for (size_t i = 0; i < a.size(); ++i) out.push_back(static_cast<float>(a.at(i).as_float()));
    });
  return out;
}

std::vector<int64_t> GgufFile::get_int_array(const std::string& key) const {
  std::vector<int64_t> out;
  if (const Value* v = find(key))
    with_key(key, [&] {
      const Array& a = v->as_array();
      out.reserve(a.size());
      for (size_t i = 0; i < a.size(); ++i) out.push_back(a.at(i).as_int());
    });
  return out;
}

}  // namespace skiff::gguf
