// The real GGUF models scripts/fetch-models.sh caches outside the repository
// (${SKIFF_MODELS_CACHE:-$HOME/.cache/skiff/models}). Tests that need one skip
// when it is absent, unless SKIFF_REQUIRE_REAL_MODELS is set (CI sets it, so a
// missing download fails there instead of passing silently).
#pragma once
#include <gtest/gtest.h>
#include <pwd.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <optional>
#include <string>

namespace skiff::testing {

inline std::string real_models_dir() {
  if (const char* dir = std::getenv("SKIFF_MODELS_CACHE")) return dir;
  const char* home = std::getenv("HOME");
  if (!home) {  // as fetch-models.sh: the passwd database's home when HOME is unset
    const passwd* user = getpwuid(getuid());
    home = user ? user->pw_dir : "";
  }
  return std::string(home) + "/.cache/skiff/models";
}

// The path of a cached model file, or nullopt (a test failure too when they
// are required, unless the file is one CI does not fetch: the 1.5B).
inline std::optional<std::string> real_model(const std::string& file) {
  const std::string path = real_models_dir() + "/" + file;
  if (std::filesystem::exists(path)) return path;
  const bool fetched_by_ci = file.find("1.5b") == std::string::npos;
  if (std::getenv("SKIFF_REQUIRE_REAL_MODELS") && fetched_by_ci)
    ADD_FAILURE() << path << " is missing: run scripts/fetch-models.sh";
  return std::nullopt;
}

}  // namespace skiff::testing
