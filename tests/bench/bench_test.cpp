// The measurements behind skiff bench: the machine probes return sane
// figures on every ISA path, tests run the repetitions they are asked for,
// and the work formulas add up for a known model.
#include <gtest/gtest.h>

#include "base/error.h"
#include "bench/machine.h"
#include "bench/runner.h"
#include "each_isa.h"
#include "kernels/isa.h"
#include "model/loader.h"

namespace skiff::bench {
namespace {

const std::string kModel = std::string(SKIFF_MODELS_DIR) + "/derived/stories260K-f32.gguf";

TEST(BenchMachine, TriadIsPositive) {
  EXPECT_GT(measure_triad_gbs(size_t{8} << 20, 2, 2), 0.0);
}

TEST(BenchMachine, BandwidthProbeMeasuresBothWaysAgain) {
  BandwidthProbe probe(size_t{8} << 20, 2);
  for (int i = 0; i < 2; ++i) {
    const Bandwidth b = probe.measure(2);
    EXPECT_GT(b.triad_gbs, 0.0);
    EXPECT_GT(b.read_gbs, 0.0);
    EXPECT_LT(b.read_gbs, 1e5);  // finite: a pass that read nothing would not take its time
  }
}

TEST(BenchMachine, FmaPeakOnEverySupportedIsa) {
  double scalar_peak = 0;
  skiff::testing::for_each_isa([&](Isa isa) {
    const double peak = measure_peak_gflops(1, 1);
    EXPECT_GT(peak, 0.0) << isa_name(isa);
    if (isa == Isa::kScalar) scalar_peak = peak;
  });
  EXPECT_GT(scalar_peak, 0.0);
}

TEST(BenchMachine, Int8PeakOnEverySupportedIsa) {
  skiff::testing::for_each_isa([&](Isa isa) { EXPECT_GT(measure_int8_peak_gops(1, 1), 0.0) << isa_name(isa); });
}

TEST(BenchMachine, DescribesTheCpu) {
  const MachineInfo m = describe_cpu();
  EXPECT_FALSE(m.cpu_model.empty());
  EXPECT_GE(m.n_threads, m.n_cores);
  EXPECT_GE(m.n_cores, 1);
  EXPECT_EQ(m.isa, isa_name(active_isa()));
}

TEST(BenchRunner, ModelFactsAddUp) {
  auto model = load_model(kModel);
  const ModelFacts f = describe_model(kModel, *model);
  const ModelConfig& c = model->config();
  // Embedding, the head unless tied; per layer q, k, v, o, gate, up, down and two norms.
  const uint64_t embedding = uint64_t(c.vocab_size) * c.dim;
  const uint64_t per_layer = 2ull * c.dim * c.q_dim() + 2ull * c.dim * c.kv_dim() +
                             3ull * c.dim * c.ffn_dim + 2ull * c.dim;
  EXPECT_EQ(f.n_params, embedding * (c.tied_output ? 1 : 2) + c.n_layers * per_layer + c.dim);
  EXPECT_EQ(f.size_bytes, 4 * f.n_params);  // all F32
  EXPECT_EQ(f.type_name, "F32");
  EXPECT_EQ(f.decode_bytes_per_token, model->weights().decode_bytes_per_token(model->config()));
}

TEST(BenchRunner, PrefillFlopsFormula) {
  auto model = load_model(kModel);
  const ModelConfig& c = model->config();
  const double matmul_params = c.n_layers * (2.0 * c.dim * c.q_dim() + 2.0 * c.dim * c.kv_dim() +
                                             3.0 * c.dim * c.ffn_dim);
  const int p = 10;
  const double attention = 4.0 * c.n_layers * c.q_dim() * (p * (p + 1) / 2);
  EXPECT_DOUBLE_EQ(prefill_flops(*model, p),
                   2.0 * p * matmul_params + 2.0 * c.vocab_size * c.dim + attention);
}

TEST(BenchRunner, RunsTheAskedRepetitions) {
  auto model = load_model(kModel);
  for (TestKind kind : {TestKind::kPrompt, TestKind::kGeneration}) {
    const TestSpec test{kind, 5, 3};
    int calls = 0;
    const TestResult r = run_test(*model, test, [&](int rep) { EXPECT_EQ(rep, calls++); });
    EXPECT_EQ(calls, 4);  // warm-up + 3
    ASSERT_EQ(r.samples_ns.size(), 3u);
    ASSERT_EQ(r.samples_ts.size(), 3u);
    for (size_t i = 0; i < 3; ++i) EXPECT_DOUBLE_EQ(r.samples_ts[i], 5 * 1e9 / r.samples_ns[i]);
    EXPECT_GT(r.avg_ts, 0);
  }
  EXPECT_EQ((TestSpec{TestKind::kPrompt, 512, 1}.name()), "pp512");
  EXPECT_EQ((TestSpec{TestKind::kGeneration, 128, 1}.name()), "tg128");
}

TEST(BenchRunner, TestLongerThanTheContextIsAnError) {
  auto model = load_model(kModel);
  const TestSpec test{TestKind::kPrompt, model->config().max_ctx + 1, 1};
  EXPECT_THROW(run_test(*model, test, [](int) {}), Error);
}

}  // namespace
}  // namespace skiff::bench
