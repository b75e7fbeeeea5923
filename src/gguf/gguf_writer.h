// GGUF writing: the inverse of GgufFile. Metadata is kept in insertion order
// and tensors are laid out one after another, each at an offset aligned to
// general.alignment (32 unless set). Tensor bytes are either given up front
// or produced one tensor at a time while writing, so a large model never has
// to be in memory all at once.
#pragma once
#include <cstdint>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "gguf/gguf.h"

namespace skiff::gguf {

// Value builders. Each checks that the value fits the type it names.
Value make_uint(ValueType type, uint64_t v);  // UINT8 / UINT16 / UINT32 / UINT64
Value make_int(ValueType type, int64_t v);    // INT8 / INT16 / INT32 / INT64
Value make_float(ValueType type, double v);   // FLOAT32 / FLOAT64
Value make_bool(bool v);
Value make_string(std::string v);
Value make_array(ValueType elem_type, std::vector<Value> items);
Value make_string_array(const std::vector<std::string>& items);

// Produces the bytes of one tensor when the writer reaches it.
using TensorBytesFn = std::function<std::vector<uint8_t>()>;

class GgufWriter {
 public:
  // version 3 is current; 2 has the same layout (only the number differs).
  explicit GgufWriter(uint32_t version = 3);

  // Adds or replaces a key. "general.alignment" must be a power of two.
  void set(const std::string& key, Value value);
  // Tensor data of exactly row_bytes(type, ne[0]) * (rows) bytes.
  void add_tensor(std::string name, DType type, std::vector<int64_t> ne,
                  std::vector<uint8_t> bytes);
  void add_tensor(std::string name, DType type, std::vector<int64_t> ne, TensorBytesFn produce);

  uint64_t alignment() const;
  // Throws Error naming the path when the file cannot be written.
  void write(const std::string& path) const;
  std::vector<uint8_t> to_bytes() const;

 private:
  struct PendingTensor {
    std::string name;
    DType type;
    std::vector<int64_t> ne;
    uint64_t nbytes;
    TensorBytesFn produce;
  };
  using ByteOut = std::function<void(const uint8_t*, size_t)>;

  std::vector<uint8_t> encode_header() const;
  void emit(const ByteOut& out) const;

  uint32_t version_;
  std::vector<std::pair<std::string, Value>> metadata_;
  std::vector<PendingTensor> tensors_;
};

}  // namespace skiff::gguf
