// skiff batch end to end on stories260K: one output line per non-empty input
// line, greedy text equal to skiff run's and independent of the batch, bad
// lines answered with an error object while the rest proceed, n completions,
// stop strings, logprobs, and a clear error for a missing input file.
#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "cli/run_skiff.h"

namespace {

using nlohmann::json;
using skiff::testing::run_skiff;

const std::string kModel = std::string(SKIFF_MODELS_DIR) + "/derived/stories260K-f32.gguf";

std::string temp_path(const std::string& name) {
  return ::testing::TempDir() + "/skiff_batch_" +
         ::testing::UnitTest::GetInstance()->current_test_info()->name() + "_" + name;
}

std::string write_file(const std::string& name, const std::vector<std::string>& lines) {
  const std::string path = temp_path(name);
  std::ofstream out(path);
  for (const std::string& line : lines) out << line << "\n";
  return path;
}

// The output's lines by "index"; every line must be a JSON object with one.
std::map<int, json> read_results(const std::string& path) {
  std::map<int, json> results;
  std::ifstream in(path);
  for (std::string line; std::getline(in, line);) {
    json j = json::parse(line, nullptr, false);
    EXPECT_TRUE(j.is_object()) << "not a JSON object: " << line;
    if (!j.is_object()) continue;
    EXPECT_TRUE(j.contains("index")) << line;
    const int index = j.value("index", -1);
    EXPECT_EQ(results.count(index), 0u) << "index " << index << " twice";
    results[index] = std::move(j);
  }
  return results;
}

// Runs skiff batch on the lines; returns the results by index.
std::map<int, json> batch(const std::vector<std::string>& lines, const std::string& flags = "",
                          std::string* err = nullptr) {
  const std::string input = write_file("in.jsonl", lines);
  const std::string output = temp_path("out.jsonl");
  const std::string threads = flags.find("-t ") == std::string::npos ? " -t 1" : "";
  const auto r = run_skiff("batch -m " + kModel + " --input " + input + " --output " + output + threads + " " + flags);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  if (err) *err = r.err;
  return read_results(output);
}

TEST(CliBatch, MixedRequestsBadLinesAndGreedyMatchesRun) {
  std::string err;
  const std::vector<std::string> lines = {
      R"({"prompt": "Once upon a time", "id": "greedy", "max_tokens": 24, "temperature": 0})",
      R"({"prompt": "The cat", "id": 7, "max_tokens": 12, "temperature": 0.9, "top_k": 20, "seed": 5, "n": 2})",
      R"({"prompt": "Once upon a time", "max_tokens": )",  // bad JSON
      "",                                                    // skipped, no index
      R"({"id": {"k": [1, 2]}, "max_tokens": 4})",          // no prompt
      R"({"prompt": "Lily", "temperature": "hot"})",        // wrong type
      R"({"prompt": "Lily", "top_p": 1.5})",                // out of range
      R"({"prompt": "Lily", "colour": "red"})",             // unknown field
      R"({"prompt": ")" + std::string(3000, 'a') + R"("})",  // longer than the context
      R"({"prompt": "Once upon a time", "max_tokens": 5, "temperature": 0, "logprobs": 2})",
      R"(["prompt", "not an object"])",
      R"({"prompt": "Tim", "max_tokens": 6, "stop_token_ids": [3, 4], "ignore_eos": true, "repetition_penalty": 1.1, "frequency_penalty": 0.5, "presence_penalty": 0.2, "min_p": 0.1, "top_p": 0.9})",
  };
  const std::map<int, json> results = batch(lines, "--temp 0.7 --seed 11", &err);
  ASSERT_EQ(results.size(), 11u);  // the empty line has no index
  for (const auto& [index, j] : results) EXPECT_GE(index, 0);

  // Greedy: the same text skiff run prints after echoing the prompt.
  const json& greedy = results.at(0);
  EXPECT_EQ(greedy["id"], "greedy");
  EXPECT_EQ(greedy["prompt"], "Once upon a time");
  EXPECT_GT(greedy["prompt_tokens"].get<int>(), 1);
  ASSERT_EQ(greedy["outputs"].size(), 1u);
  const json& g = greedy["outputs"][0];
  EXPECT_EQ(g["index"], 0);
  EXPECT_EQ(g["token_ids"].size(), 24u);
  EXPECT_EQ(g["finish_reason"], "length");
  EXPECT_FALSE(g.contains("logprobs"));
  const auto run = run_skiff("run -m " + kModel + " -p 'Once upon a time' -n 24 --temp 0 -t 1");
  ASSERT_EQ(run.exit_code, 0) << run.err;
  EXPECT_EQ(run.out, "Once upon a time" + g["text"].get<std::string>());

  // n = 2: two completions, each within max_tokens, the id echoed as given.
  const json& two = results.at(1);
  EXPECT_EQ(two["id"], 7);
  ASSERT_EQ(two["outputs"].size(), 2u);
  for (int i = 0; i < 2; ++i) {
    EXPECT_EQ(two["outputs"][i]["index"], i);
    EXPECT_LE(two["outputs"][i]["token_ids"].size(), 12u);
    EXPECT_FALSE(two["outputs"][i]["text"].get<std::string>().empty());
  }

  // Bad lines: an error naming the problem, the id when there is one.
  auto error_of = [&](int index) {
    const json& j = results.at(index);
    EXPECT_FALSE(j.contains("outputs")) << j;
    return j.value("error", std::string());
  };
  EXPECT_NE(error_of(2).find("invalid JSON"), std::string::npos) << error_of(2);
  EXPECT_NE(error_of(3).find("prompt"), std::string::npos) << error_of(3);
  EXPECT_EQ(results.at(3)["id"], json::parse(R"({"k": [1, 2]})"));
  EXPECT_NE(error_of(4).find("temperature"), std::string::npos) << error_of(4);
  EXPECT_NE(error_of(5).find("top_p"), std::string::npos) << error_of(5);
  EXPECT_NE(error_of(6).find("colour"), std::string::npos) << error_of(6);
  EXPECT_NE(error_of(6).find("unknown field"), std::string::npos) << error_of(6);
  EXPECT_NE(error_of(7).find("max_model_len"), std::string::npos) << error_of(7);
  EXPECT_NE(error_of(9).find("JSON object"), std::string::npos) << error_of(9);

  // logprobs: one entry per token, the greedy token the most likely.
  const json& lp = results.at(8)["outputs"][0];
  ASSERT_EQ(lp["logprobs"].size(), lp["token_ids"].size());
  ASSERT_EQ(lp["token_ids"].size(), 5u);
  for (size_t i = 0; i < 5; ++i) {
    const json& e = lp["logprobs"][i];
    EXPECT_EQ(e["token"], lp["token_ids"][i]);
    EXPECT_LE(e["logprob"].get<double>(), 0.0);
    ASSERT_EQ(e["top"].size(), 2u);
    EXPECT_EQ(e["top"][0][0], e["token"]);
    EXPECT_NEAR(e["top"][0][1].get<double>(), e["logprob"].get<double>(), 1e-5);
  }
  // The same prompt's greedy tokens, whatever else was in the batch.
  for (size_t i = 0; i < 5; ++i) EXPECT_EQ(lp["token_ids"][i], g["token_ids"][i]);

  EXPECT_TRUE(results.at(10).contains("outputs")) << results.at(10);

  EXPECT_NE(err.find("11/11 requests"), std::string::npos) << err;
  EXPECT_NE(err.find("7 failed"), std::string::npos) << err;
  EXPECT_NE(err.find("requests/s"), std::string::npos) << err;
  EXPECT_NE(err.find("prefix cache hit rate"), std::string::npos) << err;
  EXPECT_NE(err.find("preemptions"), std::string::npos) << err;
}

// A greedy request alone gives the tokens it gives in a crowded batch with a
// small token budget (chunked prefill, many sequences per step); a stop string
// cuts its text before the string.
TEST(CliBatch, GreedyIndependentOfBatchAndStopStrings) {
  const std::string greedy = R"({"prompt": "Once upon a time", "max_tokens": 32, "temperature": 0})";
  const auto alone = batch({greedy});
  ASSERT_EQ(alone.size(), 1u);
  const json& a = alone.at(0)["outputs"][0];
  ASSERT_EQ(a["token_ids"].size(), 32u);

  std::vector<std::string> crowd;
  for (int i = 0; i < 10; ++i)
    crowd.push_back(R"({"prompt": "Lily and her friend went to the park", "max_tokens": 40, "seed": )" +
                    std::to_string(i) + "}");
  crowd.insert(crowd.begin() + 4, greedy);
  const auto crowded = batch(crowd, "--max-batch-tokens 16 --max-seqs 6");
  ASSERT_EQ(crowded.size(), 11u);
  EXPECT_EQ(crowded.at(4)["outputs"][0]["token_ids"], a["token_ids"]);
  EXPECT_EQ(crowded.at(4)["outputs"][0]["text"], a["text"]);

  // Stop at a piece of the greedy text: the output ends just before it.
  const std::string text = a["text"].get<std::string>();
  ASSERT_GT(text.size(), 30u);
  const std::string stop = text.substr(20, 5);
  const std::string expected = text.substr(0, text.find(stop));
  json line = json::parse(greedy);
  line["stop"] = json::array({"no such string", stop});
  json line2 = json::parse(greedy);
  line2["stop"] = stop;  // a plain string works too
  const auto stopped = batch({line.dump(), line2.dump()});
  for (int i = 0; i < 2; ++i) {
    const json& o = stopped.at(i)["outputs"][0];
    EXPECT_EQ(o["text"], expected);
    EXPECT_EQ(o["finish_reason"], "stop");
    EXPECT_EQ(o["stop_reason"], stop);
    EXPECT_LT(o["token_ids"].size(), 32u);
  }
}

TEST(CliBatch, SpeculationKeepsGreedyText) {
  const std::vector<std::string> lines = {
      R"({"prompt": "Once upon a time", "max_tokens": 40, "temperature": 0})",
      R"({"prompt": "The cat", "max_tokens": 30, "temperature": 0, "stop": ["."]})",
      R"({"prompt": "Lily", "max_tokens": 50, "temperature": 0, "logprobs": 1})",
  };
  const std::map<int, json> plain = batch(lines);
  const std::string salty = std::string(SKIFF_MODELS_DIR) + "/derived/tinystories260K-saltyduckegg-f32.gguf";
  for (const std::string flags :
       {"--draft " + salty + " --spec-k 4", std::string("--spec-method ngram"), std::string("--spec-method suffix")}) {
    const std::map<int, json> spec = batch(lines, flags);
    ASSERT_EQ(spec.size(), plain.size());
    for (const auto& [i, result] : plain) {
      // Logprobs come from the verification pass's rows, whose logits may
      // differ from a one-token decode's in the last bits: equal within 1e-4.
      json a = spec.at(i), b = result;
      const json lp_a = a["outputs"][0]["logprobs"], lp_b = b["outputs"][0]["logprobs"];
      a["outputs"][0].erase("logprobs");
      b["outputs"][0].erase("logprobs");
      EXPECT_EQ(a, b) << flags << ", line " << i;
      ASSERT_EQ(lp_a.size(), lp_b.size());
      for (size_t t = 0; t < lp_a.size(); ++t) {
        EXPECT_EQ(lp_a[t]["token"], lp_b[t]["token"]);
        EXPECT_NEAR(lp_a[t]["logprob"].get<double>(), lp_b[t]["logprob"].get<double>(), 1e-4);
      }
    }
  }
}

TEST(CliBatch, FlagsAreDefaultsAndSeedsReproduce) {
  const std::vector<std::string> lines = {R"({"prompt": "Once upon a time"})", R"({"prompt": "The dog"})",
                                          R"({"prompt": "The dog", "max_tokens": 3})"};
  const auto first = batch(lines, "-n 10 --seed 42");
  const auto second = batch(lines, "-n 10 --seed 42 --max-seqs 1");
  ASSERT_EQ(first.size(), 3u);
  ASSERT_EQ(second.size(), 3u);
  for (int i = 0; i < 3; ++i) EXPECT_EQ(first.at(i)["outputs"], second.at(i)["outputs"]) << i;
  EXPECT_LE(first.at(0)["outputs"][0]["token_ids"].size(), 10u);
  EXPECT_LE(first.at(2)["outputs"][0]["token_ids"].size(), 3u);
  // --ignore-eos with greedy defaults: exactly max_tokens.
  const auto fixed = batch({R"({"prompt": "The dog"})"}, "-n 50 --temp 0 --ignore-eos");
  EXPECT_EQ(fixed.at(0)["outputs"][0]["token_ids"].size(), 50u);
}

TEST(CliBatch, MissingInputOrBadFlagsFailClearly) {
  auto r = run_skiff("batch -m " + kModel + " --input /nonexistent/prompts.jsonl --output " + temp_path("o"));
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.err.find("cannot read --input /nonexistent/prompts.jsonl"), std::string::npos) << r.err;
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;

