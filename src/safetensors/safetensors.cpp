#include "safetensors/safetensors.h"

#include <cstring>
#include <limits>
#include <set>
#include <nlohmann/json.hpp>

#include "base/error.h"
#include "base/json.h"

namespace skiff::safetensors {

size_t dtype_size(const std::string& dtype) {
  static const std::map<std::string, size_t> kSizes = {
      {"F64", 8}, {"F32", 4}, {"F16", 2}, {"BF16", 2}, {"I64", 8}, {"I32", 4},
      {"I16", 2}, {"I8", 1},  {"U8", 1},  {"BOOL", 1}, {"F8_E4M3", 1}, {"F8_E5M2", 1}};
  auto it = kSizes.find(dtype);
  return it == kSizes.end() ? 0 : it->second;
}

namespace {

Tensor parse_tensor(const std::string& name, const nlohmann::json& j, const uint8_t* data,
                    uint64_t data_size) {
  if (!j.is_object()) fail("tensor '{}': entry is not an object", name);
  Tensor t;
  if (!j.contains("dtype") || !j["dtype"].is_string()) fail("tensor '{}': no dtype", name);
  t.dtype = j["dtype"].get<std::string>();
  const size_t elem = dtype_size(t.dtype);
  if (elem == 0) fail("tensor '{}': unknown dtype {}", name, t.dtype);
  if (!j.contains("shape") || !j["shape"].is_array()) fail("tensor '{}': no shape", name);
  uint64_t n = 1;
  for (const auto& d : j["shape"]) {
    if (!d.is_number_unsigned()) fail("tensor '{}': bad dimension", name);
    const uint64_t v = d.get<uint64_t>();
    if (v != 0 && n > std::numeric_limits<uint64_t>::max() / elem / v)
      fail("tensor '{}': shape overflows", name);
    n *= v;
    t.shape.push_back(static_cast<int64_t>(v));
  }
  const auto& off = j.value("data_offsets", nlohmann::json());
  if (!off.is_array() || off.size() != 2 || !off[0].is_number_unsigned() ||
      !off[1].is_number_unsigned())
    fail("tensor '{}': data_offsets must be two unsigned integers", name);
  const uint64_t begin = off[0].get<uint64_t>(), end = off[1].get<uint64_t>();
  if (begin > end || end > data_size)
    fail("tensor '{}': data [{}, {}) lies outside the {} data bytes", name, begin, end, data_size);
  if (end - begin != n * elem)
    fail("tensor '{}': {} data bytes for {} elements of {}", name, end - begin, n, t.dtype);
  t.data = data + begin;
  t.nbytes = end - begin;
  return t;
}

}  // namespace

SafetensorsFile::SafetensorsFile(const std::string& path, FileLoad load) {
  file_ = std::make_shared<MappedFile>(path, load);
  try {
    if (file_->size() < 8) fail("file too short for a safetensors header");
    uint64_t header_len;
    std::memcpy(&header_len, file_->data(), 8);
    if (header_len > file_->size() - 8) fail("header length {} runs past the end of the file", header_len);
    const char* header = reinterpret_cast<const char*>(file_->data() + 8);
    nlohmann::json j;
    try {
      j = parse_json(std::string_view(header, header_len));
    } catch (const Error& e) {
      fail("header is not a JSON object ({})", e.what());
    }
    if (!j.is_object()) fail("header is not a JSON object");
    const uint8_t* data = file_->data() + 8 + header_len;
    const uint64_t data_size = file_->size() - 8 - header_len;
    for (const auto& [name, entry] : j.items()) {
      if (name == "__metadata__") {
        if (!entry.is_object()) fail("__metadata__ is not an object");
        for (const auto& [k, v] : entry.items())
          if (v.is_string()) metadata_[k] = v.get<std::string>();
        continue;
      }
      tensors_.emplace(name, parse_tensor(name, entry, data, data_size));
    }
  } catch (const Error& e) {
    fail("{}: {}", path, e.what());
  }
}

std::vector<std::string> index_shards(const nlohmann::json& index) {
  if (!index.is_object() || !index.contains("weight_map") || !index["weight_map"].is_object())
    fail("no weight_map");
  std::set<std::string> shards;
  for (const auto& [name, file] : index["weight_map"].items()) {
    if (!file.is_string()) fail("weight_map['{}'] is not a file name", name);
    const std::string shard = file.get<std::string>();
    if (shard.find('/') != std::string::npos) fail("shard name '{}' leaves the directory", shard);
    shards.insert(shard);
  }
  return {shards.begin(), shards.end()};
}

}  // namespace skiff::safetensors
