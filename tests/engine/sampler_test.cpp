#include "engine/sampler.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <random>
#include <vector>

#include "base/error.h"

namespace skiff {
namespace {

constexpr int kDraws = 100'000;
constexpr float kMasked = -std::numeric_limits<float>::infinity();

// What the reference distribution applies, in double precision.
struct Filters {
  double temperature = 1.0;
  int top_k = 0;
  double top_p = 1.0;
  double min_p = 0.0;
};

void normalize(std::vector<double>& probs) {
  double total = std::accumulate(probs.begin(), probs.end(), 0.0);
  for (double& p : probs) p /= total;
}

// The distribution the sampler should draw from, computed the slow, obvious
// way: a full stable sort (ties: lowest id first) and a renormalization after
// every filter, as vLLM applies them one after another.
std::vector<double> reference_distribution(const std::vector<float>& logits, const Filters& f) {
  const size_t n = logits.size();
  std::vector<size_t> by_rank(n);
  std::iota(by_rank.begin(), by_rank.end(), 0);
  std::stable_sort(by_rank.begin(), by_rank.end(),
                   [&](size_t a, size_t b) { return logits[a] > logits[b]; });

  std::vector<double> probs(n);
  const double max_logit = logits[by_rank[0]];
  for (size_t i = 0; i < n; ++i) probs[i] = std::exp((logits[i] - max_logit) / f.temperature);
  normalize(probs);

  if (f.top_k > 0) {
    for (size_t rank = f.top_k; rank < n; ++rank) probs[by_rank[rank]] = 0;
    normalize(probs);
  }
  if (f.top_p < 1) {
    double mass_before = 0;
    for (size_t id : by_rank) {
      EXPECT_GT(std::abs(mass_before - f.top_p), 1e-6) << "fixture: token " << id << " sits on the top-p edge";
      double p = probs[id];
      if (mass_before >= f.top_p) probs[id] = 0;
      mass_before += p;
    }
    normalize(probs);
  }
  if (f.min_p > 0) {
    const double bar = f.min_p * probs[by_rank[0]];
    for (double& p : probs) {
      if (p > 0) {
        EXPECT_GT(std::abs(p - bar), 2e-6 * bar) << "fixture: a token sits on the min-p edge";
      }
      if (p < bar) p = 0;
    }
    normalize(probs);
  }
  return probs;
}

// 48 distinct logits in [-4, 4], in no particular order.
std::vector<float> test_logits() {
  std::vector<float> logits(48);
  for (size_t i = 0; i < logits.size(); ++i)
    logits[i] = static_cast<float>(4.0 * std::sin(2.399963 * static_cast<double>(i)));
  return logits;
}

// Uniform logits in [0, 10) from the raw bits of a fixed stream, so they are
// the same on every platform.
std::vector<float> large_vocab_logits(size_t vocab_size) {
  std::mt19937_64 bits(7);
  std::vector<float> logits(vocab_size);
  for (float& logit : logits) logit = static_cast<float>((bits() >> 11) * 0x1.0p-53 * 10.0);
  return logits;
}

std::vector<int> draw_counts(Sampler& sampler, const std::vector<float>& logits, int draws) {
  std::vector<int> counts(logits.size());
  for (int i = 0; i < draws; ++i) ++counts[sampler.sample(logits, {}, {})];
  return counts;
}

struct ChiSquare {
  double statistic = 0;
  int degrees_of_freedom = 0;
};

// Pearson's statistic of `counts` against `probs`: infinite if a token of
// probability 0 was drawn. The others go, least likely first, into bins
// expecting at least 5 draws each, where the chi-square approximation holds.
ChiSquare pearson(const std::vector<int>& counts, const std::vector<double>& probs) {
  const double draws = std::accumulate(counts.begin(), counts.end(), 0.0);
  ChiSquare result;
  std::vector<size_t> ids;
  for (size_t id = 0; id < probs.size(); ++id) {
    if (probs[id] > 0) {
      ids.push_back(id);
    } else if (counts[id] > 0) {
      result.statistic = std::numeric_limits<double>::infinity();
    }
  }
  std::sort(ids.begin(), ids.end(), [&](size_t a, size_t b) { return probs[a] < probs[b]; });

  std::vector<double> observed, expected;
  double bin_observed = 0, bin_expected = 0;
  for (size_t id : ids) {
    bin_observed += counts[id];
    bin_expected += probs[id] * draws;
    if (bin_expected >= 5) {
      observed.push_back(bin_observed);
      expected.push_back(bin_expected);
      bin_observed = bin_expected = 0;
    }
  }
  // An unfinished last bin joins the one before it.
  observed.back() += bin_observed;
  expected.back() += bin_expected;

  for (size_t b = 0; b < observed.size(); ++b)
    result.statistic += (observed[b] - expected[b]) * (observed[b] - expected[b]) / expected[b];
  result.degrees_of_freedom = static_cast<int>(observed.size()) - 1;
  return result;
}

// The chi-square value a right distribution exceeds with probability 1e-6
// (Wilson–Hilferty). The seeds are fixed, so each test is deterministic; the
// tiny significance level keeps it passing for any seed, while a wrong
// distribution over 100k draws lands far above.
double critical_value(int degrees_of_freedom) {
  constexpr double kNormalQuantile = 4.7534;  // upper 1e-6 quantile of N(0, 1)
  const double k = degrees_of_freedom, h = 2.0 / (9.0 * k);
  return k * std::pow(1.0 - h + kNormalQuantile * std::sqrt(h), 3);
}

// The sampler's probabilities() and its draws both match the reference, and
// no filtered-out token is ever drawn.
void expect_draws_match(const SamplingParams& params, const Filters& filters) {
  const std::vector<float> logits = test_logits();
  const std::vector<double> expected = reference_distribution(logits, filters);
  Sampler sampler(params, static_cast<int32_t>(logits.size()));

  std::vector<float> probs(logits.size());
  sampler.probabilities(logits, {}, {}, probs);
  for (size_t id = 0; id < logits.size(); ++id) EXPECT_NEAR(probs[id], expected[id], 1e-6) << "token " << id;

  const std::vector<int> counts = draw_counts(sampler, logits, kDraws);
  for (size_t id = 0; id < logits.size(); ++id) {
    if (expected[id] == 0) {
      EXPECT_EQ(counts[id], 0) << "filtered-out token " << id << " was drawn";
    }
  }
  const ChiSquare chi = pearson(counts, expected);
  EXPECT_LT(chi.statistic, critical_value(chi.degrees_of_freedom))
      << "degrees of freedom " << chi.degrees_of_freedom;
}

SamplingParams seeded(uint64_t seed) {
  SamplingParams params;
  params.seed = seed;
  return params;
}

TEST(SamplerDistribution, TemperatureOne) { expect_draws_match(seeded(1), {}); }

TEST(SamplerDistribution, TemperatureHalf) {
  SamplingParams params = seeded(2);
  params.temperature = 0.5f;
  expect_draws_match(params, {.temperature = 0.5});
}

TEST(SamplerDistribution, TopK) {
  SamplingParams params = seeded(3);
  params.top_k = 5;
  expect_draws_match(params, {.top_k = 5});
}

TEST(SamplerDistribution, TopP) {
  SamplingParams params = seeded(4);
  params.top_p = 0.8f;
  expect_draws_match(params, {.top_p = 0.8f});
}

TEST(SamplerDistribution, MinP) {
  SamplingParams params = seeded(5);
  params.min_p = 0.1f;
  expect_draws_match(params, {.min_p = 0.1f});
}

// Each filter bites and the order matters here: top-p keeps 22 tokens alone
// but 18 after top-k; min-p then leaves 17, yet would leave 14 if applied
// before top-p.
TEST(SamplerDistribution, AllFiltersTogether) {
  SamplingParams params = seeded(6);
  params.temperature = 2.0f;
  params.top_k = 25;
  params.top_p = 0.9f;
  params.min_p = 0.3f;
  expect_draws_match(params, {.temperature = 2.0, .top_k = 25, .top_p = 0.9f, .min_p = 0.3f});
}

// The check has teeth: the temperature-1 draws of TemperatureOne fail against
// a grossly wrong distribution, a slightly wrong one, and one that cuts off
// the least likely 1% of the mass.
TEST(SamplerDistribution, ChiSquareRejectsWrongDistributions) {
  const std::vector<float> logits = test_logits();
  Sampler sampler(seeded(1), static_cast<int32_t>(logits.size()));
  const std::vector<int> counts = draw_counts(sampler, logits, kDraws);

  const ChiSquare gross = pearson(counts, reference_distribution(logits, {.temperature = 0.5}));
  EXPECT_GT(gross.statistic, 100 * critical_value(gross.degrees_of_freedom));
  const ChiSquare slight = pearson(counts, reference_distribution(logits, {.temperature = 1.1}));
  EXPECT_GT(slight.statistic, critical_value(slight.degrees_of_freedom));
  const ChiSquare truncated = pearson(counts, reference_distribution(logits, {.top_p = 0.99}));
  EXPECT_GT(truncated.statistic, critical_value(truncated.degrees_of_freedom));
}

TEST(SamplerDistribution, MaskedTokensAreNeverDrawn) {
  std::vector<float> logits = {1.0f, kMasked, 0.5f, kMasked, 2.0f};
  Sampler sampler(seeded(8), 5);
  const std::vector<int> counts = draw_counts(sampler, logits, 10'000);
  EXPECT_EQ(counts[1], 0);
  EXPECT_EQ(counts[3], 0);
}

// On a Llama-3-sized vocabulary, where the nucleus spans tens of thousands of
// tokens and top-p must sort in several rounds.
TEST(SamplerDistribution, ProbabilitiesMatchReferenceOnLargeVocabulary) {
  const std::vector<float> logits = large_vocab_logits(128'256);
  const Filters cases[] = {
      {.top_p = 0.93},
      {.top_k = 50},
      {.temperature = 1.5, .min_p = 0.05},
      {.temperature = 0.8, .top_k = 5000, .top_p = 0.7, .min_p = 0.2},
  };
  std::vector<float> probs(logits.size());
  for (const Filters& filters : cases) {
    SamplingParams params = seeded(9);
    params.temperature = static_cast<float>(filters.temperature);
    params.top_k = filters.top_k;
    params.top_p = static_cast<float>(filters.top_p);
    params.min_p = static_cast<float>(filters.min_p);
    Sampler sampler(params, static_cast<int32_t>(logits.size()));
    sampler.probabilities(logits, {}, {}, probs);

    const std::vector<double> expected = reference_distribution(logits, filters);
    size_t mismatches = 0;
    for (size_t id = 0; id < logits.size(); ++id) {
      bool same_support = (probs[id] == 0) == (expected[id] == 0);
      if (!same_support || std::abs(probs[id] - expected[id]) > 1e-5 * expected[id]) ++mismatches;
    }
    EXPECT_EQ(mismatches, 0u) << "top_k " << filters.top_k << " top_p " << filters.top_p;
  }
}

TEST(SamplerGreedy, PicksArgmaxLowestIdOnTies) {
  SamplingParams params;
  params.temperature = 0.0f;
  params.top_k = 2;  // no effect when greedy
  Sampler sampler(params, 5);
  const std::vector<float> logits = {1.0f, 5.0f, 2.0f, 5.0f, 4.0f};
  EXPECT_EQ(sampler.sample(logits, {}, {}), 1);

  std::vector<float> probs(5);
  sampler.probabilities(logits, {}, {}, probs);
  EXPECT_EQ(probs, (std::vector<float>{0, 1, 0, 0, 0}));
}

TEST(SamplerGreedy, TopKOfOneAgreesWithGreedyOnTies) {
  SamplingParams params = seeded(10);
  params.top_k = 1;
  Sampler sampler(params, 5);
  const std::vector<float> logits = {1.0f, 5.0f, 2.0f, 5.0f, 4.0f};
  const std::vector<int> counts = draw_counts(sampler, logits, 100);
  EXPECT_EQ(counts[1], 100);
}

TEST(SamplerGreedy, SeesPenalizedLogits) {
  SamplingParams params;
  params.temperature = 0.0f;
  params.presence_penalty = 1.0f;
  Sampler sampler(params, 2);
  const std::vector<float> logits = {3.0f, 2.5f};
  const std::vector<int32_t> output = {0};
  EXPECT_EQ(sampler.sample(logits, {}, {}), 0);
  EXPECT_EQ(sampler.sample(logits, {}, output), 1);
}

// min_tokens masks the end tokens (EOS unless ignore_eos, and stop_token_ids)
// while the output is shorter, and nothing after.
TEST(SamplerMinTokens, MasksEndTokensUntilTheOutputIsLongEnough) {
  SamplingParams params;
  params.temperature = 0.0f;
  params.min_tokens = 2;
  params.stop_token_ids = {1};
  const std::vector<int32_t> eos = {0};
  const std::vector<float> logits = {5.0f, 4.0f, 3.0f};
  Sampler sampler(params, 3, eos);
  const std::vector<int32_t> one = {2}, two = {2, 2};
  EXPECT_EQ(sampler.sample(logits, {}, {}), 2);
  EXPECT_EQ(sampler.sample(logits, {}, one), 2);
  EXPECT_EQ(sampler.sample(logits, {}, two), 0);
  params.ignore_eos = true;
  Sampler ignoring(params, 3, eos);
  EXPECT_EQ(ignoring.sample(logits, {}, {}), 0);
  params.ignore_eos = false;
  params.temperature = 1.0f;
  Sampler sampling(params, 3, eos);
  std::vector<float> probs(3);
  sampling.probabilities(logits, {}, one, probs);
  EXPECT_EQ(probs, (std::vector<float>{0.0f, 0.0f, 1.0f}));
  sampling.probabilities(logits, {}, two, probs);
  EXPECT_GT(probs[0], probs[1]);
  params.min_tokens = 17;  // above max_tokens (16)
  EXPECT_THROW(Sampler(params, 3, eos), Error);
  params.min_tokens = 1;
  const std::vector<int32_t> outside = {3};
  EXPECT_THROW(Sampler(params, 3, outside), Error);
}

// Penalty fixtures are powers of two, so the expected logits are exact.
const std::vector<float> kPenaltyLogits = {2.0f, -2.0f, 0.0f, 1.0f, 3.0f, -1.0f};
const std::vector<int32_t> kPrompt = {0, 1, 0};
const std::vector<int32_t> kOutput = {2, 3, 3, 1};

std::vector<float> penalized(const SamplingParams& params, std::span<const int32_t> prompt,
                             std::span<const int32_t> output) {
  Sampler sampler(params, static_cast<int32_t>(kPenaltyLogits.size()));
  std::span<const float> result = sampler.penalized_logits(kPenaltyLogits, prompt, output);
  return {result.begin(), result.end()};
}

TEST(SamplerPenalties, RepetitionDividesPositiveMultipliesNegativeOncePerToken) {
  SamplingParams params;
  params.repetition_penalty = 2.0f;
  // 0 (prompt, twice): 2/2. 1 (prompt and output): -2*2. 2: 0 stays 0. 3 (twice): 1/2.
  EXPECT_EQ(penalized(params, kPrompt, kOutput), (std::vector<float>{1, -4, 0, 0.5f, 3, -1}));
}

TEST(SamplerPenalties, FrequencyAndPresenceCountOutputOnly) {
  SamplingParams params;
  params.frequency_penalty = 0.5f;
  params.presence_penalty = 0.25f;
  // 0 appears in the prompt only: untouched. 3 was generated twice: 1 - 2*0.5 - 0.25.
  EXPECT_EQ(penalized(params, kPrompt, kOutput), (std::vector<float>{2, -2.75f, -0.75f, -0.25f, 3, -1}));
}

TEST(SamplerPenalties, RepetitionComesBeforeFrequencyAndPresence) {
  SamplingParams params;
  params.repetition_penalty = 2.0f;
  params.frequency_penalty = 0.5f;
  params.presence_penalty = 0.25f;
  EXPECT_EQ(penalized(params, kPrompt, kOutput), (std::vector<float>{1, -4.75f, -0.75f, -0.75f, 3, -1}));
}

TEST(SamplerPenalties, EachCallSeesOnlyItsOwnHistory) {
  SamplingParams params;
  params.repetition_penalty = 2.0f;
  params.frequency_penalty = 0.5f;
  Sampler sampler(params, static_cast<int32_t>(kPenaltyLogits.size()));
  sampler.penalized_logits(kPenaltyLogits, kPrompt, kOutput);
  // Token 3 again: penalized once more, by this call's count of 1 alone.
  std::span<const float> second = sampler.penalized_logits(kPenaltyLogits, {}, std::vector<int32_t>{3, 4});
  EXPECT_EQ(std::vector<float>(second.begin(), second.end()), (std::vector<float>{2, -2, 0, 0, 1, -1}));
}

TEST(SamplerPenalties, OffLeavesLogitsUntouched) {
  Sampler sampler(SamplingParams{}, static_cast<int32_t>(kPenaltyLogits.size()));
  EXPECT_EQ(sampler.penalized_logits(kPenaltyLogits, kPrompt, kOutput).data(), kPenaltyLogits.data());
}

std::vector<int32_t> draw_sequence(const SamplingParams& params, int length) {
  const std::vector<float> logits = test_logits();
  Sampler sampler(params, static_cast<int32_t>(logits.size()));
  std::vector<int32_t> tokens;
  for (int i = 0; i < length; ++i) tokens.push_back(sampler.sample(logits, {}, {}));
  return tokens;
}

TEST(SamplerSeed, SameSeedSameSequenceOtherSeedOtherSequence) {
  EXPECT_EQ(draw_sequence(seeded(42), 1000), draw_sequence(seeded(42), 1000));
  EXPECT_NE(draw_sequence(seeded(42), 1000), draw_sequence(seeded(43), 1000));
}

std::vector<int32_t> first_tokens(const SamplingParams& params, const std::vector<float>& logits) {
  Sampler sampler(params, static_cast<int32_t>(logits.size()));
  std::vector<int32_t> tokens;
  for (int i = 0; i < 12; ++i) tokens.push_back(sampler.sample(logits, {}, {}));
  return tokens;
}

// Pinned values: mt19937_64, the bits-to-uniform step and the id order of
// the draw are fixed by the standard or by us, so these hold on every
// platform and standard library (top-k leaves the survivors in an order that
// is not).
TEST(SamplerSeed, SequenceIsPinned) {
  const std::vector<float> logits = {0.0f, 1.0f, 2.0f, 3.0f, 4.0f, 5.0f, 6.0f, 7.0f};
  EXPECT_EQ(first_tokens(seeded(42), logits), (std::vector<int32_t>{7, 7, 7, 6, 7, 5, 7, 7, 6, 7, 3, 7}));
  SamplingParams top_k = seeded(42);
  top_k.top_k = 4;
  EXPECT_EQ(first_tokens(top_k, logits), (std::vector<int32_t>{7, 7, 7, 6, 7, 5, 7, 7, 6, 7, 4, 7}));
}

TEST(SamplerSeed, UnsetSeedIsRandomAndReported) {
  Sampler first(SamplingParams{}, 8), second(SamplingParams{}, 8);
  EXPECT_NE(first.seed(), second.seed());
  EXPECT_EQ(Sampler(seeded(5), 8).seed(), 5u);
}

TEST(SamplerErrors, RejectsParametersOutOfRange) {
  auto with = [](auto change) {
    SamplingParams params;
    change(params);
    return params;
  };
  const SamplingParams bad[] = {
      with([](SamplingParams& p) { p.temperature = -0.1f; }),
      with([](SamplingParams& p) { p.temperature = std::numeric_limits<float>::infinity(); }),
      with([](SamplingParams& p) { p.top_k = -2; }),
      with([](SamplingParams& p) { p.top_p = 0.0f; }),
      with([](SamplingParams& p) { p.top_p = 1.5f; }),
      with([](SamplingParams& p) { p.min_p = std::nanf(""); }),
      with([](SamplingParams& p) { p.repetition_penalty = 0.0f; }),
      with([](SamplingParams& p) { p.frequency_penalty = 2.5f; }),
      with([](SamplingParams& p) { p.presence_penalty = -3.0f; }),
  };
  for (const SamplingParams& params : bad) EXPECT_THROW(Sampler(params, 8), Error);
  EXPECT_THROW(Sampler(SamplingParams{}, 0), Error);
}

TEST(SamplerErrors, RejectsBadInputs) {
  SamplingParams params;
  params.repetition_penalty = 1.5f;
  Sampler sampler(params, 4);
  const std::vector<float> logits = {0, 1, 2, 3};
  EXPECT_THROW(sampler.sample(std::vector<float>{0, 1, 2}, {}, {}), Error);
  EXPECT_THROW(sampler.sample(logits, std::vector<int32_t>{4}, {}), Error);
  EXPECT_THROW(sampler.sample(logits, {}, std::vector<int32_t>{-1}), Error);
  EXPECT_THROW(sampler.sample(std::vector<float>(4, kMasked), {}, {}), Error);
  EXPECT_THROW(sampler.sample(std::vector<float>{NAN, kMasked, NAN, NAN}, {}, {}), Error);
  EXPECT_THROW(Sampler(SamplingParams{}, 4).sample(std::vector<float>(4, NAN), {}, {}), Error);
  std::vector<float> too_small(3);
  EXPECT_THROW(sampler.probabilities(logits, {}, {}, too_small), Error);
}

// NaN is never drawn; +inf logits share every draw equally, whatever the
// temperature.
TEST(SamplerNonFinite, NanIsMaskedAndInfinityTakesAll) {
  const float inf = std::numeric_limits<float>::infinity();
  const std::vector<float> nan_logits = {NAN, 1, NAN, 1};
  const std::vector<float> inf_logits = {2, inf, 3, inf};
  for (float temperature : {1.0f, 1e-3f}) {
    SamplingParams params = seeded(7);
    params.temperature = temperature;
    Sampler sampler(params, 4);
    std::vector<int> nan_counts(4), inf_counts(4);
    for (int i = 0; i < 2000; ++i) {
      ++nan_counts[sampler.sample(nan_logits, {}, {})];
      ++inf_counts[sampler.sample(inf_logits, {}, {})];
    }
    EXPECT_EQ(nan_counts[0] + nan_counts[2], 0) << temperature;
    EXPECT_EQ(inf_counts[0] + inf_counts[2], 0) << temperature;
    EXPECT_GT(inf_counts[1], 800) << temperature;  // about 1000 each
    EXPECT_GT(inf_counts[3], 800) << temperature;
    std::vector<float> probs(4);
    sampler.probabilities(inf_logits, {}, {}, probs);
    EXPECT_EQ(probs, (std::vector<float>{0, 0.5f, 0, 0.5f})) << temperature;
  }
  SamplingParams greedy;
  greedy.temperature = 0;
  EXPECT_EQ(Sampler(greedy, 4).sample(inf_logits, {}, {}), 1);  // the lowest id of the maxima
  EXPECT_EQ(Sampler(greedy, 4).sample(nan_logits, {}, {}), 1);
}

TEST(SamplerNonFinite, TinyRepetitionPenaltyGivesInfinityNotGarbage) {
  SamplingParams params = seeded(3);
  params.repetition_penalty = 1e-38f;
  params.top_k = 2;
  Sampler sampler(params, 4);
  const std::vector<float> logits = {1, 5, 4, 0};
  const std::vector<int32_t> prompt = {1, 2};  // 5 and 4 become +inf (over 3.4e38)
  std::vector<int> counts(4);
  for (int i = 0; i < 1000; ++i) ++counts[sampler.sample(logits, prompt, {})];
  EXPECT_EQ(counts[0] + counts[3], 0);
  EXPECT_GT(counts[1], 400);
  EXPECT_GT(counts[2], 400);
}

}  // namespace
}  // namespace skiff
