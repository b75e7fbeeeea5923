// Functionary v3.2's replies: messages each opened by ">>>" and the
// recipient's name on its own line: ">>>all\n" then content, ">>>NAME\n" then
// the arguments object (">>>python\n" then code). Its generation prompt ends
// with ">>>", so the reply opens with the first recipient.
#pragma once
#include "chat/tool_call_format.h"

namespace skiff::chat_syntax {

class FunctionaryV32Format final : public ToolCallFormat {
 public:
  void parse(std::string_view text, bool partial, const StringParameters& strings, ChatReply& reply) const override;
  std::optional<CallLayout> call_layout() const override;
};

}  // namespace skiff::chat_syntax
