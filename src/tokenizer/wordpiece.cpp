// WordPiece (BERT) tokenization as llama.cpp's WPM tokenizer does it: the text is
// lowercased and split into words, and each word becomes the longest vocabulary
// pieces that spell it from the left, or one [UNK] when no such spelling exists.
// llama.cpp's converter stores a word's first piece with a leading ▁ and drops
// the "##" of continuation pieces, so a word is matched as "▁" + word.
#include <algorithm>

#include "tokenizer/unicode.h"
#include "tokenizer/vocab.h"

namespace skiff {

namespace {

constexpr std::string_view kWordStart = "\xE2\x96\x81";  // U+2581 ▁

// The CJK ideograph blocks, whose characters BERT makes one word each. The block
// that should start at U+2B820 starts at U+2B920, as in HF tokenizers and llama.cpp.
bool is_cjk_ideograph(uint32_t cp) {
  return (cp >= 0x4E00 && cp <= 0x9FFF) || (cp >= 0x3400 && cp <= 0x4DBF) || (cp >= 0x20000 && cp <= 0x2A6DF) ||
         (cp >= 0x2A700 && cp <= 0x2B73F) || (cp >= 0x2B740 && cp <= 0x2B81F) || (cp >= 0x2B920 && cp <= 0x2CEAF) ||
         (cp >= 0xF900 && cp <= 0xFAFF) || (cp >= 0x2F800 && cp <= 0x2FA1F);
}

// Characters that are a word by themselves: punctuation, the ASCII symbols
// ($ + < = > ^ ` | ~; other symbols, emoji among them, stay inside words) and CJK ideographs.
bool is_single_character_word(uint32_t cp) {
  return unicode::is_punctuation(cp) || (cp < 0x7F && unicode::is_symbol(cp)) || is_cjk_ideograph(cp);
}

// The lowercased words of a text. Every code point becomes the head of its canonical
// decomposition first (so precomposed letters lose their accents while combining marks
// already in the text stay), and the classes are those of that code point. Whitespace
// ends a word; NUL, U+FFFD (what invalid bytes decode to) and control, format and
// private-use characters are dropped.
std::vector<std::string> split_words(std::string_view text) {
  std::vector<std::string> words;
  std::string word;
  auto finish_word = [&] {
    if (!word.empty()) words.push_back(std::move(word));
    word.clear();
  };
  for (const uint32_t raw : unicode::decode_utf8(text)) {
    const uint32_t cp = unicode::canonical_decomposition_head(raw);
    if (unicode::is_whitespace(cp)) {
      finish_word();
      continue;
    }
    if (cp == 0 || cp == 0xFFFD || unicode::is_control(cp)) continue;
    const uint32_t lower = unicode::to_lower(cp);
    if (is_single_character_word(cp)) {
      finish_word();
      unicode::append_utf8(word, lower);
      finish_word();
    } else {
      unicode::append_utf8(word, lower);
    }
  }
  finish_word();
  return words;
}

// Appends the pieces of "▁" + word, longest match first at each byte position.
// When some position starts no piece, appends nothing and returns false.
bool append_word_pieces(const Vocab& vocab, std::string_view word, std::vector<int32_t>& out) {
  std::string marked;
  marked.reserve(kWordStart.size() + word.size());
  marked.append(kWordStart).append(word);
  const std::string_view text = marked;
  const size_t first_piece = out.size();
  for (size_t start = 0; start < text.size();) {
    int32_t id = -1;
    size_t length = std::min(text.size() - start, vocab.longest_token_bytes());
    for (; length > 0; --length) {
      id = vocab.find(text.substr(start, length));
      if (id >= 0) break;
    }
    if (id < 0) {
      out.resize(first_piece);
      return false;
    }
    out.push_back(id);
    start += length;
  }
  return true;
}

}  // namespace

void wpm_tokenize(const Vocab& vocab, std::string_view text, std::vector<int32_t>& out) {
  for (const std::string& word : split_words(text)) {
    // A vocabulary without an unknown token drops the words it cannot spell.
    if (!append_word_pieces(vocab, word, out) && vocab.unk_id >= 0) out.push_back(vocab.unk_id);
  }
}

}  // namespace skiff
