#include "tokenizer/vocab.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "base/error.h"

namespace skiff {

namespace {
void check_id(int32_t id, int32_t n_tokens, const char* what) {
  if (id < -1 || id >= n_tokens) fail("{} id {} is outside the vocabulary of {} tokens", what, id, n_tokens);
}
}  // namespace

void Vocab::finalize() {
  const int32_t n = n_tokens();
  if (n == 0) fail("the vocabulary has no tokens");
  if (!scores.empty() && scores.size() != texts.size()) {
    fail("the vocabulary has {} tokens but {} scores", texts.size(), scores.size());
  }
  if (!types.empty() && types.size() != texts.size()) {
    fail("the vocabulary has {} tokens but {} token types", texts.size(), types.size());
  }
  if (scores.empty()) scores.assign(texts.size(), 0.0f);
  if (types.empty()) types.assign(texts.size(), TokenType::Normal);
  // A NaN score would break the merge queue's ordering.
  for (float& score : scores) {
    if (std::isnan(score)) score = -std::numeric_limits<float>::infinity();
  }
  for (TokenType& type : types) {
    if (static_cast<uint8_t>(type) > static_cast<uint8_t>(TokenType::Byte)) type = TokenType::Undefined;
  }
  check_id(bos_id, n, "BOS");
  check_id(eos_id, n, "EOS");
  check_id(unk_id, n, "unknown-token");
  check_id(pad_id, n, "padding");
  check_id(sep_id, n, "separator");
  for (int32_t id : extra_end_ids) check_id(id, n, "end-of-turn");
  std::erase(extra_end_ids, -1);

  text_to_id_.clear();
  text_to_id_.reserve(texts.size());
  // The first id wins for duplicate texts, as in upstream loaders.
  longest_token_bytes_ = 0;
  for (int32_t id = 0; id < n; ++id) {
    text_to_id_.emplace(texts[id], id);
    longest_token_bytes_ = std::max(longest_token_bytes_, texts[id].size());
  }
  merge_ranks_.clear();
  merge_ranks_.reserve(merges.size());
  for (size_t rank = 0; rank < merges.size(); ++rank) {
    if (merges[rank].find(' ', 1) == std::string::npos) fail("merge {} '{}' is not 'left right'", rank, merges[rank]);
    merge_ranks_.emplace(merges[rank], static_cast<int32_t>(rank));
  }

  add_known_end_tokens();

  special_tokens.clear();
  for (int32_t id = 0; id < n; ++id) {
    const TokenType type = types[id];
    const bool special = type == TokenType::Control || type == TokenType::UserDefined || type == TokenType::Unknown;
    if (special && !texts[id].empty()) special_tokens.push_back(id);
  }
  std::stable_sort(special_tokens.begin(), special_tokens.end(),
                   [&](int32_t a, int32_t b) { return texts[a].size() > texts[b].size(); });
}

void Vocab::add_known_end_tokens() {
  // Chat models end a turn with these even when metadata names only the EOS.
  static const char* const kEndTexts[] = {"<|eot_id|>", "<|eom_id|>", "<|im_end|>", "<|end|>",
                                          "<end_of_turn>", "<|endoftext|>", "<EOT>",
                                          "<\xEF\xBD\x9C" "end\xE2\x96\x81of\xE2\x96\x81sentence\xEF\xBD\x9C>"};
  for (const char* text : kEndTexts) {
    const auto it = text_to_id_.find(text);
    if (it == text_to_id_.end() || types[it->second] != TokenType::Control) continue;
    if (std::find(extra_end_ids.begin(), extra_end_ids.end(), it->second) == extra_end_ids.end()) {
      extra_end_ids.push_back(it->second);
    }
  }
}

int32_t Vocab::find(std::string_view text) const {
  const auto it = text_to_id_.find(std::string(text));
  return it == text_to_id_.end() ? -1 : it->second;
}

int32_t Vocab::merge_rank(std::string_view left, std::string_view right) const {
  std::string key;
  key.reserve(left.size() + 1 + right.size());
  key.append(left).append(1, ' ').append(right);
  const auto it = merge_ranks_.find(key);
  return it == merge_ranks_.end() ? -1 : it->second;
}

int32_t Vocab::byte_token(uint8_t byte) const {
  const int32_t id = find(fmt::format("<0x{:02X}>", byte));
  if (id >= 0) return id;
  const int32_t raw = find(std::string(1, static_cast<char>(byte)));
  return raw >= 0 ? raw : unk_id;
}

}  // namespace skiff
