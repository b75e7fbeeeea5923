// chat_syntax_for_template on every template in ../shared/chat-templates: the
// tool-call syntax and reasoning markers each renders (vLLM's parser names),
// and chat_syntax_named's names.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <map>

#include "chat/chat_output.h"
#include "chat_test_support.h"

namespace skiff {
namespace {

namespace fs = std::filesystem;

struct DetectedSyntax {
  std::string tool;
  std::string reasoning;  // "" for none; deepseek_r1 = <think> with the reply starting inside it
};

// What each template writes. "plain" where skiff has no parser for the
// family's calls (noted), or the template renders none.
const std::map<std::string, DetectedSyntax> kExpected = {
    {"Apertus-8B-Instruct", {"plain", ""}},  // <|tools_prefix|>[{"NAME": {...}}]: not parsed
    {"Apriel-1.6-15b-Thinker-fixed", {"apriel", "apriel"}},
    {"Bielik-11B-v3.0-Instruct", {"hermes", "qwen3"}},
    {"ByteDance-Seed-OSS", {"seed_oss", "seed_oss"}},
    {"Cohere2MoE", {"command_r7b", "command_r7b"}},
    {"CohereForAI-c4ai-command-r-plus-tool_use", {"command_r", ""}},
    {"GLM-4.6", {"glm45", "qwen3"}},
    {"GLM-4.7-Flash", {"glm45", "deepseek_r1"}},
    {"GigaChat3-10B-A1.8B", {"plain", ""}},    // a "function call" role: not parsed
    {"GigaChat3.1-10B-A1.8B", {"plain", ""}},  // <|function_call|>: not parsed
    {"Kimi-K2-Instruct", {"kimi_k2", ""}},
    {"Kimi-K2-Thinking", {"kimi_k2", "qwen3"}},
    {"Kimi-K3", {"plain", ""}},  // tags built by macros: not parsed
    {"LFM2-8B-A1B", {"plain", ""}},
    {"LFM2.5-8B-A1B", {"plain", "qwen3"}},  // Python-style calls: not parsed
    {"LFM2.5-Instruct", {"plain", "qwen3"}},
    {"MiMo-VL", {"hermes", ""}},
    {"MiniMax-M1", {"minimax_m1", ""}},
    {"MiniMax-M2", {"minimax_m2", "deepseek_r1"}},
    {"MiniMax-M3", {"plain", "minimax_m3"}},  // nested XML arguments: not parsed
    {"Mistral-Small-3.2-24B-Instruct-2506", {"mistral", ""}},
    {"NVIDIA-Nemotron-3-Nano-30B-A3B-BF16", {"qwen3_coder", "deepseek_r1"}},
    {"NVIDIA-Nemotron-Nano-v2", {"nemotron_v2", "deepseek_r1"}},
    {"NousResearch-Hermes-2-Pro-Llama-3-8B-tool_use", {"hermes", ""}},
    {"Qwen-QwQ-32B", {"hermes", "qwen3"}},
    {"Qwen-Qwen2.5-7B-Instruct", {"hermes", ""}},
    {"Qwen3-Coder", {"qwen3_coder", ""}},
    {"Qwen3.5-4B", {"qwen3_coder", "deepseek_r1"}},
    {"Reka-Edge", {"hermes", "qwen3"}},
    {"Spark2.5", {"glm45", "deepseek_r1"}},
    {"StepFun3.5-Flash", {"qwen3_coder", "deepseek_r1"}},
    {"deepseek-ai-DeepSeek-R1-Distill-Llama-8B", {"deepseek_v3", "deepseek_r1"}},
    {"deepseek-ai-DeepSeek-V3.1", {"deepseek_v31", "qwen3"}},
    {"deepseek-ai-DeepSeek-V3.2", {"deepseek_v32", "qwen3"}},
    {"deepseek-ai-DeepSeek-V4-Flash-0731", {"deepseek_v4", "qwen3"}},
    {"deepseek-ai-DeepSeek-V4", {"deepseek_v4", "qwen3"}},
    {"fireworks-ai-llama-3-firefunction-v2", {"firefunction_v2", ""}},
    {"google-gemma-4-31B-it-interleaved", {"plain", ""}},  // <|tool_call>call:NAME{...}: not parsed
    {"google-gemma-4-31B-it", {"plain", ""}},
    {"ibm-granite-granite-4.0", {"hermes", ""}},
    {"ibm-granite-granite-4.1", {"hermes", ""}},
    {"inclusionai-ling-3.0-flash", {"glm45", "deepseek_r1"}},
    {"llama-cpp-deepseek-r1", {"deepseek_v3", "deepseek_r1"}},
    {"llama-cpp-rwkv-world", {"plain", "qwen3"}},
    {"llm-jp-llm-jp-4.1-8b-thinking", {"openai", "openai_gptoss"}},
    {"meetkai-functionary-medium-v3.1", {"functionary_v31", ""}},
    {"meetkai-functionary-medium-v3.2", {"functionary_v3", ""}},
    {"meta-llama-Llama-3.1-8B-Instruct", {"llama3_json", ""}},
    {"meta-llama-Llama-3.2-3B-Instruct", {"llama3_json", ""}},
    {"mistralai-Ministral-3-14B-Reasoning-2512", {"mistral", "mistral"}},
    {"muse-glimmer", {"plain", ""}},              // <atem:function_calls>: not parsed
    {"openbmb-MiniCPM5-1B", {"plain", "qwen3"}},  // <function name=...>: not parsed
    {"poolside-Laguna-S-2.1", {"glm45", "deepseek_r1"}},
    {"poolside-Laguna-XS-2.1", {"glm45", "qwen3"}},
    {"poolside-Laguna-XS.2", {"glm45", "qwen3"}},
    {"tencent-Hy3", {"plain", ""}},  // tags with a suffix token: not parsed
    {"unsloth-Apriel-1.5", {"apriel", "apriel"}},
    {"unsloth-mistral-Devstral-Small-2507", {"mistral", ""}},
    {"upstage-Solar-Open-100B", {"plain", ""}},  // <|tool_call:begin|>ID<|tool_call:name|>...: not parsed
};

std::vector<std::string> template_names() {
  std::vector<std::string> names;
  // As chat_templates_dir() has it; joined as paths, where GCC 12 -O1 warns
  // falsely (-Warray-bounds) on its string concatenation inlined here.
  for (const auto& entry : fs::directory_iterator(fs::path(SKIFF_MODELS_DIR) / ".." / "chat-templates")) {
    if (entry.path().extension() != ".jinja") continue;
    names.push_back(entry.path().stem().string());
  }
  std::sort(names.begin(), names.end());
  return names;
}

TEST(ChatSyntaxDetection, EveryTemplateInSharedMapsToItsFamily) {
  const std::vector<std::string> names = template_names();
  for (const std::string& name : names) {
    SCOPED_TRACE(name);
    const auto expected = kExpected.find(name);
    ASSERT_NE(expected, kExpected.end()) << "add it to the table";
    const auto syntax =
        chat_syntax_for_template(testing::read_text_file(testing::chat_templates_dir() + "/" + name + ".jinja"));
    ASSERT_NE(syntax, nullptr);
    EXPECT_EQ(syntax->name(), expected->second.tool);
    EXPECT_EQ(syntax->reasoning_name(), expected->second.reasoning);
  }
  EXPECT_EQ(names.size(), 59u);
  EXPECT_EQ(kExpected.size(), 59u);
}

TEST(ChatSyntaxDetection, TemplateWithoutToolsIsPlain) {
  const auto syntax = chat_syntax_for_template("{% for m in messages %}{{ m.content }}{% endfor %}");
  EXPECT_EQ(syntax->name(), "plain");
  EXPECT_EQ(syntax->reasoning_name(), "");
  const ChatReply reply = syntax->parse("<tool_call>{\"name\": \"f\", \"arguments\": {}}</tool_call>", false);
  EXPECT_TRUE(reply.tool_calls.empty());
  EXPECT_EQ(reply.content, "<tool_call>{\"name\": \"f\", \"arguments\": {}}</tool_call>");
}

TEST(ChatSyntaxNames, EveryNameMakesASyntax) {
  for (const std::string& name : chat_syntax_names()) {
    const auto syntax = chat_syntax_named(name, "");
    ASSERT_NE(syntax, nullptr) << name;
    EXPECT_EQ(syntax->name(), name);
  }
  for (const std::string& name : chat_reasoning_names()) {
    const auto syntax = chat_syntax_named("", name);
    ASSERT_NE(syntax, nullptr) << name;
  }
  EXPECT_EQ(chat_syntax_named("", "")->name(), "plain");
  EXPECT_EQ(chat_syntax_named("qwen3_xml", "qwen3")->name(), "qwen3_coder");
  EXPECT_EQ(chat_syntax_named("no_such_parser", ""), nullptr);
  EXPECT_EQ(chat_syntax_named("hermes", "no_such_parser"), nullptr);
  EXPECT_EQ(chat_syntax_named("hermes", "openai_gptoss"), nullptr);
  EXPECT_EQ(chat_syntax_named("", "openai_gptoss")->name(), "openai");
}

}  // namespace
}  // namespace skiff
