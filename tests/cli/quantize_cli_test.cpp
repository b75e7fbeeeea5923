// skiff quantize end to end: the output runs in skiff run, progress and a
// summary go to stderr, and bad input is one line with a non-zero exit.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <string>

#include "cli/run_skiff.h"

namespace {

using skiff::testing::run_skiff;

const std::string kModels = SKIFF_MODELS_DIR;
const std::string kStories = kModels + "/derived/stories260K-f32.gguf";

TEST(CliQuantize, OutputRunsAndSummaryIsPrinted) {
  const std::string out = testing::TempDir() + "/skiff_cli_q4_0.gguf";
  const auto q = run_skiff("quantize " + kStories + " " + out + " q4_0");
  ASSERT_EQ(q.exit_code, 0) << q.err;
  EXPECT_TRUE(q.out.empty()) << q.out;
  EXPECT_NE(q.err.find("blk.0.attn_q.weight"), std::string::npos) << q.err;
  EXPECT_NE(q.err.find("fallback"), std::string::npos) << q.err;  // ffn_down rows of 172
  EXPECT_NE(q.err.find("MiB"), std::string::npos) << q.err;
  EXPECT_LT(std::filesystem::file_size(out) * 3, std::filesystem::file_size(kStories));

  const auto r = run_skiff("run -m " + out + " -p 'Once upon a time' -n 16 --temp 0");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out.rfind("Once upon a time", 0), 0u) << r.out;
  std::remove(out.c_str());
}

TEST(CliQuantize, HfDirectoryIn) {
  const std::string out = testing::TempDir() + "/skiff_cli_hf_q8_0.gguf";
  const auto q = run_skiff("quantize " + kModels + "/derived/stories260K-hf " + out + " Q8_0");
  ASSERT_EQ(q.exit_code, 0) << q.err;
  const auto r = run_skiff("run -m " + out + " -n 8 --temp 0");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  std::remove(out.c_str());
}

TEST(CliQuantize, BadInputIsOneLineAndNonZeroExit) {
  const std::string out = testing::TempDir() + "/skiff_cli_never.gguf";
  for (const std::string& args : {kStories + " " + out + " Q7_3", "/nonexistent.gguf " + out + " Q8_0",
                                 kStories + " " + kStories + " Q8_0"}) {
    const auto r = run_skiff("quantize " + args);
    EXPECT_NE(r.exit_code, 0) << args;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << args << ": " << r.err;
  }
  EXPECT_NE(run_skiff("quantize " + kStories).exit_code, 0);  // missing OUT and TYPE
  EXPECT_FALSE(std::filesystem::exists(out));
}

}  // namespace
