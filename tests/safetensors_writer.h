// Test helper: writes safetensors files (header JSON + raw data) so tests can
// build sharded, converted or corrupt checkpoints.
#pragma once
#include <cstdint>
#include <cstring>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace skiff::testing {

struct StTensor {
  std::string name;
  std::string dtype;
  std::vector<int64_t> shape;
  std::vector<uint8_t> bytes;
};

inline std::string safetensors_bytes(const std::vector<StTensor>& tensors) {
  nlohmann::json header = nlohmann::json::object();
  uint64_t offset = 0;
  for (const StTensor& t : tensors) {
    header[t.name] = {{"dtype", t.dtype}, {"shape", t.shape},
                      {"data_offsets", {offset, offset + t.bytes.size()}}};
    offset += t.bytes.size();
  }
  std::string h = header.dump();
  while ((8 + h.size()) % 8) h += ' ';  // keep data 8-byte aligned, as the spec advises
  const uint64_t len = h.size();
  std::string out(reinterpret_cast<const char*>(&len), 8);
  out += h;
  for (const StTensor& t : tensors) out.append(reinterpret_cast<const char*>(t.bytes.data()), t.bytes.size());
  return out;
}

inline void write_file(const std::string& path, const std::string& bytes) {
  std::ofstream(path, std::ios::binary).write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

}  // namespace skiff::testing
