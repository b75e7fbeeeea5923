// matmul() on every quantized weight type, every ISA this CPU has, against fp64
// references computed here from dequantize_row; and activation quantization.
//
// The integer kernels quantize the activations x to x̂ (8-bit, one scale d per
// 32 elements for kQ8_0, per 256 for kQ8_K, d = max|x| / 127 over the block),
// so each output is compared twice:
//  * with the quantized activations, ref_q = Σ w·x̂: the kernels' int32 sums are
//    exact, leaving float rounding of the scale products and the accumulation
//    over units: |err| ≤ (units + 16) · 2^-23 · Σ |x̂|·m, where m = |w| for the
//    types without a min and |w| + 2·|min| for Q4_1/Q5_1/Q2_K/Q4_K/Q5_K (their
//    d·sc·q and min parts are summed separately in float, each up to |w| + |min|);
//  * with the float activations, ref = Σ w·x: add |Σ w·(x - x̂)| ≤ Σ |w|·d/2,
//    half a quantization step per element (d of that element's block).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

#include "base/error.h"
#include "each_isa.h"
#include "kernels/isa.h"
#include "kernels/matmul/matmul.h"
#include "kernels/matmul/matmul_kernels.h"
#include "kernels/matmul/prefetch_tuner.h"
#include "kernels/matmul/quant_activation_layout.h"
#include "kernels/matmul/repack.h"
#include "kernels/matmul/row_sums.h"
#include "kernels/quant/quant.h"
#include "token_invariance.h"

