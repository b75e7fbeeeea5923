// token_logprob against a plain fp64 log-softmax and a full sort.
#include "engine/logprobs.h"

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

constexpr float kInf = std::numeric_limits<float>::infinity();
constexpr double kTolerance = 1e-5;

std::vector<double> reference_logprobs(const std::vector<float>& logits) {
  double max = -INFINITY;
  for (const float x : logits) max = std::max(max, double(x));
  double sum = 0;
  for (const float x : logits) sum += std::exp(double(x) - max);
  std::vector<double> out;
  for (const float x : logits) out.push_back(double(x) - max - std::log(sum));
  return out;
}

// Every id, most likely first, ties by lower id (a stable sort keeps id order).
std::vector<int32_t> reference_ranking(const std::vector<float>& logits) {
  std::vector<int32_t> ids(logits.size());
  std::iota(ids.begin(), ids.end(), 0);
  std::stable_sort(ids.begin(), ids.end(), [&](int32_t a, int32_t b) { return logits[a] > logits[b]; });
  return ids;
}

void expect_near_or_both_minus_inf(double actual, double expected) {
  if (expected == -INFINITY) {
    EXPECT_EQ(actual, -INFINITY);
  } else {
    EXPECT_NEAR(actual, expected, kTolerance);
  }
}

// The whole result against the references: the token's logprob, and the top
// ids in order with their logprobs.
void expect_matches_reference(const std::vector<float>& logits, int32_t token, int top_n) {
  SCOPED_TRACE(testing::Message() << "vocab " << logits.size() << " token " << token << " top_n " << top_n);
  const std::vector<double> logprobs = reference_logprobs(logits);
  const std::vector<int32_t> ranking = reference_ranking(logits);
  const TokenLogprob result = token_logprob(logits, token, top_n);
  EXPECT_EQ(result.token, token);
  expect_near_or_both_minus_inf(result.logprob, logprobs[token]);
  ASSERT_EQ(result.top.size(), std::min<size_t>(top_n, logits.size()));
  for (size_t i = 0; i < result.top.size(); ++i) {
    EXPECT_EQ(result.top[i].first, ranking[i]) << "rank " << i;
    expect_near_or_both_minus_inf(result.top[i].second, logprobs[ranking[i]]);
  }
}

std::vector<float> random_logits(std::mt19937& rng, size_t vocab, float mean, float sd) {
  std::normal_distribution<float> normal(mean, sd);
  std::vector<float> logits(vocab);
  for (float& x : logits) x = normal(rng);
  return logits;
}

TEST(TokenLogprob, MatchesFp64ReferenceOnRandomLogits) {
  std::mt19937 rng(7);
  for (const size_t vocab : {1, 2, 7, 1000, 32000, 151936}) {
    const std::vector<float> logits = random_logits(rng, vocab, 0, 4);
    for (const int top_n : {0, 1, 5, 20}) {
      for (int i = 0; i < 3; ++i) expect_matches_reference(logits, rng() % vocab, top_n);
    }
  }
}

// Logits far from 0, as some models give: exp() of the raw logits would
// overflow (or all underflow) without subtracting the maximum.
TEST(TokenLogprob, LargeLogitsNeitherOverflowNorUnderflow) {
  std::mt19937 rng(8);
  for (const float mean : {1e4f, -1e4f}) {
    const std::vector<float> logits = random_logits(rng, 5000, mean, 3);
    expect_matches_reference(logits, 17, 5);
  }
}

TEST(TokenLogprob, TiesRankTheLowerIdFirst) {
  std::mt19937 rng(9);
  std::vector<float> logits(300);
  for (float& x : logits) x = float(rng() % 4);  // about 75 tokens share each value
  for (const int top_n : {1, 5, 20, 100, 300}) expect_matches_reference(logits, 3, top_n);

  const std::vector<float> flat(50, 2.5f);
  const TokenLogprob result = token_logprob(flat, 10, 3);
  EXPECT_NEAR(result.logprob, -std::log(50.0), kTolerance);
  ASSERT_EQ(result.top.size(), 3u);
  for (int32_t i = 0; i < 3; ++i) EXPECT_EQ(result.top[i].first, i);
}

