// `skiff perplexity` on the real GGUF files CI fetches (real_models.h), against
// what transformers computes on the same text as llama-perplexity scores one
// chunk of 512 (tests/data/real/*.json, tools/make_real_model_golden.py): the
// command's own tokenizing, chunking and BOS handling, end to end. The bound is
// the default int8 activations' of RealModel.AgreesWithTransformers.
#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <regex>
#include <string>

#include "cli/run_skiff.h"
#include "real_models.h"

namespace {

using skiff::testing::run_skiff;

const std::string kRealData = std::string(SKIFF_SOURCE_DIR) + "/tests/data/real/";

void expect_perplexity_as_transformers(const std::string& file, const std::string& golden) {
  const auto model = skiff::testing::real_model(file);
  if (!model) GTEST_SKIP() << file << " is not fetched: run scripts/fetch-models.sh";
  std::ifstream in(kRealData + golden);
  const double want = nlohmann::json::parse(in).at("ppl").get<double>();
  const auto r = run_skiff("perplexity -m " + *model + " -f " + kRealData + "text.txt -c 512 --chunks 1 -t 2");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  std::smatch m;
  ASSERT_TRUE(std::regex_search(r.out, m, std::regex(R"(^\[1\]([0-9.]+),\nFinal estimate: PPL = ([0-9.]+) )"))) << r.out;
  EXPECT_EQ(m[1].str().substr(0, 6), m[2].str().substr(0, 6)) << r.out;  // one chunk: the running figure is the final
  EXPECT_NEAR(std::stod(m[2].str()), want, 0.015 * want) << r.out;
}

TEST(CliPerplexityReal, Qwen25Coder05B) {
  expect_perplexity_as_transformers("qwen2.5-coder-0.5b-instruct-q4_k_m.gguf", "qwen2.5-coder-0.5b.json");
}

TEST(CliPerplexityReal, Gemma3_270M) {
  expect_perplexity_as_transformers("gemma-3-270m-q4_k_m.gguf", "gemma3-270m.json");
}

}  // namespace
