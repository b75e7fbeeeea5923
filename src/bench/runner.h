// The tests of `skiff bench`, as llama-bench defines them: pp<P> (P prompt
// tokens as one batch into an empty cache) and tg<N> (N decode steps of one
// token each, from an empty cache), each timed over repetitions after one
// untimed warm-up; plus the work each does, for the efficiency figures.
#pragma once
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "model/model.h"

namespace skiff::bench {

// What a benchmark table says about a model.
struct ModelFacts {
  std::string filename;        // as given on the command line
  std::string type_name;       // the file's llama.cpp type ("Q4_K_M"), else the weight type holding most parameters
  std::string description;     // llama-bench's model_type, e.g. "llama 134M F16"
  uint64_t size_bytes = 0;     // all weights (a tied head counted once)
  uint64_t n_params = 0;
  uint64_t decode_bytes_per_token = 0;  // ModelWeights::decode_bytes_per_token(config)
  // Most parameters are of quantized types, whose products the active ISA's
  // kernels run on int8 activations: prefill is held against the int8 peak,
  // not the FMA peak (the scalar kernels multiply in floats).
  bool int8_products = false;
};
ModelFacts describe_model(const std::string& filename, const Model& model);

enum class TestKind { kPrompt, kGeneration };

struct TestSpec {
  TestKind kind = TestKind::kPrompt;
  int n_tokens = 0;  // n_prompt for pp, n_gen for tg
  int reps = 5;
  int n_depth = 0;   // tokens already in the KV cache when the test starts (llama-bench -d)
  KvType kv_type = KvType::kF16;
  std::string name() const;  // "pp512", "tg128", "tg128 @ d4096"
};

struct TestResult {
  std::vector<double> samples_ns;  // one per timed repetition
  std::vector<double> samples_ts;  // tokens per second of each
  double avg_ts = 0;
  double stddev_ts = 0;            // sample standard deviation (0 for one repetition)
  double avg_ns = 0;
  double stddev_ns = 0;
  // K/V bytes one decode step reads on average (the cached context at mid-test).
  double kv_bytes_per_step = 0;
};

// Runs the test on the threads omp_set_num_threads() set, with random token
// ids from a fixed seed. A depth is filled once with random K/V (N(0,1), not
// a real prefill: speed does not depend on the values) and every repetition
// starts from it. on_rep(r) is called before repetition r (0 is the warm-up).
// Throws Error when the test does not fit the model's context.
TestResult run_test(Model& model, const TestSpec& test, const std::function<void(int)>& on_rep);

// Floating-point operations of prefilling n_prompt tokens after n_depth cached ones:
//   2 · n_prompt · (parameters of the layer matrices)        the projections and FFN
// + 2 · vocab · dim                                          the output head, last token only
// + 4 · n_layers · q_dim · n_prompt · (n_depth + (n_prompt + 1) / 2)
//                                                            causal attention: Q·Kᵀ and P·V
// Norms, RoPE, softmax and SiLU are left out (under 1% at any useful size).
double prefill_flops(const Model& model, int n_prompt, int n_depth = 0);

}  // namespace skiff::bench
