// quant kernels for avx2: not written yet, so find_kernel falls back.
#include "kernels/matmul_kernels.h"

namespace skiff {

KernelEntry quant_kernel_avx2(DType) { return {}; }

}  // namespace skiff
