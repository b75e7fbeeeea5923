// Batch invariance: a request's tokens and logprobs are bit-identical alone,
// in a batch, with prefill chunks of 16, 64 or 512 tokens, from a warm prefix
// cache and when a small KV pool preempts and recomputes it, on random-weight
// models of the types the loader repacks into panels (AVX-512: the float and
// integer types; AVX2: the integer types), whose kernels give a token
// the same sums in any batch (attention cuts every context at the same
// ranges). Contexts pass 512 positions, so decoding alone splits them over
// threads. The row kernels (AVX2's other types, and weights as stored with
// --mmap) sum in another order for many tokens unless the
// kernels' batch-invariant mode is on (tested here on mapped weights, on
// every ISA the CPU has).
#include <gtest/gtest.h>

#include <random>
#include <string>
#include <vector>

#include "engine/engine.h"
#include "kernels/isa.h"
#include "kernels/matmul/matmul.h"
#include "kernels/matmul/repack.h"
#include "model/loader.h"
#include "model/random_model.h"
#include "tokenizer/tokenizer.h"

namespace skiff {
namespace {

struct Outputs {
  std::vector<std::vector<int32_t>> tokens;
  std::vector<std::vector<float>> logprobs;
  bool operator==(const Outputs&) const = default;
};

std::vector<std::vector<int32_t>> prompts(int vocab) {
  std::mt19937 rng(5);
  std::uniform_int_distribution<int32_t> id(3, vocab - 1);
  std::vector<std::vector<int32_t>> out;
  for (int i = 0; i < 6; ++i) {
    std::vector<int32_t> p(40 + 110 * i);  // the longest at 590 positions
    for (int32_t& t : p) t = id(rng);
    if (i == 5) std::copy(out[4].begin(), out[4].end(), p.begin());  // a shared prefix of 480
    out.push_back(p);
  }
  return out;
}

std::vector<SamplingParams> params() {
  std::vector<SamplingParams> out;
  for (int i = 0; i < 6; ++i) {
    SamplingParams p;
    p.max_tokens = 12;
    p.ignore_eos = true;
    p.logprobs = 0;
    if (i % 2) {
      p.temperature = 0.9f;
      p.seed = 100 + i;
    } else {
      p.temperature = 0;
    }
    out.push_back(p);
  }
  return out;
}

// Runs the requests in order; alone: one at a time.
Outputs run(Model& model, const Tokenizer& tok, EngineOptions o, bool alone, int repeats = 1,
            int64_t* preemptions = nullptr) {
  Engine engine(model, tok, o);
  const auto ps = prompts(model.config().vocab_size);
  const auto sp = params();
  Outputs r;
  for (int rep = 0; rep < repeats; ++rep) {
    std::vector<RequestId> ids;
    std::vector<RequestOutput> outs;
    for (size_t i = 0; i < ps.size(); ++i) {
      ids.push_back(engine.add_request(ps[i], sp[i]));
      if (alone)
        for (RequestOutput& out : engine.run_to_completion()) outs.push_back(std::move(out));
    }
    for (RequestOutput& out : engine.run_to_completion()) outs.push_back(std::move(out));
    r = Outputs{};
    for (RequestId id : ids)
      for (const RequestOutput& out : outs)
        if (out.request_id == id) {
          r.tokens.push_back(out.outputs[0].token_ids);
          std::vector<float> lp;
          for (const TokenLogprob& t : out.outputs[0].logprobs) lp.push_back(t.logprob);
          r.logprobs.push_back(lp);
        }
  }
  if (preemptions) *preemptions = engine.metrics().preemptions;
  return r;
}

// Every check on a random model of `type` (a mixture of experts in every
// layer with `experts`): read into memory (repacked into panels on AVX-512)
// or, with batch_invariant_mode, mapped (rows as stored).
void check_invariance(DType type, bool batch_invariant_mode, bool experts = false) {
  RandomModelSpec spec;
  spec.n_layers = 2;
  spec.dim = 256;  // K-quant rows are whole super-blocks of 256
  spec.n_heads = 4;
  spec.n_kv_heads = 2;
  spec.ffn_dim = 512;
  spec.vocab_path = std::string(SKIFF_MODELS_DIR) + "/gguf/llama-2-tiny-random.gguf";
  spec.file_type = type;
  spec.context_length = 1024;
  if (experts) {  // a token's experts and their sums must not depend on who else is in the pass
    spec.arch = "qwen3moe";
    spec.n_experts = 8;
    spec.n_experts_used = 2;
    spec.expert_ffn_dim = 256;
  }
  const std::string path = ::testing::TempDir() + "/invariance-" + spec.arch + std::string(dtype_info(type).name) + ".gguf";
  write_random_model(spec, path);
  auto model = load_model(path, LoadOptions{batch_invariant_mode ? FileLoad::kMmap : FileLoad::kCopy});
  const auto tok = Tokenizer::from_path(path);

  EngineOptions base;
  base.batch_invariant = batch_invariant_mode;
  base.kv_type = KvType::kF32;
  base.scheduler.prefix_caching = false;
  base.scheduler.max_seqs = 8;
  const Outputs alone = run(*model, *tok, base, true);
  ASSERT_EQ(alone.tokens.size(), 6u);
  EXPECT_EQ(run(*model, *tok, base, false), alone) << "in one batch";
  for (int chunk : {16, 64, 512}) {
    EngineOptions o = base;
    o.scheduler.max_batch_tokens = chunk;
    EXPECT_EQ(run(*model, *tok, o, false), alone) << "prefill chunks of " << chunk;
  }
  EngineOptions cached = base;
  cached.scheduler.prefix_caching = true;
  EXPECT_EQ(run(*model, *tok, cached, false, 2), alone) << "from a warm prefix cache";
  // Room for the longest request and a little more: the others are preempted
  // and recomputed, their K/V then from prefill chunks where it came from decode steps.
  EngineOptions small = base;
  const ModelConfig& c = model->config();
  small.max_model_len = 640;
  small.scheduler.max_batch_tokens = 64;  // prompts admitted a chunk at a time outgrow the pool
  small.kv_mem_bytes = size_t{800} * c.n_layers * c.kv_dim() * 2 * sizeof(float);
  int64_t preemptions = 0;
  EXPECT_EQ(run(*model, *tok, small, false, 1, &preemptions), alone) << "preempted";
  EXPECT_GT(preemptions, 0) << "the small pool must force preemptions";
}

class BatchInvariance : public ::testing::TestWithParam<DType> {};

TEST_P(BatchInvariance, OutputsAreBitIdenticalInEveryBatchChunkingAndFromTheCache) {
  if (!panel_kernel_for(active_isa(), GetParam()))
    GTEST_SKIP() << "no panels of this type here; the row kernels need --batch-invariant";
  check_invariance(GetParam(), false);
}

// Weights as stored (--mmap: rows) in batch-invariant mode, on every ISA the
// CPU has (attention and the scalar kernels are invariant by themselves).
TEST_P(BatchInvariance, RowsAreBitIdenticalInBatchInvariantModeOnEveryIsa) {
  const DType type = GetParam();  // one float, one block-of-32 and one K-quant type keep CI short
  if (type != DType::F16 && type != DType::Q8_0 && type != DType::Q4_K) GTEST_SKIP() << "covered by the kernel test";
  const Isa best = active_isa();
  struct Restore {  // also when a check fails
    Isa isa;
    ~Restore() {
      set_batch_invariant(false);
      set_active_isa(isa);
    }
  } restore{best};
  for (const Isa isa : {Isa::kScalar, Isa::kAvx2, Isa::kAvx512}) {
    if (!isa_supported(isa)) continue;
    SCOPED_TRACE(isa_name(isa));
    set_active_isa(isa);
    check_invariance(type, true);
  }
}

// Mixtures of experts: each expert's rows of a pass go through one product
// whose token count is whatever the routing gave it.
TEST(BatchInvarianceExperts, OutputsAreBitIdentical) {
  for (DType type : {DType::Q8_0, DType::Q4_K}) {
    SCOPED_TRACE(dtype_info(type).name);
    if (panel_kernel_for(active_isa(), type)) check_invariance(type, false, true);
    struct Restore {
      ~Restore() { set_batch_invariant(false); }
    } restore;
    check_invariance(type, true, true);
  }
}

INSTANTIATE_TEST_SUITE_P(PanelTypes, BatchInvariance,
                         ::testing::Values(DType::F32, DType::F16, DType::BF16, DType::Q8_0, DType::Q4_0,
                                           DType::Q4_1, DType::Q5_0, DType::Q5_1, DType::IQ4_NL, DType::Q2_K,
                                           DType::Q3_K, DType::Q4_K, DType::Q6_K, DType::IQ4_XS),
                         [](const ::testing::TestParamInfo<DType>& info) { return std::string(dtype_info(info.param).name); });

}  // namespace
}  // namespace skiff
