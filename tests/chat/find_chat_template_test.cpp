// find_chat_template: GGUF metadata (header only), HF directories
// (chat_template.jinja, tokenizer_config.json as a string or a named list),
// and the real Qwen2.5-Coder GGUF rendering as jinja2 renders its template.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "base/error.h"
#include "chat/chat_template.h"
#include "chat_test_support.h"
#include "gguf/gguf_writer.h"
#include "real_models.h"
#include "tokenizer/tokenizer.h"

namespace skiff {
namespace {

namespace fs = std::filesystem;

class FindChatTemplate : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::path(::testing::TempDir()) /
           ("find_chat_template_" + std::string(::testing::UnitTest::GetInstance()->current_test_info()->name()));
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  std::string write_gguf(const std::string& name, const std::optional<std::string>& chat_template) {
    gguf::GgufWriter writer;
    writer.set("general.architecture", gguf::make_string("llama"));
    if (chat_template) writer.set("tokenizer.chat_template", gguf::make_string(*chat_template));
    const std::string path = (dir_ / name).string();
    writer.write(path);
    return path;
  }

  void write_file(const std::string& name, const std::string& text) {
    std::ofstream((dir_ / name).string(), std::ios::binary) << text;
  }

  fs::path dir_;
};

TEST_F(FindChatTemplate, ReadsGgufMetadata) {
  EXPECT_EQ(find_chat_template(write_gguf("with.gguf", "{{ bos_token }}{{ messages[0].content }}")),
            "{{ bos_token }}{{ messages[0].content }}");
  EXPECT_EQ(find_chat_template(write_gguf("without.gguf", std::nullopt)), std::nullopt);
}

TEST_F(FindChatTemplate, GgufWithANonStringTemplateIsAnError) {
  gguf::GgufWriter writer;
  writer.set("tokenizer.chat_template", gguf::make_uint(gguf::ValueType::UINT32, 7));
  writer.write((dir_ / "bad.gguf").string());
  EXPECT_THROW(find_chat_template((dir_ / "bad.gguf").string()), Error);
  EXPECT_THROW(find_chat_template((dir_ / "missing.gguf").string()), Error);
}

TEST_F(FindChatTemplate, PrefersChatTemplateJinjaInAnHfDirectory) {
  write_file("chat_template.jinja", "from the jinja file");
  write_file("tokenizer_config.json", R"({"chat_template": "from the config"})");
  EXPECT_EQ(find_chat_template(dir_.string()), "from the jinja file");
}

TEST_F(FindChatTemplate, ReadsTokenizerConfigStringOrNamedList) {
  write_file("tokenizer_config.json", R"({"chat_template": "plain {{ x }}"})");
  EXPECT_EQ(find_chat_template(dir_.string()), "plain {{ x }}");
  write_file("tokenizer_config.json",
             R"({"chat_template": [{"name": "tool_use", "template": "tools"}, {"name": "default", "template": "main"}]})");
  EXPECT_EQ(find_chat_template(dir_.string()), "main");
  write_file("tokenizer_config.json", R"({"chat_template": [{"name": "tool_use", "template": "tools"}]})");
  EXPECT_EQ(find_chat_template(dir_.string()), std::nullopt);
  write_file("tokenizer_config.json", R"({"bos_token": "<s>"})");
  EXPECT_EQ(find_chat_template(dir_.string()), std::nullopt);
  write_file("tokenizer_config.json", R"({"chat_template": 5})");
  EXPECT_THROW(find_chat_template(dir_.string()), Error);
}

TEST_F(FindChatTemplate, DirectoryWithoutTemplateFiles) { EXPECT_EQ(find_chat_template(dir_.string()), std::nullopt); }

// The real model's template and tokens, against jinja2's rendering
// (tools/make_chat_template_cases.py read the template from the same file).
TEST(RealModelChatTemplate, QwenCoderRendersAsJinja2) {
  const auto model = testing::real_model("qwen2.5-coder-0.5b-instruct-q4_k_m.gguf");
  if (!model) GTEST_SKIP() << "the real model is not in the cache";
  const auto expected = nlohmann::ordered_json::parse(
      testing::read_text_file(testing::chat_cases_dir() + "/real/qwen2.5-coder-0.5b-instruct.json"));
  const std::optional<std::string> source = find_chat_template(*model);
  ASSERT_TRUE(source.has_value());
  const auto tokenizer = Tokenizer::from_path(*model);
  ChatTemplateInputs inputs;
  inputs.messages = expected["messages"];
  inputs.add_generation_prompt = expected["add_generation_prompt"].get<bool>();
  inputs.bos_token = tokenizer->token_text(tokenizer->bos_id());
  inputs.eos_token = tokenizer->token_text(tokenizer->eos_id());
  EXPECT_EQ(inputs.bos_token, expected["bos_token"].get<std::string>());
  EXPECT_EQ(inputs.eos_token, expected["eos_token"].get<std::string>());
  EXPECT_EQ(ChatTemplate(*source).render(inputs), expected["expected"].get<std::string>());
}

}  // namespace
}  // namespace skiff
