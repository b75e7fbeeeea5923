// Byte-level BPE encoding: pre-tokenize into words, map each word's bytes to
// GPT-2's printable characters, then merge adjacent parts by merge rank
// (lowest first, leftmost on ties) until no ranked pair is left.
#include "tokenizer/unicode.h"
#include "tokenizer/vocab.h"

namespace skiff {

namespace {

std::string byte_level_encode(std::string_view word) {
  std::string out;
  out.reserve(word.size() * 2);
  for (const char byte : word) out += unicode::byte_to_unicode(static_cast<uint8_t>(byte));
  return out;
}

std::vector<std::string_view> split_characters(std::string_view word) {
  std::vector<std::string_view> parts;
  size_t offset = 0;
  while (offset < word.size()) {
    const size_t length = std::min(word.size() - offset,
                                   unicode::utf8_sequence_length(static_cast<uint8_t>(word[offset])));
    parts.push_back(word.substr(offset, length));
    offset += length;
  }
  return parts;
}

void merge_parts(const Vocab& vocab, std::vector<std::string_view>& parts) {
  while (parts.size() > 1) {
    int32_t best_rank = -1;
    size_t best = 0;
    for (size_t i = 0; i + 1 < parts.size(); ++i) {
      const int32_t rank = vocab.merge_rank(parts[i], parts[i + 1]);
      if (rank >= 0 && (best_rank < 0 || rank < best_rank)) {
        best_rank = rank;
        best = i;
      }
    }
    if (best_rank < 0) return;
    // Parts are adjacent views of one string, so the merge is a wider view.
    parts[best] = std::string_view(parts[best].data(), parts[best].size() + parts[best + 1].size());
    parts.erase(parts.begin() + static_cast<std::ptrdiff_t>(best) + 1);
  }
}

void emit_part(const Vocab& vocab, std::string_view part, std::vector<int32_t>& out) {
  const int32_t id = vocab.find(part);
  if (id >= 0) {
    out.push_back(id);
    return;
  }
  // As llama.cpp: a part outside the vocabulary is spelled byte by byte where it can be.
  for (const char byte : part) {
    const int32_t byte_id = vocab.find(std::string_view(&byte, 1));
    if (byte_id >= 0) out.push_back(byte_id);
  }
}

}  // namespace

void bpe_tokenize(const Vocab& vocab, std::string_view text, std::vector<int32_t>& out) {
  for (const std::string& word : pre_tokenize(text, vocab.pre)) {
    const std::string encoded = byte_level_encode(word);
    if (vocab.ignore_merges) {
      const int32_t id = vocab.find(encoded);
      if (id >= 0) {
        out.push_back(id);
        continue;
      }
    }
    std::vector<std::string_view> parts = split_characters(encoded);
    merge_parts(vocab, parts);
    for (const std::string_view part : parts) emit_part(vocab, part, out);
  }
}

}  // namespace skiff
