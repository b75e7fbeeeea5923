// SentencePiece-style vocabularies (merge by score, byte fallback): arbitrary
// bytes encoded, arbitrary ids decoded (fuzz_vocabularies).
#include "fuzz_support.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const char* const kFiles[] = {"ggml-vocab-llama-spm.gguf", "ggml-vocab-phi-3.gguf", "ggml-vocab-baichuan.gguf"};
  skiff::fuzz::fuzz_vocabularies(kFiles, data, size);
  return 0;
}
