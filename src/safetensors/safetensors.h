// safetensors: an 8-byte little-endian header length, a JSON header mapping
// tensor names to {dtype, shape, data_offsets}, then the raw data. The file is
// memory-mapped; every offset in the header is checked against the file size.
#pragma once
#include <cstdint>
#include <map>
#include <memory>
#include <nlohmann/json_fwd.hpp>
#include <string>
#include <vector>

#include "base/mapped_file.h"

namespace skiff::safetensors {

struct Tensor {
  std::string dtype;            // "F32", "F16", "BF16", ... as written in the header
  std::vector<int64_t> shape;   // outermost first (row-major)
  const uint8_t* data = nullptr;
  uint64_t nbytes = 0;
};

class SafetensorsFile {
 public:
  // Throws Error "path: problem".
  explicit SafetensorsFile(const std::string& path, FileLoad load = FileLoad::kMmap);

  const std::map<std::string, Tensor>& tensors() const { return tensors_; }
  const std::map<std::string, std::string>& metadata() const { return metadata_; }
  // Gives the memory of t's bytes back (MappedFile::release): t is one of this
  // file's tensors that the loader has copied elsewhere and nothing reads again.
  void release(const Tensor& t) const { file_->release(t.data, t.nbytes); }
  // Read into memory (FileLoad::kCopy), the loader may rewrite its private
  // copy into kernel layouts between unseal() (false for a mapping) and seal()
  // (MappedFile's).
  bool unseal() const { return file_->unseal() != nullptr; }
  void seal() const { file_->seal(); }

 private:
  std::shared_ptr<MappedFile> file_;
  std::map<std::string, Tensor> tensors_;
  std::map<std::string, std::string> metadata_;
};

// The shard files a model.safetensors.index.json names in its weight_map,
// each once, sorted; Error when it has none or a name leaves the directory.
std::vector<std::string> index_shards(const nlohmann::json& index);

// Bytes per element of a safetensors dtype name; 0 when unknown.
size_t dtype_size(const std::string& dtype);

}  // namespace skiff::safetensors
