// The skiff binary end to end: text on stdout, errors as one line and a non-zero exit.
#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "cli/run_skiff.h"

namespace {

const std::string kModels = SKIFF_MODELS_DIR;

using skiff::testing::run_skiff;
using Result = skiff::testing::SkiffResult;

std::string golden_text() {
  std::ifstream in(kModels + "/derived/golden/stories260K.greedy.json");
  return nlohmann::json::parse(in)["text_until_bos"].get<std::string>();
}

TEST(CliRun, GreedyTextMatchesGolden) {
  for (const std::string model : {"stories260K-f32.gguf", "stories260K-hf"}) {
    const Result r = run_skiff("run -m " + kModels + "/derived/" + model + " -n 256 --temp 0");
    ASSERT_EQ(r.exit_code, 0) << r.err;
    const std::string text = golden_text();
    std::string out = r.out;
    out.erase(0, out.find_first_not_of(' '));
    EXPECT_EQ(out.substr(0, text.size()), text) << model;
    EXPECT_NE(r.err.find("tok/s"), std::string::npos);
    EXPECT_NE(r.err.find("decode bandwidth"), std::string::npos);
  }
}

TEST(CliRun, PromptIsEchoedAndContinued) {
  const Result r = run_skiff("run -m " + kModels +
                             "/derived/stories260K-f32.gguf -p 'Once upon a time' -n 20 --seed 3");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out.rfind("Once upon a time", 0), 0u) << r.out;
  EXPECT_GT(r.out.size(), std::string("Once upon a time").size());
}

// The paged KV cache's flags: element type, pool size, block size, and the
// accounting printed at the end.
TEST(CliRun, KvCacheFlagsAndAccounting) {
  const std::string model = kModels + "/derived/stories260K-f32.gguf";
  Result r = run_skiff("run -m " + model + " -p 'Once upon a time' -n 40 --temp 0 --kv-type q8_0 --block-size 8");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  // 5 layers x 4 KV heads x (2-byte scale + 8 int8) per row, K and V.
  EXPECT_NE(r.err.find("400 B/token"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("blocks of 8"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("6 blocks in use at most"), std::string::npos) << r.err;  // 44 positions
  r = run_skiff("run -m " + model + " -p 'Once upon a time' -n 40 --temp 0 --kv-mem 64K");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.err.find("KV pool         : 0.06 MiB, 96 tokens (6 blocks of 16)"), std::string::npos) << r.err;
  r = run_skiff("run -m " + model + " -p 'Once upon a time' -n 400 --temp 0 --kv-mem 20K");  // 2 blocks
  EXPECT_EQ(r.exit_code, 1);  // the pool cannot hold the context: a clear error, not a crash
  EXPECT_NE(r.err.find("the KV cache holds 32 tokens"), std::string::npos) << r.err;
  r = run_skiff("run -m " + model + " -p hi --kv-type q4");
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.err.find("--kv-type"), std::string::npos) << r.err;
}

// Speculative decoding changes no greedy token, and run reports its acceptance.
TEST(CliRun, SpeculationGivesTheSameGreedyText) {
  const std::string model = kModels + "/derived/stories260K-f32.gguf";
  const std::string salty = kModels + "/derived/tinystories260K-saltyduckegg-f32.gguf";
  const Result plain = run_skiff("run -m " + model + " -p 'Tom and his dog' -n 80 --temp 0");
  ASSERT_EQ(plain.exit_code, 0) << plain.err;
  for (const std::string spec : {"--draft " + salty + " --spec-k 4", "--draft " + model + " --spec-k 8",
                                 std::string("--spec-method ngram --spec-k 3"),
                                 std::string("--spec-method suffix --spec-k 8")}) {
    const Result r = run_skiff("run -m " + model + " -p 'Tom and his dog' -n 80 --temp 0 " + spec);
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_EQ(r.out, plain.out) << spec;
    EXPECT_NE(r.err.find("speculation     :"), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("accepted at     :"), std::string::npos) << r.err;
  }
  const Result wrong = run_skiff("run -m " + model + " -p hi --draft " + kModels + "/gguf/llama-2-tiny-random.gguf");
  EXPECT_EQ(wrong.exit_code, 1);
  EXPECT_NE(wrong.err.find("vocabulary"), std::string::npos) << wrong.err;
  const Result bad = run_skiff("run -m " + model + " -p hi --spec-method draft");
  EXPECT_EQ(bad.exit_code, 1);
  EXPECT_NE(bad.err.find("--draft"), std::string::npos) << bad.err;
}

