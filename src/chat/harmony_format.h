// gpt-oss's harmony messages (vLLM's "openai" parser): reasoning in the
// analysis channel, content in final (and commentary preambles), calls as
// commentary messages to functions.NAME.
#pragma once
#include "chat/tool_call_format.h"

namespace skiff::chat_syntax {

class HarmonyFormat final : public ToolCallFormat {
 public:
  void parse(std::string_view text, bool partial, const StringParameters& strings, ChatReply& reply) const override;
  std::optional<CallLayout> call_layout() const override;
  std::string_view reasoning_end() const override { return "<|channel|>final<|message|>"; }
};

}  // namespace skiff::chat_syntax
