// Speculative decoding in the engine, on stories260K: greedy output with any
// drafter and any k equals the target's alone, token for token, also inside a
// mixed batch and where stops fall inside an accepted run; sampling keeps
// plain sampling's distribution (a chi-square test that a wrong acceptance
// rule fails).
#include <gtest/gtest.h>

#include <omp.h>

#include <algorithm>
#include <cmath>
#include <map>

#include "base/error.h"
#include "engine/draft_model_proposer.h"
#include "engine/engine.h"
#include "engine/ngram_proposer.h"
#include "engine/suffix_proposer.h"
#include "model/loader.h"
#include "stories_model.h"

namespace skiff {
namespace {

const std::string kModels = std::string(SKIFF_MODELS_DIR) + "/derived/";

class SpeculativeTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    target_ = load_model(kModels + "stories260K-f32.gguf").release();
    perfect_draft_ = load_model(kModels + "stories260K-f32.gguf").release();
    salty_draft_ = load_model(kModels + "tinystories260K-saltyduckegg-f32.gguf").release();
    tokenizer_ = Tokenizer::from_path(kModels + "stories260K-f32.gguf").release();
  }
  static void TearDownTestSuite() {
    delete target_;
    delete perfect_draft_;
    delete salty_draft_;
    delete tokenizer_;
  }

  static EngineOptions options(SpecMethod method, Model* draft, int k) {
    EngineOptions o;
    o.kv_type = KvType::kF32;
    o.speculation.method = method;
    o.speculation.draft = draft;
    o.speculation.k = k;
    o.speculation.step_tokens = 0;  // drafts in batches of any size (the step limit: DraftLength tests)
    return o;
  }
  static std::vector<int32_t> encode(const std::string& text) { return tokenizer_->encode(text, true, false); }
  static std::vector<RequestOutput> run(EngineOptions o, const std::vector<std::vector<int32_t>>& prompts,
                                        const std::vector<SamplingParams>& params,
                                        EngineMetrics* metrics = nullptr) {
    Engine engine(*target_, *tokenizer_, o);
    std::map<RequestId, size_t> index;
    for (size_t i = 0; i < prompts.size(); ++i) index[engine.add_request(prompts[i], params[i])] = i;
    std::vector<RequestOutput> outs(prompts.size());
    for (RequestOutput& out : engine.run_to_completion()) outs[index.at(out.request_id)] = std::move(out);
    EXPECT_EQ(engine.kv_cache().pool().n_used(), 0);
    if (metrics) *metrics = engine.metrics();
    return outs;
  }

  static Model* target_;
  static Model* perfect_draft_;
  static Model* salty_draft_;
  static Tokenizer* tokenizer_;
};
Model* SpeculativeTest::target_ = nullptr;
Model* SpeculativeTest::perfect_draft_ = nullptr;
Model* SpeculativeTest::salty_draft_ = nullptr;
Tokenizer* SpeculativeTest::tokenizer_ = nullptr;

using testing::greedy;

const std::vector<std::string> kTexts = {"Once upon a time", "Tom and his dog went to the",
                                         "One day, a little bird", "Lily", "The sun was"};

void expect_same_outputs(const std::vector<RequestOutput>& a, const std::vector<RequestOutput>& b,
                         const std::string& what) {
  ASSERT_EQ(a.size(), b.size());
  for (size_t i = 0; i < a.size(); ++i) {
    ASSERT_EQ(a[i].outputs.size(), b[i].outputs.size());
    for (size_t c = 0; c < a[i].outputs.size(); ++c) {
      const CompletionOutput &x = a[i].outputs[c], &y = b[i].outputs[c];
      EXPECT_EQ(x.token_ids, y.token_ids) << what << ", request " << i;
      EXPECT_EQ(x.text, y.text) << what << ", request " << i;
      EXPECT_EQ(x.finish_reason, y.finish_reason) << what << ", request " << i;
      EXPECT_EQ(x.stop_reason, y.stop_reason) << what << ", request " << i;
    }
  }
}

