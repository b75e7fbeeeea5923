// Activation quantization for the integer kernels: not used until an integer
// kernel asks for it.
#include "base/error.h"
#include "kernels/matmul_kernels.h"

namespace skiff {

size_t activation_row_bytes(ActivationFormat format, int64_t) {
  if (format != ActivationFormat::kF32) fail("quantized activations are not implemented");
  return 0;
}

void quantize_activation_row(ActivationFormat, const float*, void*, int64_t) {
  fail("quantized activations are not implemented");
}

}  // namespace skiff
