#include <filesystem>

#include "base/error.h"
#include "convert/model_source.h"
#include "kernels/quant/quant.h"

namespace skiff::convert {

int64_t SourceTensor::rows() const {
  int64_t rows = 1;
  for (size_t d = 1; d < ne.size(); ++d) rows *= ne[d];
  return rows;
}

const uint8_t* SourceTensor::row(int64_t r) const {
  const size_t bytes = row_bytes(type, cols());
  if (parts.empty()) return static_cast<const uint8_t*>(data) + static_cast<size_t>(r) * bytes;
  const int64_t per_part = rows() / static_cast<int64_t>(parts.size());
  return static_cast<const uint8_t*>(parts[r / per_part]) + static_cast<size_t>(r % per_part) * bytes;
}

ModelSource gguf_source(const std::string& path) {
  auto file = std::make_shared<const gguf::GgufFile>(path);
  ModelSource source;
  for (const auto& [key, value] : file->metadata()) source.metadata.emplace_back(key, value);
  for (const gguf::TensorInfo& t : file->tensors()) {
    if (!t.readable) fail("{}: tensor '{}' has type {}, which skiff cannot read", path, t.name, t.ggml_type);
    source.tensors.push_back({t.name, t.type, t.ne, t.data, 0});
  }
  source.input_bytes = std::filesystem::file_size(path);
  source.storage.push_back(file);
  return source;
}

ModelSource open_source(const std::string& path) {
  namespace fs = std::filesystem;
  if (!fs::exists(path)) fail("model not found: {}", path);
  return fs::is_directory(path) ? hf_source(path) : gguf_source(path);
}

}  // namespace skiff::convert
