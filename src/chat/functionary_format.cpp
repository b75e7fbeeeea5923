#include "chat/functionary_format.h"

#include <nlohmann/json.hpp>

namespace skiff::chat_syntax {

namespace {

const std::vector<std::string> kMessageStart = {">>>"};
const std::vector<std::string> kLineEnd = {"\n"};

}  // namespace

void FunctionaryV32Format::parse(std::string_view text, bool partial, const StringParameters&, ChatReply& reply) const {
  size_t pos = literal_at(text, 0, kMessageStart[0]) == Reach::kWhole ? kMessageStart[0].size() : 0;
  while (pos < text.size()) {
    const size_t message_begin = pos;
    auto not_a_message = [&] { reply.content += text.substr(message_begin); };  // not the format: content
    size_t line_end = 0;
    if (text_until(text, pos, kLineEnd, false, &line_end) == Reach::kCut) {
      const std::string_view so_far = text.substr(pos);
      if (partial && (so_far.empty() || is_function_name(so_far))) return;  // a recipient being written
      return not_a_message();
    }
    const std::string_view recipient = trim(text.substr(pos, line_end - pos));
    if (!is_function_name(recipient)) return not_a_message();
    // The text from `from` up to the next message: content, or python's code.
    size_t body_begin = line_end + 1, body_end = 0;
    auto body_to_next_message = [&](size_t from) {
      body_begin = from;
      return text_until(text, from, kMessageStart, partial, &body_end) == Reach::kCut;
    };
    bool cut = false;
    if (recipient == "all") {
      cut = body_to_next_message(body_begin);
      reply.content += text.substr(body_begin, body_end - body_begin);
    } else {
      const size_t arguments_begin = skip_space(text, body_begin);
      const JsonExtent arguments = arguments_begin < text.size() && text[arguments_begin] == '{'
                                       ? json_value_extent(text, arguments_begin, true)
                                       : JsonExtent{};
      if (arguments.reach == Reach::kWhole) {
        reply.tool_calls.push_back(
            {std::string(recipient), std::string(text.substr(arguments_begin, arguments.end - arguments_begin))});
        cut = body_to_next_message(arguments.end);  // what follows the object is content
        reply.content += text.substr(body_begin, body_end - body_begin);
      } else if (partial && (arguments.reach == Reach::kCut || arguments_begin == text.size())) {
        reply.tool_calls.push_back({std::string(recipient), std::string(trim_end(text.substr(arguments_begin)))});
        reply.call_open = true;
        return;
      } else if (recipient == "python") {  // code, not JSON; reported once whole
        cut = body_to_next_message(body_begin);
        const std::string code(text.substr(body_begin, body_end - body_begin));
        const nlohmann::json arguments = {{"code", code}};
        reply.tool_calls.push_back(
            {"python", partial && cut ? "" : arguments.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace)});
      } else {
        return not_a_message();
      }
      reply.call_open = partial && cut;
    }
    if (cut) return;
    pos = body_end + kMessageStart[0].size();
  }
}

std::optional<CallLayout> FunctionaryV32Format::call_layout() const {
  CallLayout layout;
  layout.call_begin = ">>>{name}\n";
  layout.trigger = ">>>";
  return layout;
}

}  // namespace skiff::chat_syntax
