// GGUF encoding; the layout is the one gguf_reader.cpp documents.
#include "gguf/gguf_writer.h"

#include <cerrno>
#include <cstring>
#include <fstream>
#include <limits>

#include "base/error.h"

namespace skiff::gguf {
namespace {

constexpr uint64_t kDefaultAlignment = 32;

template <typename T>
void put(std::vector<uint8_t>& out, T v) {
  const auto* p = reinterpret_cast<const uint8_t*>(&v);
  out.insert(out.end(), p, p + sizeof(T));
}

void put_string(std::vector<uint8_t>& out, const std::string& s) {
  put<uint64_t>(out, s.size());
  out.insert(out.end(), s.begin(), s.end());
}

uint64_t align_up(uint64_t n, uint64_t alignment) {
  return (n + alignment - 1) / alignment * alignment;
}

// Writes the payload of a value (without its type tag).
void put_value(std::vector<uint8_t>& out, const Value& v) {
  switch (v.type) {
    case ValueType::UINT8: put<uint8_t>(out, static_cast<uint8_t>(std::get<uint64_t>(v.data))); break;
    case ValueType::INT8: put<int8_t>(out, static_cast<int8_t>(std::get<int64_t>(v.data))); break;
    case ValueType::UINT16: put<uint16_t>(out, static_cast<uint16_t>(std::get<uint64_t>(v.data))); break;
    case ValueType::INT16: put<int16_t>(out, static_cast<int16_t>(std::get<int64_t>(v.data))); break;
    case ValueType::UINT32: put<uint32_t>(out, static_cast<uint32_t>(std::get<uint64_t>(v.data))); break;
    case ValueType::INT32: put<int32_t>(out, static_cast<int32_t>(std::get<int64_t>(v.data))); break;
    case ValueType::UINT64: put<uint64_t>(out, std::get<uint64_t>(v.data)); break;
    case ValueType::INT64: put<int64_t>(out, std::get<int64_t>(v.data)); break;
    case ValueType::FLOAT32: put<float>(out, static_cast<float>(std::get<double>(v.data))); break;
    case ValueType::FLOAT64: put<double>(out, std::get<double>(v.data)); break;
    case ValueType::BOOL: put<uint8_t>(out, std::get<bool>(v.data) ? 1 : 0); break;
    case ValueType::STRING: put_string(out, std::get<std::string>(v.data)); break;
    case ValueType::ARRAY: {
      const Array& a = std::get<Array>(v.data);
      put<uint32_t>(out, static_cast<uint32_t>(a.elem_type));
      put<uint64_t>(out, a.size());
      out.insert(out.end(), a.packed.begin(), a.packed.end());
      for (const std::string& s : a.strings) put_string(out, s);
      for (const Value& item : a.arrays) put_value(out, item);
      break;
    }
  }
}

// Values read back by GgufFile or built by make_* are consistent; this catches
// hand-built ones whose variant does not match the declared type.
void check_value(const Value& v) {
  bool ok = false;
  switch (v.type) {
    case ValueType::UINT8: case ValueType::UINT16: case ValueType::UINT32: case ValueType::UINT64:
      ok = std::holds_alternative<uint64_t>(v.data); break;
    case ValueType::INT8: case ValueType::INT16: case ValueType::INT32: case ValueType::INT64:
      ok = std::holds_alternative<int64_t>(v.data); break;
    case ValueType::FLOAT32: case ValueType::FLOAT64: ok = std::holds_alternative<double>(v.data); break;
    case ValueType::BOOL: ok = std::holds_alternative<bool>(v.data); break;
    case ValueType::STRING: ok = std::holds_alternative<std::string>(v.data); break;
    case ValueType::ARRAY: ok = std::holds_alternative<Array>(v.data); break;
  }
  if (!ok) fail("value declared {} holds another kind of data", value_type_name(v.type));
  if (const Array* a = std::get_if<Array>(&v.data)) {
    const size_t size = fixed_value_size(a->elem_type);
    const bool consistent = (size ? a->packed.size() % size == 0 : a->packed.empty()) &&
                            (a->elem_type == ValueType::STRING || a->strings.empty()) &&
                            (a->elem_type == ValueType::ARRAY || a->arrays.empty());
    if (!consistent) fail("array of {} holds elements of another type", value_type_name(a->elem_type));
    for (const Value& item : a->arrays) check_value(item);
  }
}

uint64_t tensor_nbytes(const std::string& name, DType type, const std::vector<int64_t>& ne) {
  const DTypeInfo& info = dtype_info(type);
  if (ne.empty()) fail("tensor '{}' has no dimensions", name);
  uint64_t n = 1;
  for (int64_t d : ne) {
    if (d <= 0) fail("tensor '{}' has dimension {}", name, d);
    n *= static_cast<uint64_t>(d);
  }
  if (ne[0] % static_cast<int64_t>(info.block_size) != 0)
    fail("tensor '{}': row of {} is not a whole number of {} blocks", name, ne[0], info.name);
  return n / info.block_size * info.type_size;
}

}  // namespace

Value make_uint(ValueType type, uint64_t v) {
  uint64_t max = 0;
  switch (type) {
    case ValueType::UINT8: max = UINT8_MAX; break;
    case ValueType::UINT16: max = UINT16_MAX; break;
    case ValueType::UINT32: max = UINT32_MAX; break;
    case ValueType::UINT64: max = UINT64_MAX; break;
    default: fail("make_uint: {} is not an unsigned type", value_type_name(type));
  }
  if (v > max) fail("{} does not fit in {}", v, value_type_name(type));
  return Value{type, v};
}

Value make_int(ValueType type, int64_t v) {
  int64_t lo = 0, hi = 0;
  switch (type) {
    case ValueType::INT8: lo = INT8_MIN; hi = INT8_MAX; break;
    case ValueType::INT16: lo = INT16_MIN; hi = INT16_MAX; break;
    case ValueType::INT32: lo = INT32_MIN; hi = INT32_MAX; break;
    case ValueType::INT64: lo = INT64_MIN; hi = INT64_MAX; break;
    default: fail("make_int: {} is not a signed type", value_type_name(type));
  }
  if (v < lo || v > hi) fail("{} does not fit in {}", v, value_type_name(type));
  return Value{type, v};
}

Value make_float(ValueType type, double v) {
  if (type != ValueType::FLOAT32 && type != ValueType::FLOAT64)
    fail("make_float: {} is not a float type", value_type_name(type));
  // Hold what the file will hold, so a written value equals the one read back.
  return Value{type, type == ValueType::FLOAT32 ? double{static_cast<float>(v)} : v};
}

Value make_bool(bool v) { return Value{ValueType::BOOL, v}; }

Value make_string(std::string v) { return Value{ValueType::STRING, std::move(v)}; }

Value make_array(ValueType elem_type, std::vector<Value> items) {
  Array a;
  a.elem_type = elem_type;
  for (Value& item : items) {
    if (item.type != elem_type)
      fail("make_array: a {} in an array of {}", value_type_name(item.type), value_type_name(elem_type));
    check_value(item);
    if (elem_type == ValueType::STRING) a.strings.push_back(std::move(std::get<std::string>(item.data)));
    else if (elem_type == ValueType::ARRAY) a.arrays.push_back(std::move(item));
    else put_value(a.packed, item);  // the file's encoding
  }
  return Value{ValueType::ARRAY, std::move(a)};
}

Value make_string_array(const std::vector<std::string>& items) {
  Array a;
  a.elem_type = ValueType::STRING;
  a.strings = items;
  return Value{ValueType::ARRAY, std::move(a)};
}

GgufWriter::GgufWriter(uint32_t version) : version_(version) {}

void GgufWriter::set(const std::string& key, Value value) {
  check_value(value);
  if (key == "general.alignment") {
    const int64_t a = value.as_int();
    if (a <= 0 || (a & (a - 1)) != 0) fail("general.alignment {} is not a power of two", a);
  }
  for (auto& [k, v] : metadata_) {
    if (k == key) {
      v = std::move(value);
      return;
    }
  }
  metadata_.emplace_back(key, std::move(value));
}

void GgufWriter::add_tensor(std::string name, DType type, std::vector<int64_t> ne,
                            std::vector<uint8_t> bytes) {
  const uint64_t nbytes = tensor_nbytes(name, type, ne);
  if (bytes.size() != nbytes)
    fail("tensor '{}' needs {} bytes, {} given", name, nbytes, bytes.size());
  add_tensor(std::move(name), type, std::move(ne), [b = std::move(bytes)] { return b; });
}

void GgufWriter::add_tensor(std::string name, DType type, std::vector<int64_t> ne,
                            TensorBytesFn produce) {
  for (const PendingTensor& t : tensors_)
    if (t.name == name) fail("duplicate tensor name '{}'", name);
  const uint64_t nbytes = tensor_nbytes(name, type, ne);
  tensors_.push_back({std::move(name), type, std::move(ne), nbytes, std::move(produce)});
}

uint64_t GgufWriter::alignment() const {
  for (const auto& [k, v] : metadata_)
    if (k == "general.alignment") return static_cast<uint64_t>(v.as_int());
  return kDefaultAlignment;
}

std::vector<uint8_t> GgufWriter::encode_header() const {
  std::vector<uint8_t> out;
  out.insert(out.end(), {'G', 'G', 'U', 'F'});
  put<uint32_t>(out, version_);
  put<uint64_t>(out, tensors_.size());
  put<uint64_t>(out, metadata_.size());
  for (const auto& [key, value] : metadata_) {
    put_string(out, key);
    put<uint32_t>(out, static_cast<uint32_t>(value.type));
    put_value(out, value);
  }
  const uint64_t alignment = this->alignment();
  uint64_t offset = 0;
  for (const PendingTensor& t : tensors_) {
    put_string(out, t.name);
    put<uint32_t>(out, static_cast<uint32_t>(t.ne.size()));
    for (int64_t d : t.ne) put<uint64_t>(out, static_cast<uint64_t>(d));
    put<uint32_t>(out, static_cast<uint32_t>(t.type));
    put<uint64_t>(out, offset);
    offset = align_up(offset + t.nbytes, alignment);
  }
  out.resize(align_up(out.size(), alignment), 0);
  return out;
}

void GgufWriter::emit(const ByteOut& out) const {
  const std::vector<uint8_t> header = encode_header();
  out(header.data(), header.size());
  const uint64_t alignment = this->alignment();
  const std::vector<uint8_t> zeros(alignment, 0);
  for (const PendingTensor& t : tensors_) {
    const std::vector<uint8_t> bytes = t.produce();
    if (bytes.size() != t.nbytes)
      fail("tensor '{}' produced {} bytes, {} expected", t.name, bytes.size(), t.nbytes);
    out(bytes.data(), bytes.size());
    out(zeros.data(), align_up(t.nbytes, alignment) - t.nbytes);
  }
}

void GgufWriter::write(const std::string& path) const {
  std::ofstream f(path, std::ios::binary | std::ios::trunc);
  if (!f) fail("cannot create {}: {}", path, std::strerror(errno));
  emit([&](const uint8_t* p, size_t n) {
    f.write(reinterpret_cast<const char*>(p), static_cast<std::streamsize>(n));
    if (!f) fail("cannot write {}: {}", path, std::strerror(errno));
  });
  f.close();
  if (!f) fail("cannot write {}: {}", path, std::strerror(errno));
}

std::vector<uint8_t> GgufWriter::to_bytes() const {
  std::vector<uint8_t> bytes;
  emit([&](const uint8_t* p, size_t n) { bytes.insert(bytes.end(), p, p + n); });
  return bytes;
}

}  // namespace skiff::gguf
