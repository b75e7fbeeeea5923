// ChatSyntax: a family's tool-call syntax (tool_call_format.h) after its
// reasoning markers (reasoning_markers.h); found by name, or from the strings
// a chat template's source writes, as llama.cpp's common/chat tells them.
#include "chat/chat_output.h"

#include <algorithm>
#include <exception>

#include "chat/chat_template.h"
#include "chat/reasoning_markers.h"
#include "chat/tool_call_format.h"

namespace skiff {

namespace {

using chat_syntax::ReasoningMarkers;
using chat_syntax::ToolCallFormat;

// gpt-oss writes its reasoning in harmony's analysis channel: the tool-call
// syntax "openai" reads it, under these reasoning names.
constexpr std::string_view kHarmonyReasoningNames[] = {"openai_gptoss", "gpt_oss"};

bool is_harmony_reasoning(std::string_view name) {
  return std::find(std::begin(kHarmonyReasoningNames), std::end(kHarmonyReasoningNames), name) !=
         std::end(kHarmonyReasoningNames);
}

// vLLM's other names for the same syntaxes.
std::string_view canonical_tool_name(std::string_view name) {
  if (name == "qwen3_xml") return "qwen3_coder";
  if (name == "llama4_json") return "llama3_json";
  if (name == "glm47") return "glm45";
  if (name == "gpt_oss") return "openai";
  return name;
}

class ComposedChatSyntax final : public ChatSyntax {
 public:
  ComposedChatSyntax(std::string name, std::shared_ptr<const ToolCallFormat> tools,
                     std::optional<ReasoningMarkers> reasoning, bool starts_inside, StringParameters strings = {})
      : name_(std::move(name)),
        tools_(std::move(tools)),
        reasoning_(std::move(reasoning)),
        starts_inside_(starts_inside),
        strings_(std::move(strings)) {}

  std::string_view name() const override { return name_; }
  std::string_view reasoning_name() const override {
    if (reasoning_) return reasoning_->name;
    return name_ == "openai" ? kHarmonyReasoningNames[0] : "";
  }

  ChatReply parse(std::string_view text, bool partial) const override {
    ChatReply reply;
    const size_t rest = reasoning_ ? chat_syntax::take_reasoning(text, partial, *reasoning_, starts_inside_, reply) : 0;
    tools_->parse(text.substr(rest), partial, strings_, reply);
    // The spaces templates put around markers are theirs, not the message's.
    reply.reasoning = chat_syntax::trim(reply.reasoning);
    reply.content = chat_syntax::trim(reply.content);
    reply.call_open = reply.call_open && partial;
    return reply;
  }

  std::optional<CallLayout> call_layout() const override { return tools_->call_layout(); }

  std::string_view reasoning_end() const override {
    if (reasoning_ && starts_inside_) return reasoning_->closes.front();
    return tools_->reasoning_end();
  }

  std::unique_ptr<ChatSyntax> for_prompt(std::string_view prompt, StringParameters strings) const override {
    const bool starts_inside = reasoning_ && chat_syntax::prompt_opens_reasoning(prompt, *reasoning_);
    return std::make_unique<ComposedChatSyntax>(name_, tools_, reasoning_, starts_inside, std::move(strings));
  }

