#include "chat/tool_call_format.h"

#include <algorithm>
#include <cctype>

#include <nlohmann/json.hpp>

namespace skiff::chat_syntax {

CallBlocksFormat::CallBlocksFormat(std::vector<std::unique_ptr<CallBlockSyntax>> syntaxes,
                                   std::optional<CallLayout> layout, bool reply_start_only)
    : syntaxes_(std::move(syntaxes)), layout_(std::move(layout)), reply_start_only_(reply_start_only) {
  for (const auto& syntax : syntaxes_)
    for (const std::string& opener : syntax->openers())
      if (std::find(openers_.begin(), openers_.end(), opener) == openers_.end()) openers_.push_back(opener);
}

BlockEnd CallBlocksFormat::parse_block_at(std::string_view text, size_t pos, bool partial, const StringParameters& strings, ChatReply& reply) const {
  for (const auto& syntax : syntaxes_) {
    const std::vector<std::string>& openers = syntax->openers();
    for (size_t k = 0; k < openers.size(); ++k) {
      if (literal_at(text, pos, openers[k]) != Reach::kWhole) continue;
      const size_t calls_before = reply.tool_calls.size();
      const BlockEnd block = syntax->parse_block(text, pos, k, partial, strings, reply);
      if (block.reach != Reach::kAbsent) return block;
      reply.tool_calls.resize(calls_before);
    }
  }
  return {};
}

void CallBlocksFormat::parse(std::string_view text, bool partial, const StringParameters& strings, ChatReply& reply) const {
  const size_t calls_before = reply.tool_calls.size();
  // A block cut off by the end of a finished text: its text is content.
  auto unfinished_block = [&](size_t from) {
    reply.tool_calls.resize(calls_before);
    reply.call_open = false;
    reply.content += text.substr(from);
  };
  if (reply_start_only_) {
    const size_t start = skip_space(text, 0);
    for (const std::string& opener : openers_) {
      const Reach reach = literal_at(text, start, opener);
      if (reach == Reach::kCut && partial) return;  // may yet open a block
    }
    const BlockEnd block = parse_block_at(text, start, partial, strings, reply);
    if (block.reach == Reach::kWhole) {
      reply.content += text.substr(block.end);
    } else if (block.reach == Reach::kAbsent || !partial) {
      unfinished_block(0);
    } else {
      reply.call_open = reply.tool_calls.size() > calls_before;
    }
    return;
  }
  size_t pos = 0;
  for (;;) {
    const MarkerHit hit = find_marker(text, pos, openers_);
    if (hit.pos == kNone) {
      const size_t held = partial ? cut_marker_length(text, pos, openers_) : 0;
      reply.content += text.substr(pos, text.size() - pos - held);
      return;
    }
    reply.content += text.substr(pos, hit.pos - pos);
    const size_t calls_in_blocks = reply.tool_calls.size();
    const BlockEnd block = parse_block_at(text, hit.pos, partial, strings, reply);
    if (block.reach == Reach::kWhole) {
      pos = block.end;
      continue;
    }
    if (block.reach == Reach::kCut) {
      if (partial) {
        reply.call_open = reply.tool_calls.size() > calls_in_blocks;
      } else {
        reply.tool_calls.resize(calls_in_blocks);
        reply.content += text.substr(hit.pos);
      }
      return;
    }
    reply.content += openers_[hit.index];
    pos = hit.pos + openers_[hit.index].size();
  }
}

void PlainFormat::parse(std::string_view text, bool, const StringParameters&, ChatReply& reply) const { reply.content += text; }

bool is_function_name(std::string_view name) {
  if (name.empty()) return false;
  for (const char c : name) {
    const unsigned char u = static_cast<unsigned char>(c);
    const bool ok = u >= 0x80 || std::isalnum(u) || c == '_' || c == '-' || c == '.' || c == ':' || c == '/';
    if (!ok) return false;
  }
  return true;
}

void JsonObjectText::add(std::string_view key, const std::string& value_json) {
  if (!empty_) text_ += ", ";
  empty_ = false;
  text_ += nlohmann::json(std::string(key)).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  text_ += ": ";
  text_ += value_json;
}

}  // namespace skiff::chat_syntax
