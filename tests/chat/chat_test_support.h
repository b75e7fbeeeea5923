// Helpers shared by the chat template tests: where the templates and their
// committed cases are, and rendering a template with one call.
#pragma once
#include <ctime>
#include <fstream>
#include <sstream>
#include <string>

#include "chat/chat_template.h"

namespace skiff::testing {

// ../shared/chat-templates, found from the models directory beside it.
inline std::string chat_templates_dir() { return std::string(SKIFF_MODELS_DIR) + "/../chat-templates"; }
inline std::string chat_cases_dir() { return std::string(SKIFF_SOURCE_DIR) + "/tests/data/chat_templates"; }

inline std::string read_text_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream buffer;
  buffer << in.rdbuf();
  return buffer.str();
}

// "2025-03-14T09:26:53" (the time the reference script fixed) as a full std::tm.
inline std::tm parse_iso_time(const std::string& iso) {
  std::tm t{};
  strptime(iso.c_str(), "%Y-%m-%dT%H:%M:%S", &t);
  const std::time_t seconds = timegm(&t);  // fills in the weekday and day of the year
  gmtime_r(&seconds, &t);
  return t;
}

// Renders source with `messages` (JSON text) and optional extra variables (JSON text).
inline std::string render_template(const std::string& source, const std::string& messages = "[]",
                                   const std::string& extra = "{}", bool add_generation_prompt = false) {
  ChatTemplateInputs inputs;
  inputs.messages = nlohmann::ordered_json::parse(messages);
  inputs.extra = nlohmann::ordered_json::parse(extra);
  inputs.add_generation_prompt = add_generation_prompt;
  inputs.now = parse_iso_time("2025-03-14T09:26:53");
  return ChatTemplate(source).render(inputs);
}

}  // namespace skiff::testing
