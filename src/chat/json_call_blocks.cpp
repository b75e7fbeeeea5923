#include "chat/json_call_blocks.h"

#include <algorithm>

namespace skiff::chat_syntax {

namespace {

// Keys a call object may carry besides its name and arguments; any other key
// means the object is not a call (Llama 3's JSON content is told apart early).
constexpr std::string_view kOtherCallKeys[] = {"id", "tool_call_id", "type"};

bool contains(const std::vector<std::string>& keys, std::string_view key) {
  return std::find(keys.begin(), keys.end(), key) != keys.end();
}

bool is_json_object(std::string_view text) {
  const size_t begin = skip_space(text, 0);
  if (begin == text.size() || text[begin] != '{') return false;
  const JsonExtent extent = json_value_extent(text, begin, false);
  return extent.reach == Reach::kWhole && skip_space(text, extent.end) == text.size();
}

class JsonCallBlocks final : public CallBlockSyntax {
 public:
  explicit JsonCallBlocks(JsonCallBlockSpec spec) : spec_(std::move(spec)) {}
  const std::vector<std::string>& openers() const override { return spec_.openers; }
  BlockEnd parse_block(std::string_view text, size_t pos, size_t opener, bool partial, const StringParameters& strings, ChatReply& reply) const override;

 private:
  // One call object at pos; a cut one is added once its name is whole.
  BlockEnd parse_call(std::string_view text, size_t pos, ChatReply& reply) const;
  BlockEnd parse_array(std::string_view text, size_t pos, ChatReply& reply) const;
  BlockEnd parse_sequence(std::string_view text, size_t pos, bool partial, ChatReply& reply) const;

  JsonCallBlockSpec spec_;
};

BlockEnd JsonCallBlocks::parse_call(std::string_view text, size_t pos, ChatReply& reply) const {
  const JsonObjectWalk walk = walk_json_object(text, pos);
  if (walk.reach == Reach::kAbsent) return {};
  const JsonMember* name = nullptr;
  const JsonMember* arguments = nullptr;
  for (const JsonMember& member : walk.members) {
    if (contains(spec_.name_keys, member.key)) {
      name = &member;
    } else if (contains(spec_.arguments_keys, member.key)) {
      arguments = &member;
    } else if (std::find(std::begin(kOtherCallKeys), std::end(kOtherCallKeys), member.key) ==
               std::end(kOtherCallKeys)) {
      return {};
    }
  }
  std::optional<std::string> name_text;
  if (name && name->value.reach == Reach::kWhole) {
    name_text = decode_json_string(text.substr(name->value_begin, name->value.end - name->value_begin));
    if (!name_text || !is_function_name(*name_text)) return {};
  }
  if (walk.reach == Reach::kCut) {
    if (!name_text) return {Reach::kCut, text.size()};
    std::string arguments_so_far;
    // Arguments given as a string are reported once whole: their escaped
    // text is no prefix of what they spell.
    if (arguments && arguments->value_begin < text.size() && text[arguments->value_begin] == '{') {
      const size_t end = arguments->value.reach == Reach::kWhole ? arguments->value.end : text.size();
      arguments_so_far = trim_end(text.substr(arguments->value_begin, end - arguments->value_begin));
    }
    reply.tool_calls.push_back({*name_text, arguments_so_far});
    return {Reach::kCut, text.size()};
  }
  if (!name_text) return {};
  std::string arguments_text = "{}";
  if (arguments) {
    const std::string_view value = text.substr(arguments->value_begin, arguments->value.end - arguments->value_begin);
    if (value.front() == '{') {
      arguments_text = value;
    } else if (value.front() == '"') {
      const std::optional<std::string> spelled = decode_json_string(value);
      if (!spelled || !is_json_object(*spelled)) return {};
      arguments_text = *spelled;
    } else if (value != "null") {
      return {};
    }
  }
  reply.tool_calls.push_back({*name_text, arguments_text});
  return {Reach::kWhole, walk.end};
}

BlockEnd JsonCallBlocks::parse_array(std::string_view text, size_t pos, ChatReply& reply) const {
  size_t i = 0;
  const Reach open = literal_after_space(text, pos, "[", &i);
  if (open != Reach::kWhole) return {open, text.size()};
  for (bool first = true;; first = false) {
    size_t at = skip_space(text, i);
    if (at == text.size()) return {Reach::kCut, text.size()};
    if (first && text[at] == ']') return {Reach::kWhole, at + 1};
    const BlockEnd call = parse_call(text, at, reply);
    if (call.reach != Reach::kWhole) return call;
    at = skip_space(text, call.end);
    if (at == text.size()) return {Reach::kCut, text.size()};
    if (text[at] == ']') return {Reach::kWhole, at + 1};
    if (text[at] != ',') return {};
    i = at + 1;
  }
}

BlockEnd JsonCallBlocks::parse_sequence(std::string_view text, size_t pos, bool partial, ChatReply& reply) const {
  size_t i = pos;
  for (;;) {
    const BlockEnd call = parse_call(text, skip_space(text, i), reply);
    if (call.reach != Reach::kWhole) return call;
    i = call.end;
    size_t next = skip_space(text, i);
    if (!spec_.separator.empty()) {
      const Reach separator = literal_after_space(text, i, spec_.separator, &next);
      if (separator == Reach::kWhole) {
        i = next;
        continue;
      }
      if (separator == Reach::kCut && partial && spec_.closer.empty()) return {Reach::kCut, text.size()};
      return {Reach::kWhole, i};
    }
    if (next < text.size() && text[next] == '{') {
      i = next;
      continue;
    }
    if (next == text.size() && partial && spec_.closer.empty()) return {Reach::kCut, text.size()};
    return {Reach::kWhole, i};
  }
}

BlockEnd JsonCallBlocks::parse_block(std::string_view text, size_t pos, size_t opener, bool partial,
                                     const StringParameters&, ChatReply& reply) const {
  size_t i = pos + spec_.openers[opener].size();
  for (const std::string& literal : spec_.after_opener) {
    const Reach reach = literal_after_space(text, i, literal, &i);
    if (reach != Reach::kWhole) return {reach, text.size()};
  }
  const BlockEnd calls = spec_.array ? parse_array(text, i, reply) : parse_sequence(text, i, partial, reply);
  if (calls.reach != Reach::kWhole) return calls;
  i = calls.end;
  for (const std::string& literal : spec_.closer) {
    const Reach reach = literal_after_space(text, i, literal, &i);
    // A finished text may stop short of the closing marker (a stop string
    // or the end of turn in its place): its calls are whole.
    if (reach == Reach::kCut && !partial) return {Reach::kWhole, text.size()};
    if (reach != Reach::kWhole) return {reach, text.size()};
  }
  return {Reach::kWhole, i};
}

}  // namespace

std::unique_ptr<CallBlockSyntax> make_json_call_blocks(JsonCallBlockSpec spec) {
  return std::make_unique<JsonCallBlocks>(std::move(spec));
}

}  // namespace skiff::chat_syntax