TEST_F(SpeculativeTest, GreedyOutputEqualsTheTargetsForEveryDrafterAndK) {
  std::vector<std::vector<int32_t>> prompts;
  for (const std::string& t : kTexts) prompts.push_back(encode(t));
  const std::vector<SamplingParams> params(prompts.size(), greedy(120));
  const std::vector<RequestOutput> plain = run(options(SpecMethod::kNone, nullptr, 4), prompts, params);
  for (int k : {1, 2, 4, 8}) {
    EngineMetrics m;
    expect_same_outputs(run(options(SpecMethod::kDraft, perfect_draft_, k), prompts, params, &m), plain,
                        "perfect draft k " + std::to_string(k));
    EXPECT_EQ(m.spec_accepted_tokens, m.spec_drafted_tokens) << "a perfect draft is always accepted";
    EXPECT_GT(m.spec_mean_accepted_length(), 0.9 * k - 1);
    expect_same_outputs(run(options(SpecMethod::kDraft, salty_draft_, k), prompts, params, &m), plain,
                        "saltyduckegg draft k " + std::to_string(k));
    EXPECT_GT(m.spec_acceptance_rate(), 0.2);
    EXPECT_LT(m.spec_acceptance_rate(), 1.0);
    expect_same_outputs(run(options(SpecMethod::kNgram, nullptr, k), prompts, params, &m), plain,
                        "ngram k " + std::to_string(k));
    EXPECT_GT(m.spec_verifications, 0);
    expect_same_outputs(run(options(SpecMethod::kSuffix, nullptr, k), prompts, params, &m), plain,
                        "suffix k " + std::to_string(k));
    EXPECT_GT(m.spec_accepted_tokens, 0);
  }
}

// Suffix decoding's shared cache: a prompt asked again is drafted from the
// first answer, nearly all accepted, with the same output.
TEST_F(SpeculativeTest, SuffixDecodingDraftsFromEarlierOutputs) {
  const std::vector<int32_t> prompt = encode("One day, a little bird");
  const RequestOutput plain = run(options(SpecMethod::kNone, nullptr, 8), {prompt}, {greedy(100)})[0];
  Engine engine(*target_, *tokenizer_, options(SpecMethod::kSuffix, nullptr, 8));
  engine.add_request(prompt, greedy(100));
  expect_same_outputs(engine.run_to_completion(), {plain}, "first");
  const EngineMetrics first = engine.metrics();
  engine.add_request(prompt, greedy(100));
  expect_same_outputs(engine.run_to_completion(), {plain}, "again");
  const EngineMetrics both = engine.metrics();
  const int64_t drafted = both.spec_drafted_tokens - first.spec_drafted_tokens;
  const int64_t accepted = both.spec_accepted_tokens - first.spec_accepted_tokens;
  EXPECT_GT(drafted, 80);
  EXPECT_GT(accepted, 0.9 * drafted);
  EXPECT_LT(both.steps - first.steps, 30);  // 100 plainly
}

// Stops inside an accepted run of a perfect draft (k 8 accepts 8 at a time):
// max_tokens, a stop token, a stop string and EOS end the completion exactly
// where plain decoding does.
TEST_F(SpeculativeTest, StopsInsideAnAcceptedRunEndWherePlainDecodingEnds) {
  const std::vector<int32_t> prompt = encode("Once upon a time");
  const RequestOutput long_plain = run(options(SpecMethod::kNone, nullptr, 8), {prompt}, {greedy(200)})[0];
  const std::vector<int32_t>& ids = long_plain.outputs[0].token_ids;
  ASSERT_GT(ids.size(), 40u);
  std::vector<std::vector<int32_t>> prompts;
  std::vector<SamplingParams> params;
  for (int n = 1; n <= 19; ++n) {
    prompts.push_back(prompt);
    params.push_back(greedy(n));  // max_tokens
    prompts.push_back(prompt);
    params.push_back(greedy(200));
    params.back().stop_token_ids = {ids[n]};
    prompts.push_back(prompt);
    params.push_back(greedy(200));
    params.back().stop = {tokenizer_->token_to_piece(ids[n + 10])};
  }
  prompts.push_back(prompt);
  params.push_back(greedy(400));  // to EOS or the context
  const auto plain = run(options(SpecMethod::kNone, nullptr, 8), prompts, params);
  expect_same_outputs(run(options(SpecMethod::kDraft, perfect_draft_, 8), prompts, params), plain, "k 8");
}

