// BPE encoding as llama.cpp's llm_tokenizer_bpe_session does it: pre-tokenize
// into words, map each word's bytes to GPT-2's printable characters (byte-level
// types) or keep its UTF-8 (SentencePiece-style types), then merge adjacent
// parts by merge rank (lowest first, leftmost on ties) until no ranked pair is
// left.
#include <queue>

#include <fmt/format.h>

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

// A word's parts as a linked list over its text; merged parts keep the left
// one's slot and grow, the right one's length drops to 0.
struct Part {
  int prev;
  int next;
  size_t offset;
  size_t length;
};

struct Candidate {
  int32_t rank;
  int left;
  size_t length;  // of the merged text; any merge since then makes it longer
};

// Lowest rank first; on ties the leftmost pair.
struct WorseCandidate {
  bool operator()(const Candidate& a, const Candidate& b) const {
    return a.rank > b.rank || (a.rank == b.rank && a.left > b.left);
  }
};

class BpeMerger {
 public:
  BpeMerger(const Vocab& vocab, std::string_view word) : vocab_(vocab), word_(word) {}

  std::vector<std::string_view> run() {
    split_characters();
    for (int i = 0; i + 1 < static_cast<int>(parts_.size()); ++i) try_add_candidate(i);
    while (!queue_.empty()) {
      const Candidate candidate = queue_.top();
      queue_.pop();
      Part& left = parts_[candidate.left];
      if (left.length == 0 || left.next < 0) continue;
      Part& right = parts_[left.next];
      if (left.length + right.length != candidate.length) continue;  // stale
      left.length += right.length;
      right.length = 0;
      left.next = right.next;
      if (left.next >= 0) parts_[left.next].prev = candidate.left;
      if (left.prev >= 0) try_add_candidate(left.prev);
      try_add_candidate(candidate.left);
    }
    std::vector<std::string_view> out;
    for (int i = parts_.empty() ? -1 : 0; i >= 0; i = parts_[i].next) out.push_back(text(parts_[i]));
    return out;
  }

 private:
  std::string_view text(const Part& part) const { return word_.substr(part.offset, part.length); }

  void split_characters() {
    size_t offset = 0;
    while (offset < word_.size()) {
      const size_t length = std::min(word_.size() - offset,
                                     unicode::utf8_sequence_length(static_cast<uint8_t>(word_[offset])));
      const int index = static_cast<int>(parts_.size());
      const bool last = offset + length == word_.size();
      parts_.push_back({index - 1, last ? -1 : index + 1, offset, length});
      offset += length;
    }
  }

  void try_add_candidate(int left) {
    const int right = parts_[left].next;
    if (right < 0) return;
    const int32_t rank = vocab_.merge_rank(text(parts_[left]), text(parts_[right]));
    if (rank >= 0) queue_.push({rank, left, parts_[left].length + parts_[right].length});
  }

  const Vocab& vocab_;
  std::string_view word_;
  std::vector<Part> parts_;
  std::priority_queue<Candidate, std::vector<Candidate>, WorseCandidate> queue_;
};

// As llama.cpp: a part outside the vocabulary is spelled byte by byte where it
// can be, with the byte's own token (byte-level) or its <0xAB> token.
void emit_part(const Vocab& vocab, std::string_view part, bool byte_level, std::vector<int32_t>& out) {
  const int32_t id = vocab.find(part);
  if (id >= 0) {
    out.push_back(id);
    return;
  }
  for (const char byte : part) {
    const int32_t byte_id = byte_level ? vocab.find(std::string_view(&byte, 1))
                                       : vocab.find(fmt::format("<0x{:02X}>", static_cast<uint8_t>(byte)));
    if (byte_id >= 0) out.push_back(byte_id);
  }
}

// Whether a word skips merging: a whole token under ignore_merges, or for
// Gemma 4 a run of newlines that is a token (llama.cpp's fix for "\n\n").
bool is_whole_token_word(const Vocab& vocab, std::string_view word) {
  if (vocab.ignore_merges) return true;
  return vocab.pre == PreTokenizer::Gemma4 && word.find_first_not_of('\n') == std::string_view::npos;
}

}  // namespace

void bpe_tokenize(const Vocab& vocab, std::string_view text, std::vector<int32_t>& out) {
  const bool byte_level = pre_tokenizer_byte_encodes(vocab.pre);
  for (const std::string& word : pre_tokenize(text, vocab.pre)) {
    const std::string encoded = byte_level ? byte_level_encode(word) : word;
    if (is_whole_token_word(vocab, encoded)) {
      const int32_t id = vocab.find(encoded);
      if (id >= 0) {
        out.push_back(id);
        continue;
      }
    }
    for (const std::string_view part : BpeMerger(vocab, encoded).run()) emit_part(vocab, part, byte_level, out);
  }
}

}  // namespace skiff
