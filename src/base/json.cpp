#include "base/json.h"

#include <algorithm>

#include "base/error.h"

namespace skiff {

namespace {

template <typename json>
json parse_bounded(std::string_view text, int max_depth) {
  // Called as each value starts; depth counts the containers around it.
  const typename json::parser_callback_t bound_depth = [max_depth](int depth, typename json::parse_event_t event,
                                                                   json&) {
    if ((event == json::parse_event_t::object_start || event == json::parse_event_t::array_start) &&
        depth >= max_depth)
      fail("invalid JSON: nested deeper than {} levels", max_depth);
    return true;
  };
  try {
    return json::parse(text, bound_depth);
  } catch (const nlohmann::json::exception& e) {
    fail("invalid JSON: {}", json_error_text(e));
  }
}

}  // namespace

nlohmann::json parse_json(std::string_view text, int max_depth) {
  return parse_bounded<nlohmann::json>(text, max_depth);
}

nlohmann::ordered_json parse_ordered_json(std::string_view text, int max_depth) {
  return parse_bounded<nlohmann::ordered_json>(text, max_depth);
}

std::string json_error_text(const nlohmann::json::exception& e) {
  // "[json.exception.parse_error.101] parse error at ...": the part after the tag.
  const std::string what = e.what();
  const size_t tag_end = what.find("] ");
  return tag_end == std::string::npos ? what : what.substr(tag_end + 2);
}

std::string string_field(const nlohmann::json& object, const char* key, const std::string& fallback) {
  const auto it = object.find(key);
  if (it == object.end() || it->is_null()) return fallback;
  if (!it->is_string()) fail("'{}' must be a string, got {}", key, json_excerpt(*it));
  return it->get<std::string>();
}

std::vector<std::string> string_array_field(const nlohmann::json& object, const char* key) {
  const auto it = object.find(key);
  if (it == object.end() || it->is_null()) return {};
  const auto is_string = [](const nlohmann::json& v) { return v.is_string(); };
  if (!it->is_array() || !std::all_of(it->begin(), it->end(), is_string))
    fail("'{}' must be an array of strings, got {}", key, json_excerpt(*it));
  return it->get<std::vector<std::string>>();
}

bool bool_field(const nlohmann::json& object, const char* key, bool fallback) {
  const auto it = object.find(key);
  if (it == object.end() || it->is_null()) return fallback;
  if (!it->is_boolean()) fail("'{}' must be true or false, got {}", key, json_excerpt(*it));
  return it->get<bool>();
}

std::string json_excerpt(const nlohmann::json& v, size_t max_chars) {
  std::string s = v.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  if (s.size() <= max_chars) return s;
  size_t cut = max_chars;
  while (cut > 0 && (static_cast<unsigned char>(s[cut]) & 0xC0) == 0x80) --cut;  // whole UTF-8
  return s.substr(0, cut) + "...";
}

}  // namespace skiff
