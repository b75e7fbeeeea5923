// A request's "tools" list read element by element, as the chat APIs that
// translate their tools into OpenAI's functions (Anthropic's Messages,
// OpenAI's Responses) read it: a list of objects, each named by its place.
#pragma once
#include <fmt/core.h>

#include <functional>
#include <string>

#include "api/request_fields.h"

namespace skiff {

// fn(tool, "tools[i]") for each tool, its results in a list; RequestError
// 400 naming "tools" where it is no list or a tool no object.
inline ojson translate_tools(const ojson& tools, const std::function<ojson(const ojson&, const std::string&)>& fn) {
  if (!tools.is_array()) bad_field("tools", "tools must be a list");
  ojson out = ojson::array();
  for (size_t i = 0; i < tools.size(); ++i) {
    const std::string where = fmt::format("tools[{}]", i);
    if (!tools[i].is_object()) bad_field("tools", fmt::format("{} must be an object", where));
    out.push_back(fn(tools[i], where));
  }
  return out;
}

}  // namespace skiff
