// skiff template end to end: the prompt alone on stdout (byte for byte as
// jinja2 renders it), the model's BOS/EOS by default, and one-line errors with
// exit code 1 for bad messages or a template that raises.
#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>

#include "cli/run_skiff.h"
#include "real_models.h"

namespace {

using skiff::testing::run_skiff;

const std::string kModel = std::string(SKIFF_MODELS_DIR) + "/derived/stories260K-f32.gguf";
const std::string kTemplates = std::string(SKIFF_MODELS_DIR) + "/../chat-templates";
const std::string kCases = std::string(SKIFF_SOURCE_DIR) + "/tests/data/chat_templates";

std::string write_temp(const std::string& name, const std::string& text) {
  const std::string path = ::testing::TempDir() + "/template_cli_" + name;
  std::ofstream(path, std::ios::binary) << text;
  return path;
}

nlohmann::ordered_json read_json(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return nlohmann::ordered_json::parse(text.str());
}

nlohmann::ordered_json find_case(const std::string& file, const std::string& name) {
  const auto cases = read_json(kCases + "/" + file);
  for (const auto& c : cases["cases"])
    if (c["name"] == name) return c;
  ADD_FAILURE() << "no case " << name << " in " << file;
  return {};
}

TEST(CliTemplate, PrintsExactlyWhatJinja2Renders) {
  for (const char* name : {"system_user", "multi_turn_no_generation_prompt"}) {
    const auto c = find_case("Qwen-Qwen2.5-7B-Instruct.json", name);
    const std::string messages = write_temp(std::string(name) + ".json", c["messages"].dump());
    const auto r = run_skiff("template --template " + kTemplates + "/Qwen-Qwen2.5-7B-Instruct.jinja --messages " +
                             messages + (c["add_generation_prompt"].get<bool>() ? " --add-generation-prompt" : "") +
                             " --bos-token '<s>' --eos-token '</s>'");
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_EQ(r.out, c["expected"].get<std::string>());
    EXPECT_EQ(r.err, "");
  }
}

TEST(CliTemplate, TokensDefaultToTheModelsElseEmpty) {
  const std::string t = write_temp("tokens.jinja", "[{{ bos_token }}|{{ eos_token }}|{{ messages[0].content }}]");
  const std::string messages = write_temp("hello.json", R"([{"role": "user", "content": "hi"}])");
  auto r = run_skiff("template -m " + kModel + " --template " + t + " --messages " + messages);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "[<s>|</s>|hi]");
  r = run_skiff("template --template " + t + " --messages " + messages + " --eos-token E");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "[|E|hi]");
}

TEST(CliTemplate, MessagesObjectCarriesMoreVariables) {
  const std::string t = write_temp("tools.jinja", "{{ tools|tojson }}{{ messages|length }}{{ enable_thinking }}");
  const std::string messages = write_temp(
      "object.json", R"({"messages": [{"role": "user", "content": "hi"}], "tools": [{"type": "function", "b": 1, "a": 2}], "enable_thinking": false})");
  const auto r = run_skiff("template --template " + t + " --messages " + messages);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, R"([{"type": "function", "b": 1, "a": 2}]1False)");
}

TEST(CliTemplate, BadInputFailsWithOneLine) {
  const std::string t = write_temp("plain.jinja", "{{ messages[0].content }}");
  auto r = run_skiff("template --template " + t + " --messages " + write_temp("bad.json", "[{\"role\": "));
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("invalid JSON"), std::string::npos) << r.err;
  EXPECT_EQ(r.out, "");
  r = run_skiff("template --template " + t + " --messages " + write_temp("scalar.json", "42"));
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("expected a JSON list of messages"), std::string::npos) << r.err;
  r = run_skiff("template --template " + write_temp("raises.jinja", "{{ raise_exception('System role not supported') }}") +
                " --messages " + write_temp("ok.json", "[]"));
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(r.err, "skiff: error: System role not supported\n");
  r = run_skiff("template --template " + write_temp("syntax.jinja", "{% if %}") + " --messages " + write_temp("ok2.json", "[]"));
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("line 1, column"), std::string::npos) << r.err;
  r = run_skiff("template -m " + kModel + " --messages " + write_temp("ok3.json", "[]"));
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("has no chat template"), std::string::npos) << r.err;
}

TEST(CliTemplate, RealModelsOwnTemplate) {
  const auto model = skiff::testing::real_model("qwen2.5-coder-0.5b-instruct-q4_k_m.gguf");
  if (!model) GTEST_SKIP() << "the real model is not in the cache";
  const auto c = read_json(kCases + "/real/qwen2.5-coder-0.5b-instruct.json");
  const auto r = run_skiff("template -m " + *model + " --messages " + write_temp("real.json", c["messages"].dump()) +
                           " --add-generation-prompt");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, c["expected"].get<std::string>());
}

}  // namespace
