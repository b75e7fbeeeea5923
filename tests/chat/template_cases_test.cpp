// Every real template in ../shared/chat-templates renders each committed
// conversation byte for byte as Python's jinja2 did under transformers'
// settings (tools/make_chat_template_cases.py), or fails where jinja2 raised:
// with raise_exception's very message when the template raised one.
#include <gtest/gtest.h>

#include <filesystem>

#include "base/error.h"
#include "chat/chat_template.h"
#include "chat_test_support.h"

namespace skiff {
namespace {

namespace fs = std::filesystem;

std::vector<std::string> case_files() {
  std::vector<std::string> names;
  for (const auto& entry : fs::directory_iterator(testing::chat_cases_dir()))
    if (entry.path().extension() == ".json") names.push_back(entry.path().stem().string());
  std::sort(names.begin(), names.end());
  return names;
}

// Where two renders first differ, with some context, for a readable failure.
std::string first_difference(const std::string& expected, const std::string& actual) {
  size_t i = 0;
  while (i < expected.size() && i < actual.size() && expected[i] == actual[i]) ++i;
  const size_t from = i < 60 ? 0 : i - 60;
  return "first difference at byte " + std::to_string(i) + "\n  expected: ..." +
         nlohmann::json(expected.substr(from, 120)).dump() + "\n  actual:   ..." +
         nlohmann::json(actual.substr(from, 120)).dump();
}

void check_case(const ChatTemplate* chat_template, const std::string& compile_error,
                const nlohmann::ordered_json& c, const std::tm& now) {
  SCOPED_TRACE("case " + c["name"].get<std::string>());
  ChatTemplateInputs inputs;
  inputs.messages = c["messages"];
  inputs.add_generation_prompt = c["add_generation_prompt"].get<bool>();
  inputs.bos_token = c["bos_token"].get<std::string>();
  inputs.eos_token = c["eos_token"].get<std::string>();
  if (c.contains("extra")) inputs.extra = c["extra"];
  inputs.now = now;
  std::string rendered, error = compile_error;
  if (chat_template) {
    try {
      rendered = chat_template->render(inputs);
    } catch (const Error& e) {
      error = e.what();
    }
  }
  if (c.contains("expected")) {
    ASSERT_TRUE(error.empty()) << "jinja2 rendered it; skiff failed: " << error;
    EXPECT_EQ(rendered, c["expected"].get<std::string>()) << first_difference(c["expected"], rendered);
    return;
  }
  EXPECT_FALSE(error.empty()) << "jinja2 raised " << c["error_type"] << ": " << c["error"]
                              << "\nskiff rendered: " << rendered.substr(0, 400);
  if (c["error_type"] == "TemplateError") {  // raise_exception: its very message
    EXPECT_EQ(error, c["error"].get<std::string>());
  }
}

class TemplateCases : public ::testing::TestWithParam<std::string> {};

TEST_P(TemplateCases, RenderAsJinja2Does) {
  const auto data = nlohmann::ordered_json::parse(
      testing::read_text_file(testing::chat_cases_dir() + "/" + GetParam() + ".json"));
  const std::string path = testing::chat_templates_dir() + "/" + data["template"].get<std::string>();
  ASSERT_TRUE(fs::exists(path)) << path;
  std::unique_ptr<ChatTemplate> chat_template;
  std::string compile_error;
  try {
    chat_template = std::make_unique<ChatTemplate>(testing::read_text_file(path));
  } catch (const Error& e) {
    compile_error = e.what();
  }
  const std::tm now = testing::parse_iso_time(data["now"].get<std::string>());
  for (const auto& c : data["cases"]) check_case(chat_template.get(), compile_error, c, now);
}

std::string test_name(const ::testing::TestParamInfo<std::string>& info) {
  std::string name = info.param;
  for (char& ch : name)
    if (!std::isalnum(static_cast<unsigned char>(ch))) ch = '_';
  return name;
}

INSTANTIATE_TEST_SUITE_P(RealTemplates, TemplateCases, ::testing::ValuesIn(case_files()), test_name);

TEST(TemplateCases, CoverEveryTemplateInShared) {
  size_t templates = 0;
  for (const auto& entry : fs::directory_iterator(testing::chat_templates_dir())) {
    if (entry.path().extension() != ".jinja") continue;
    ++templates;
    EXPECT_TRUE(fs::exists(testing::chat_cases_dir() + "/" + entry.path().stem().string() + ".json"))
        << entry.path() << " has no cases: run tools/make_chat_template_cases.py";
  }
  EXPECT_EQ(templates, 59u);
}

}  // namespace
}  // namespace skiff