TEST(TokenLogprob, MinusInfinityIsAMaskedToken) {
  std::mt19937 rng(10);
  std::vector<float> logits = random_logits(rng, 200, 0, 2);
  for (size_t i = 0; i < logits.size(); i += 2) logits[i] = -kInf;
  expect_matches_reference(logits, 4, 20);
  EXPECT_EQ(token_logprob(logits, 4, 0).logprob, -kInf);
  // Past the finite ones, masked tokens rank last, by id.
  const TokenLogprob all = token_logprob(logits, 4, 300);
  ASSERT_EQ(all.top.size(), 200u);
  for (size_t i = 0; i < 100; ++i) {
    EXPECT_EQ(all.top[i].first % 2, 1) << i;
    EXPECT_EQ(all.top[100 + i].first, int32_t(2 * i));
    EXPECT_EQ(all.top[100 + i].second, -kInf);
  }

  std::vector<float> one_left(10, -kInf);
  one_left[6] = -3;
  EXPECT_EQ(token_logprob(one_left, 6, 1).logprob, 0);
  EXPECT_EQ(token_logprob(one_left, 6, 1).top[0].first, 6);
}

TEST(TokenLogprob, ProbabilitiesSumToOne) {
  std::mt19937 rng(11);
  for (const size_t vocab : {10, 1000, 32000}) {
    std::vector<float> logits = random_logits(rng, vocab, 0, 3);
    logits[vocab / 2] = -kInf;
    // Every token through top, and, for the smaller vocabularies, one call per token.
    const TokenLogprob all = token_logprob(logits, 0, int(vocab));
    ASSERT_EQ(all.top.size(), vocab);
    double sum = 0;
    for (const auto& [id, logprob] : all.top) sum += std::exp(double(logprob));
    EXPECT_NEAR(sum, 1.0, kTolerance) << vocab;
    if (vocab > 1000) continue;
    sum = 0;
    for (size_t id = 0; id < vocab; ++id) sum += std::exp(double(token_logprob(logits, id, 0).logprob));
    EXPECT_NEAR(sum, 1.0, kTolerance) << vocab;
  }
}

TEST(TokenLogprob, RejectsBadInput) {
  const std::vector<float> logits = {1, 2, 3};
  EXPECT_THROW(token_logprob(logits, -1, 0), Error);
  EXPECT_THROW(token_logprob(logits, 3, 0), Error);
  EXPECT_THROW(token_logprob(logits, 0, -1), Error);
  EXPECT_THROW(token_logprob({}, 0, 0), Error);
  EXPECT_THROW(token_logprob(std::vector<float>(4, -kInf), 0, 0), Error);
  EXPECT_THROW(token_logprob(std::vector<float>{NAN, -kInf, NAN}, 0, 0), Error);
}

// A broken model's NaN is a masked token; +inf logits share all the probability.
TEST(TokenLogprob, NonFiniteLogitsHaveADefinedMeaning) {
  const TokenLogprob nan = token_logprob(std::vector<float>{1, NAN, 1}, 0, 3);
  EXPECT_NEAR(nan.logprob, -std::log(2.0), 1e-6);
  ASSERT_EQ(nan.top.size(), 3u);
  EXPECT_EQ(nan.top[2].first, 1);
  EXPECT_EQ(nan.top[2].second, -kInf);

  const std::vector<float> two_inf = {kInf, 5, kInf, NAN};
  const TokenLogprob inf = token_logprob(two_inf, 2, 2);
  EXPECT_NEAR(inf.logprob, -std::log(2.0), 1e-6);
  EXPECT_EQ(token_logprob(two_inf, 1, 0).logprob, -kInf);
  ASSERT_EQ(inf.top.size(), 2u);
  EXPECT_EQ(inf.top[0].first, 0);
  EXPECT_EQ(inf.top[1].first, 2);
}

}  // namespace
}  // namespace skiff
