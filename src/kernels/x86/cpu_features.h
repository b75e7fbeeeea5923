// What the x86 CPU we run on has, for the run-time ISA choice (kernels/isa.cpp).
#pragma once

namespace skiff {

bool cpu_has_avx2_fma_f16c();
bool cpu_has_avx512_vnni_bf16();  // AVX-512 F, BW, VL, DQ, VNNI and BF16

}  // namespace skiff