namespace skiff {
namespace {

constexpr DType kTypes[] = {DType::Q8_0, DType::Q4_0, DType::Q4_1, DType::Q5_0, DType::Q5_1,  DType::IQ4_NL, DType::MXFP4,
                            DType::Q2_K, DType::Q3_K, DType::Q4_K, DType::Q5_K, DType::Q6_K, DType::IQ4_XS};

bool k_quant(DType type) { return dtype_info(type).block_size == 256; }
// quantize_row writes these; the others' problems are random bytes.
bool quantizable(DType type) { return can_quantize(type); }

// Per type, where its fp16 factors (d, dmin / m) lie in a block, and which
// bytes hold its quants and sub-block scales (zeroed, a block with a min
// decodes to its mins alone; {0, 0}: no min).
struct BlockFields {
  DType type;
  int factors[2];  // byte offsets, -1: none
  int quants_begin, quants_end;
};
constexpr BlockFields kFields[] = {
    {DType::Q8_0, {0, -1}, 0, 0},    {DType::Q4_0, {0, -1}, 0, 0},    {DType::Q4_1, {0, 2}, 4, 20},
    {DType::Q5_0, {0, -1}, 0, 0},    {DType::Q5_1, {0, 2}, 4, 24},    {DType::IQ4_NL, {0, -1}, 0, 0},
    {DType::Q2_K, {80, 82}, 16, 80}, {DType::Q3_K, {108, -1}, 0, 0},  {DType::Q4_K, {0, 2}, 16, 144},
    {DType::Q5_K, {0, 2}, 16, 176},  {DType::Q6_K, {208, -1}, 0, 0}, {DType::IQ4_XS, {0, -1}, 0, 0},
    {DType::TQ1_0, {52, -1}, 0, 0},  {DType::TQ2_0, {64, -1}, 0, 0},  {DType::MXFP4, {-1, -1}, 0, 0},
    {DType::IQ2_XXS, {0, -1}, 0, 0}, {DType::IQ2_XS, {0, -1}, 0, 0}, {DType::IQ2_S, {0, -1}, 0, 0},
    {DType::IQ3_XXS, {0, -1}, 0, 0}, {DType::IQ3_S, {0, -1}, 0, 0},  {DType::IQ1_S, {0, -1}, 0, 0},
    {DType::IQ1_M, {-1, -1}, 0, 0},  {DType::NVFP4, {-1, -1}, 0, 0},
};
// What the loader repacks into panels on AVX-512 (besides F16).
constexpr DType kRepackedTypes[] = {DType::Q8_0, DType::Q4_0, DType::Q4_1, DType::Q5_0, DType::Q5_1, DType::IQ4_NL,
                                    DType::MXFP4, DType::Q2_K, DType::Q3_K, DType::Q4_K, DType::Q6_K, DType::IQ4_XS};
// Formats read through the scalar kernel alone.
constexpr DType kReadOnlyTypes[] = {DType::TQ1_0, DType::TQ2_0,   DType::NVFP4, DType::IQ2_XXS, DType::IQ2_XS,
                                    DType::IQ2_S, DType::IQ3_XXS, DType::IQ3_S, DType::IQ1_S, DType::IQ1_M};
const BlockFields& fields(DType type) {
  for (const BlockFields& f : kFields)
    if (f.type == type) return f;
  ADD_FAILURE() << "no BlockFields for " << dtype_info(type).name;
  return kFields[0];
}
ActivationFormat format_for(DType type) { return k_quant(type) ? ActivationFormat::kQ8_K : ActivationFormat::kQ8_0; }
int64_t scale_block(ActivationFormat f) { return f == ActivationFormat::kQ8_K ? 256 : 32; }


// Quantizes a row with quantize_activation_row and reads it back from the
// documented layout: the values d·q, and the scale of each element's block.
struct QuantizedRow {
  std::vector<uint8_t> bytes;
  std::vector<double> value, step;
};

QuantizedRow quantize_activations(ActivationFormat f, const float* x, int64_t cols) {
  QuantizedRow q;
  q.bytes.assign(activation_row_bytes(f, cols), 0xcd);
  quantize_activation_row(f, x, q.bytes.data(), cols);
  const ActLayout l = act_layout(f, cols);
  const auto* qs = reinterpret_cast<const int8_t*>(q.bytes.data());
  const auto* d = reinterpret_cast<const float*>(q.bytes.data() + l.scales);
  for (int64_t k = 0; k < cols; ++k) {
    q.step.push_back(d[k / scale_block(f)]);
    q.value.push_back(double{d[k / scale_block(f)]} * qs[k]);
  }
  return q;
}

// Activations with a wide spread of block magnitudes, zero blocks and outliers.
std::vector<float> random_activations(int64_t n, std::mt19937& rng) {
  std::normal_distribution<float> normal(0.0f, 1.0f);
  std::uniform_int_distribution<int> pick(0, 15);
  std::vector<float> x(n);
  for (int64_t b = 0; b < n; b += 32) {
    const int kind = pick(rng);
    const float scale = kind == 0 ? 0.0f : std::ldexp(1.0f, kind - 8);
    for (int64_t k = b; k < b + 32; ++k) x[k] = scale * normal(rng);
    if (kind == 1) x[b + pick(rng)] = 50.0f;  // an outlier sets its block's step
  }
  return x;
}

struct Problem {
  DType type;
  int64_t rows, cols;
  int n_tokens;
  std::vector<uint8_t> weights;
  std::vector<float> x;
  std::vector<double> want, bound;      // against Σ w·x
  std::vector<double> want_q, bound_q;  // against Σ w·x̂
};

// Weight bytes beyond what quantize_row writes: random bytes in every field
// of a block but its fp16 factors (negative Q6_K scales, q = 0, ...); or every
// quant at its extreme (Q8_0 -128, the largest level of the unsigned types,
// the IQ4, MXFP4 (-12) and Q3_K levels of largest magnitude with their most
// negative scales, Q6_K scales -128) against activations all +1 (quantized to 127),
// the largest sums the integer kernels' int16 and int32 steps must hold.
enum class WeightBytes { kQuantized, kRandom, kExtreme };

uint8_t extreme_byte(DType type) {
  switch (type) {
    case DType::Q8_0: return 0x80;
    case DType::IQ4_NL: case DType::IQ4_XS: case DType::Q3_K: return 0x00;  // level -127 / -4, scale -32
    default: return 0xFF;
  }
}

void rewrite_blocks(DType type, WeightBytes how, uint8_t* row, int64_t cols, std::mt19937& rng) {
  const DTypeInfo& info = dtype_info(type);
  const uint16_t factor = 0x1C00;  // 2^-8 for every fp16 d / dmin / m
  for (int64_t b = 0; b < cols / static_cast<int64_t>(info.block_size); ++b) {
    uint8_t* block = row + info.type_size * b;
    for (size_t i = 0; i < info.type_size; ++i)
      block[i] = how == WeightBytes::kRandom ? static_cast<uint8_t>(rng()) : extreme_byte(type);
    if (type == DType::Q6_K && how == WeightBytes::kExtreme) std::memset(block + 192, 0x80, 16);  // scales -128
    if (type == DType::MXFP4) block[0] = 120;  // its E8M0 scale: 2^-8
    if (type == DType::NVFP4) std::memset(block, 0x08, 4);  // its 4 UE4M3 scales: 2^-7 (halved: 2^-8)
    if (type == DType::IQ1_M)  // its fp16 d in the top nibbles of the 4 scale words at byte 48
      for (int k = 0; k < 4; ++k) block[49 + 2 * k] = static_cast<uint8_t>((block[49 + 2 * k] & 0x0F) | ((factor >> (4 * k)) & 0xF) << 4);
    for (int at : fields(type).factors)
      if (at >= 0) std::memcpy(block + at, &factor, 2);
  }
}

Problem make_problem(DType type, int64_t rows, int64_t cols, int n_tokens, uint32_t seed,
                     WeightBytes how = WeightBytes::kQuantized) {
  Problem p{type, rows, cols, n_tokens, {}, {}, {}, {}, {}, {}};
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  const size_t rb = row_bytes(type, cols);
  std::vector<float> w(cols), wq(rows * cols), mag(rows * cols);
  p.weights.resize(rb * rows);
  for (int64_t r = 0; r < rows; ++r) {
    for (float& v : w) v = dist(rng) + (r % 3 == 0 ? 0.3f : 0.0f);  // some rows off-centre
    uint8_t* row = p.weights.data() + rb * r;
    if (quantizable(type)) quantize_row(type, w.data(), row, cols);
    if (how != WeightBytes::kQuantized || !quantizable(type))
      rewrite_blocks(type, how == WeightBytes::kQuantized ? WeightBytes::kRandom : how, row, cols, rng);
    dequantize_row(type, row, &wq[r * cols], cols);
    for (int64_t k = 0; k < cols; ++k) mag[r * cols + k] = std::fabs(wq[r * cols + k]);
    const BlockFields& f = fields(type);
    if (f.quants_end > 0) {  // with every level 0, the row decodes to its mins
      std::vector<uint8_t> mins_only(row, row + rb);
      const DTypeInfo& info = dtype_info(type);
      for (int64_t b = 0; b < cols / static_cast<int64_t>(info.block_size); ++b)
        std::memset(&mins_only[info.type_size * b + f.quants_begin], 0, f.quants_end - f.quants_begin);
      dequantize_row(type, mins_only.data(), w.data(), cols);
      for (int64_t k = 0; k < cols; ++k) mag[r * cols + k] += 2 * std::fabs(w[k]);
    }
  }
  p.x = how == WeightBytes::kExtreme ? std::vector<float>(n_tokens * cols, 1.0f) : random_activations(n_tokens * cols, rng);
  const double units = static_cast<double>(cols / 32);
  for (int t = 0; t < n_tokens; ++t) {
    const QuantizedRow xq = quantize_activations(format_for(type), &p.x[t * cols], cols);
    for (int64_t r = 0; r < rows; ++r) {
      double sum = 0, sum_q = 0, mag_q = 0, quant_err = 0;
      for (int64_t k = 0; k < cols; ++k) {
        const double wk = wq[r * cols + k];
        sum += wk * p.x[t * cols + k];
        sum_q += wk * xq.value[k];
        mag_q += mag[r * cols + k] * std::fabs(xq.value[k]);
        quant_err += std::fabs(wk) * xq.step[k] * 0.5;
      }
      const double float_err = (units + 16) * std::ldexp(mag_q, -23) + 1e-30;
      p.want.push_back(sum);
      p.bound.push_back(quant_err * (1 + 1e-6) + float_err);
      p.want_q.push_back(sum_q);
      p.bound_q.push_back(float_err);
    }
  }
  return p;
}

// With repacked, the weights go through repack() first (same bounds: the
// panel kernels make the same exact int32 sums and float products).
void check(const Problem& p, bool repacked = false) {
  std::vector<uint8_t> bytes = p.weights;
  Matrix w{p.type, p.rows, p.cols, bytes.data()};
  if (repacked) repack(w, bytes.data());
  std::vector<float> y(p.n_tokens * p.rows, std::numeric_limits<float>::quiet_NaN());
  matmul(w, p.x.data(), p.n_tokens, y.data());
  const bool integer = find_kernel(active_isa(), w).activations != ActivationFormat::kF32;
  for (size_t i = 0; i < y.size(); ++i) {
    const auto where = [&] {
      return ::testing::Message() << isa_name(active_isa()) << " " << dtype_info(p.type).name
                                << (repacked ? " repacked" : "") << " rows "
                                << p.rows << " cols " << p.cols << " tokens " << p.n_tokens << ": y["
                                << i / p.rows << "][" << i % p.rows << "] = " << y[i];
    };
    ASSERT_LE(std::fabs(y[i] - p.want[i]), p.bound[i]) << where() << ", want " << p.want[i];
    if (integer) {
      ASSERT_LE(std::fabs(y[i] - p.want_q[i]), p.bound_q[i]) << where() << ", want (x̂) " << p.want_q[i];
    }
  }
}

// Each problem is built once and run on every ISA the CPU supports.
void check_all_isas(const Problem& p, bool repacked = false) {
  testing::for_each_isa([&](Isa) { check(p, repacked); });
}

TEST(MatmulQuant, OddShapesEveryIsaAndType) {
  uint32_t seed = 1;
  for (DType type : kTypes) {
    const int64_t b = static_cast<int64_t>(dtype_info(type).block_size);
    for (int64_t rows : {1, 7, 33, 100})
      for (int64_t cols : {b, 3 * b, 9 * b, 17 * b})
        for (int n_tokens : {1, 2, 3, 4, 13, 64, 129}) {
          if (rows * cols * n_tokens > 600'000) continue;  // keeps the test to seconds
          check_all_isas(make_problem(type, rows, cols, n_tokens, seed++));
          if (HasFatalFailure()) return;
        }
  }
}

// K-quant blocks as any file may hold them (every scale, min and quant value),
// and every type at its extremes; rows as stored and (Q2_K, Q3_K, Q4_K, Q6_K) repacked, decode
// and prefill token counts.
TEST(MatmulQuant, BlocksBeyondOurQuantizerEveryIsa) {
  uint32_t seed = 900;
  for (WeightBytes how : {WeightBytes::kRandom, WeightBytes::kExtreme})
    for (DType type : kTypes) {
      for (int n_tokens : {1, 2, 4, 5, 17}) {
        check_all_isas(make_problem(type, 48, 512, n_tokens, seed++, how));
        if (can_repack(Matrix{type, 48, 512, nullptr})) check_all_isas(make_problem(type, 48, 512, n_tokens, seed++, how), true);
        if (HasFatalFailure()) return;
      }
    }
}

// Several panels per thread, threads splitting mid-panel, a 1B-shape depth.
TEST(MatmulQuant, ManyRows) {
  for (DType type : kTypes)
    for (int n_tokens : {1, 5, 20}) {
      check_all_isas(make_problem(type, 777, 2048, n_tokens, 99 + n_tokens));
      if (HasFatalFailure()) return;
    }
}

// The types repacked into 16-row panels at load: one panel, an odd
// number of panels (a pair and a single), wide rows; one-pass token counts
// (one and two token blocks; up to 8 and 16) and quad remainders past them.
TEST(MatmulQuant, RepackedEveryIsa) {
  uint32_t seed = 500;
  for (DType type : kRepackedTypes) {
    for (int64_t rows : {16, 48, 160})
      for (int64_t cols : {64, 192, 256, 768})
        for (int n_tokens : {1, 2, 3, 4, 5, 6, 7, 8, 9, 13, 16, 17, 64}) {
          if (rows * cols * n_tokens > 2'000'000 || cols % dtype_info(type).block_size != 0) continue;
          check_all_isas(make_problem(type, rows, cols, n_tokens, seed++), true);
          if (HasFatalFailure()) return;
        }
    check_all_isas(make_problem(type, 2048, 2048, 1, seed++), true);
  }
}

// A repacked row reads back exactly as the GGUF row decodes; what cannot be
// repacked is refused.
TEST(MatmulQuant, RepackedRowsReadBackExactly) {
  for (DType type : kRepackedTypes) {
    const int64_t cols = k_quant(type) ? 768 : 192;
    const Problem p = make_problem(type, 48, cols, 1, 3);
    std::vector<uint8_t> bytes = p.weights;
    Matrix w{type, 48, cols, bytes.data()};
    ASSERT_TRUE(can_repack(w));
    repack(w, bytes.data());
    EXPECT_EQ(w.layout, MatrixLayout::kPanels);
    EXPECT_NE(bytes, p.weights);
    std::vector<float> got(cols), want(cols);
    for (int64_t r = 0; r < 48; ++r) {
      matrix_row(w, r, got.data());
      dequantize_row(type, p.weights.data() + r * row_bytes(type, cols), want.data(), cols);
      ASSERT_EQ(got, want) << dtype_info(type).name << " row " << r;
    }
    EXPECT_FALSE(can_repack(w));  // already panels
  }
  std::vector<uint8_t> bytes(48 * row_bytes(DType::Q6_K, 256));
  for (const Matrix& m : {Matrix{DType::Q8_0, 40, 192, bytes.data()}, Matrix{DType::Q4_0, 48, 96, bytes.data()},
                          Matrix{DType::Q4_K, 40, 256, bytes.data()}, Matrix{DType::Q6_K, 40, 256, bytes.data()},
                          Matrix{DType::Q3_K, 40, 256, bytes.data()}, Matrix{DType::Q2_K, 40, 256, bytes.data()},
                          Matrix{DType::Q5_K, 48, 256, bytes.data()}}) {
    EXPECT_FALSE(can_repack(m));
    Matrix copy = m;
    EXPECT_THROW(repack(copy, bytes.data()), Error);
  }
}

// Batch invariance on the integer panels: a token's outputs are bit-identical
// alone or among n tokens (decode, one-pass counts up to 8 and 16, quads over
// panel pairs, an odd panel), extreme blocks included.
TEST(MatmulQuant, RepackedTokenOutputsDoNotDependOnTheBatch) {
  constexpr int64_t kRows = 80, kCols = 768;
  constexpr int kMaxTokens = 41;
  uint32_t seed = 60;
  for (DType type : kRepackedTypes)
    for (WeightBytes how : {WeightBytes::kQuantized, WeightBytes::kRandom}) {
      const Problem p = make_problem(type, kRows, kCols, kMaxTokens, seed++, how);
      std::vector<uint8_t> bytes = p.weights;
      Matrix w{type, kRows, kCols, bytes.data()};
      repack(w, bytes.data());
      testing::expect_token_outputs_batch_invariant(w, p.x.data(), {2, 3, 4, 5, 8, 9, 16, 17, kMaxTokens});
      if (HasFatalFailure()) return;
    }
}

// Decode reads the panels at the prefetch level its PrefetchTuner picks per
// call; where it fetches ahead (up to past the matrix's end) never changes a
// bit. kPrefetchLevels · kExplore calls of one matrix cover every level: each
// tried first, or (if an earlier matrix left its tuner entry at this address)
// in the explorations.
TEST(MatmulQuant, RepackedDecodeIsTheSameAtEveryPrefetchLevel) {
  constexpr int kCalls = kPrefetchLevels * static_cast<int>(PrefetchTuner::kExplore);
  uint32_t seed = 80;
  testing::for_each_isa([&](Isa isa) {
    for (DType type : kRepackedTypes) {
      const Problem p = make_problem(type, 160, 768, 1, seed++);
      std::vector<uint8_t> bytes = p.weights;
      Matrix w{type, 160, 768, bytes.data()};
      repack(w, bytes.data());
      std::vector<float> first(160), y(160);
      matmul(w, p.x.data(), 1, first.data());
      for (int c = 1; c < kCalls; ++c) {
        matmul(w, p.x.data(), 1, y.data());
        ASSERT_EQ(y, first) << isa_name(isa) << " " << dtype_info(type).name << " call " << c;
      }
    }
  });
}

// Formats read through the scalar kernel alone (dequantize_row, then a float
// dot) on every ISA: random block bytes, decode and prefill token counts.
TEST(MatmulQuant, ReadOnlyFormatsRunThroughTheScalarKernel) {
  uint32_t seed = 700;
  for (DType type : kReadOnlyTypes) {
    for (Isa isa : testing::supported_isas())
      EXPECT_EQ(find_kernel(isa, type).fn, matmul_kernel_scalar(type).fn) << dtype_info(type).name;
    for (int n_tokens : {1, 3, 17}) {
      check_all_isas(make_problem(type, 33, 512, n_tokens, seed++, WeightBytes::kRandom));
      if (HasFatalFailure()) return;
    }
  }
}

TEST(MatmulQuant, SimdKernelsAreDispatched) {
  for (Isa isa : testing::supported_isas({Isa::kAvx2, Isa::kAvx512}))
    for (DType type : kTypes) {
      const KernelEntry k = find_kernel(isa, type);
      EXPECT_NE(k.fn, matmul_kernel_scalar(type).fn) << isa_name(isa) << " " << dtype_info(type).name;
      EXPECT_EQ(k.activations, format_for(type)) << isa_name(isa) << " " << dtype_info(type).name;
    }
  // Repacked matrices: the AVX-512 panel kernels there, AVX2's for the integer types, the scalar
  // one elsewhere; the loader repacks for an ISA only what it has kernels for.
  const bool avx512 = isa_supported(Isa::kAvx512);  // its selectors may run AVX-512 code
  for (DType type : {DType::Q8_0, DType::Q4_0, DType::Q4_1, DType::Q5_0, DType::Q5_1, DType::IQ4_NL, DType::MXFP4,
                     DType::Q2_K, DType::Q3_K, DType::Q4_K, DType::Q6_K, DType::IQ4_XS, DType::F16}) {
    const Matrix panels{type, 16, 256, nullptr, MatrixLayout::kPanels};
    if (avx512) {
      const KernelEntry want = table_kernel(matmul_table_avx512(), type, MatrixLayout::kPanels);
      ASSERT_NE(want.fn, nullptr) << dtype_info(type).name;
      EXPECT_EQ(find_kernel(Isa::kAvx512, panels).fn, want.fn) << dtype_info(type).name;
      EXPECT_NE(find_kernel(Isa::kAvx512, panels).fn, find_kernel(Isa::kAvx512, type).fn) << dtype_info(type).name;
      EXPECT_TRUE(panel_kernel_for(Isa::kAvx512, type));
    }
    const KernelEntry avx2 = table_kernel(matmul_table_avx2(), type, MatrixLayout::kPanels);
    EXPECT_EQ(find_kernel(Isa::kAvx2, panels).fn, avx2.fn ? avx2.fn : matmul_kernel_scalar(type).fn) << dtype_info(type).name;
    EXPECT_EQ(panel_kernel_for(Isa::kAvx2, type), type != DType::F16) << dtype_info(type).name;
    EXPECT_FALSE(panel_kernel_for(Isa::kScalar, type));
    EXPECT_EQ(find_kernel(Isa::kScalar, panels).fn, matmul_kernel_scalar(type).fn) << dtype_info(type).name;
  }
}

// Each element within half a step of its block's scale, |q| ≤ 127, the sums
// as documented, and the padding zero.
TEST(MatmulQuant, ActivationQuantizationRoundTrip) {
  std::mt19937 rng(7);
  for (ActivationFormat f : {ActivationFormat::kQ8_0, ActivationFormat::kQ8_K})
    for (int64_t cols : {256, 768, 2304}) {
      const std::vector<float> x = random_activations(cols, rng);
      const QuantizedRow q = quantize_activations(f, x.data(), cols);
      const ActLayout l = act_layout(f, cols);
      ASSERT_EQ(q.bytes.size(), static_cast<size_t>(l.bytes));
      const auto* qs = reinterpret_cast<const int8_t*>(q.bytes.data());
      for (int64_t k = 0; k < cols; ++k) {
        ASSERT_LE(std::fabs(x[k] - q.value[k]), q.step[k] * 0.5 * (1 + 1e-6)) << "element " << k;
        ASSERT_GE(qs[k], -127);
      }
      for (int64_t b = 0; b < cols / 32; ++b) {
        int32_t s = 0;
        for (int k = 0; k < 32; ++k) s += qs[32 * b + k];
        if (f == ActivationFormat::kQ8_0) {
          ASSERT_EQ(reinterpret_cast<const int32_t*>(q.bytes.data() + l.sums)[b], s) << "block " << b;
        } else {
          const double dsum = reinterpret_cast<const float*>(q.bytes.data() + l.sums)[b];
          ASSERT_NEAR(dsum, q.step[32 * b] * s, 1e-6 * std::fabs(q.step[32 * b] * s)) << "block " << b;
        }
      }
      const int64_t n_scales = cols / scale_block(f);
      for (int64_t i = cols; i < l.scales; ++i) ASSERT_EQ(q.bytes[i], 0) << "padding byte " << i;
      for (int64_t i = l.scales + 4 * n_scales; i < l.sums; ++i) ASSERT_EQ(q.bytes[i], 0) << "padding byte " << i;
      for (int64_t i = l.sums + 4 * (cols / 32); i < l.sums16; ++i) ASSERT_EQ(q.bytes[i], 0) << "padding byte " << i;
      if (f == ActivationFormat::kQ8_K) {
        for (int64_t b = 0; b < cols / 16; ++b) {
          int32_t s = 0;
          for (int k = 0; k < 16; ++k) s += qs[16 * b + k];
          const double dsum16 = reinterpret_cast<const float*>(q.bytes.data() + l.sums16)[b];
          ASSERT_EQ(dsum16, static_cast<float>(q.step[16 * b]) * static_cast<float>(s)) << "16-block " << b;
          ASSERT_EQ(reinterpret_cast<const int16_t*>(q.bytes.data() + l.qsums16)[b], s) << "16-block " << b;
        }
        for (int64_t i = l.sums16 + 4 * (cols / 16); i < l.qsums16; ++i) ASSERT_EQ(q.bytes[i], 0) << "padding byte " << i;
        for (int64_t i = l.qsums16 + 2 * (cols / 16); i < l.bytes; ++i) ASSERT_EQ(q.bytes[i], 0) << "padding byte " << i;
      } else {
        ASSERT_EQ(l.sums16, l.bytes);
        ASSERT_EQ(l.qsums16, l.bytes);
      }
    }
}

// sum16_int8 (psadbw) against a plain sum: the extremes and random bytes.
TEST(MatmulQuant, SumOf16Int8IsThePlainSum) {
  std::mt19937 rng(3);
  std::vector<std::vector<int8_t>> cases = {std::vector<int8_t>(16, 127), std::vector<int8_t>(16, -127),
                                            std::vector<int8_t>(16, -128), std::vector<int8_t>(16, 0)};
  for (int c = 0; c < 200; ++c) {
    std::vector<int8_t> q(16);
    for (int8_t& v : q) v = static_cast<int8_t>(static_cast<int>(rng() % 256) - 128);
    cases.push_back(q);
  }
  for (const std::vector<int8_t>& q : cases) {
    int32_t want = 0;
    for (int8_t v : q) want += v;
    ASSERT_EQ(sum16_int8(q.data()), want);
  }
}

TEST(MatmulQuant, ActivationRowsMustBeWholeBlocks) {
  EXPECT_ANY_THROW(activation_row_bytes(ActivationFormat::kQ8_0, 33));
  EXPECT_ANY_THROW(activation_row_bytes(ActivationFormat::kQ8_K, 288));
}

}  // namespace
}  // namespace skiff
