// Calls whose arguments are written one parameter at a time in XML-like tags:
// Qwen3-Coder's <tool_call><function=NAME><parameter=P>VALUE</parameter>
// </function></tool_call>, GLM 4.5's <tool_call>NAME<arg_key>P</arg_key>
// <arg_value>VALUE</arg_value></tool_call>, MiniMax's <invoke name="NAME">
// <parameter name="P">VALUE</parameter></invoke>. The arguments become a JSON
// object of the parameters in the order written.
//
// The templates write strings raw and everything else with tojson. So a
// parameter whose schema allows only strings (chat_output.h's
// StringParameters) is its text; any other is JSON when all of it (spaces
// around aside) is a JSON value, else its text as a string. Without the
// tool's schema, a string that reads as JSON ("3", "true") cannot be told
// from that value and becomes it. A string="true"/"false" attribute
// (DeepSeek V3.2) decides instead.
#pragma once
#include "chat/tool_call_format.h"

namespace skiff::chat_syntax {

struct XmlCallBlockSpec {
  std::string block_begin{}, block_end{};  // "<tool_call>", "</tool_call>"
  std::string call_begin{};                // "<function="; "" when the name follows block_begin (one call a block)
  std::vector<std::string> name_ends{};    // the first of these (or a newline) ends the name; not consumed
  std::string name_close{};                // consumed after the name: ">", "\">"
  std::string parameter_begin{};           // "<parameter=", "<arg_key>"
  std::string key_end{};                   // ends the key: ">", "</arg_key>", "\""
  std::string key_close{};                 // "": none; else attributes up to it are read (">")
  std::string value_begin{};               // "<arg_value>"; "" for none
  std::string value_end{};                 // "</parameter>"
  std::string call_end{};                  // "</function>"; "" for none
  bool value_in_newlines = false;          // one newline each side of a value is the tag's (Qwen3-Coder)
};

std::unique_ptr<CallBlockSyntax> make_xml_call_blocks(XmlCallBlockSpec spec);

}  // namespace skiff::chat_syntax
