// Tokenizer::from_gguf: the vocabulary as llama.cpp's convert scripts store it
// under tokenizer.ggml.* keys, with llama.cpp's defaults for absent keys.
#include <cstdio>
#include <limits>

#include <fmt/format.h>

#include "base/error.h"
#include "gguf/gguf.h"
#include "tokenizer/tokenizer.h"

namespace skiff {

namespace {

// Ids outside the vocabulary are ignored with the default kept, and a default
// outside it is none, as llama.cpp does (GPT-2's default 11 in a small vocabulary).
int32_t read_token_id(const gguf::GgufFile& file, const std::string& key, int32_t fallback, size_t n_tokens) {
  auto in_vocab = [&](int64_t id) { return id >= 0 && static_cast<uint64_t>(id) < n_tokens; };
  const int32_t usable_fallback = in_vocab(fallback) ? fallback : -1;
  const int64_t id = file.get_int(key, usable_fallback);
  return in_vocab(id) ? static_cast<int32_t>(id) : usable_fallback;
}

std::vector<TokenType> read_token_types(const gguf::GgufFile& file) {
  std::vector<TokenType> types;
  for (const int64_t value : file.get_int_array("tokenizer.ggml.token_type")) {
    const bool known = value >= 0 && value <= static_cast<int64_t>(TokenType::Byte);
    types.push_back(known ? static_cast<TokenType>(value) : TokenType::Undefined);
  }
  return types;
}

// tokenizer.ggml.pre as llama.cpp reads it: absent means "default", with a warning.
PreTokenizerChoice read_pre_tokenizer(const gguf::GgufFile& file) {
  const std::string name = file.get_string("tokenizer.ggml.pre", "");
  if (!name.empty()) return pre_tokenizer_from_name(name);
  fmt::print(stderr, "warning: {}: no tokenizer.ggml.pre, using the 'default' pre-tokenizer "
             "(as llama.cpp; tokenization may differ from the model's own)\n", file.path());
  return pre_tokenizer_from_name("default");
}

std::vector<std::string> read_merges(const gguf::GgufFile& file) {
  if (!file.find("tokenizer.ggml.merges")) fail("no tokenizer.ggml.merges (a BPE vocabulary needs them)");
  return file.get_string_array("tokenizer.ggml.merges");
}

Vocab read_vocab(const gguf::GgufFile& file) {
  const std::string model = file.get_string("tokenizer.ggml.model", "");
  Vocab vocab;
  int32_t default_bos = -1;
  int32_t default_eos = -1;
  int32_t default_unk = -1;
  int32_t default_sep = -1;
  int32_t default_pad = -1;
  if (model == "llama") {
    vocab.kind = VocabKind::Spm;
    default_bos = 1;
    default_eos = 2;
    default_unk = 0;
    vocab.add_bos = true;
    vocab.add_space_prefix = true;
  } else if (model == "gpt2" || model == "gemma4") {
    vocab.kind = VocabKind::Bpe;
    // Gemma 4's model name implies its pre-tokenizer, whatever the file says; no default ids.
    const PreTokenizerChoice pre = model == "gemma4" ? pre_tokenizer_from_name("gemma4") : read_pre_tokenizer(file);
    if (model == "gpt2") {
      default_bos = pre.no_default_bos ? -1 : 11;
      default_eos = 11;
    }
    vocab.pre = pre.type;
    vocab.add_bos = pre.add_bos;
    vocab.ignore_merges = pre.ignore_merges;
    vocab.escape_whitespaces = pre.escape_whitespaces;
    // llama.cpp loads Kimi K2 vocabularies without merges (each word then stays in byte tokens).
    const bool merges_optional = pre.type == PreTokenizer::KimiK2 && !file.find("tokenizer.ggml.merges");
    if (!merges_optional) vocab.merges = read_merges(file);
  } else if (model == "bert") {
    // llama.cpp's WPM defaults: [CLS] 101 is the BOS, [UNK] 100, [SEP] 102, [PAD] 0.
    vocab.kind = VocabKind::Wpm;
    default_bos = 101;
    default_unk = 100;
    default_sep = 102;
    default_pad = 0;
    vocab.add_bos = true;
  } else if (model.empty()) {
    fail("no tokenizer (tokenizer.ggml.model is missing)");
  } else {
    fail("unsupported tokenizer model '{}' (supported: llama, gpt2, gemma4, bert)", model);
  }
  vocab.texts = file.get_string_array("tokenizer.ggml.tokens");
  vocab.scores = file.get_float_array("tokenizer.ggml.scores");
  vocab.types = read_token_types(file);

  const size_t n = vocab.texts.size();
  vocab.bos_id = read_token_id(file, "tokenizer.ggml.bos_token_id", default_bos, n);
  vocab.eos_id = read_token_id(file, "tokenizer.ggml.eos_token_id", default_eos, n);
  vocab.unk_id = read_token_id(file, "tokenizer.ggml.unknown_token_id", default_unk, n);
  vocab.pad_id = read_token_id(file, "tokenizer.ggml.padding_token_id", default_pad, n);
  // The key's spelling is llama.cpp's.
  vocab.sep_id = read_token_id(file, "tokenizer.ggml.seperator_token_id", default_sep, n);
  for (const char* key : {"tokenizer.ggml.eot_token_id", "tokenizer.ggml.eom_token_id"}) {
    const int32_t id = read_token_id(file, key, -1, n);
    if (id >= 0) vocab.extra_end_ids.push_back(id);
  }
  vocab.add_bos = file.get_bool("tokenizer.ggml.add_bos_token", vocab.add_bos);
  vocab.add_eos = file.get_bool("tokenizer.ggml.add_eos_token", vocab.add_eos);
  vocab.add_space_prefix = file.get_bool("tokenizer.ggml.add_space_prefix", vocab.add_space_prefix);
  // llama.cpp forces BOS on for Gemma 4, whose files say add_bos_token false.
  if (vocab.pre == PreTokenizer::Gemma4) vocab.add_bos = true;
  return vocab;
}

}  // namespace

std::unique_ptr<Tokenizer> Tokenizer::from_gguf(const gguf::GgufFile& file) {
  try {
    return std::make_unique<Tokenizer>(read_vocab(file));
  } catch (const Error& e) {
    fail("{}: {}", file.path(), e.what());
  }
}

}  // namespace skiff
