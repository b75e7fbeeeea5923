// Flags that take comma-separated lists ("-p 128,512", "--spec-k 1,2,4,8").
#pragma once
#include <charconv>
#include <string>
#include <vector>

#include "base/error.h"

namespace skiff::cli {

inline std::vector<std::string> split_list(const std::string& list, const char* flag) {
  std::vector<std::string> items;
  size_t start = 0;
  for (;;) {
    const size_t comma = list.find(',', start);
    items.push_back(list.substr(start, comma - start));
    if (items.back().empty()) fail("{} '{}': empty item in the list", flag, list);
    if (comma == std::string::npos) return items;
    start = comma + 1;
  }
}

inline std::vector<int> int_list(const std::string& list, const char* flag, int min_value) {
  std::vector<int> values;
  for (const std::string& item : split_list(list, flag)) {
    int v = 0;
    const auto [end, ec] = std::from_chars(item.data(), item.data() + item.size(), v);
    if (ec != std::errc() || end != item.data() + item.size() || v < min_value)
      fail("{} '{}': '{}' is not an integer >= {}", flag, list, item, min_value);
    values.push_back(v);
  }
  return values;
}

}  // namespace skiff::cli
