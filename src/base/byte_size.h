// Memory sizes given by users: "1073741824", "512M", "2G", "1.5GiB", or "25%"
// of the memory available now (MemAvailable in /proc/meminfo).
#pragma once
#include <cstddef>
#include <string_view>

namespace skiff {

size_t parse_byte_size(std::string_view text);  // throws Error naming the text
size_t available_memory_bytes();                // 0 when unknown

}  // namespace skiff
