#include "tokenizer/hf_files.h"

#include <filesystem>
#include <fstream>
#include <sstream>

#include "base/error.h"
#include "base/json.h"

namespace skiff::hf {

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) fail("{}: cannot open", path);
  std::ostringstream buffer;
  buffer << in.rdbuf();
  return buffer.str();
}

nlohmann::json read_json(const std::string& path) {
  try {
    return parse_json(read_file(path));
  } catch (const Error& e) {
    fail("{}: {}", path, e.what());
  }
}

std::vector<std::string> texts_from_id_map(const nlohmann::json& map) {
  if (!map.is_object()) fail("the vocabulary is not a JSON object of text: id");
  // Ids are dense in practice; this bound only stops a corrupt id from allocating gigabytes.
  const size_t max_id = map.size() * 2 + 1024;
  std::vector<std::string> texts;
  std::vector<bool> present;
  for (const auto& [text, value] : map.items()) {
    if (!value.is_number_integer()) fail("the id of '{}' is not an integer", text);
    const int64_t id = value.get<int64_t>();
    if (id < 0 || static_cast<size_t>(id) > max_id) fail("the id {} of '{}' is out of range", id, text);
    if (static_cast<size_t>(id) >= texts.size()) {
      texts.resize(id + 1);
      present.resize(id + 1, false);
    }
    if (present[id]) fail("id {} is given to two texts", id);
    texts[id] = text;
    present[id] = true;
  }
  for (size_t id = 0; id < texts.size(); ++id) {
    if (!present[id]) texts[id] = "[PAD" + std::to_string(id) + "]";
  }
  return texts;
}

namespace {
// A special token in tokenizer_config.json: a string or {"content": string}.
std::string token_content(const nlohmann::json& value) {
  if (value.is_string()) return value.get<std::string>();
  if (value.is_object() && value.contains("content") && value["content"].is_string()) {
    return value["content"].get<std::string>();
  }
  return {};
}
}  // namespace

void apply_tokenizer_config(const std::string& dir, Vocab& vocab) {
  const std::filesystem::path path = std::filesystem::path(dir) / "tokenizer_config.json";
  if (!std::filesystem::exists(path)) return;
  const nlohmann::json config = read_json(path.string());
  if (!config.is_object()) fail("{}: not a JSON object", path.string());
  auto find_text = [&](const std::string& text) {
    for (size_t id = 0; id < vocab.texts.size(); ++id) {
      if (vocab.texts[id] == text) return static_cast<int32_t>(id);
    }
    return int32_t{-1};
  };
  if (config.contains("bos_token")) {
    const int32_t id = find_text(token_content(config["bos_token"]));
    if (id >= 0) vocab.bos_id = id;
  }
  if (config.contains("eos_token")) {
    const int32_t id = find_text(token_content(config["eos_token"]));
    if (id >= 0) vocab.eos_id = id;
  }
  if (config.contains("add_bos_token") && config["add_bos_token"].is_boolean()) {
    vocab.add_bos = config["add_bos_token"].get<bool>();
  }
  if (config.contains("add_eos_token") && config["add_eos_token"].is_boolean()) {
    vocab.add_eos = config["add_eos_token"].get<bool>();
  }
}

std::unique_ptr<Tokenizer> load_tokenizer_file(const std::string& path,
                                               const std::function<Vocab(const std::string&)>& read) {
  try {
    Vocab vocab = read(path);
    apply_tokenizer_config(std::filesystem::path(path).parent_path().string(), vocab);
    return std::make_unique<Tokenizer>(std::move(vocab));
  } catch (const Error& e) {
    if (std::string_view(e.what()).starts_with(path)) throw;
    fail("{}: {}", path, e.what());
  } catch (const nlohmann::json::exception& e) {  // a field of the wrong type
    fail("{}: {}", path, json_error_text(e));
  }
}

}  // namespace skiff::hf
