// The vocabulary every tokenizer loader fills in: token texts, scores and
// types, BPE merges, special ids and the encode options upstream metadata
// sets. finalize() checks it and builds the lookup tables.
#pragma once
#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "tokenizer/pretokenizer.h"

namespace skiff {

// As numbered by GGUF tokenizer.ggml.token_type and SentencePiece.
enum class TokenType : uint8_t {
  Undefined = 0, Normal = 1, Unknown = 2, Control = 3, UserDefined = 4, Unused = 5, Byte = 6,
};

enum class VocabKind {
  Spm,  // SentencePiece style: ▁ for spaces, merge by score, <0xAB> byte fallback
  Bpe,  // BPE merging by rank after a regex pre-tokenizer: byte-level (GPT-2's byte
        // alphabet) or, for Gemma 4's SentencePiece-style pre-tokenizers, over raw UTF-8
        // with ▁ for spaces and <0xAB> byte fallback
  Wpm,  // WordPiece (BERT), as llama.cpp's converter stores it: word-initial pieces begin
        // with ▁, continuation pieces are bare ("##" dropped); greedy longest match
};

struct Vocab {
  VocabKind kind = VocabKind::Spm;
  PreTokenizer pre = PreTokenizer::Default;  // Bpe only
  std::vector<std::string> texts;
  std::vector<float> scores;     // Spm: higher merges first; empty means all 0
  std::vector<TokenType> types;  // empty means all Normal
  std::vector<std::string> merges;  // Bpe: "left right", best first

  int32_t bos_id = -1;
  int32_t eos_id = -1;
  int32_t unk_id = -1;
  int32_t pad_id = -1;
  int32_t sep_id = -1;  // Wpm: [SEP], which ends an encoded text as EOS would
  std::vector<int32_t> extra_end_ids;  // end-of-turn tokens besides eos
  bool add_bos = false;
  bool add_eos = false;
  bool add_space_prefix = false;  // Spm: prefix a space as SentencePiece's dummy prefix
  bool ignore_merges = false;     // Bpe: a word that is a whole token is not merged
  bool escape_whitespaces = false;  // Bpe: spaces become ▁ before pre-tokenizing (Gemma 4)

  // Checks sizes and ids (throws Error), fills defaults and builds the tables below.
  void finalize();

  int32_t n_tokens() const { return static_cast<int32_t>(texts.size()); }
  int32_t find(std::string_view text) const;  // -1 when absent
  size_t longest_token_bytes() const { return longest_token_bytes_; }
  int32_t merge_rank(std::string_view left, std::string_view right) const;  // -1 when none
  // Spm byte-fallback token for a byte: <0xAB>, else the byte itself, else unk.
  int32_t byte_token(uint8_t byte) const;

  // Control, user-defined and unknown tokens, longest text first: the ones
  // encode() matches in raw text before tokenizing the rest.
  std::vector<int32_t> special_tokens;

 private:
  void add_known_end_tokens();

  std::unordered_map<std::string, int32_t> text_to_id_;
  std::unordered_map<std::string, int32_t> merge_ranks_;
  size_t longest_token_bytes_ = 0;
};

void spm_tokenize(const Vocab& vocab, std::string_view text, std::vector<int32_t>& out);
void bpe_tokenize(const Vocab& vocab, std::string_view text, std::vector<int32_t>& out);
void wpm_tokenize(const Vocab& vocab, std::string_view text, std::vector<int32_t>& out);

}  // namespace skiff
