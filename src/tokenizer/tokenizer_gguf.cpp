// Tokenizer::from_gguf: the vocabulary as llama.cpp's convert scripts store it
// under tokenizer.ggml.* keys, with llama.cpp's defaults for absent keys.
#include <limits>

#include "base/error.h"
#include "gguf/gguf.h"
#include "tokenizer/tokenizer.h"

namespace skiff {

namespace {

// Ids outside the vocabulary are ignored with the default kept, as llama.cpp does.
int32_t read_token_id(const gguf::GgufFile& file, const std::string& key, int32_t fallback, size_t n_tokens) {
  const int64_t id = file.get_int(key, fallback);
  return id >= 0 && static_cast<uint64_t>(id) < n_tokens ? static_cast<int32_t>(id) : fallback;
}

std::vector<TokenType> read_token_types(const gguf::GgufFile& file) {
  std::vector<TokenType> types;
  for (const int64_t value : file.get_int_array("tokenizer.ggml.token_type")) {
    const bool known = value >= 0 && value <= static_cast<int64_t>(TokenType::Byte);
    types.push_back(known ? static_cast<TokenType>(value) : TokenType::Undefined);
  }
  return types;
}

Vocab read_vocab(const gguf::GgufFile& file) {
  const std::string model = file.get_string("tokenizer.ggml.model", "");
  Vocab vocab;
  int32_t default_bos = -1;
  int32_t default_eos = -1;
  int32_t default_unk = -1;
  if (model == "llama") {
    vocab.kind = VocabKind::Spm;
    default_bos = 1;
    default_eos = 2;
    default_unk = 0;
    vocab.add_bos = true;
    vocab.add_space_prefix = true;
  } else if (model == "gpt2") {
    vocab.kind = VocabKind::Bpe;
    default_bos = 11;
    default_eos = 11;
    vocab.pre = pre_tokenizer_from_name(file.get_string("tokenizer.ggml.pre", "default"));
    vocab.add_bos = vocab.pre == PreTokenizer::Llama3;
    vocab.ignore_merges = vocab.pre == PreTokenizer::Llama3;
    vocab.merges = file.get_string_array("tokenizer.ggml.merges");
  } else if (model.empty()) {
    fail("no tokenizer (tokenizer.ggml.model is missing)");
  } else {
    fail("unsupported tokenizer model '{}' (supported: llama, gpt2)", model);
  }
  vocab.texts = file.get_string_array("tokenizer.ggml.tokens");
  vocab.scores = file.get_float_array("tokenizer.ggml.scores");
  vocab.types = read_token_types(file);

  const size_t n = vocab.texts.size();
  vocab.bos_id = read_token_id(file, "tokenizer.ggml.bos_token_id", default_bos, n);
  vocab.eos_id = read_token_id(file, "tokenizer.ggml.eos_token_id", default_eos, n);
  vocab.unk_id = read_token_id(file, "tokenizer.ggml.unknown_token_id", default_unk, n);
  vocab.pad_id = read_token_id(file, "tokenizer.ggml.padding_token_id", -1, n);
  for (const char* key : {"tokenizer.ggml.eot_token_id", "tokenizer.ggml.eom_token_id"}) {
    const int32_t id = read_token_id(file, key, -1, n);
    if (id >= 0) vocab.extra_end_ids.push_back(id);
  }
  vocab.add_bos = file.get_bool("tokenizer.ggml.add_bos_token", vocab.add_bos);
  vocab.add_eos = file.get_bool("tokenizer.ggml.add_eos_token", vocab.add_eos);
  vocab.add_space_prefix = file.get_bool("tokenizer.ggml.add_space_prefix", vocab.add_space_prefix);
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
