// MXFP4 tensors as Hugging Face checkpoints store them (config.json's
// quantization_config {"quant_method": "mxfp4"}: OpenAI's gpt-oss releases),
// repacked into GGUF's MXFP4 blocks without dequantizing. A matrix W
// [n, rows, cols] (rows the outputs, as W·x) is two U8 tensors:
//   NAME_blocks [n, rows, cols/32, 16]: E2M1 codes, two a byte, element 2i of
//     a block in the low nibble of byte i, element 2i + 1 in the high one;
//   NAME_scales [n, rows, cols/32]: E8M0 exponents, the block's scale 2^(s - 127).
// GGUF's block (kernels/quant): the E8M0 byte, then 16 bytes whose low nibbles
// are elements 0..15 and high nibbles 16..31 (its codes read on a halved
// scale, 2^(s - 128) · 2·v: the same values).
#pragma once
#include <cstdint>
#include <map>
#include <string>

#include "safetensors/safetensors.h"

namespace skiff {

// A checkpoint's tensor of raw bytes (U8) as its file gives it, and the file,
// which the loader keeps alive.
struct PackedTensor {
  safetensors::Tensor tensor;
  const safetensors::SafetensorsFile* file = nullptr;
};
// By GGUF-style name ("blk.0.ffn_down_exps.mxfp4_blocks").
using PackedTensors = std::map<std::string, PackedTensor>;

// The blocks and scales of one MXFP4 matrix stack, checked.
class Mxfp4Tensor {
 public:
  // `name`'s pair (name + ".mxfp4_blocks" / ".mxfp4_scales") in `packed`: Error
  // naming `hf_name`'s tensor when either is missing, not U8, or not of
  // [n, rows, cols/32, 16] and [n, rows, cols/32] (cols a multiple of 32).
  Mxfp4Tensor(const PackedTensors& packed, const std::string& name, const std::string& hf_name, int64_t n,
              int64_t rows, int64_t cols);
  // Writes row `row` of the stack (of n·rows) as GGUF MXFP4 blocks to dst
  // (cols/32 blocks of 17 bytes).
  void repack_row(int64_t row, uint8_t* dst) const;
  // Gives the memory of the checkpoint's bytes back once every row is
  // repacked (the model keeps one copy of its experts, not two).
  void release() const;

 private:
  const PackedTensor* blocks_;
  const PackedTensor* scales_;
  int64_t blocks_per_row_;
};

// Whether `packed` has either tensor of `name`'s pair.
bool has_mxfp4(const PackedTensors& packed, const std::string& name);

}  // namespace skiff
