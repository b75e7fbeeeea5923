// Shared helpers of the loaders for Hugging Face / GPT-2 tokenizer files.
#pragma once
#include <nlohmann/json.hpp>

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "tokenizer/tokenizer.h"
#include "tokenizer/vocab.h"

namespace skiff::hf {

std::string read_file(const std::string& path);   // throws Error
nlohmann::json read_json(const std::string& path);  // throws Error on bad JSON

// {"text": id, ...} -> texts by id; ids missing from the map become unused
// "[PAD<id>]" tokens, as llama.cpp's converter fills them.
std::vector<std::string> texts_from_id_map(const nlohmann::json& map);

// Applies tokenizer_config.json beside the tokenizer file, if present:
// add_bos_token, add_eos_token, bos_token, eos_token.
void apply_tokenizer_config(const std::string& dir, Vocab& vocab);

// Reads a tokenizer file with `read`, applies tokenizer_config.json beside it,
// and prefixes any error with the path.
std::unique_ptr<Tokenizer> load_tokenizer_file(const std::string& path,
                                               const std::function<Vocab(const std::string&)>& read);

}  // namespace skiff::hf
