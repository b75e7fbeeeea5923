// Loading a model from a GGUF file or a Hugging Face directory (config.json +
// safetensors). Weights stay memory-mapped where their layout allows.
#pragma once
#include <memory>
#include <nlohmann/json.hpp>
#include <string>

#include "gguf/gguf.h"
#include "model/model.h"

namespace skiff {

// How weights get into memory. Default: read into anonymous huge-page memory,
// which decodes faster than 4 KiB mmap pages; mmap starts faster.
struct LoadOptions {
  FileLoad weights = FileLoad::kCopy;
};

// A GGUF file or an HF directory, chosen by what `path` is. Throws Error.
std::unique_ptr<Model> load_model(const std::string& path, const LoadOptions& options = {});

// Reads the weights in place; with the file read into memory (FileLoad::kCopy)
// some are rewritten there into kernel layouts (repack_for_kernels).
std::unique_ptr<Model> load_gguf_model(std::shared_ptr<gguf::GgufFile> file);
std::unique_ptr<Model> load_hf_model(const std::string& dir, const LoadOptions& options = {});

// The config a file declares; Error naming the file and the problem (an
// unknown architecture among them) before any weight is read.
ModelConfig config_from_gguf(const gguf::GgufFile& file);
ModelConfig config_from_hf(const nlohmann::json& config_json);
// config.json's quantization_config.quant_method, "" when it has none; Error
// for one skiff cannot read (all but "mxfp4": gpt-oss's experts as MXFP4 blocks).
std::string hf_quant_method(const nlohmann::json& config_json);

}  // namespace skiff
