// gpt-oss's harmony format: the reply is messages, each a header naming its
// channel (and, for a call, its recipient) up to <|message|>, then a body up
// to <|end|>, <|call|> or <|return|>:
//   <|channel|>analysis<|message|>...<|end|>                  reasoning
//   <|start|>assistant<|channel|>final<|message|>...          content
//   <|start|>assistant to=functions.NAME<|channel|>commentary <|constrain|>json<|message|>{...}<|call|>
// (the recipient may also follow the channel). The generation prompt ends
// with <|start|>assistant, so the first header comes without it.
#include "chat/harmony_format.h"

namespace skiff::chat_syntax {

namespace {

const std::vector<std::string> kHeaderStarts = {"<|start|>", "<|channel|>", " to=", "to="};
const std::vector<std::string> kMessageMarker = {"<|message|>"};
const std::vector<std::string> kBodyEnds = {"<|end|>", "<|call|>", "<|return|>", "<|start|>"};
constexpr std::string_view kFunctionsPrefix = "functions.";

// The word after `key` in a header, up to a space or the next tag.
std::string_view header_field(std::string_view header, std::string_view key) {
  const size_t at = header.find(key);
  if (at == std::string_view::npos) return {};
  const size_t begin = at + key.size();
  size_t end = begin;
  while (end < header.size() && !is_space(header[end]) && header[end] != '<') ++end;
  return header.substr(begin, end - begin);
}

// Whether a call's body is a JSON object, or (cut) may yet be one.
bool arguments_so_far(std::string_view body, bool cut) {
  if (body.empty()) return cut;
  if (body.front() != '{') return false;
  const JsonExtent extent = json_value_extent(body, 0, true);
  if (extent.reach == Reach::kCut) return cut;
  return extent.reach == Reach::kWhole && extent.end == body.size();
}

}  // namespace

void HarmonyFormat::parse(std::string_view text, bool partial, const StringParameters&, ChatReply& reply) const {
  size_t pos = 0;
  while (pos < text.size()) {
    const size_t header_begin = pos;
    bool is_header = false;
    for (const std::string& start : kHeaderStarts) {
      const Reach reach = literal_at(text, header_begin, start);
      if (reach == Reach::kCut && partial) return;  // may yet be a header
      is_header = is_header || reach == Reach::kWhole;
    }
    if (!is_header) {  // not the format: plain text
      reply.content += text.substr(pos);
      return;
    }
    size_t header_end = 0;
    if (text_until(text, header_begin, kMessageMarker, partial, &header_end) == Reach::kCut) {
      if (!partial) reply.content += text.substr(pos);
      return;
    }
    const std::string_view header = text.substr(header_begin, header_end - header_begin);
    const std::string_view channel = header_field(header, "<|channel|>");
    const std::string_view recipient = header_field(header, "to=");
    const size_t body_begin = header_end + kMessageMarker[0].size();
    size_t body_end = 0, which = 0;
    const bool cut = text_until(text, body_begin, kBodyEnds, partial, &body_end, &which) == Reach::kCut;
    const std::string_view body = text.substr(body_begin, body_end - body_begin);
    const std::string_view arguments = trim(body);
    if (recipient.starts_with(kFunctionsPrefix)) {
      const std::string name(recipient.substr(kFunctionsPrefix.size()));
      if (!is_function_name(name) || !arguments_so_far(arguments, cut && partial)) {
        reply.content += text.substr(pos);  // not a call
        return;
      }
      reply.tool_calls.push_back({name, std::string(arguments)});
      reply.call_open = cut && partial;
    } else if (channel == "analysis" || !recipient.empty()) {
      // Built-in tools' messages (browser, python) are the model's own work too.
      reply.reasoning += body;
    } else {
      reply.content += body;  // final, and commentary preambles the user sees
    }
    if (cut) return;
    pos = body_end + (kBodyEnds[which] == "<|start|>" ? 0 : kBodyEnds[which].size());
  }
}

std::optional<CallLayout> HarmonyFormat::call_layout() const {
  // As the harmony templates render calls (each its own message; the last
  // ends the turn with <|call|>).
  CallLayout layout;
  layout.call_begin = "<|start|>assistant to=functions.{name}<|channel|>commentary <|constrain|> json<|message|>";
  layout.separator = "<|end|>";
  layout.suffix = "<|call|>";
  layout.trigger = "<|start|>assistant to=functions.";
  return layout;
}

}  // namespace skiff::chat_syntax
