#include "base/json.h"

#include "base/error.h"

namespace skiff {

nlohmann::json parse_json(std::string_view text, int max_depth) {
  using nlohmann::json;
  // Called as each value starts; depth counts the containers around it.
  const json::parser_callback_t bound_depth = [max_depth](int depth, json::parse_event_t event, json&) {
    if ((event == json::parse_event_t::object_start || event == json::parse_event_t::array_start) &&
        depth >= max_depth)
      fail("invalid JSON: nested deeper than {} levels", max_depth);
    return true;
  };
  try {
    return json::parse(text, bound_depth);
  } catch (const json::exception& e) {
    // "[json.exception.parse_error.101] parse error at ...": the part after the tag.
    const std::string what = e.what();
    const size_t tag_end = what.find("] ");
    fail("invalid JSON: {}", tag_end == std::string::npos ? what : what.substr(tag_end + 2));
  }
}

std::string json_excerpt(const nlohmann::json& v, size_t max_chars) {
  std::string s = v.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  if (s.size() <= max_chars) return s;
  size_t cut = max_chars;
  while (cut > 0 && (static_cast<unsigned char>(s[cut]) & 0xC0) == 0x80) --cut;  // whole UTF-8
  return s.substr(0, cut) + "...";
}

}  // namespace skiff
