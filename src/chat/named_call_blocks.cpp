#include "chat/named_call_blocks.h"

namespace skiff::chat_syntax {

namespace {

class NamedCallBlocks final : public CallBlockSyntax {
 public:
  explicit NamedCallBlocks(NamedCallBlockSpec spec) : spec_(std::move(spec)) {
    openers_ = {spec_.section_begin.empty() ? spec_.call_begin : spec_.section_begin};
    name_stops_ = spec_.name_ends;
    for (const char* space : {" ", "\n", "\t", "\r"}) name_stops_.push_back(space);
    if (spec_.arguments_begin_optional) name_stops_.push_back("{");
  }
  const std::vector<std::string>& openers() const override { return openers_; }
  BlockEnd parse_block(std::string_view text, size_t pos, size_t opener, bool partial, const StringParameters& strings, ChatReply& reply) const override;

 private:
  // The call at pos (at its call_begin), appended to reply once its name is whole.
  BlockEnd parse_call(std::string_view text, size_t pos, bool partial, ChatReply& reply) const;
  std::optional<std::string> call_name(std::string_view written) const;

  NamedCallBlockSpec spec_;
  std::vector<std::string> openers_;
  std::vector<std::string> name_stops_;
};

std::optional<std::string> NamedCallBlocks::call_name(std::string_view written) const {
  if (!spec_.name_prefix.empty() && written.starts_with(spec_.name_prefix))
    written.remove_prefix(spec_.name_prefix.size());
  if (spec_.name_has_index) {
    const size_t colon = written.rfind(':');
    if (colon != kNone && colon + 1 < written.size() &&
        written.find_first_not_of("0123456789", colon + 1) == std::string_view::npos)
      written = written.substr(0, colon);
  }
  if (!is_function_name(written)) return std::nullopt;
  return std::string(written);
}

BlockEnd NamedCallBlocks::parse_call(std::string_view text, size_t pos, bool partial, ChatReply& reply) const {
  const size_t cut_at = text.size();
  const size_t name_begin = skip_space(text, pos + spec_.call_begin.size());
  size_t name_end = 0;
  if (name_begin == text.size() || text_until(text, name_begin, name_stops_, false, &name_end) == Reach::kCut)
    return {Reach::kCut, cut_at};
  const std::optional<std::string> name = call_name(text.substr(name_begin, name_end - name_begin));
  if (!name) return {};
  // From here on the call is reported, cut off or whole.
  auto cut = [&](std::string arguments) {
    reply.tool_calls.push_back({*name, std::move(arguments)});
    return BlockEnd{Reach::kCut, cut_at};
  };
  size_t i = name_end;
  size_t next = 0;
  if (!spec_.id_marker.empty()) {
    const Reach id = literal_after_space(text, i, spec_.id_marker, &next);
    if (id == Reach::kCut) return cut("");
    if (id == Reach::kWhole) {
      size_t id_end = 0;
      if (text_until(text, next, {spec_.arguments_begin.front()}, false, &id_end) == Reach::kCut) return cut("");
      i = id_end;
    }
  }
  for (const std::string& literal : spec_.arguments_begin) {
    const Reach reach = literal_after_space(text, i, literal, &next);
    if (reach == Reach::kCut) return cut("");
    if (reach == Reach::kWhole) {
      i = next;
    } else if (!spec_.arguments_begin_optional) {
      return {};
    }
  }
  const size_t arguments_begin = skip_space(text, i);
  if (arguments_begin == text.size()) return cut("");
  if (text[arguments_begin] != '{') return {};
  const JsonExtent arguments = json_value_extent(text, arguments_begin, true);
  if (arguments.reach == Reach::kAbsent) return {};
  if (arguments.reach == Reach::kCut) return cut(std::string(trim_end(text.substr(arguments_begin))));
  const std::string arguments_text(text.substr(arguments_begin, arguments.end - arguments_begin));
  i = arguments.end;
  for (const std::string& literal : spec_.call_end) {
    const Reach reach = literal_after_space(text, i, literal, &next);
    if (reach == Reach::kAbsent) return {};
    if (reach == Reach::kCut) {
      if (partial) return cut(arguments_text);
      next = text.size();  // a finished text that stops short of the end marker
    }
    i = next;
  }
  reply.tool_calls.push_back({*name, arguments_text});
  return {Reach::kWhole, i};
}

BlockEnd NamedCallBlocks::parse_block(std::string_view text, size_t pos, size_t, bool partial, const StringParameters&, ChatReply& reply) const {
  size_t i = pos + spec_.section_begin.size();
  for (size_t calls = 0;; ++calls) {
    const size_t at = skip_space(text, i);
    Reach begin = literal_at(text, at, spec_.call_begin);
    if (begin == Reach::kCut && !partial) begin = Reach::kAbsent;  // a partial text may go on with a call
    if (begin == Reach::kCut) return {Reach::kCut, text.size()};
    if (begin == Reach::kAbsent) {
      if (calls == 0) return {};
      break;
    }
    const BlockEnd call = parse_call(text, at, partial, reply);
    if (call.reach != Reach::kWhole) return call;
    i = call.end;
  }
  if (spec_.section_end.empty()) return {Reach::kWhole, i};
  size_t next = 0;
  const Reach end = literal_after_space(text, i, spec_.section_end, &next);
  if (end == Reach::kWhole) return {Reach::kWhole, next};
  if (end == Reach::kCut && partial) return {Reach::kCut, text.size()};
  return {Reach::kWhole, i};  // a model that leaves the section open
}

}  // namespace

std::unique_ptr<CallBlockSyntax> make_named_call_blocks(NamedCallBlockSpec spec) {
  return std::make_unique<NamedCallBlocks>(std::move(spec));
}

}  // namespace skiff::chat_syntax
