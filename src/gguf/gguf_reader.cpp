// GGUF parsing. Layout (v2/v3): magic "GGUF", u32 version, u64 n_tensors,
// u64 n_kv, then n_kv × (string key, u32 type, value), then n_tensors ×
// (string name, u32 n_dims, u64 ne[n_dims], u32 type, u64 offset), then
// padding to general.alignment, then the data section.
#include <cstring>
#include <limits>

#include "base/error.h"
#include "gguf/gguf.h"

namespace skiff::gguf {
namespace {

constexpr int kMaxArrayDepth = 8;
constexpr uint32_t kMaxDims = 4;

// A bounds-checked cursor over the mapped bytes.
class Reader {
 public:
  Reader(const uint8_t* data, size_t size) : data_(data), size_(size) {}

  size_t pos() const { return pos_; }
  size_t remaining() const { return size_ - pos_; }

  template <typename T>
  T read(const char* what) {
    need(sizeof(T), what);
    T v;
    std::memcpy(&v, data_ + pos_, sizeof(T));
    pos_ += sizeof(T);
    return v;
  }

  // n bytes, bounds-checked, as a view into the mapping.
  const uint8_t* read_bytes(uint64_t n, const char* what) {
    if (n > remaining()) fail("{} of {} bytes runs past the end of the file", what, n);
    const uint8_t* p = data_ + pos_;
    pos_ += n;
    return p;
  }

  std::string read_string(const char* what) {
    const uint64_t len = read<uint64_t>(what);
    if (len > remaining()) fail("{} length {} runs past the end of the file", what, len);
    std::string s(reinterpret_cast<const char*>(data_ + pos_), len);
    pos_ += len;
    return s;
  }

