// skiff bench-throughput end to end on stories260K with tiny workloads: the
// table and JSON shapes, the same work done by all three modes, the closing
// ratio line, datasets, and bad flags failing cleanly. Values are checked for
// sense, never against a time.
#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <nlohmann/json.hpp>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include "cli/run_skiff.h"

namespace {

using nlohmann::json;
using skiff::testing::run_skiff;

const std::string kModel = std::string(SKIFF_MODELS_DIR) + "/derived/stories260K-f32.gguf";

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

TEST(CliBenchThroughput, MarkdownTableAndRatioLine) {
  const auto r = run_skiff("bench-throughput -m " + kModel + " --num-prompts 6 --input-len 8 --output-len 8 -t 1");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const std::vector<std::string> lines = lines_of(r.out);
  ASSERT_GE(lines.size(), 8u) << r.out;
  EXPECT_EQ(lines[0].rfind("machine: ", 0), 0u) << r.out;
  EXPECT_NE(lines[0].find("FMA peak"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("6 requests, 48 prompt + 48 output tokens"), std::string::npos) << r.out;
  for (const char* mode : {"| continuous ", "| one-at-a-time ", "| static "})
    EXPECT_NE(r.out.find(mode), std::string::npos) << mode << "\n" << r.out;
  EXPECT_NE(r.out.find("of the FMA peak"), std::string::npos) << r.out;
  EXPECT_TRUE(std::regex_match(lines.back(), std::regex(R"(continuous vs one-at-a-time: \d+\.\d\dx, vs static: \d+\.\d\dx)")))
      << lines.back();
  for (const char* mode : {"continuous: 6/6 requests", "one-at-a-time: 6/6 requests", "static: 6/6 requests"})
    EXPECT_NE(r.err.find(mode), std::string::npos) << mode << "\n" << r.err;
}

// JSON: one object per mode, then the ratios; every mode did the same work.
TEST(CliBenchThroughput, JsonModesDoTheSameWork) {
  const auto r = run_skiff("bench-throughput -m " + kModel +
                           " --num-prompts 6 --input-len 8 --output-len-range 4:12 --max-seqs 4 --seed 3 -t 1 -o json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const std::vector<std::string> lines = lines_of(r.out);
  ASSERT_EQ(lines.size(), 4u) << r.out;
  std::vector<json> modes;
  for (const std::string& line : lines) {
    modes.push_back(json::parse(line, nullptr, false));
    ASSERT_TRUE(modes.back().is_object()) << line;
  }
  EXPECT_EQ(modes[0]["mode"], "continuous");
  EXPECT_EQ(modes[1]["mode"], "one-at-a-time");
  EXPECT_EQ(modes[2]["mode"], "static");
  const int64_t output_tokens = modes[0]["output_tokens"];
  EXPECT_GE(output_tokens, 6 * 4);
  EXPECT_LE(output_tokens, 6 * 12);
  EXPECT_NE(output_tokens, 6 * 4);  // lengths vary (a fixed seed, so not by chance)
  for (int i = 0; i < 3; ++i) {
    const json& m = modes[i];
    EXPECT_EQ(m["requests"], 6);
    EXPECT_EQ(m["prompt_tokens"], 48);
    EXPECT_EQ(m["output_tokens"], output_tokens) << m;
    EXPECT_GT(m["seconds"].get<double>(), 0);
    EXPECT_GT(m["requests_per_s"].get<double>(), 0);
    EXPECT_NEAR(m["output_tok_s"].get<double>(), output_tokens / m["seconds"].get<double>(),
                1e-6 * m["output_tok_s"].get<double>());
    EXPECT_GT(m["total_tok_s"].get<double>(), m["output_tok_s"].get<double>());
    // Every prompt and output token but the last of each request went through the model.
    EXPECT_GE(m["step_tokens"].get<int64_t>(), 48 + output_tokens - 6) << m;
  }
  // One at a time: a forward pass per prompt and per output token after the first.
  EXPECT_EQ(modes[1]["steps"], output_tokens);
  EXPECT_GT(modes[0]["fma_peak_fraction"].get<double>(), 0);
  EXPECT_GT(modes[0]["peak_gflops"].get<double>(), 0);
  EXPECT_GT(modes[0]["forward_gflops"].get<double>(), 0);
  EXPECT_GT(modes[3]["continuous_vs_one_at_a_time"].get<double>(), 0);
  EXPECT_GT(modes[3]["continuous_vs_static"].get<double>(), 0);
  EXPECT_NE(r.err.find("machine: "), std::string::npos) << r.err;

}

// Dataset lines give prompts as text or ids; a line without output_len takes
// --output-len; --num-prompts keeps the first N.
TEST(CliBenchThroughput, Dataset) {
  const std::string path = ::testing::TempDir() + "/skiff_throughput_dataset.jsonl";
  {
    std::ofstream out(path);
    out << R"({"prompt": "Once upon a time", "output_len": 5})" << "\n\n"
        << R"({"prompt_token_ids": [1, 400, 401, 402], "output_len": 7})" << "\n"
        << R"({"prompt": "The cat"})" << "\n"
        << R"({"prompt": "not used", "output_len": 100})" << "\n";
  }
  auto r = run_skiff("bench-throughput -m " + kModel + " --dataset " + path +
                     " --num-prompts 3 --output-len 3 -t 1 -o json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  for (const std::string& line : lines_of(r.out)) {
    const json m = json::parse(line);
    if (!m.contains("mode")) continue;
    EXPECT_EQ(m["requests"], 3);
    EXPECT_EQ(m["prompt_tokens"], 5 + 4 + 4) << m;  // BOS + 4, the ids, BOS + 3
    EXPECT_EQ(m["output_tokens"], 5 + 7 + 3);
  }

  {
    std::ofstream out(path);
    out << R"({"prompt": "Once upon a time", "output_len": 5})" << "\n" << R"({"output_len": 5})" << "\n";
  }
  r = run_skiff("bench-throughput -m " + kModel + " --dataset " + path + " -o json");
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.err.find("line 2"), std::string::npos) << r.err;
  EXPECT_TRUE(r.out.empty()) << r.out;
}

TEST(CliBenchThroughput, BadFlagsFailCleanly) {
  for (const std::string flags :
       {"--output-len-range 9:3", "--output-len-range 0:3", "--output-len-range 4-9", "--output-len-range 4:x",
        "--num-prompts 0", "--kv-type q4", "-o csv", "--dataset /nonexistent.jsonl", "--input-len 500 --output-len 100",
        "--output-len 5 --output-len-range 4:6", "--no-such-flag"}) {
    const auto r = run_skiff("bench-throughput -m " + kModel + " " + flags);
    EXPECT_NE(r.exit_code, 0) << flags;
    EXPECT_TRUE(r.out.empty()) << flags << ": " << r.out;
    EXPECT_FALSE(r.err.empty()) << flags;
  }
  const auto r = run_skiff("bench-throughput -m " + kModel + " --output-len-range 9:3");
  EXPECT_NE(r.err.find("--output-len-range 9:3"), std::string::npos) << r.err;
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
}

}  // namespace
