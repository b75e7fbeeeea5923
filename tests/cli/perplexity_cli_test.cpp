// skiff perplexity end to end on stories260K: llama-perplexity's output (the
// running figures, then the final estimate), the summary on stderr, and clear
// errors for a missing file or a text shorter than one chunk.
#include <gtest/gtest.h>

#include <regex>
#include <string>

#include "cli/run_skiff.h"

namespace {

using skiff::testing::run_skiff;

const std::string kModel = std::string(SKIFF_MODELS_DIR) + "/derived/stories260K-f32.gguf";
const std::string kText = std::string(SKIFF_SOURCE_DIR) + "/tests/data/real/text.txt";

TEST(CliPerplexity, PrintsRunningFiguresAndTheFinalEstimate) {
  const auto r = run_skiff("perplexity -m " + kModel + " -f " + kText + " -c 128 --chunks 3 -t 1");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(std::regex_search(r.out, std::regex(R"(^\[1\][0-9.]+,\[2\][0-9.]+,\[3\][0-9.]+,\n)"))) << r.out;
  EXPECT_TRUE(std::regex_search(r.out, std::regex(R"(Final estimate: PPL = [0-9]+\.[0-9]{4} \+/- [0-9]+\.[0-9]{5}\n$)")))
      << r.out;
  EXPECT_NE(r.err.find("3 chunks of 128"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("tok/s"), std::string::npos) << r.err;
}

TEST(CliPerplexity, MissingFileOrShortTextFailsClearly) {
  auto r = run_skiff("perplexity -m " + kModel + " -f /nonexistent.txt");
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.err.find("/nonexistent.txt"), std::string::npos) << r.err;
  r = run_skiff("perplexity -m " + kModel + " -f " + kText + " -c 4096");
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.err.find("context"), std::string::npos) << r.err;
}

}  // namespace
