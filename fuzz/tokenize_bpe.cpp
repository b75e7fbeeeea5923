// Byte-level BPE vocabularies, one of each pre-tokenizer kind: the hand-written
// GPT-2, Llama 3 and Qwen2 splitters, the regex engine (DeepSeek Coder,
// Command-R, MPT, Qwen3.5) and Gemma 4's SentencePiece-style BPE.
#include "fuzz_support.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const char* const kFiles[] = {"ggml-vocab-gpt-2.gguf",      "ggml-vocab-llama-bpe.gguf",
                                       "ggml-vocab-qwen2.gguf",      "ggml-vocab-deepseek-coder.gguf",
                                       "ggml-vocab-command-r.gguf",  "ggml-vocab-mpt.gguf",
                                       "ggml-vocab-qwen35.gguf",     "ggml-vocab-gemma-4.gguf"};
  skiff::fuzz::fuzz_vocabularies(kFiles, data, size);
  return 0;
}
