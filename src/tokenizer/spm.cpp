// SentencePiece-style encoding as llama.cpp's llm_tokenizer_spm does it: start
// from single characters and repeatedly merge the adjacent pair whose joined
// text is the best-scoring token; characters left outside the vocabulary fall
// back to <0xAB> byte tokens.
#include <queue>

#include "tokenizer/unicode.h"
#include "tokenizer/vocab.h"

namespace skiff {

namespace {

struct Symbol {
  int prev;
  int next;
  size_t offset;
  size_t length;  // 0 once merged into its left neighbour
};

struct Bigram {
  int left;
  int right;
  float score;
  size_t length;  // of the joined text, to recognise stale entries
};

// Highest score first; on ties the leftmost pair.
struct WorseBigram {
  bool operator()(const Bigram& a, const Bigram& b) const {
    return a.score < b.score || (a.score == b.score && a.left > b.left);
  }
};

class SpmMerger {
 public:
  SpmMerger(const Vocab& vocab, std::string_view text) : vocab_(vocab), text_(text) {}

  void run(std::vector<int32_t>& out) {
    split_characters();
    for (int i = 1; i < static_cast<int>(symbols_.size()); ++i) try_add_bigram(i - 1, i);
    while (!queue_.empty()) {
      const Bigram bigram = queue_.top();
      queue_.pop();
      Symbol& left = symbols_[bigram.left];
      Symbol& right = symbols_[bigram.right];
      if (left.length == 0 || right.length == 0 || left.length + right.length != bigram.length) continue;
      left.length += right.length;
      right.length = 0;
      left.next = right.next;
      if (right.next >= 0) symbols_[right.next].prev = bigram.left;
      try_add_bigram(left.prev, bigram.left);
      try_add_bigram(bigram.left, left.next);
    }
    for (int i = symbols_.empty() ? -1 : 0; i != -1; i = symbols_[i].next) emit(symbols_[i], out);
  }

 private:
  void split_characters() {
    size_t offset = 0;
    while (offset < text_.size()) {
      const size_t length = std::min(text_.size() - offset,
                                     unicode::utf8_sequence_length(static_cast<uint8_t>(text_[offset])));
      const int index = static_cast<int>(symbols_.size());
      const bool last = offset + length == text_.size();
      symbols_.push_back({index - 1, last ? -1 : index + 1, offset, length});
      offset += length;
    }
  }

  void try_add_bigram(int left, int right) {
    if (left < 0 || right < 0) return;
    const size_t length = symbols_[left].length + symbols_[right].length;
    const int32_t id = vocab_.find(text_.substr(symbols_[left].offset, length));
    if (id < 0) return;
    queue_.push({left, right, vocab_.scores[id], length});
  }

  // Merges only ever form vocabulary tokens, so a symbol that is not one is a
  // single character: it is spelled with byte tokens.
  void emit(const Symbol& symbol, std::vector<int32_t>& out) const {
    const std::string_view piece = text_.substr(symbol.offset, symbol.length);
    const int32_t id = vocab_.find(piece);
    if (id >= 0) {
      out.push_back(id);
      return;
    }
    for (const char byte : piece) {
      const int32_t byte_id = vocab_.byte_token(static_cast<uint8_t>(byte));
      if (byte_id >= 0) out.push_back(byte_id);
    }
  }

  const Vocab& vocab_;
  std::string_view text_;
  std::vector<Symbol> symbols_;
  std::priority_queue<Bigram, std::vector<Bigram>, WorseBigram> queue_;
};

}  // namespace

void spm_tokenize(const Vocab& vocab, std::string_view text, std::vector<int32_t>& out) {
  SpmMerger(vocab, text).run(out);
}

}  // namespace skiff
