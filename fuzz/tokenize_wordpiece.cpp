// BERT's WordPiece (greedy longest match over ▁-marked words).
#include "fuzz_support.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const char* const kFiles[] = {"ggml-vocab-bert-bge.gguf"};
  skiff::fuzz::fuzz_vocabularies(kFiles, data, size);
  return 0;
}