// 16 requests at once, some speculating (greedy and sampled), some not: the
// greedy ones and the ones that do not speculate output exactly what they
// output on a plain engine.
TEST_F(SpeculativeTest, MixedBatchOfSixteen) {
  std::vector<std::vector<int32_t>> prompts;
  std::vector<SamplingParams> params;
  std::vector<bool> comparable;
  for (int i = 0; i < 16; ++i) {
    prompts.push_back(encode(kTexts[i % kTexts.size()]));
    SamplingParams p = greedy(20 + (i * 13) % 60);
    if (i % 4 == 1) p.speculative_tokens = 0;
    if (i % 4 == 2) p.speculative_tokens = 2;
    if (i % 3 == 0) {  // sampled
      p.temperature = 0.8f;
      p.top_p = 0.9f;
      p.seed = 40 + i;
    }
    if (i % 5 == 0) p.repetition_penalty = 1.2f;
    if (i == 7) p.n = 2;
    if (i == 9) p.stop = {"park"};
    comparable.push_back(p.is_greedy() || p.speculative_tokens == 0);
    params.push_back(p);
  }
  const auto plain = run(options(SpecMethod::kNone, nullptr, 4), prompts, params);
  for (EngineOptions spec : {options(SpecMethod::kDraft, salty_draft_, 4), options(SpecMethod::kSuffix, nullptr, 4)}) {
    const char* method = spec_method_name(spec.speculation.method);
    spec.scheduler.max_batch_tokens = 64;  // prefill chunks share steps with verifications
    EngineMetrics m;
    const auto together = run(spec, prompts, params, &m);
    EXPECT_GT(m.spec_verifications, 0) << method;
    for (size_t i = 0; i < prompts.size(); ++i) {
      if (!comparable[i]) {
        EXPECT_FALSE(together[i].outputs[0].token_ids.empty());
        continue;
      }
      expect_same_outputs({together[i]}, {plain[i]}, std::string(method) + ", request " + std::to_string(i));
    }
  }
}

// Preempted sequences come back to a trie built again and are cached once,
// when they finish: the same greedy output, and the shared cache holds each
// output once.
TEST_F(SpeculativeTest, SuffixDecodingUnderPreemption) {
  std::vector<std::vector<int32_t>> prompts;
  for (int i = 0; i < 8; ++i) prompts.push_back(encode(kTexts[i % kTexts.size()]));
  const std::vector<SamplingParams> params(prompts.size(), greedy(60));
  EngineOptions tiny = options(SpecMethod::kSuffix, nullptr, 4);
  tiny.max_model_len = 128;
  const ModelConfig& c = target_->config();
  // Room for three sequences of ~80 tokens (16 blocks of 16): eight must take turns.
  tiny.kv_mem_bytes = 16 * 16 * c.n_layers * c.n_kv_heads * c.head_dim * 2 * sizeof(float);
  const auto suffix = std::make_shared<SuffixProposer>(SuffixOptions{});
  tiny.speculation.custom = suffix;
  EngineMetrics m;
  const auto outs = run(tiny, prompts, params, &m);
  EXPECT_GT(m.preemptions, 0);
  EXPECT_GT(m.spec_accepted_tokens, 0);
  expect_same_outputs(outs, run(options(SpecMethod::kNone, nullptr, 4), prompts, params), "preempted");
  size_t output_tokens = 0;
  for (const RequestOutput& out : outs) output_tokens += out.outputs[0].token_ids.size();
  EXPECT_EQ(suffix->cached_tokens(), output_tokens);
}

