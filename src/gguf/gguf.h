// GGUF: the file format of llama.cpp models. A header, typed key/value
// metadata, tensor descriptors, then aligned tensor data. GgufFile maps the
// file and checks every count, length and offset against its size, so a
// corrupt file gives an Error naming the problem, never an out-of-bounds read.
#pragma once
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "base/huge_page_buffer.h"
#include "base/mapped_file.h"
#include "kernels/dtype.h"

namespace skiff::gguf {

// Value types as numbered by the GGUF spec.
enum class ValueType : uint32_t {
  UINT8 = 0, INT8 = 1, UINT16 = 2, INT16 = 3, UINT32 = 4, INT32 = 5,
  FLOAT32 = 6, BOOL = 7, STRING = 8, ARRAY = 9, UINT64 = 10, INT64 = 11, FLOAT64 = 12,
};
const char* value_type_name(ValueType type);
// Bytes of one value of a number or bool type as files store it; 0 for STRING and ARRAY.
size_t fixed_value_size(ValueType type);

struct Value;
// A metadata array. Numbers and bools stay packed as the file stores them
// (little-endian, fixed_value_size bytes each): one Value per element would
// cost ~70x a u8 array's size in memory.
struct Array {
  ValueType elem_type = ValueType::UINT8;
  std::vector<uint8_t> packed;       // number and bool elements
  std::vector<std::string> strings;  // STRING elements
  std::vector<Value> arrays;         // ARRAY elements

  size_t size() const;
  Value at(size_t i) const;  // element i, decoded (Error when out of range)
};

// One metadata value. Integers of every width are held as int64/uint64 and
// floats as double; `type` keeps the type the file declared.
struct Value {
  ValueType type = ValueType::UINT8;
  std::variant<uint64_t, int64_t, double, bool, std::string, Array> data;

  bool is_integer() const;
  int64_t as_int() const;        // any integer type (throws Error otherwise)
  double as_float() const;       // any integer or float type
  bool as_bool() const;
  const std::string& as_string() const;
  const Array& as_array() const;
};

struct TensorInfo {
  std::string name;
  DType type = DType::F32;
  std::vector<int64_t> ne;     // dimensions, ggml order: ne[0] is the contiguous one
  uint64_t offset = 0;         // from the start of the data section
  const uint8_t* data = nullptr;  // in the mapping, or an aligned copy
  uint64_t nbytes = 0;
  // A type skiff cannot read leaves the tensor unreadable (data null, nbytes
  // 0): the metadata and the other tensors stay usable (skiff tokenize), and
  // loading a model names it.
  uint32_t ggml_type = 0;
  bool readable = true;

  int64_t n_elements() const;
};

class GgufFile {
 public:
  // Maps and parses the file; throws Error with "path: problem". With
  // FileLoad::kCopy the tensor data is then read into memory (read_into_memory).
  explicit GgufFile(const std::string& path, FileLoad load = FileLoad::kMmap);

  // Reads the file into anonymous huge-page memory and points every tensor
  // there, dropping the mapping; parsing only touched the header, so a caller
  // can check what the header declares before any weight is read.
  void read_into_memory();

  uint32_t version() const { return version_; }
  uint64_t alignment() const { return alignment_; }
  const std::string& path() const { return file_->path(); }

  const std::map<std::string, Value>& metadata() const { return metadata_; }
  const Value* find(const std::string& key) const;
  // Typed lookups: the fallback when the key is absent; Error on a wrong type.
  int64_t get_int(const std::string& key, int64_t fallback) const;
  double get_float(const std::string& key, double fallback) const;
  bool get_bool(const std::string& key, bool fallback) const;
  std::string get_string(const std::string& key, const std::string& fallback) const;
  // Arrays; empty when absent.
  std::vector<std::string> get_string_array(const std::string& key) const;
  std::vector<float> get_float_array(const std::string& key) const;
  std::vector<int64_t> get_int_array(const std::string& key) const;

  const std::vector<TensorInfo>& tensors() const { return tensors_; }
  // Between unseal() and seal() (MappedFile's), tensor bytes read into memory
  // (FileLoad::kCopy) may be rewritten: writable(data) is where, or null
  // (a mapped file, sealed, or data outside the file).
  bool unseal() { return file_->unseal() != nullptr; }
  uint8_t* writable(const void* data);
  void seal() { file_->seal(); }
  const TensorInfo* find_tensor(const std::string& name) const;

 private:
  // Kernels read F16/F32 elements and SIMD vectors in place: tensors that a
  // small general.alignment (1, 2, ...) leaves misaligned are copied here.
  static constexpr uint64_t kTensorAlignment = 32;
  void copy_misaligned_tensors();

  std::shared_ptr<MappedFile> file_;
  HugePageBuffer aligned_copies_;
  uint32_t version_ = 0;
  uint64_t alignment_ = 32;
  std::map<std::string, Value> metadata_;
  std::vector<TensorInfo> tensors_;
  std::map<std::string, size_t> tensor_index_;
};

}  // namespace skiff::gguf
