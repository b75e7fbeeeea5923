// The part of the float matmul kernels that is the same on every ISA: pick
// decode passes or the GEMM by token count, and the kernel table. Included by
// matmul_float_{avx2,avx512}.cpp inside their anonymous namespace (so each copy
// is compiled for its ISA and stays local to its file), after they define
// decode<W, T>, gemm<W>, the weight readers F32W/F16W/BF16W and kNR.

// Decode for up to 4 tokens, in register-blocked template instances.
template <class W>
void decode_upto4(const Matrix& w, const Activations& x, float* y, int64_t ldy, int64_t r0,
                  int64_t r1) {
  switch (x.n_tokens) {
    case 1: return decode<W, 1>(w, x, y, ldy, r0, r1);
    case 2: return decode<W, 2>(w, x, y, ldy, r0, r1);
    case 3: return decode<W, 3>(w, x, y, ldy, r0, r1);
    default: return decode<W, 4>(w, x, y, ldy, r0, r1);
  }
}

// Below this many tokens, streaming the weights once per 4 tokens beats
// packing them for the GEMM (AVX-512, F16, 2 threads: decode passes were faster
// at 16-24 tokens on 2048x8192, 8192x2048 and 2048x2048, even at 32, and the
// GEMM faster from 48 on the larger two).
constexpr int kGemmMinTokens = 32;

template <class W>
void float_matmul(const Matrix& w, const Activations& x, float* y, int64_t ldy, int64_t r0,
                  int64_t r1) {
  if (x.n_tokens >= kGemmMinTokens) return gemm<W>(w, x, y, ldy, r0, r1);
  for (int t0 = 0; t0 < x.n_tokens; t0 += 4) {
    Activations part = x;
    part.f32 = x.f32 + t0 * x.cols;
    part.n_tokens = x.n_tokens - t0 < 4 ? x.n_tokens - t0 : 4;
    decode_upto4<W>(w, part, y + t0 * ldy, ldy, r0, r1);
  }
}

KernelEntry float_kernel_for(DType type) {
  switch (type) {
    case DType::F32: return {float_matmul<F32W>, ActivationFormat::kF32, kNR};
    case DType::F16: return {float_matmul<F16W>, ActivationFormat::kF32, kNR};
    case DType::BF16: return {float_matmul<BF16W>, ActivationFormat::kF32, kNR};
    default: return {};
  }
}
