// The part of the float matmul kernels that is the same on every ISA: pick
// decode passes or the GEMM by token count, and the kernel table. Included by
// matmul_float_rows_avx2.cpp and matmul_float_avx512.cpp inside their
// anonymous namespace (so each copy is compiled for its ISA and stays local to
// its file), after they define
// decode<W, T>, the weight readers F32W/F16W/BF16W, kNR and kDecodeTokens<W>
// (the most tokens one decode pass over the weights takes), and the GEMM's
// blocking (kMR, kKC, kNC, kMC), packers (pack_tokens, pack_weights<W>) and
// register tile (tile: kMR tokens x up to kNR outputs).

// Loop order: tokens in passes of kMC, packed once per pass (all columns);
// then per block of kNC weight rows, its depth blocks in turn: each weight is
// converted once per pass, and a row block's packed weights, pages and partial
// outputs stay in cache while it is worked on. (Depth blocks outermost would
// sweep every row kKC elements at a time: a page walk per row per block.)
template <class W>
void gemm(const Matrix& w, const Activations& x, float* y, int64_t ldy, int64_t r0, int64_t r1) {
  const int64_t cols = w.cols;
  const int64_t xp_floats = round_up(x.n_tokens < kMC ? x.n_tokens : kMC, kMR) * cols;
  float* xp = static_cast<float*>(kernel_scratch((xp_floats + kNC * kKC) * sizeof(float)));
  float* wp = xp + xp_floats;
  for (int t0 = 0; t0 < x.n_tokens; t0 += kMC) {
    const int m = x.n_tokens - t0 < kMC ? x.n_tokens - t0 : kMC;
    const int64_t m_pad = round_up(m, kMR);
    // Depth block k0 of the pass's tokens lives at xp + k0 * m_pad.
    for (int64_t k0 = 0; k0 < cols; k0 += kKC)
      pack_tokens(x, t0, m, k0, static_cast<int>(cols - k0 < kKC ? cols - k0 : kKC),
                  xp + k0 * m_pad);
    for (int64_t j0 = r0; j0 < r1; j0 += kNC) {
      const int64_t n = r1 - j0 < kNC ? r1 - j0 : kNC;
      for (int64_t k0 = 0; k0 < cols; k0 += kKC) {
        const int kc = static_cast<int>(cols - k0 < kKC ? cols - k0 : kKC);
        pack_weights<W>(w, j0, n, k0, kc, wp);
        for (int g = 0; g < m; g += kMR)
          for (int64_t jb = 0; jb < n; jb += kNR)
            tile(xp + k0 * m_pad + g * kc, wp + jb * kc, kc, y + (t0 + g) * ldy + j0 + jb, ldy,
                 m - g < kMR ? m - g : kMR, n - jb, k0 > 0);
      }
    }
  }
}

// Decode for up to kDecodeTokens<W> tokens, in register-blocked template instances.
template <class W, int T = 1>
void decode_upto(const Matrix& w, const Activations& x, float* y, int64_t ldy, int64_t r0, int64_t r1) {
  if constexpr (T < kDecodeTokens<W>) {
    if (x.n_tokens > T) return decode_upto<W, T + 1>(w, x, y, ldy, r0, r1);
  }
  decode<W, T>(w, x, y, ldy, r0, r1);
}

// Below this many tokens, streaming the weights once per kDecodeTokens beats
// packing them for the GEMM (AVX-512, F16, 2 threads: decode passes were faster
// at 16-24 tokens on 2048x8192, 8192x2048 and 2048x2048, even at 32, and the
// GEMM faster from 48 on the larger two).
constexpr int kGemmMinTokens = 32;

template <class W>
void float_matmul(const Matrix& w, const Activations& x, float* y, int64_t ldy, int64_t r0,
                  int64_t r1) {
  if (x.n_tokens >= kGemmMinTokens) return gemm<W>(w, x, y, ldy, r0, r1);
  constexpr int kChunk = kDecodeTokens<W>;
  for (int t0 = 0; t0 < x.n_tokens; t0 += kChunk) {
    Activations part = x;
    part.f32 = x.f32 + t0 * x.cols;
    part.n_tokens = x.n_tokens - t0 < kChunk ? x.n_tokens - t0 : kChunk;
    decode_upto<W>(w, part, y + t0 * ldy, ldy, r0, r1);
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
