// skiff::Error: the one exception type for bad input (corrupt files, bad flags,
// impossible requests). Messages name the problem so a user can act on them.
#pragma once
#include <fmt/format.h>

#include <stdexcept>
#include <string>

namespace skiff {

class Error : public std::runtime_error {
 public:
  explicit Error(const std::string& what) : std::runtime_error(what) {}
};

template <typename... Args>
[[noreturn]] void fail(fmt::format_string<Args...> format, Args&&... args) {
  throw Error(fmt::format(format, std::forward<Args>(args)...));
}

}  // namespace skiff