TEST_F(SpeculativeTest, PrefixCacheHitsAfterSpeculationGiveTheSameOutput) {
  const std::vector<int32_t> prompt = encode("Tom and his dog went to the");
  EngineOptions o = options(SpecMethod::kDraft, salty_draft_, 4);
  Engine engine(*target_, *tokenizer_, o);
  engine.add_request(prompt, greedy(90));
  const RequestOutput first = engine.run_to_completion().at(0);
  // The whole output as a prompt: its blocks were registered during speculation.
  std::vector<int32_t> again = prompt;
  again.insert(again.end(), first.outputs[0].token_ids.begin(), first.outputs[0].token_ids.end());
  engine.add_request(again, greedy(30));
  const RequestOutput cached = engine.run_to_completion().at(0);
  EXPECT_GT(engine.metrics().prefix_cache_hits, 64);
  const RequestOutput fresh = run(options(SpecMethod::kNone, nullptr, 4), {again}, {greedy(30)})[0];
  expect_same_outputs({cached}, {fresh}, "after a prefix-cache hit");
}

TEST_F(SpeculativeTest, ADraftWithAnotherVocabularyIsRefused) {
  EXPECT_NO_THROW(check_draft_compatible(*target_, *salty_draft_));
  auto llama = load_model(std::string(SKIFF_MODELS_DIR) + "/gguf/llama-2-tiny-random.gguf");  // 32000 tokens
  try {
    Engine engine(*target_, *tokenizer_, options(SpecMethod::kDraft, llama.get(), 4));
    ADD_FAILURE() << "a draft of another vocabulary was accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("vocabulary has 32000 tokens and the target's 512"), std::string::npos)
        << e.what();
  }
  EXPECT_THROW(Engine(*target_, *tokenizer_, options(SpecMethod::kDraft, nullptr, 4)), Error);
  EXPECT_THROW(Engine(*target_, *tokenizer_, options(SpecMethod::kNgram, nullptr, 0)), Error);
}

// Two-sample chi-square over the first three tokens (joint), rare triples
// pooled: the statistic against its 0.001 critical value.
double chi_square_excess(const std::map<std::vector<int32_t>, int>& a, const std::map<std::vector<int32_t>, int>& b) {
  std::map<std::vector<int32_t>, std::pair<int, int>> both;
  for (const auto& [key, n] : a) both[key].first += n;
  for (const auto& [key, n] : b) both[key].second += n;
  std::pair<int, int> rare{0, 0};
  double chi2 = 0;
  int cells = 0;
  auto add = [&](std::pair<int, int> c) {
    const double d = c.first - c.second;
    chi2 += d * d / (c.first + c.second);
    ++cells;
  };
  for (const auto& [key, c] : both) {
    if (c.first + c.second < 20) {
      rare.first += c.first;
      rare.second += c.second;
    } else {
      add(c);
    }
  }
  if (rare.first + rare.second > 0) add(rare);
  const double df = cells - 1;
  // Wilson–Hilferty: the chi-square quantile at p = 0.999 (z = 3.09).
  const double h = 2.0 / (9.0 * df);
  const double critical = df * std::pow(1 - h + 3.09 * std::sqrt(h), 3);
  return chi2 / critical;
}

// The draft model's proposals with a wrong q: uniform instead of the
// distribution they were drawn from, so acceptance compares p with 1/vocab,
// accepts nearly everything and outputs roughly the draft's distribution. The
// kind of mistake the distribution test must catch.
class WrongAcceptance : public Proposer {
 public:
  explicit WrongAcceptance(Model& draft) : inner_(draft, KvType::kF32, 16, 64 << 20, 512) {}
  void propose(std::span<Draft* const> drafts) override {
    inner_.propose(drafts);
    for (Draft* d : drafts) std::fill(d->probs.begin(), d->probs.end(), 1.0f / 512);
  }
  void rollback(const Sequence& seq, int n) override { inner_.rollback(seq, n); }
  void forget(const Sequence& seq) override { inner_.forget(seq); }

 private:
  DraftModelProposer inner_;
};

std::map<std::vector<int32_t>, int> first_three_tokens(const std::vector<RequestOutput>& outs) {
  std::map<std::vector<int32_t>, int> counts;
  for (const RequestOutput& out : outs) {
    std::vector<int32_t> ids = out.outputs[0].token_ids;
    ids.resize(3, -1);
    ++counts[ids];
  }
  return counts;
}

