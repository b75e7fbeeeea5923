// Where a model keeps its chat template: GGUF metadata, or the files of a
// Hugging Face directory.
#include <filesystem>

#include "base/error.h"
#include "chat/chat_template.h"
#include "gguf/gguf.h"
#include "tokenizer/hf_files.h"

namespace skiff {

namespace {

std::optional<std::string> gguf_chat_template(const std::string& path) {
  const gguf::GgufFile file(path);  // the header only: tensor data stays unread in the mapping
  const gguf::Value* value = file.find("tokenizer.chat_template");
  if (!value) return std::nullopt;
  if (!std::holds_alternative<std::string>(value->data))
    fail("{}: tokenizer.chat_template is not a string", path);
  return value->as_string();
}

// tokenizer_config.json's chat_template: a string, or a list of {name, template}.
std::optional<std::string> config_chat_template(const std::string& path) {
  const nlohmann::json config = hf::read_json(path);
  if (!config.is_object()) return std::nullopt;
  const auto it = config.find("chat_template");
  if (it == config.end() || it->is_null()) return std::nullopt;
  if (it->is_string()) return it->get<std::string>();
  if (!it->is_array()) fail("{}: chat_template is neither a string nor a list of templates", path);
  for (const auto& entry : *it) {
    if (!entry.is_object() || entry.value("name", "") != "default") continue;
    const auto t = entry.find("template");
    if (t == entry.end() || !t->is_string()) fail("{}: the default chat template is not a string", path);
    return t->get<std::string>();
  }
  return std::nullopt;
}

}  // namespace

std::optional<std::string> find_chat_template(const std::string& model_path) {
  namespace fs = std::filesystem;
  if (!fs::is_directory(model_path)) return gguf_chat_template(model_path);
  const fs::path dir(model_path);
  if (fs::exists(dir / "chat_template.jinja")) return hf::read_file((dir / "chat_template.jinja").string());
  if (fs::exists(dir / "tokenizer_config.json")) return config_chat_template((dir / "tokenizer_config.json").string());
  return std::nullopt;
}

}  // namespace skiff
