// Tokenizer::from_tokenizer_json: Hugging Face tokenizers' tokenizer.json with
// a BPE model. Byte-level BPEs map their pre-tokenizer (ByteLevel, or a Split
// regex) to one skiff supports; BPEs with byte_fallback over "▁" text (Llama 2
// style) become SentencePiece-style vocabularies scored by merge rank.
#include <filesystem>
#include <string_view>

#include "base/error.h"
#include "base/json.h"
#include "tokenizer/hf_files.h"
#include "tokenizer/tokenizer.h"

namespace skiff {

namespace {

using nlohmann::json;

std::vector<std::string> read_merges(const json& merges) {
  if (!merges.is_array()) fail("model.merges is not an array");
  std::vector<std::string> out;
  out.reserve(merges.size());
  for (const json& merge : merges) {
    if (merge.is_string()) {
      // "left right", both non-empty: the space splits the pair (make_spm_style and Vocab rely on it).
      const std::string& text = merge.get_ref<const std::string&>();
      const size_t space = text.find(' ', 1);
      if (space == std::string::npos || space + 1 == text.size())
        fail("a merge is not \"left right\": {}", json_excerpt(merge));
      out.push_back(text);
    } else if (merge.is_array() && merge.size() == 2 && merge[0].is_string() && merge[1].is_string()) {
      const auto left = merge[0].get<std::string>();
      const auto right = merge[1].get<std::string>();
      if (left.empty() || right.empty()) fail("a merge has an empty side: {}", json_excerpt(merge));
      if (left.find(' ') != std::string::npos || right.find(' ') != std::string::npos) {
        fail("merge [{}, {}] holds a space, which skiff's merge table cannot represent", left, right);
      }
      out.push_back(left + ' ' + right);
    } else {
      fail("a merge is neither \"left right\" nor [left, right]: {}", json_excerpt(merge));
    }
  }
  return out;
}

// added_tokens: [{"id", "content", "special"}]; special ones are control tokens.
void read_added_tokens(const json& added, Vocab& vocab) {
  if (added.is_null()) return;
  if (!added.is_array()) fail("added_tokens is not an array");
  vocab.types.assign(vocab.texts.size(), TokenType::Normal);
  for (const json& token : added) {
    if (!token.is_object() || !token.contains("id") || !token["id"].is_number_integer() ||
        !token.contains("content") || !token["content"].is_string()) {
      fail("bad added token: {}", json_excerpt(token));
    }
    const int64_t id = token["id"].get<int64_t>();
    if (id < 0 || static_cast<size_t>(id) > vocab.texts.size() + added.size()) fail("added token id {} is out of range", id);
    if (static_cast<size_t>(id) >= vocab.texts.size()) {
      for (size_t pad = vocab.texts.size(); pad <= static_cast<size_t>(id); ++pad) {
        vocab.texts.push_back("[PAD" + std::to_string(pad) + "]");
        vocab.types.push_back(TokenType::Unused);
      }
    }
    vocab.texts[id] = token["content"].get<std::string>();
    vocab.types[id] = token.value("special", false) ? TokenType::Control : TokenType::UserDefined;
  }
}

PreTokenizer pre_tokenizer_of_regex(const std::string& regex) {
  static const std::pair<std::string_view, PreTokenizer> kRegexes[] = {
      {R"('s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+)", PreTokenizer::Gpt2},
      {R"('s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S))", PreTokenizer::Gpt2},
      {R"((?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)",
       PreTokenizer::Llama3},
      {R"((?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)",
       PreTokenizer::Qwen2},
      {R"((?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?[\p{L}\p{M}]+|\p{N}| ?[^\s\p{L}\p{M}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)",
       PreTokenizer::Qwen35},
  };
  for (const auto& [known, type] : kRegexes) {
    if (regex == known) return type;
  }
  fail("unsupported pre-tokenizer regex '{}'", regex);
}

// The first Split regex of the pre-tokenizer, else GPT-2's for ByteLevel.
PreTokenizer read_pre_tokenizer(const json& pre) {
  if (!pre.is_object()) fail("a byte-level BPE needs a pre_tokenizer");
  const std::string type = pre.value("type", "");
  if (type == "Sequence" && pre.contains("pretokenizers") && pre["pretokenizers"].is_array()) {
    for (const json& step : pre["pretokenizers"]) {
      if (step.is_object() && step.value("type", "") == "Split") return read_pre_tokenizer(step);
    }
    for (const json& step : pre["pretokenizers"]) {
      if (step.is_object() && step.value("type", "") == "ByteLevel") return PreTokenizer::Gpt2;
    }
  }
  if (type == "Split" && pre.contains("pattern") && pre["pattern"].is_object() &&
      pre["pattern"].contains("Regex") && pre["pattern"]["Regex"].is_string()) {
    return pre_tokenizer_of_regex(pre["pattern"]["Regex"].get<std::string>());
  }
  if (type == "ByteLevel") return PreTokenizer::Gpt2;
  fail("unsupported pre_tokenizer {}", json_excerpt(pre));
}

// SentencePiece-style BPE: merging by best score with score = -rank
// reproduces merge order; tokens no merge makes rank after all merges.
void make_spm_style(const json& root, const json& model, Vocab& vocab) {
  vocab.kind = VocabKind::Spm;
  vocab.add_bos = true;
  vocab.scores.assign(vocab.texts.size(), -static_cast<float>(vocab.merges.size()));
  std::unordered_map<std::string, int32_t> ids;
  for (size_t id = 0; id < vocab.texts.size(); ++id) ids.emplace(vocab.texts[id], static_cast<int32_t>(id));
  for (size_t rank = 0; rank < vocab.merges.size(); ++rank) {
    std::string joined = vocab.merges[rank];
    joined.erase(joined.find(' ', 1), 1);
    const auto it = ids.find(joined);
    if (it != ids.end() && vocab.scores[it->second] < -static_cast<float>(rank)) {
      vocab.scores[it->second] = -static_cast<float>(rank);
    }
  }
  vocab.merges.clear();
  if (vocab.types.empty()) vocab.types.assign(vocab.texts.size(), TokenType::Normal);
  for (size_t id = 0; id < vocab.texts.size(); ++id) {
    const std::string& text = vocab.texts[id];
    if (vocab.types[id] == TokenType::Normal && text.size() == 6 && text.starts_with("<0x") && text.ends_with(">")) {
      vocab.types[id] = TokenType::Byte;
    }
  }
  if (model.contains("unk_token") && model["unk_token"].is_string()) {
    const auto it = ids.find(model["unk_token"].get<std::string>());
    if (it != ids.end()) {
      vocab.unk_id = it->second;
      vocab.types[it->second] = TokenType::Unknown;
    }
  }
  // The dummy prefix is a normalizer step Prepend("▁") or a Metaspace pre-tokenizer that prepends.
  const std::string normalizer = root.contains("normalizer") ? root["normalizer"].dump() : "";
  const std::string pre = root.contains("pre_tokenizer") ? root["pre_tokenizer"].dump() : "";
  const bool prepends = normalizer.find("\"Prepend\"") != std::string::npos ||
                        (pre.find("\"Metaspace\"") != std::string::npos && pre.find("\"never\"") == std::string::npos);
  vocab.add_space_prefix = prepends;
}

int32_t find_first(const Vocab& vocab, std::initializer_list<std::string_view> candidates) {
  for (const std::string_view text : candidates) {
    for (size_t id = 0; id < vocab.texts.size(); ++id) {
      if (vocab.texts[id] == text) return static_cast<int32_t>(id);
    }
  }
  return -1;
}

Vocab read_tokenizer_json(const json& root) {
  if (!root.is_object() || !root.contains("model") || !root["model"].is_object()) fail("no \"model\" object");
  const json& model = root["model"];
  const std::string type = model.value("type", "BPE");
  if (type != "BPE") fail("unsupported tokenizer model type '{}' (supported: BPE)", type);
  if (!model.contains("vocab") || !model.contains("merges")) fail("model needs \"vocab\" and \"merges\"");

  Vocab vocab;
  vocab.texts = hf::texts_from_id_map(model["vocab"]);
  vocab.merges = read_merges(model["merges"]);
  read_added_tokens(root.value("added_tokens", json()), vocab);
  const bool byte_fallback = model.contains("byte_fallback") && model["byte_fallback"].is_boolean() &&
                             model["byte_fallback"].get<bool>();
  if (byte_fallback) {
    make_spm_style(root, model, vocab);
    vocab.bos_id = find_first(vocab, {"<s>"});
    vocab.eos_id = find_first(vocab, {"</s>"});
  } else {
    vocab.kind = VocabKind::Bpe;
    vocab.pre = read_pre_tokenizer(root.value("pre_tokenizer", json()));
    vocab.ignore_merges = model.contains("ignore_merges") && model["ignore_merges"].is_boolean() &&
                          model["ignore_merges"].get<bool>();
    vocab.bos_id = find_first(vocab, {"<|begin_of_text|>", "<s>", "<|endoftext|>"});
    vocab.eos_id = find_first(vocab, {"<|end_of_text|>", "</s>", "<|endoftext|>"});
    vocab.add_bos = vocab.pre == PreTokenizer::Llama3;
  }
  return vocab;
}

}  // namespace

std::unique_ptr<Tokenizer> Tokenizer::from_tokenizer_json(const std::string& path) {
  return hf::load_tokenizer_file(
      path, [](const std::string& p) { return read_tokenizer_json(hf::read_json(p)); });
}

}  // namespace skiff