// Chi-square, two samples of 20,000 at temperature 1 (and with top_p 0.9):
// plain sampling against speculation with the saltyduckegg draft, with n-gram
// drafting and with suffix decoding, and against WrongAcceptance, which must fail.
TEST_F(SpeculativeTest, SamplingKeepsThePlainDistribution) {
  constexpr int kSamples = 20000;
  // Thousands of tiny forward passes: one thread, as OpenMP's barriers would
  // spin most of the time on a shared machine.
  const int threads = omp_get_max_threads();
  omp_set_num_threads(1);
  const std::vector<std::vector<int32_t>> prompts(kSamples, encode("Tom and his dog went to the"));
  for (const float top_p : {1.0f, 0.9f}) {
    std::vector<SamplingParams> plain_params, spec_params;
    for (int i = 0; i < kSamples; ++i) {
      SamplingParams p;
      p.temperature = 1.0f;
      p.top_p = top_p;
      p.max_tokens = 3;
      p.ignore_eos = true;
      p.seed = i;
      plain_params.push_back(p);
      p.seed = 1000000 + i;
      spec_params.push_back(p);
    }
    EngineOptions base = options(SpecMethod::kNone, nullptr, 2);
    base.scheduler.max_seqs = 256;
    const auto plain = first_three_tokens(run(base, prompts, plain_params));
    EngineOptions spec = options(SpecMethod::kDraft, salty_draft_, 2);
    spec.scheduler.max_seqs = 256;
    EngineMetrics m;
    const auto drafted = first_three_tokens(run(spec, prompts, spec_params, &m));
    EXPECT_GT(m.spec_accepted_tokens, kSamples / 4);  // the drafts mattered
    EXPECT_LT(chi_square_excess(plain, drafted), 1.0) << "top_p " << top_p;
    EngineOptions ngram = options(SpecMethod::kNgram, nullptr, 2);
    ngram.scheduler.max_seqs = 256;
    EXPECT_LT(chi_square_excess(plain, first_three_tokens(run(ngram, prompts, spec_params))), 1.0)
        << "ngram, top_p " << top_p;
    // Drafts from the outputs of the requests finished before: other samples' tokens.
    EngineOptions suffix = options(SpecMethod::kSuffix, nullptr, 2);
    suffix.scheduler.max_seqs = 256;
    EXPECT_LT(chi_square_excess(plain, first_three_tokens(run(suffix, prompts, spec_params, &m))), 1.0)
        << "suffix, top_p " << top_p;
    EXPECT_GT(m.spec_accepted_tokens, kSamples / 4);
    if (top_p != 1.0f) continue;
    EngineOptions wrong = spec;
    wrong.speculation.custom = std::make_shared<WrongAcceptance>(*salty_draft_);
    EXPECT_GT(chi_square_excess(plain, first_three_tokens(run(wrong, prompts, spec_params))), 1.0)
        << "a wrong acceptance rule must fail the test";
  }
  omp_set_num_threads(threads);
}

TEST(NgramProposer, ProposesWhatFollowedTheLatestLongestMatch) {
  const NgramProposer ngram(1, 3);
  EXPECT_EQ(ngram.lookup(std::vector<int32_t>{5, 6, 7, 8, 9, 5, 6, 7}, 4), (std::vector<int32_t>{8, 9, 5, 6}));
  EXPECT_EQ(ngram.lookup(std::vector<int32_t>{1, 2, 3, 1, 4, 2, 1}, 2), (std::vector<int32_t>{4, 2}));
  EXPECT_EQ(ngram.lookup(std::vector<int32_t>{1, 2, 3, 4}, 4), std::vector<int32_t>{});
  EXPECT_EQ(ngram.lookup(std::vector<int32_t>{3, 9, 3}, 4), (std::vector<int32_t>{9, 3}));
  EXPECT_THROW(NgramProposer(0, 2), Error);
}

}  // namespace
}  // namespace skiff
