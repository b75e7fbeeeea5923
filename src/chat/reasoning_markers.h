// Reasoning written between markers at the start of a reply: <think>...</think>
// and the other families' spellings of it. A template whose generation prompt
// opens the reasoning (Qwen3 and DeepSeek R1 end it with "<think>\n") makes
// the reply start inside it: it ends at the first closing marker, with no
// opening one in the reply.
#pragma once
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "chat/chat_output.h"

namespace skiff::chat_syntax {

struct ReasoningMarkers {
  std::string name;                 // vLLM's --reasoning-parser name
  std::vector<std::string> opens;   // "<think>"
  std::vector<std::string> closes;  // "</think>"
};

// Moves the reasoning at the start of text (after spaces) into
// reply.reasoning; returns where the rest of the reply begins. starts_inside:
// the prompt opened the reasoning. A reasoning the text leaves open runs to
// its end (a partial text holds back a cut closing marker).
size_t take_reasoning(std::string_view text, bool partial, const ReasoningMarkers& markers, bool starts_inside,
                      ChatReply& reply);

// Whether a reply to `prompt` starts inside reasoning: the prompt ends (but
// for spaces) with an opening marker.
bool prompt_opens_reasoning(std::string_view prompt, const ReasoningMarkers& markers);

// By vLLM's name (deepseek_r1, qwen3, mistral, granite, seed_oss, ...); with
// whether replies start inside reasoning when no prompt says otherwise.
struct NamedReasoning {
  ReasoningMarkers markers;
  bool starts_inside = false;
};
std::optional<NamedReasoning> reasoning_markers_named(std::string_view name);
std::vector<std::string> reasoning_marker_names();

}  // namespace skiff::chat_syntax
