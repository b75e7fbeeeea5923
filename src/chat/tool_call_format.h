// How each family writes tool calls into a reply (chat_output.h), behind one
// interface: a ToolCallFormat reads the reply after its reasoning into
// content and calls. Most families write calls in blocks that open with a
// marker anywhere in the reply; CallBlocksFormat finds the markers and hands
// each block to the CallBlockSyntax that writes it (a family may have several:
// Mistral's array and [ARGS] forms). The syntaxes are three shapes with the
// family's strings as data (json_call_blocks.h, named_call_blocks.h,
// xml_call_blocks.h); the families themselves are in tool_call_families.cpp.
#pragma once
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "chat/chat_output.h"
#include "chat/reply_scanner.h"

namespace skiff::chat_syntax {

class ToolCallFormat {
 public:
  virtual ~ToolCallFormat() = default;
  // Appends the text outside calls to reply.content, the calls to
  // reply.tool_calls (and reasoning, for a family that writes it in its own
  // syntax, to reply.reasoning). partial: as ChatSyntax::parse.
  virtual void parse(std::string_view text, bool partial, const StringParameters& strings, ChatReply& reply) const = 0;
  virtual std::optional<CallLayout> call_layout() const { return std::nullopt; }
  // For a family that writes reasoning in its own syntax: the text after
  // which its reply's content starts (ChatSyntax::reasoning_end).
  virtual std::string_view reasoning_end() const { return {}; }
};

// Where a block of calls ends.
struct BlockEnd {
  Reach reach = Reach::kAbsent;  // kCut: the text ends inside the block
  size_t end = 0;                // kWhole: just past it
};

class CallBlockSyntax {
 public:
  virtual ~CallBlockSyntax() = default;
  // The markers a block opens with.
  virtual const std::vector<std::string>& openers() const = 0;
  // Reads the block at pos, where openers()[opener] starts: appends its calls
  // to reply.tool_calls, one the text cuts off once its name is whole (with
  // its arguments so far). kAbsent: the text there is no block of this syntax.
  virtual BlockEnd parse_block(std::string_view text, size_t pos, size_t opener, bool partial,
                               const StringParameters& strings, ChatReply& reply) const = 0;
};

// Content and blocks of calls. A block the text breaks off (kCut) hides the
// rest of a partial text; in a finished text it, like a marker that opens no
// block, is content.
class CallBlocksFormat : public ToolCallFormat {
 public:
  // reply_start_only: blocks open only the reply (Llama 3's JSON), after
  // spaces; any text before means there are no calls.
  CallBlocksFormat(std::vector<std::unique_ptr<CallBlockSyntax>> syntaxes, std::optional<CallLayout> layout,
                   bool reply_start_only = false);
  void parse(std::string_view text, bool partial, const StringParameters& strings, ChatReply& reply) const override;
  std::optional<CallLayout> call_layout() const override { return layout_; }

 private:
  // The block at pos by the first syntax whose opener is there and reads one.
  BlockEnd parse_block_at(std::string_view text, size_t pos, bool partial, const StringParameters& strings, ChatReply& reply) const;

  std::vector<std::unique_ptr<CallBlockSyntax>> syntaxes_;
  std::vector<std::string> openers_;  // all syntaxes' openers
  std::optional<CallLayout> layout_;
  bool reply_start_only_;
};

// Everything is content.
class PlainFormat : public ToolCallFormat {
 public:
  void parse(std::string_view text, bool partial, const StringParameters& strings, ChatReply& reply) const override;
};

// A function name as models write them: letters, digits and _-.:/ (or any
// non-ASCII); anything else means the text is not a call.
bool is_function_name(std::string_view name);

// Holds a JSON object's text while its members come one at a time (parameters
// written as XML): "{" and the members so far, so that it is a prefix of the
// finished object, which closed_text() ends with "}". Keys and values are written as
// Python's json.dumps writes them (", " and ": "), as templates' tojson does.
class JsonObjectText {
 public:
  void add(std::string_view key, const std::string& value_json);
  std::string open_text() const { return text_; }
  std::string closed_text() const { return text_ + "}"; }

 private:
  std::string text_ = "{";
  bool empty_ = true;
};

// The families by name (vLLM's --tool-call-parser names where vLLM has one);
// null when unknown.
std::unique_ptr<ToolCallFormat> make_tool_call_format(std::string_view name);
std::vector<std::string> tool_call_format_names();

}  // namespace skiff::chat_syntax
