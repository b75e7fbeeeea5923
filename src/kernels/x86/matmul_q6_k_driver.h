// The part of the Q6_K kernels that is the same on every ISA: each token's
// offsets made once per call, rows in chunks kept in cache, tokens in groups
// sharing each unpacked block. Included by matmul_q6_k_rows_{avx2,avx512}.cpp
// inside their anonymous namespace (so each copy is compiled for its ISA and
// stays local to its file), after they define OffsetVec, kColsPerOffset,
// prepare_offsets and rows_times_group<NT>.

constexpr int kGroup = 4;          // tokens sharing one unpacked block
constexpr int64_t kRowChunk = 16;  // rows whose blocks stay in cache across token groups

void q6_k_matmul(const Matrix& w, const Activations& x, float* y, int64_t ldy, int64_t r0, int64_t r1) {
  const ActLayout l = act_layout(ActivationFormat::kQ8_K, w.cols);
  // One spare vector per token: rows a multiple of 4 KiB apart would share L1 sets.
  const int64_t stride = w.cols / kColsPerOffset + 1;
  auto* offsets = static_cast<OffsetVec*>(kernel_scratch(sizeof(OffsetVec) * stride * x.n_tokens));
  for (int t = 0; t < x.n_tokens; ++t) prepare_offsets(act_row(x, l, t), w.cols, offsets + stride * t);
  for (int64_t rc = r0; rc < r1; rc += kRowChunk) {
    const int64_t rc_end = r1 - rc < kRowChunk ? r1 : rc + kRowChunk;
    for (int t0 = 0; t0 < x.n_tokens; t0 += kGroup) {
      ActRow act[kGroup];
      const OffsetVec* offs[kGroup];
      const int nt = x.n_tokens - t0 < kGroup ? x.n_tokens - t0 : kGroup;
      for (int t = 0; t < nt; ++t) {
        act[t] = act_row(x, l, t0 + t);
        offs[t] = offsets + stride * (t0 + t);
      }
      float* yt = y + t0 * ldy;
      switch (nt) {
        case 1: rows_times_group<1>(w, act, offs, yt, ldy, rc, rc_end); break;
        case 2: rows_times_group<2>(w, act, offs, yt, ldy, rc, rc_end); break;
        case 3: rows_times_group<3>(w, act, offs, yt, ldy, rc, rc_end); break;
        default: rows_times_group<kGroup>(w, act, offs, yt, ldy, rc, rc_end); break;
      }
    }
  }
  static_assert(kGroup == 4, "the switch covers 1..kGroup");
}
