#include <filesystem>

#include "base/error.h"
#include "convert/model_source.h"

namespace skiff::convert {

int64_t SourceTensor::rows() const {
  int64_t rows = 1;
  for (size_t d = 1; d < ne.size(); ++d) rows *= ne[d];
  return rows;
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