 private:
  void need(size_t n, const char* what) {
    if (n > remaining()) fail("file ends inside {} (offset {})", what, pos_);
  }
  const uint8_t* data_;
  size_t size_;
  size_t pos_ = 0;
};

// Smallest encoded size of one element of a type: bounds array counts before
// anything is allocated for them.
size_t min_encoded_size(ValueType t) {
  if (t == ValueType::STRING) return 8;  // its length
  if (t == ValueType::ARRAY) return 12;  // element type and length
  return fixed_value_size(t);
}

bool valid_value_type(uint32_t t) { return t <= static_cast<uint32_t>(ValueType::FLOAT64); }

Value read_value(Reader& r, ValueType type, int depth);

Array read_array(Reader& r, int depth) {
  if (depth > kMaxArrayDepth) fail("arrays nested deeper than {}", kMaxArrayDepth);
  const uint32_t elem = r.read<uint32_t>("array type");
  if (!valid_value_type(elem)) fail("unknown array element type {}", elem);
  Array a;
  a.elem_type = static_cast<ValueType>(elem);
  const uint64_t n = r.read<uint64_t>("array length");
  if (n > r.remaining() / min_encoded_size(a.elem_type))
    fail("array of {} elements runs past the end of the file", n);
  if (const size_t size = fixed_value_size(a.elem_type)) {
    const uint8_t* p = r.read_bytes(n * size, "array");
    a.packed.assign(p, p + n * size);
    if (a.elem_type == ValueType::BOOL)
      for (uint8_t b : a.packed)
        if (b > 1) fail("bool array element {} is neither 0 nor 1", b);
  } else if (a.elem_type == ValueType::STRING) {
    a.strings.reserve(n);
    for (uint64_t i = 0; i < n; ++i) a.strings.push_back(r.read_string("string value"));
  } else {
    a.arrays.reserve(n);
    for (uint64_t i = 0; i < n; ++i) a.arrays.push_back(read_value(r, a.elem_type, depth + 1));
  }
  return a;
}

Value read_value(Reader& r, ValueType type, int depth) {
  Value v;
  v.type = type;
  switch (type) {
    case ValueType::UINT8: v.data = uint64_t{r.read<uint8_t>("value")}; break;
    case ValueType::INT8: v.data = int64_t{r.read<int8_t>("value")}; break;
    case ValueType::UINT16: v.data = uint64_t{r.read<uint16_t>("value")}; break;
    case ValueType::INT16: v.data = int64_t{r.read<int16_t>("value")}; break;
    case ValueType::UINT32: v.data = uint64_t{r.read<uint32_t>("value")}; break;
    case ValueType::INT32: v.data = int64_t{r.read<int32_t>("value")}; break;
    case ValueType::UINT64: v.data = r.read<uint64_t>("value"); break;
    case ValueType::INT64: v.data = r.read<int64_t>("value"); break;
    case ValueType::FLOAT32: v.data = double{r.read<float>("value")}; break;
    case ValueType::FLOAT64: v.data = r.read<double>("value"); break;
    case ValueType::BOOL: {
      const uint8_t b = r.read<uint8_t>("value");
      if (b > 1) fail("bool value {} is neither 0 nor 1", b);
      v.data = b != 0;
      break;
    }
    case ValueType::STRING: v.data = r.read_string("string value"); break;
    case ValueType::ARRAY: v.data = read_array(r, depth); break;
  }
  return v;
}

TensorInfo read_tensor_info(Reader& r) {
  TensorInfo t;
  t.name = r.read_string("tensor name");
  const uint32_t n_dims = r.read<uint32_t>("tensor dimension count");
  if (n_dims == 0 || n_dims > kMaxDims)
    fail("tensor '{}' has {} dimensions (1 to {} allowed)", t.name, n_dims, kMaxDims);
  int64_t n = 1;
  for (uint32_t d = 0; d < n_dims; ++d) {
    const uint64_t ne = r.read<uint64_t>("tensor dimensions");
    if (ne == 0 || ne > static_cast<uint64_t>(std::numeric_limits<int64_t>::max() / n))
      fail("tensor '{}' has invalid dimension {}", t.name, ne);
    n *= static_cast<int64_t>(ne);
    t.ne.push_back(static_cast<int64_t>(ne));
  }
  const uint32_t type = r.read<uint32_t>("tensor type");
  t.ggml_type = type;
  const auto info = dtype_info(type);
  if (!info) {
    t.readable = false;
    t.offset = r.read<uint64_t>("tensor offset");
    return t;
  }
  t.type = info->type;
  if (t.ne[0] % static_cast<int64_t>(info->block_size) != 0)
    fail("tensor '{}': row of {} elements is not a whole number of {} blocks", t.name,
         t.ne[0], info->name);
  const uint64_t blocks = static_cast<uint64_t>(n) / info->block_size;
  // Without this, 2^62 F32 elements would wrap to a size of 0 bytes and pass the bounds check.
  if (blocks > std::numeric_limits<uint64_t>::max() / info->type_size)
    fail("tensor '{}' of {} elements is too large", t.name, n);
  t.nbytes = blocks * info->type_size;
  t.offset = r.read<uint64_t>("tensor offset");
  return t;
}

}  // namespace

GgufFile::GgufFile(const std::string& path, FileLoad load) {
  file_ = std::make_shared<MappedFile>(path, FileLoad::kMmap);
  try {
    Reader r(file_->data(), file_->size());
    if (file_->size() < 4 || std::memcmp(file_->data(), "GGUF", 4) != 0)
      fail("not a GGUF file (bad magic)");
    r.read<uint32_t>("magic");
    version_ = r.read<uint32_t>("version");
    if (version_ != 2 && version_ != 3) fail("unsupported GGUF version {} (2 and 3 are)", version_);
    const uint64_t n_tensors = r.read<uint64_t>("tensor count");
    const uint64_t n_kv = r.read<uint64_t>("metadata count");
    if (n_kv > r.remaining() / 12) fail("metadata count {} runs past the end of the file", n_kv);
    if (n_tensors > r.remaining() / 24) fail("tensor count {} runs past the end of the file", n_tensors);

    for (uint64_t i = 0; i < n_kv; ++i) {
      std::string key = r.read_string("metadata key");
      const uint32_t type = r.read<uint32_t>("metadata type");
      if (!valid_value_type(type)) fail("metadata '{}' has unknown type {}", key, type);
      Value v = read_value(r, static_cast<ValueType>(type), 0);
      if (!metadata_.emplace(key, std::move(v)).second) fail("duplicate metadata key '{}'", key);
    }
    // get_int names the key when the value is not an integer.
    const int64_t al = get_int("general.alignment", static_cast<int64_t>(alignment_));
    if (al <= 0 || (al & (al - 1)) != 0) fail("general.alignment {} is not a power of two", al);
    alignment_ = static_cast<uint64_t>(al);

    for (uint64_t i = 0; i < n_tensors; ++i) {
      TensorInfo t = read_tensor_info(r);
      if (!tensor_index_.emplace(t.name, tensors_.size()).second)
        fail("duplicate tensor name '{}'", t.name);
      tensors_.push_back(std::move(t));
    }

    const uint64_t data_start = (r.pos() + alignment_ - 1) / alignment_ * alignment_;
    if (!tensors_.empty() && data_start > file_->size())
      fail("data section starts at {} past the end of the file ({} bytes)", data_start,
           file_->size());
    for (TensorInfo& t : tensors_) {
      if (!t.readable) continue;
      if (t.offset % alignment_ != 0)
        fail("tensor '{}' offset {} is not aligned to {}", t.name, t.offset, alignment_);
      const uint64_t avail = file_->size() - data_start;
      if (t.offset > avail || t.nbytes > avail - t.offset)
        fail("tensor '{}' (offset {}, {} bytes) lies outside the file", t.name, t.offset,
             t.nbytes);
      t.data = file_->data() + data_start + t.offset;
    }
    copy_misaligned_tensors();
  } catch (const Error& e) {
    fail("{}: {}", path, e.what());
  }
  if (load == FileLoad::kCopy) read_into_memory();
}

void GgufFile::read_into_memory() {
  if (file_->in_memory()) return;
  auto copy = std::make_shared<MappedFile>(file_->path(), FileLoad::kCopy);
  if (copy->size() != file_->size()) fail("{}: the file changed size while being read", file_->path());
  for (TensorInfo& t : tensors_)
    if (t.data >= file_->data() && t.data < file_->data() + file_->size())
      t.data = copy->data() + (t.data - file_->data());
  file_ = std::move(copy);
}

void GgufFile::copy_misaligned_tensors() {
  auto misaligned = [](const TensorInfo& t) { return reinterpret_cast<uintptr_t>(t.data) % kTensorAlignment != 0; };
  uint64_t bytes = 0;
  for (const TensorInfo& t : tensors_)
    if (misaligned(t)) bytes += (t.nbytes + kTensorAlignment - 1) / kTensorAlignment * kTensorAlignment;
  if (bytes == 0) return;
  aligned_copies_ = HugePageBuffer(bytes);
  uint8_t* out = aligned_copies_.data();
  for (TensorInfo& t : tensors_) {
    if (!misaligned(t)) continue;
    std::memcpy(out, t.data, t.nbytes);
    t.data = out;
    out += (t.nbytes + kTensorAlignment - 1) / kTensorAlignment * kTensorAlignment;
  }
}

const Value* GgufFile::find(const std::string& key) const {
  auto it = metadata_.find(key);
  return it == metadata_.end() ? nullptr : &it->second;
}

const TensorInfo* GgufFile::find_tensor(const std::string& name) const {
  auto it = tensor_index_.find(name);
  return it == tensor_index_.end() ? nullptr : &tensors_[it->second];
}

uint8_t* GgufFile::writable(const void* data) {
  const auto* p = static_cast<const uint8_t*>(data);
  uint8_t* copies = aligned_copies_.data();
  if (file_->unsealed() && copies && p >= copies && p < copies + aligned_copies_.size())
    return const_cast<uint8_t*>(p);
  if (!file_->unsealed() || p < file_->data() || p >= file_->data() + file_->size()) return nullptr;
  return const_cast<uint8_t*>(p);  // the private copy, writable while unsealed
}

int64_t TensorInfo::n_elements() const {
  int64_t n = 1;
  for (int64_t d : ne) n *= d;
  return n;
}

}  // namespace skiff::gguf