 private:
  std::string name_;
  std::shared_ptr<const ToolCallFormat> tools_;
  std::optional<ReasoningMarkers> reasoning_;
  bool starts_inside_;
  StringParameters strings_;
};

std::unique_ptr<ChatSyntax> compose(std::string_view tool_name, std::optional<ReasoningMarkers> reasoning,
                                    bool starts_inside) {
  std::shared_ptr<const ToolCallFormat> tools = chat_syntax::make_tool_call_format(tool_name);
  if (!tools) return nullptr;
  return std::make_unique<ComposedChatSyntax>(std::string(tool_name), std::move(tools), std::move(reasoning),
                                              starts_inside);
}

// The family of calls a template renders, by strings only it writes. Order
// matters where one family's strings hold another's ("<tool_call>" is in
// Qwen3-Coder's and GLM's too). Families skiff does not parse yet are plain:
// MiniMax M3's nested XML arguments, Gemma 4's call:NAME{...}, LFM2's Python
// calls, Solar, Kimi K3, Hunyuan 3, GigaChat, Apertus, MiniCPM 5, Muse.
std::string_view tool_family_of(std::string_view source) {
  auto has = [&](std::string_view s) { return source.find(s) != std::string_view::npos; };
  if (has("<|channel|>")) return "openai";
  if (has("｜DSML｜")) return has("'tool_calls>") ? "deepseek_v4" : "deepseek_v32";
  if (has("<｜tool▁calls▁begin｜>")) return has("```json") ? "deepseek_v3" : "deepseek_v31";
  if (has("<|tool_calls_section_begin|>")) return "kimi_k2";
  if (has("[TOOL_CALLS]")) return "mistral";
  if (has("<seed:tool_call>")) return "seed_oss";
  if (has("<minimax:tool_call>")) return "minimax_m2";
  if (has("]<]minimax[>[")) return "plain";
  if (has("<arg_key>")) return "glm45";
  if (has("<tool_call>") && has("<function=")) return "qwen3_coder";
  if (has("<|START_ACTION|>")) return "command_r7b";
  if (has("Action:") && has("tool_name")) return "command_r";
  if (has("functools[")) return "firefunction_v2";
  if (has("<TOOLCALL>")) return "nemotron_v2";
  if (has("<tool_calls>[")) return "apriel";
  if (has("<tool_calls>")) return "minimax_m1";
  if (has("<function=")) return "functionary_v31";
  if (has(">>>all")) return "functionary_v3";
  if (has("<|tool_call|>")) return "granite";
  if (has("<tool_call>")) return "hermes";
  if (has("<|start_header_id|>") && (has("<|python_tag|>") || has("\"parameters\""))) return "llama3_json";
  return "plain";
}

// The reasoning markers a template writes (harmony's are the tool syntax's).
std::optional<ReasoningMarkers> reasoning_of(std::string_view source, std::string_view tool_family) {
  if (tool_family == "openai") return std::nullopt;
  auto has = [&](std::string_view s) { return source.find(s) != std::string_view::npos; };
  std::string_view name;
  if (has("<seed:think>")) {
    name = "seed_oss";
  } else if (has("<mm:think>")) {
    name = "minimax_m3";
  } else if (has("[THINK]")) {
    name = "mistral";
  } else if (has("<|START_THINKING|>")) {
    name = "command_r7b";
  } else if (has("[BEGIN FINAL RESPONSE]")) {
    name = "apriel";
  } else if (has("Here is my thought process")) {
    name = "granite";
  } else if (has("</think>")) {
    name = "qwen3";
  } else {
    return std::nullopt;
  }
  return chat_syntax::reasoning_markers_named(name)->markers;
}

// Whether the template's generation prompt, as its variables' defaults render
// it, leaves the reply inside reasoning.
bool default_prompt_opens_reasoning(std::string_view source, const ReasoningMarkers& markers) {
  try {
    ChatTemplateInputs inputs;
    inputs.messages = nlohmann::ordered_json::parse(R"([{"role": "user", "content": "Hello"}])");
    inputs.add_generation_prompt = true;
    return chat_syntax::prompt_opens_reasoning(ChatTemplate(std::string(source)).render(inputs), markers);
  } catch (const std::exception&) {
    return false;  // a template that wants more than this conversation: no guess
  }
}

}  // namespace

std::unique_ptr<ChatSyntax> chat_syntax_for_template(std::string_view template_source) {
  const std::string_view tools = tool_family_of(template_source);
  std::optional<ReasoningMarkers> reasoning = reasoning_of(template_source, tools);
  bool starts_inside = false;
  if (reasoning) {
    starts_inside = default_prompt_opens_reasoning(template_source, *reasoning);
    // <think> tags under the name vLLM gives the flavour: R1's reply starts inside.
    if (reasoning->name == "qwen3" && starts_inside) reasoning->name = "deepseek_r1";
  }
  return compose(tools, std::move(reasoning), starts_inside);
}

std::unique_ptr<ChatSyntax> chat_syntax_named(std::string_view tool_parser, std::string_view reasoning_parser) {
  std::string_view tools = tool_parser.empty() ? "plain" : canonical_tool_name(tool_parser);
  if (is_harmony_reasoning(reasoning_parser)) {
    if (tool_parser.empty()) tools = "openai";
    if (tools != "openai") return nullptr;
    return compose(tools, std::nullopt, false);
  }
  if (reasoning_parser.empty()) return compose(tools, std::nullopt, false);
  const std::optional<chat_syntax::NamedReasoning> reasoning = chat_syntax::reasoning_markers_named(reasoning_parser);
  if (!reasoning) return nullptr;
  return compose(tools, reasoning->markers, reasoning->starts_inside);
}

std::vector<std::string> chat_syntax_names() { return chat_syntax::tool_call_format_names(); }

std::vector<std::string> chat_reasoning_names() {
  std::vector<std::string> names = chat_syntax::reasoning_marker_names();
  names.insert(names.end(), std::begin(kHarmonyReasoningNames), std::end(kHarmonyReasoningNames));
  return names;
}

}  // namespace skiff
