#include "chat/xml_call_blocks.h"

#include <nlohmann/json.hpp>

namespace skiff::chat_syntax {

namespace {

// A parameter's value as JSON text (see the header for how it is decided).
std::string parameter_value_json(std::string_view raw, std::string_view attributes, bool newlines, bool string) {
  // Qwen3-Coder writes "\nVALUE\n": one newline each side is the tag's.
  if (newlines && raw.starts_with('\n')) raw.remove_prefix(1);
  if (newlines && raw.ends_with('\n')) raw.remove_suffix(1);
  if (!string && attributes.find("string=\"true\"") == std::string_view::npos) {
    const std::string_view value = trim(raw);
    const JsonExtent extent = json_value_extent(value, 0, false);
    if (!value.empty() && extent.reach == Reach::kWhole && extent.end == value.size()) return std::string(value);
  }
  return nlohmann::json(std::string(raw)).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

class XmlCallBlocks final : public CallBlockSyntax {
 public:
  explicit XmlCallBlocks(XmlCallBlockSpec spec) : spec_(std::move(spec)) {
    openers_ = {spec_.block_begin};
    name_stops_ = spec_.name_ends;
    name_stops_.push_back("\n");
  }
  const std::vector<std::string>& openers() const override { return openers_; }
  BlockEnd parse_block(std::string_view text, size_t pos, size_t opener, bool partial, const StringParameters& strings, ChatReply& reply) const override;

 private:
  // The call whose name starts at pos, appended to reply once its name is whole.
  BlockEnd parse_call(std::string_view text, size_t pos, bool partial, const StringParameters& strings,
                      ChatReply& reply) const;

  XmlCallBlockSpec spec_;
  std::vector<std::string> openers_;
  std::vector<std::string> name_stops_;
};

BlockEnd XmlCallBlocks::parse_call(std::string_view text, size_t pos, bool partial, const StringParameters& strings,
                                   ChatReply& reply) const {
  const BlockEnd cut{Reach::kCut, text.size()};
  const size_t name_begin = skip_space(text, pos);
  size_t name_end = 0;
  if (name_begin == text.size() || text_until(text, name_begin, name_stops_, false, &name_end) == Reach::kCut)
    return cut;
  const std::string_view name = trim(text.substr(name_begin, name_end - name_begin));
  if (!is_function_name(name)) return {};
  const auto string_names = strings.find(name);
  size_t i = name_end;
  if (!spec_.name_close.empty()) {
    const Reach close = literal_after_space(text, i, spec_.name_close, &i);
    if (close != Reach::kWhole) return {close, text.size()};
  }
  // The arguments grow a parameter at a time: "{" and those so far.
  JsonObjectText arguments;
  reply.tool_calls.push_back({std::string(name), arguments.open_text()});
  std::string& arguments_text = reply.tool_calls.back().arguments;
  for (;;) {
    size_t key_begin = 0;
    const Reach parameter = literal_after_space(text, i, spec_.parameter_begin, &key_begin);
    if (parameter == Reach::kCut && partial) return cut;
    if (parameter != Reach::kWhole) break;
    size_t key_end = 0;
    if (text_until(text, key_begin, {spec_.key_end}, false, &key_end) == Reach::kCut) return cut;
    const std::string_view key = trim(text.substr(key_begin, key_end - key_begin));
    i = key_end + spec_.key_end.size();
    std::string_view attributes;
    if (!spec_.key_close.empty()) {
      size_t close = 0;
      if (text_until(text, i, {spec_.key_close}, false, &close) == Reach::kCut) return cut;
      attributes = text.substr(i, close - i);
      i = close + spec_.key_close.size();
    }
    if (!spec_.value_begin.empty()) {
      const Reach value_begin = literal_after_space(text, i, spec_.value_begin, &i);
      if (value_begin != Reach::kWhole) return {value_begin, text.size()};
    }
    size_t value_end = 0;
    if (text_until(text, i, {spec_.value_end}, false, &value_end) == Reach::kCut) return cut;
    const bool string = string_names != strings.end() && string_names->second.count(key) > 0;
    arguments.add(key, parameter_value_json(text.substr(i, value_end - i), attributes, spec_.value_in_newlines, string));
    arguments_text = arguments.open_text();
    i = value_end + spec_.value_end.size();
  }
  if (!spec_.call_end.empty()) {
    const Reach end = literal_after_space(text, i, spec_.call_end, &i);
    if (end == Reach::kCut && !partial) {
      i = text.size();  // a finished text that stops short of the end tag
    } else if (end != Reach::kWhole) {
      return {end, text.size()};
    }
  }
  arguments_text = arguments.closed_text();
  return {Reach::kWhole, i};
}

BlockEnd XmlCallBlocks::parse_block(std::string_view text, size_t pos, size_t, bool partial, const StringParameters& strings, ChatReply& reply) const {
  size_t i = pos + spec_.block_begin.size();
  for (size_t calls = 0;; ++calls) {
    if (!spec_.call_begin.empty()) {
      const size_t at = skip_space(text, i);
      Reach begin = literal_at(text, at, spec_.call_begin);
      if (begin == Reach::kCut && !partial) begin = Reach::kAbsent;
      if (begin == Reach::kCut) return {Reach::kCut, text.size()};
      if (begin == Reach::kAbsent) {
        if (calls == 0) return {};
        break;
      }
      i = at + spec_.call_begin.size();
    }
    const BlockEnd call = parse_call(text, i, partial, strings, reply);
    if (call.reach != Reach::kWhole) return call;
    i = call.end;
    if (spec_.call_begin.empty()) break;
  }
  size_t next = 0;
  const Reach end = literal_after_space(text, i, spec_.block_end, &next);
  if (end == Reach::kWhole) return {Reach::kWhole, next};
  if (end == Reach::kCut && partial) return {Reach::kCut, text.size()};
  return {Reach::kWhole, i};  // a model that leaves the block open
}

}  // namespace

std::unique_ptr<CallBlockSyntax> make_xml_call_blocks(XmlCallBlockSpec spec) {
  return std::make_unique<XmlCallBlocks>(std::move(spec));
}

}  // namespace skiff::chat_syntax
