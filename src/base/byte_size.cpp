#include "base/byte_size.h"

#include <cctype>
#include <cmath>
#include <fstream>
#include <string>

#include "base/error.h"

namespace skiff {

size_t available_memory_bytes() {
  std::ifstream in("/proc/meminfo");
  std::string key;
  size_t kib = 0;
  std::string unit;
  while (in >> key >> kib >> unit)
    if (key == "MemAvailable:") return kib * 1024;
  return 0;
}

size_t parse_byte_size(std::string_view text) {
  const std::string s(text);
  size_t used = 0;
  double value = 0;
  try {
    value = std::stod(s, &used);
  } catch (const std::exception&) {
    fail("'{}' is not a memory size (e.g. 512M, 2G, 25%)", s);
  }
  std::string unit = s.substr(used);
  for (char& ch : unit) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
  if (!std::isfinite(value) || value <= 0) fail("'{}' is not a positive memory size", s);
  if (unit == "%") {
    if (value > 100) fail("'{}': more than 100% of memory", s);
    const size_t avail = available_memory_bytes();
    if (avail == 0) fail("'{}': available memory is unknown on this system", s);
    return static_cast<size_t>(avail * value / 100);
  }
  double scale = 0;
  if (unit.empty() || unit == "b") scale = 1;
  else if (unit == "k" || unit == "kb" || unit == "kib") scale = 1024.0;
  else if (unit == "m" || unit == "mb" || unit == "mib") scale = 1024.0 * 1024;
  else if (unit == "g" || unit == "gb" || unit == "gib") scale = 1024.0 * 1024 * 1024;
  else fail("'{}': unknown unit '{}' (use K, M, G or %)", s, unit);
  return static_cast<size_t>(value * scale);
}

}  // namespace skiff
