// Calls written as a name between markers, then the arguments object:
// Mistral's [TOOL_CALLS]NAME[ARGS]{...}, DeepSeek's
// <｜tool▁call▁begin｜>NAME<｜tool▁sep｜>{...}<｜tool▁call▁end｜>, Kimi K2's
// <|tool_call_begin|>functions.NAME:0<|tool_call_argument_begin|>{...},
// Functionary v3.1's <function=NAME>{...}</function>.
#pragma once
#include "chat/tool_call_format.h"

namespace skiff::chat_syntax {

struct NamedCallBlockSpec {
  std::string section_begin{}, section_end{};  // around all the calls, when the family has them
  std::string call_begin{};                    // a call's first literal (a block's opener without a section)
  std::vector<std::string> name_ends{};        // the first of these (or a space) ends the name
  std::string id_marker{};                     // an id the model writes after the name: skipped up to arguments_begin
  std::vector<std::string> arguments_begin{};  // literals before the arguments, spaces between
  bool arguments_begin_optional = false;       // Mistral's [ARGS] is a special token a detokenizer may drop
  std::vector<std::string> call_end{};         // literals after the arguments
  std::string name_prefix{};                   // dropped from the name: Kimi's "functions."
  bool name_has_index = false;                 // Kimi's ":0" after the name, dropped
};

std::unique_ptr<CallBlockSyntax> make_named_call_blocks(NamedCallBlockSpec spec);

}  // namespace skiff::chat_syntax
