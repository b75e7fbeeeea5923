// Pre-tokenizers of byte-level BPE vocabularies: split text into the words
// that BPE merges never cross. Each type reproduces one upstream regex (named
// by GGUF tokenizer.ggml.pre) with hand-written matchers over code points.
#pragma once
#include <string>
#include <string_view>
#include <vector>

namespace skiff {

enum class PreTokenizer {
  Default,        // llama.cpp's fallback: punctuation runs, the GPT-2 regex, digit runs, 3 digits
  Gpt2,           // GPT-2's regex (also mpt, olmo, jais)
  DeepseekCoder,  // newlines, letters, punctuation, CJK runs, single digits
  Llama3,         // the Llama 3 regex: case-free contractions, digit groups of at most 3
  Qwen2,          // the Llama 3 regex with single digits
};

// Maps a tokenizer.ggml.pre name; throws Error naming unsupported ones.
PreTokenizer pre_tokenizer_from_name(std::string_view name);

// The words of text, in order; their concatenation is text (with ill-formed
// UTF-8 replaced by U+FFFD).
std::vector<std::string> pre_tokenize(std::string_view text, PreTokenizer type);

}  // namespace skiff
