// Python's str algorithms on UTF-8 text: whitespace and case as Python defines
// them per code point, positions counted in code points.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace skiff::jinja {

size_t code_point_count(std::string_view s);
// The code point index of byte offset `byte` (a character boundary).
int64_t code_point_index(std::string_view s, size_t byte);

// strip/lstrip/rstrip: chars nullopt strips Python whitespace.
std::string py_strip(const std::string& s, const std::optional<std::string>& chars, bool left, bool right);
// split/rsplit: sep nullopt splits on runs of whitespace; maxsplit < 0 is no limit.
std::vector<std::string> py_split(const std::string& s, const std::optional<std::string>& sep, int64_t maxsplit);
std::vector<std::string> py_rsplit(const std::string& s, const std::optional<std::string>& sep, int64_t maxsplit);
std::vector<std::string> py_splitlines(const std::string& s, bool keepends);
std::string py_replace(const std::string& s, const std::string& old, const std::string& replacement, int64_t count);
size_t py_count(const std::string& s, const std::string& sub);

std::string py_upper(const std::string& s);
std::string py_lower(const std::string& s);
std::string py_title(const std::string& s);
std::string py_capitalize(const std::string& s);
std::string py_swapcase(const std::string& s);
bool py_is_space(const std::string& s);   // isspace(): non-empty, all whitespace
bool py_is_lower(const std::string& s);   // islower(): has a cased char, none uppercase
bool py_is_upper(const std::string& s);
bool py_is_alpha(const std::string& s);
bool py_is_digit(const std::string& s);
bool py_is_alnum(const std::string& s);

}  // namespace skiff::jinja
