// skiff bench end to end: llama-bench's JSON fields, skipping tests with
// -p 0 / -n 0, comma lists, and errors as one line with a non-zero exit.
// Values are checked for sense (positive, consistent), never against a time.
#include <gtest/gtest.h>

#include <algorithm>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "cli/run_skiff.h"

namespace {

using skiff::testing::run_skiff;
using nlohmann::json;

const std::string kModel = std::string(SKIFF_MODELS_DIR) + "/derived/stories260K-f32.gguf";

std::vector<json> json_lines(const std::string& out) {
  std::vector<json> lines;
  std::istringstream in(out);
  for (std::string line; std::getline(in, line);) {
    json j = json::parse(line, nullptr, false);
    EXPECT_TRUE(j.is_object()) << "not a JSON object: " << line;
    lines.push_back(std::move(j));
  }
  return lines;
}

TEST(CliBench, JsonHasLlamaBenchFieldsAndPositiveValues) {
  const auto r = run_skiff("bench -m " + kModel + " -p 16 -n 8 -r 2 -t 2 -o json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const std::vector<json> lines = json_lines(r.out);
  ASSERT_EQ(lines.size(), 2u) << r.out;
  EXPECT_EQ(lines[0]["test"], "pp16");
  EXPECT_EQ(lines[1]["test"], "tg8");
  EXPECT_EQ(lines[0]["n_prompt"], 16);
  EXPECT_EQ(lines[0]["n_gen"], 0);
  EXPECT_EQ(lines[1]["n_prompt"], 0);
  EXPECT_EQ(lines[1]["n_gen"], 8);
  for (const json& j : lines) {
    EXPECT_EQ(j["model_filename"], kModel);
    EXPECT_NE(j["model_type"].get<std::string>().find("F32"), std::string::npos) << j;
    EXPECT_GT(j["model_size"].get<double>(), 1e6);
    EXPECT_GT(j["model_n_params"].get<double>(), 2e5);
    EXPECT_EQ(j["n_depth"], 0);
    EXPECT_EQ(j["n_threads"], 2);
    EXPECT_GT(j["avg_ts"].get<double>(), 0);
    EXPECT_GE(j["stddev_ts"].get<double>(), 0);
    ASSERT_EQ(j["samples_ts"].size(), 2u);
    double mean = 0;
    for (const json& s : j["samples_ts"]) mean += s.get<double>() / 2;
    EXPECT_NEAR(j["avg_ts"].get<double>(), mean, 1e-6 * mean);
    EXPECT_GT(j["triad_gbs"].get<double>(), 0);
    EXPECT_GT(j["plain_read_gbs"].get<double>(), 0);
    EXPECT_GT(j["peak_gflops"].get<double>(), 0);
    EXPECT_GT(j["int8_peak_gops"].get<double>(), 0);
    EXPECT_FALSE(j["isa"].get<std::string>().empty());
  }
  EXPECT_GT(lines[0]["prefill_efficiency"].get<double>(), 0);
  EXPECT_EQ(lines[0]["prefill_peak"], "fma");  // F32 weights: float products
  EXPECT_FALSE(lines[1].contains("prefill_peak"));
  EXPECT_GT(lines[1]["decode_efficiency"].get<double>(), 0);
  // Decode is judged against the triads measured around its own repetitions:
  // each repetition against the mean of the two around it.
  EXPECT_FALSE(lines[0].contains("triad_during_gbs"));
  const json& tg = lines[1];
  ASSERT_EQ(tg["triad_samples_gbs"].size(), 3u);  // before each of 2 repetitions, after the last
  ASSERT_EQ(tg["plain_read_samples_gbs"].size(), 3u);
  const double bytes = tg["read_gbs"].get<double>() * 1e9 / tg["avg_ts"].get<double>();
  // The same against the plain read, decode's own limit.
  for (const auto& [samples, field] : {std::pair{"triad_samples_gbs", "decode_efficiency"},
                                       std::pair{"plain_read_samples_gbs", "decode_efficiency_of_read"}}) {
    double want = 0;
    for (int i = 0; i < 2; ++i) {
      const double around = (tg[samples][i].get<double>() + tg[samples][i + 1].get<double>()) / 2;
      want += bytes * tg["samples_ts"][i].get<double>() / (around * 1e9) / 2;
    }
    EXPECT_NEAR(tg[field].get<double>(), want, 1e-9 * want) << field;
  }
  EXPECT_GT(tg["triad_during_gbs"].get<double>(), 0);
  EXPECT_GT(tg["plain_read_during_gbs"].get<double>(), 0);
  EXPECT_FALSE(lines[0].contains("decode_efficiency_of_read"));
  EXPECT_NE(r.err.find("machine: "), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("tg8 t=2 rep 2/2"), std::string::npos) << r.err;
}

TEST(CliBench, ZeroSkipsATestAndListsMultiply) {
  const auto r = run_skiff("bench -m " + kModel + " -p 0 -n 4,6 -t 1,2 -r 1 -o json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const std::vector<json> lines = json_lines(r.out);
  ASSERT_EQ(lines.size(), 4u) << r.out;
  std::vector<std::string> seen;
  for (const json& j : lines)
    seen.push_back(j["test"].get<std::string>() + "/" + std::to_string(j["n_threads"].get<int>()));
  EXPECT_EQ(seen, (std::vector<std::string>{"tg4/1", "tg6/1", "tg4/2", "tg6/2"}));
}

// -d runs each test after that many cached tokens; tg reports the K/V it reads.
TEST(CliBench, DepthAddsCachedContextAndKvBytes) {
  const auto r = run_skiff("bench -m " + kModel + " -p 8 -n 4 -d 0,100 -r 1 --kv-type q8_0 -o json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const std::vector<json> lines = json_lines(r.out);
  ASSERT_EQ(lines.size(), 4u) << r.out;
  EXPECT_EQ(lines[2]["test"], "pp8 @ d100");
  EXPECT_EQ(lines[3]["test"], "tg4 @ d100");
  EXPECT_EQ(lines[3]["n_depth"], 100);
  EXPECT_EQ(lines[3]["type_k"], "q8_0");
  // stories260K: 2 × 5 layers × 4 KV heads × 10 B (one 8-value int8 group) per token,
  // over a mean context of 100 + 4/2 positions.
  EXPECT_DOUBLE_EQ(lines[3]["kv_bytes_per_step"].get<double>(), 102.0 * 400);
  EXPECT_DOUBLE_EQ(lines[1]["kv_bytes_per_step"].get<double>(), 2.0 * 400);
  EXPECT_GT(lines[3]["read_gbs"].get<double>(), 0);
  const auto too_deep = run_skiff("bench -m " + kModel + " -p 8 -n 0 -d 600 -r 1");
  EXPECT_NE(too_deep.exit_code, 0);
}

TEST(CliBench, MarkdownTableWithMachineLine) {
  const auto r = run_skiff("bench -m " + kModel + " -p 8 -n 0 -r 1");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out.rfind("machine: ", 0), 0u) << r.out;
  EXPECT_NE(r.out.find("GB/s"), std::string::npos);
  EXPECT_NE(r.out.find("| model"), std::string::npos);
  EXPECT_NE(r.out.find("| stories260K-f32.gguf"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("pp8"), std::string::npos);
  EXPECT_EQ(r.out.find("tg"), std::string::npos) << r.out;
  // Which limit each figure is held against is in its column's name.
  for (const char* column : {"| of FMA peak |", "| of int8 peak |", "| of triad |", "| of read |"})
    EXPECT_NE(r.out.find(column), std::string::npos) << column << "\n" << r.out;
  EXPECT_NE(r.out.find("int8 peak"), std::string::npos) << r.out;  // in the machine line too
}

// Quantized weights run their products on int8 activations: prefill is held
// against the int8 dot-product peak, not the float FMA peak.
TEST(CliBench, QuantizedPrefillIsHeldAgainstTheInt8Peak) {
  const std::string q8 = ::testing::TempDir() + "/skiff_cli_bench_q8_0.gguf";
  ASSERT_EQ(run_skiff("quantize " + kModel + " " + q8 + " q8_0").exit_code, 0);
  const auto r = run_skiff("bench -m " + q8 + " -p 16 -n 0 -r 1 -o json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const std::vector<json> lines = json_lines(r.out);
  ASSERT_EQ(lines.size(), 1u) << r.out;
  EXPECT_EQ(lines[0]["prefill_peak"], "int8") << lines[0];
  EXPECT_GT(lines[0]["prefill_efficiency"].get<double>(), 0);
}

// --profile adds a table of the matrix products per test on stderr; stdout
// keeps its JSON lines.
TEST(CliBench, ProfileListsTheProductsOfEachTest) {
  const auto r = run_skiff("bench -m " + kModel + " -p 0 -n 4 -r 2 -t 1 --profile -o json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(json_lines(r.out).size(), 1u) << r.out;
  EXPECT_NE(r.err.find("matrix products of tg4 (1 threads)"), std::string::npos) << r.err;
  // stories260K's head, once per decoded token of the 2 timed repetitions.
  EXPECT_NE(r.err.find("| 512x64 F32 | 1 | 8 | 0.131 |"), std::string::npos) << r.err;
  const auto plain = run_skiff("bench -m " + kModel + " -p 0 -n 4 -r 1 -t 1 -o json");
  EXPECT_EQ(plain.err.find("matrix products"), std::string::npos) << plain.err;
}

TEST(CliBench, BadInputIsOneLineAndNonZeroExit) {
  for (const std::string args : {"-p 16,x", "-n 8,,9", "-p 0 -n 0", "-t 0", "-o csv", "--no-such-flag"}) {
    const auto r = run_skiff("bench -m " + kModel + " " + args);
    EXPECT_NE(r.exit_code, 0) << args;
    EXPECT_TRUE(r.out.empty()) << args << ": " << r.out;
  }
  const auto r = run_skiff("bench -m /nonexistent.gguf");
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.err.find("not found"), std::string::npos) << r.err;
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
}

}  // namespace