  const std::string input = write_file("in.jsonl", {R"({"prompt": "hi"})"});
  r = run_skiff("batch -m " + kModel + " --input " + input + " --output /nonexistent/out.jsonl");
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.err.find("cannot write --output"), std::string::npos) << r.err;
  for (const std::string flags : {"--kv-type q4", "--kv-mem lots", "--max-seqs 0", "--temp -1", "--no-such-flag"}) {
    r = run_skiff("batch -m " + kModel + " --input " + input + " --output " + temp_path("o") + " " + flags);
    EXPECT_NE(r.exit_code, 0) << flags;
  }
  r = run_skiff("batch -m /nonexistent.gguf --input " + input + " --output " + temp_path("o"));
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.err.find("not found"), std::string::npos) << r.err;
}

// Hostile lines each get an error (or a defined run) and never take the
// process down with the other lines: values nested 60k deep (they overflowed
// the stack when copied or printed), a megabyte quoted in an error, and a
// repetition penalty that turns logits into +inf.
TEST(CliBatch, HostileLinesFailAloneAndQuoteOnlyAnExcerpt) {
  const std::string deep = std::string(60000, '[') + std::string(60000, ']');
  const std::string huge(1 << 20, '7');
  const std::vector<std::string> lines = {
      R"({"prompt": "Once", "id": )" + deep + "}",
      R"({"prompt": "Once", "stop": )" + deep + "}",
      R"({"prompt": "Once", "max_tokens": )" + deep + "}",
      R"({"prompt": "Once", "max_tokens": ")" + huge + R"("})",
      R"({"prompt": "Once upon a time", "max_tokens": 8, "repetition_penalty": 1e-38, "seed": 1})",
      R"({"prompt": "Once upon a time", "max_tokens": 8, "temperature": 0})",
  };
  const std::map<int, json> results = batch(lines);
  ASSERT_EQ(results.size(), lines.size());
  for (int i = 0; i < 3; ++i)
    EXPECT_NE(results.at(i).value("error", "").find("nested deeper"), std::string::npos) << i;
  const std::string quoted = results.at(3).value("error", "");
  EXPECT_NE(quoted.find("max_tokens must be an integer"), std::string::npos) << quoted.substr(0, 200);
  EXPECT_LT(quoted.size(), 200u);
  for (int i : {4, 5}) {
    const json& out = results.at(i)["outputs"][0];
    EXPECT_EQ(out["finish_reason"], "length") << results.at(i);
    EXPECT_EQ(out["token_ids"].size(), 8u);
  }
}

}  // namespace
