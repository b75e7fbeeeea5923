// Where skiff chat and skiff serve take their chat template from: the file
// given with --chat-template, else the model's own (find_chat_template).
#pragma once
#include <fstream>
#include <optional>
#include <sstream>
#include <string>

#include "base/error.h"
#include "chat/chat_template.h"

namespace skiff::cli {

inline std::optional<std::string> chat_template_source(const std::string& model, const std::string& file) {
  if (file.empty()) return find_chat_template(model);
  std::ifstream in(file, std::ios::binary);
  if (!in) fail("cannot read --chat-template {}", file);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

}  // namespace skiff::cli
