#include "kernels/attention/kv_row.h"

#include <cmath>
#include <cstring>
#include <vector>

#include "kernels/fp16.h"
#include "kernels/ops/ops.h"

namespace skiff {

int kv_q8_group(int head_dim) { return head_dim % 32 == 0 ? 32 : head_dim; }

size_t kv_q8_row_bytes(int head_dim) {
  const int group = kv_q8_group(head_dim);
  return static_cast<size_t>(head_dim / group) * (2 + group);
}

void quantize_kv_q8_row(const float* x, int head_dim, uint8_t* dst) {
  const int group = kv_q8_group(head_dim);
  for (int g = 0; g < head_dim / group; ++g, x += group, dst += 2 + group) {
    float d;
    if (group == 32) {  // the active ISA's vector copy
      int32_t sum;
      d = quantize_q8_span(x, reinterpret_cast<int8_t*>(dst + 2), group, &sum);
    } else {
      float amax = 0.0f;
      bool finite = true;
      for (int i = 0; i < group; ++i) {
        amax = std::fmax(amax, std::fabs(x[i]));
        finite = finite && std::isfinite(x[i]);
      }
      // As quantize_q8_span: a non-finite group is zeros with scale NaN.
      d = finite ? amax / 127.0f : std::nanf("");
      const float inv = finite && d != 0.0f && 1.0f / d <= __FLT_MAX__ ? 1.0f / d : 0.0f;
      for (int i = 0; i < group; ++i)
        dst[2 + i] = finite ? static_cast<uint8_t>(static_cast<int8_t>(std::nearbyint(x[i] * inv))) : 0;
    }
    const uint16_t half = f32_to_fp16(d);
    std::memcpy(dst, &half, 2);
  }
}

size_t kv_row_bytes(KvElement element, int head_dim) {
  switch (element) {
    case KvElement::kF32: return static_cast<size_t>(head_dim) * sizeof(float);
    case KvElement::kF16: return static_cast<size_t>(head_dim) * sizeof(uint16_t);
    case KvElement::kQ8_0: return kv_q8_row_bytes(head_dim);
  }
  return 0;
}

void encode_kv_row(KvElement element, const float* x, int head_dim, uint8_t* dst) {
  switch (element) {
    case KvElement::kF32:
      std::memcpy(dst, x, static_cast<size_t>(head_dim) * sizeof(float));
      return;
    case KvElement::kF16:
      to_fp16(x, reinterpret_cast<uint16_t*>(dst), head_dim);  // rows of 2-byte elements are 2-aligned
      return;
    case KvElement::kQ8_0:
      quantize_kv_q8_row(x, head_dim, dst);
      return;
  }
}

void store_key(KvElement element, const float* key, int head_dim, int block_size, int slot, uint8_t* block) {
  const size_t b = static_cast<size_t>(block_size);
  thread_local std::vector<uint8_t> row;
  row.resize(kv_row_bytes(element, head_dim));
  encode_kv_row(element, key, head_dim, row.data());
  if (element != KvElement::kQ8_0) {
    const size_t e = element == KvElement::kF32 ? 4 : 2;
    for (int d = 0; d < head_dim; ++d) std::memcpy(block + (d * b + slot) * e, row.data() + d * e, e);
    return;
  }
  const int group = kv_q8_group(head_dim);
  for (int g = 0; g < head_dim / group; ++g) {
    const uint8_t* src = row.data() + g * (2 + group);
    uint8_t* region = block + g * b * (2 + group);
    std::memcpy(region + 2 * slot, src, 2);
    for (int i = 0; i < group; ++i) region[2 * b + i * b + slot] = src[2 + i];
  }
}

}  // namespace skiff
