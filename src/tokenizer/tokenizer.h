// Text <-> token ids for Llama-family models: SentencePiece-style and
// byte-level BPE vocabularies, loaded from GGUF metadata or Hugging Face
// files, and BERT's WordPiece from GGUF, matching llama.cpp's tokenization.
#pragma once
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "tokenizer/vocab.h"

namespace skiff {

namespace gguf {
class GgufFile;
}

// Bytes [offset, offset + length) of a text.
struct TextSpan {
  size_t offset = 0;
  size_t length = 0;
};

class Tokenizer {
 public:
  explicit Tokenizer(Vocab vocab);  // calls vocab.finalize()

  static std::unique_ptr<Tokenizer> from_gguf(const gguf::GgufFile& file);
  // tokenizer.json preferred, else tokenizer.model, else encoder.json + vocab.bpe.
  static std::unique_ptr<Tokenizer> from_hf_dir(const std::string& dir);
  // Whether dir holds one of the tokenizer files from_hf_dir reads.
  static bool hf_dir_has_tokenizer(const std::string& dir);
  static std::unique_ptr<Tokenizer> from_path(const std::string& path);  // GGUF file or HF dir
  static std::unique_ptr<Tokenizer> from_sentencepiece_model(const std::string& path);
  static std::unique_ptr<Tokenizer> from_tokenizer_json(const std::string& path);
  // GPT-2 style files: encoder.json (text -> id) and vocab.bpe (merges).
  static std::unique_ptr<Tokenizer> from_gpt2_files(const std::string& encoder_json,
                                                    const std::string& vocab_bpe, PreTokenizer pre);

  // add_special: BOS/EOS as the vocabulary asks; WordPiece: [CLS] and [SEP]. parse_special: text equal to
  // a control token becomes that token (user-defined tokens always do).
  // plain: sorted, disjoint spans of text read as with parse_special off (a chat's client-supplied
  // text): no control token matches a stretch that overlaps one; the rest is read as parse_special says.
  std::vector<int32_t> encode(std::string_view text, bool add_special, bool parse_special,
                              std::span<const TextSpan> plain = {}) const;
  // The texts that become tokens only with parse_special (control and unknown tokens), longest first.
  std::vector<std::string_view> control_spellings() const;

  // The bytes a token stands for; control tokens give "" unless render_control.
  std::string token_to_piece(int32_t id, bool render_control = false) const;
  std::string token_text(int32_t id) const;  // the raw vocabulary string
  // All pieces joined, without the leading space SentencePiece's prefix or
  // WordPiece's mark on the first word added.
  std::string decode(std::span<const int32_t> ids, bool render_control = false) const;

  int32_t n_vocab() const { return vocab_.n_tokens(); }
  int32_t bos_id() const { return vocab_.bos_id; }
  int32_t eos_id() const { return vocab_.eos_id; }
  bool add_bos() const { return vocab_.add_bos; }
  bool is_end_of_generation(int32_t id) const;
  std::vector<int32_t> end_of_generation_ids() const;  // every id is_end_of_generation accepts
  // Whether an encoded text's first piece begins with a space encoding added
  // (SentencePiece's dummy prefix, WordPiece's ▁ on every word), which decode drops.
  bool starts_with_marked_space() const;
  const Vocab& vocab() const { return vocab_; }

 private:
  void check_id(int32_t id) const;
  void encode_text(std::string_view text, bool after_special, std::vector<int32_t>& out) const;

  Vocab vocab_;
};

// Decodes tokens one at a time as they are generated. push() returns the text
// that is complete so far: a character split across tokens is held back until
// its last byte arrives, so the output is always valid UTF-8. By default the
// pushed pieces join to exactly decode(ids).
class StreamDecoder {
 public:
  // at_text_start: the ids begin a text (an encoded prompt does), so the space
  // encoding added at its start is dropped, as decode() drops it. Pass
  // false to continue text decoded elsewhere. render_control: control tokens
  // give their text (token_to_piece), as decode(ids, true).
  explicit StreamDecoder(const Tokenizer& tokenizer, bool at_text_start = true, bool render_control = false);
  std::string push(int32_t id);
  // The held-back bytes, an unfinished character becoming U+FFFD.
  std::string flush();

 private:
  const Tokenizer& tokenizer_;
  bool strip_space_;
  bool render_control_;
  std::string pending_;
};

}  // namespace skiff