TEST(CliBenchSpec, TableHasPlainAndEveryK) {
  const std::string model = kModels + "/derived/stories260K-f32.gguf";
  const Result r = run_skiff("bench-spec -m " + model + " --draft " + model +
                             " --spec-k 1,4 -n 24 -r 1 -p 'Once upon a time'");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("| plain | 0 |"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("| draft | 1 |"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("| draft | 4 |"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("NO"), std::string::npos) << r.out;  // every k gives the plain output
  EXPECT_NE(r.out.find("100.0%"), std::string::npos) << r.out;  // a perfect draft
}

TEST(CliRun, MissingModelIsOneLineAndNonZeroExit) {
  const Result r = run_skiff("run -m /nonexistent.gguf -p hi");
  EXPECT_NE(r.exit_code, 0);
  EXPECT_TRUE(r.out.empty());
  EXPECT_NE(r.err.find("not found"), std::string::npos) << r.err;
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
}

TEST(CliRun, BadFlagIsAnError) {
  const Result r = run_skiff("run -m " + kModels + "/derived/stories260K-f32.gguf --no-such-flag");
  EXPECT_NE(r.exit_code, 0);
  const Result r2 = run_skiff("run -m " + kModels + "/derived/stories260K-f32.gguf --temp abc");
  EXPECT_NE(r2.exit_code, 0);
}

// --times (tools/bench_grammar.py reads it): each case's compile time, and
// per text one mask time and one byte length per token.
TEST(CliGrammar, TimesGiveEachTokensMaskTimeAndBytes) {
  const std::string cases = testing::TempDir() + "/grammar_times_cases.jsonl";
  const std::string text = "{\"name\": \"Ada Lovelace\", \"age\": 36}";
  std::ofstream(cases) << R"({"json_schema": {"type": "object", "properties": {"name": {"type": "string"}, )"
                       << R"("age": {"type": "integer"}}}, "texts": [)" << nlohmann::json(text).dump() << "]}\n"
                       << R"({"json_schema": {"uniqueItems": true}, "texts": ["[]"]})" << "\n";
  const std::string vocab = kModels + "/vocab/ggml-vocab-llama-bpe.gguf";
  const Result r = run_skiff("grammar -m " + vocab + " --cases " + cases + " --times");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  std::vector<nlohmann::json> lines;
  std::istringstream out(r.out);
  for (std::string line; std::getline(out, line);) lines.push_back(nlohmann::json::parse(line));
  ASSERT_EQ(lines.size(), 3u) << r.out;
  EXPECT_GT(lines[0]["compile_us"].get<double>(), 0);
  const nlohmann::json& result = lines[0]["results"][0];
  EXPECT_TRUE(result["accepted"].get<bool>()) << r.out;
  const size_t tokens = result["tokens"].get<size_t>();
  ASSERT_EQ(result["mask_us"].size(), tokens);
  ASSERT_EQ(result["token_bytes"].size(), tokens);
  size_t bytes = 0;
  for (const auto& n : result["token_bytes"]) bytes += n.get<size_t>();
  EXPECT_EQ(bytes, text.size());
  EXPECT_LE(result["tokens_forced"].get<size_t>(), tokens);
  EXPECT_NE(lines[1]["error"].get<std::string>().find("uniqueItems"), std::string::npos) << r.out;
  EXPECT_TRUE(lines[2].contains("summary"));
  // Without --times the lines stay as they were.
  const Result plain = run_skiff("grammar -m " + vocab + " --cases " + cases);
  EXPECT_EQ(plain.out.find("mask_us\":["), std::string::npos) << plain.out;
  EXPECT_EQ(plain.out.find("compile_us\":"), plain.out.rfind("compile_us\":")) << plain.out;  // the summary's only
}

TEST(CliRun, CorruptModelIsAClearError) {
  const std::string path = testing::TempDir() + "/corrupt.gguf";
  std::ofstream(path) << "GGUF\x03garbage";
  const Result r = run_skiff("run -m " + path + " -p hi");
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("corrupt.gguf"), std::string::npos) << r.err;
}

}  // namespace
