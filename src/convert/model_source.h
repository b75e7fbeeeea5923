// A model to convert, as GGUF-named tensors plus the GGUF metadata that
// describes it: read from a GGUF file as it is, or built from a Hugging Face
// directory (config.json, safetensors, tokenizer files) the way llama.cpp's
// convert_hf_to_gguf.py lays it out.
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "gguf/gguf.h"
#include "kernels/dtype.h"

namespace skiff::convert {

struct SourceTensor {
  std::string name;         // GGUF name, e.g. "blk.0.attn_q.weight"
  DType type = DType::F32;
  std::vector<int64_t> ne;  // ggml order: ne[0] is the contiguous dimension
  const void* data = nullptr;
  // > 0: rows are in HF rotate-half order for this many heads and must be
  // interleaved per head (q_proj and k_proj); 0: rows stay as they are.
  int interleave_heads = 0;
  // Non-empty: the rows are these parts' rows in order (a checkpoint's tensor
  // per expert stacked into GGUF's 3-D tensor), each rows() / parts.size() rows;
  // `data` is then unused.
  std::vector<const void*> parts;
  // A checkpoint's tensor stored quantized (gpt-oss's MXFP4 experts): written as
  // it is where the output type is one of convert_hf_to_gguf.py's (F32, F16,
  // BF16, Q8_0), as llama.cpp keeps it; requantized for the others.
  bool stored_quantized = false;

  int64_t cols() const { return ne[0]; }
  int64_t rows() const;
  // Row r's bytes (of row_bytes(type, cols()) each).
  const uint8_t* row(int64_t r) const;
};

struct ModelSource {
  std::vector<std::pair<std::string, gguf::Value>> metadata;  // written in this order
  std::vector<SourceTensor> tensors;                           // written in this order
  uint64_t input_bytes = 0;                                    // size on disk
  std::vector<std::shared_ptr<const void>> storage;            // keeps `data` alive
};

// Every key and tensor of a GGUF file, unchanged.
ModelSource gguf_source(const std::string& path);
// An HF directory: the family's metadata (with RoPE scaling), the tokenizer
// as tokenizer.ggml.* keys, Q/K rows marked for interleaving ("llama"), and
// tensors stored quantized (MXFP4 experts) marked stored_quantized.
ModelSource hf_source(const std::string& dir);
// Either, by what `path` is. Throws Error.
ModelSource open_source(const std::string& path);

}  // namespace skiff::convert
