#include "tokenizer/tokenizer.h"

#include <algorithm>
#include <charconv>
#include <filesystem>

#include "base/error.h"
#include "gguf/gguf.h"
#include "tokenizer/unicode.h"

namespace skiff {

namespace {

// A stretch of the input: raw text still to tokenize, or an already matched special token.
struct Fragment {
  int32_t token = -1;  // -1 for raw text
  size_t offset = 0;
  size_t length = 0;
};

// Whether [offset, offset + length) overlaps one of the sorted, disjoint spans.
bool overlaps(std::span<const TextSpan> spans, size_t offset, size_t length) {
  const auto it = std::partition_point(spans.begin(), spans.end(),
                                       [&](const TextSpan& s) { return s.offset + s.length <= offset; });
  return it != spans.end() && it->offset < offset + length;
}

// Splits the raw fragments around every occurrence of the special tokens,
// longest token first, as llama.cpp's tokenizer_st_partition does. A control
// token's occurrence that overlaps a plain span stays raw text.
std::vector<Fragment> partition_special(const Vocab& vocab, std::string_view text, bool parse_special,
                                        std::span<const TextSpan> plain) {
  std::vector<Fragment> fragments{{-1, 0, text.size()}};
  for (const int32_t id : vocab.special_tokens) {
    const TokenType type = vocab.types[id];
    const bool user_defined = type == TokenType::UserDefined;
    if (!parse_special && !user_defined) continue;
    const std::string& special = vocab.texts[id];
    std::vector<Fragment> next;
    next.reserve(fragments.size());
    for (const Fragment& fragment : fragments) {
      if (fragment.token >= 0) {
        next.push_back(fragment);
        continue;
      }
      const std::string_view raw = text.substr(fragment.offset, fragment.length);
      size_t start = 0;  // the raw text not yet pushed
      size_t from = 0;   // where to look next
      for (size_t hit = raw.find(special); hit != std::string_view::npos; hit = raw.find(special, from)) {
        from = hit + 1;
        if (!user_defined && overlaps(plain, fragment.offset + hit, special.size())) continue;
        if (hit > start) next.push_back({-1, fragment.offset + start, hit - start});
        next.push_back({id, fragment.offset + hit, special.size()});
        start = from = hit + special.size();
      }
      if (start < raw.size()) next.push_back({-1, fragment.offset + start, raw.size() - start});
    }
    fragments = std::move(next);
  }
  return fragments;
}

std::string escape_spaces(std::string_view text) {
  std::string out;
  out.reserve(text.size() + 8);
  for (const char c : text) {
    if (c == ' ') {
      out += "\xE2\x96\x81";  // U+2581 ▁
    } else {
      out += c;
    }
  }
  return out;
}

std::string unescape_spaces(std::string_view text) {
  static constexpr std::string_view kSpaceMark = "\xE2\x96\x81";
  std::string out;
  out.reserve(text.size());
  for (size_t i = 0; i < text.size();) {
    if (text.substr(i, kSpaceMark.size()) == kSpaceMark) {
      out += ' ';
      i += kSpaceMark.size();
    } else {
      out += text[i++];
    }
  }
  return out;
}

std::string byte_level_decode(std::string_view text) {
  std::string out;
  for (const uint32_t cp : unicode::decode_utf8(text)) {
    const int byte = unicode::unicode_to_byte(cp);
    if (byte >= 0) {
      out += static_cast<char>(byte);
    } else {
      unicode::append_utf8(out, cp);
    }
  }
  return out;
}

// "<0xAB>" -> 0xAB
int parse_byte_token(std::string_view text) {
  if (text.size() != 6 || text.substr(0, 3) != "<0x" || text[5] != '>') return -1;
  int value = 0;
  const auto [end, error] = std::from_chars(text.data() + 3, text.data() + 5, value, 16);
  return error == std::errc() && end == text.data() + 5 ? value : -1;
}

}  // namespace

Tokenizer::Tokenizer(Vocab vocab) : vocab_(std::move(vocab)) { vocab_.finalize(); }

void Tokenizer::check_id(int32_t id) const {
  if (id < 0 || id >= n_vocab()) fail("token id {} is outside the vocabulary of {} tokens", id, n_vocab());
}

void Tokenizer::encode_text(std::string_view text, bool after_special, std::vector<int32_t>& out) const {
  if (vocab_.kind == VocabKind::Wpm) {
    wpm_tokenize(vocab_, text, out);
    return;
  }
  if (vocab_.kind == VocabKind::Bpe) {
    bpe_tokenize(vocab_, vocab_.escape_whitespaces ? escape_spaces(text) : std::string(text), out);
    return;
  }
  // SentencePiece's dummy prefix: a space before text that starts the input or follows a special token.
  const std::string prefixed = vocab_.add_space_prefix && after_special ? " " + std::string(text) : std::string(text);
  spm_tokenize(vocab_, escape_spaces(prefixed), out);
}

std::vector<int32_t> Tokenizer::encode(std::string_view text, bool add_special, bool parse_special,
                                       std::span<const TextSpan> plain) const {
  std::vector<int32_t> out;
  // llama.cpp's WordPiece encode adds [CLS] ... [SEP] for add_special whatever the
  // add_bos/add_eos keys say (they tell callers how to join text pairs).
  const bool wordpiece = vocab_.kind == VocabKind::Wpm;
  if (add_special && (vocab_.add_bos || wordpiece) && vocab_.bos_id >= 0) out.push_back(vocab_.bos_id);
  if (!text.empty()) {
    bool after_special = true;
    for (const Fragment& fragment : partition_special(vocab_, text, parse_special, plain)) {
      if (fragment.token >= 0) {
        out.push_back(fragment.token);
        after_special = true;
      } else {
        encode_text(text.substr(fragment.offset, fragment.length), after_special, out);
        after_special = false;
      }
    }
  }
  if (add_special && wordpiece) {
    if (vocab_.sep_id >= 0) out.push_back(vocab_.sep_id);
  } else if (add_special && vocab_.add_eos && vocab_.eos_id >= 0) {
    out.push_back(vocab_.eos_id);
  }
  return out;
}

std::vector<std::string_view> Tokenizer::control_spellings() const {
  std::vector<std::string_view> out;  // special_tokens is longest first
  for (const int32_t id : vocab_.special_tokens)
    if (vocab_.types[id] != TokenType::UserDefined) out.push_back(vocab_.texts[id]);
  return out;
}

std::string Tokenizer::token_text(int32_t id) const {
  check_id(id);
  return vocab_.texts[id];
}

std::string Tokenizer::token_to_piece(int32_t id, bool render_control) const {
  check_id(id);
  const std::string& text = vocab_.texts[id];
  switch (vocab_.types[id]) {
    case TokenType::Normal:
      return vocab_.kind == VocabKind::Bpe && !vocab_.escape_whitespaces ? byte_level_decode(text) : unescape_spaces(text);
    case TokenType::UserDefined:
      return text;
    case TokenType::Control:
      return render_control ? text : std::string();
    case TokenType::Unknown:
      return vocab_.kind == VocabKind::Spm ? "\xE2\x96\x85" : std::string();  // U+2585, as llama.cpp
    case TokenType::Byte: {
      const int byte = parse_byte_token(text);
      return byte >= 0 ? std::string(1, static_cast<char>(byte)) : std::string();
    }
    case TokenType::Unused:
    case TokenType::Undefined:
      break;
  }
  return {};
}

std::string Tokenizer::decode(std::span<const int32_t> ids, bool render_control) const {
  std::string out;
  bool strip_space = starts_with_marked_space();
  for (const int32_t id : ids) {
    std::string piece = token_to_piece(id, render_control);
    if (piece.empty()) continue;
    if (strip_space && piece.front() == ' ') piece.erase(0, 1);
    strip_space = false;
    out += piece;
  }
  return out;
}

bool Tokenizer::starts_with_marked_space() const {
  return (vocab_.kind == VocabKind::Spm && vocab_.add_space_prefix) || vocab_.kind == VocabKind::Wpm;
}

bool Tokenizer::is_end_of_generation(int32_t id) const {
  if (id < 0) return false;
  return id == vocab_.eos_id ||
         std::find(vocab_.extra_end_ids.begin(), vocab_.extra_end_ids.end(), id) != vocab_.extra_end_ids.end();
}

std::vector<int32_t> Tokenizer::end_of_generation_ids() const {
  std::vector<int32_t> ids;
  if (vocab_.eos_id >= 0 && vocab_.eos_id < n_vocab()) ids.push_back(vocab_.eos_id);
  for (int32_t id : vocab_.extra_end_ids)
    if (id >= 0 && id < n_vocab() && id != vocab_.eos_id) ids.push_back(id);
  return ids;
}

std::unique_ptr<Tokenizer> Tokenizer::from_path(const std::string& path) {
  namespace fs = std::filesystem;
  if (fs::is_directory(path)) return from_hf_dir(path);
  if (!fs::exists(path)) fail("{}: no such file or directory", path);
  return from_gguf(gguf::GgufFile(path));
}

bool Tokenizer::hf_dir_has_tokenizer(const std::string& dir) {
  namespace fs = std::filesystem;
  const fs::path root(dir);  // the files from_hf_dir reads
  return fs::exists(root / "tokenizer.json") || fs::exists(root / "tokenizer.model") ||
         (fs::exists(root / "encoder.json") && fs::exists(root / "vocab.bpe"));
}

std::unique_ptr<Tokenizer> Tokenizer::from_hf_dir(const std::string& dir) {
  namespace fs = std::filesystem;
  const fs::path root(dir);
  if (fs::exists(root / "tokenizer.json")) return from_tokenizer_json((root / "tokenizer.json").string());
  if (fs::exists(root / "tokenizer.model")) return from_sentencepiece_model((root / "tokenizer.model").string());
  if (fs::exists(root / "encoder.json") && fs::exists(root / "vocab.bpe")) {
    return from_gpt2_files((root / "encoder.json").string(), (root / "vocab.bpe").string(), PreTokenizer::Gpt2);
  }
  fail("{}: no tokenizer.json, tokenizer.model or encoder.json + vocab.bpe", dir);
}

StreamDecoder::StreamDecoder(const Tokenizer& tokenizer, bool at_text_start, bool render_control)
    : tokenizer_(tokenizer),
      strip_space_(at_text_start && tokenizer.starts_with_marked_space()),
      render_control_(render_control) {}

std::string StreamDecoder::push(int32_t id) {
  std::string piece = tokenizer_.token_to_piece(id, render_control_);
  if (strip_space_ && !piece.empty()) {
    if (piece.front() == ' ') piece.erase(0, 1);
    strip_space_ = false;
  }
  pending_ += piece;
  const size_t keep = unicode::incomplete_utf8_suffix(pending_);
  std::string ready = unicode::sanitize_utf8(std::string_view(pending_).substr(0, pending_.size() - keep));
  pending_.erase(0, pending_.size() - keep);
  return ready;
}

std::string StreamDecoder::flush() {
  const size_t unfinished = unicode::incomplete_utf8_suffix(pending_);
  std::string rest = unicode::sanitize_utf8(std::string_view(pending_).substr(0, pending_.size() - unfinished));
  if (unfinished > 0) unicode::append_utf8(rest, 0xFFFD);  // one replacement for the cut character
  pending_.clear();
  return rest;
}

}  // namespace skiff
