#include "chat/reasoning_markers.h"

#include "chat/reply_scanner.h"

namespace skiff::chat_syntax {

namespace {

ReasoningMarkers think_tags(std::string name) { return {std::move(name), {"<think>"}, {"</think>"}}; }

const NamedReasoning kNamedReasoning[] = {
    {think_tags("deepseek_r1"), true},  // R1's templates open <think> in the prompt
    {think_tags("qwen3"), false},
    {think_tags("deepseek_v3"), false},
    {think_tags("glm45"), false},
    {think_tags("kimi_k2"), false},
    {think_tags("minimax_m2"), true},  // its prompt ends with "<think>\n"
    {{"mistral", {"[THINK]"}, {"[/THINK]"}}, false},
    {{"granite",
      {"Here is my thought process:", "Here's my thought process:"},
      {"Here is my response:", "Here's my response:"}},
     false},
    {{"seed_oss", {"<seed:think>"}, {"</seed:think>"}}, false},
    {{"minimax_m3", {"<mm:think>"}, {"</mm:think>"}}, false},
    {{"command_r7b", {"<|START_THINKING|>"}, {"<|END_THINKING|>"}}, false},
    // Apriel's Thinker reasons first (1.6's prompt opens with this line) and
    // answers after [BEGIN FINAL RESPONSE].
    {{"apriel", {"Here are my reasoning steps:"}, {"[BEGIN FINAL RESPONSE]"}}, true},
};

}  // namespace

size_t take_reasoning(std::string_view text, bool partial, const ReasoningMarkers& markers, bool starts_inside,
                      ChatReply& reply) {
  size_t i = skip_space(text, 0);
  bool inside = starts_inside;
  // The reply's opening marker, or one a model writes again after the prompt's.
  for (const std::string& open : markers.opens) {
    const Reach reach = literal_at(text, i, open);
    if (reach == Reach::kCut && partial) return text.size();  // may yet open it
    if (reach == Reach::kWhole) {
      i += open.size();
      inside = true;
      break;
    }
  }
  if (!inside) {
    // A reply that starts by closing a reasoning the prompt closed has none
    // (DeepSeek V3.2 writes history so: "</think>" where its prompt wrote
    // "<think></think>").
    for (const std::string& close : markers.closes) {
      const Reach reach = literal_at(text, i, close);
      if (reach == Reach::kCut && partial) return text.size();
      if (reach == Reach::kWhole) return i + close.size();
    }
    return 0;
  }
  size_t close = 0, which = 0;
  const Reach reach = text_until(text, i, markers.closes, partial, &close, &which);
  reply.reasoning += text.substr(i, close - i);
  return reach == Reach::kWhole ? close + markers.closes[which].size() : text.size();
}

bool prompt_opens_reasoning(std::string_view prompt, const ReasoningMarkers& markers) {
  const std::string_view end = trim_end(prompt);
  for (const std::string& open : markers.opens)
    if (end.ends_with(open)) return true;
  return false;
}

std::optional<NamedReasoning> reasoning_markers_named(std::string_view name) {
  for (const NamedReasoning& named : kNamedReasoning)
    if (named.markers.name == name) return named;
  return std::nullopt;
}

std::vector<std::string> reasoning_marker_names() {
  std::vector<std::string> names;
  for (const NamedReasoning& named : kNamedReasoning) names.push_back(named.markers.name);
  return names;
}

}  // namespace skiff::chat_syntax
