#include "model/hf_mxfp4.h"

#include <vector>

#include "base/error.h"

namespace skiff {
namespace {

constexpr int64_t kBlock = 32;  // elements a block
constexpr int64_t kCodeBytes = kBlock / 2;

std::string shape_text(const std::vector<int64_t>& shape) {
  std::string s;
  for (int64_t d : shape) s += (s.empty() ? "" : ", ") + std::to_string(d);
  return "[" + s + "]";
}

const PackedTensor& checked(const PackedTensors& packed, const std::string& name, const std::string& hf_name,
                                   const std::vector<int64_t>& shape) {
  const auto it = packed.find(name);
  if (it == packed.end()) fail("model is missing tensor '{}'", hf_name);
  const safetensors::Tensor& t = it->second.tensor;
  if (t.dtype != "U8") fail("tensor '{}' has dtype {}, expected U8 (MXFP4)", hf_name, t.dtype);
  if (t.shape != shape)
    fail("tensor '{}' has shape {}, expected {} from config.json", hf_name, shape_text(t.shape), shape_text(shape));
  return it->second;
}

}  // namespace

Mxfp4Tensor::Mxfp4Tensor(const PackedTensors& packed, const std::string& name, const std::string& hf_name, int64_t n,
                         int64_t rows, int64_t cols)
    : blocks_per_row_(cols / kBlock) {
  if (cols % kBlock != 0)
    fail("tensor '{}_blocks': rows of {} elements are not whole MXFP4 blocks of {}", hf_name, cols, kBlock);
  blocks_ = &checked(packed, name + ".mxfp4_blocks", hf_name + "_blocks", {n, rows, blocks_per_row_, kCodeBytes});
  scales_ = &checked(packed, name + ".mxfp4_scales", hf_name + "_scales", {n, rows, blocks_per_row_});
}

void Mxfp4Tensor::repack_row(int64_t row, uint8_t* dst) const {
  const uint8_t* codes = blocks_->tensor.data + row * blocks_per_row_ * kCodeBytes;
  const uint8_t* scales = scales_->tensor.data + row * blocks_per_row_;
  for (int64_t b = 0; b < blocks_per_row_; ++b, codes += kCodeBytes, dst += 1 + kCodeBytes) {
    dst[0] = scales[b];
    // Element j sits in byte j/2 of the checkpoint's block, in its high nibble when j is odd.
    for (int j = 0; j < 16; ++j) {
      const int shift = 4 * (j & 1);
      const uint8_t low = (codes[j >> 1] >> shift) & 0xF, high = (codes[8 + (j >> 1)] >> shift) & 0xF;
      dst[1 + j] = static_cast<uint8_t>(low | high << 4);
    }
  }
}

void Mxfp4Tensor::release() const {
  for (const PackedTensor* t : {blocks_, scales_}) t->file->release(t->tensor);
}

bool has_mxfp4(const PackedTensors& packed, const std::string& name) {
  return packed.count(name + ".mxfp4_blocks") || packed.count(name + ".mxfp4_scales");
}

}  // namespace skiff
