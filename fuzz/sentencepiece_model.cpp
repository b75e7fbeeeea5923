// A SentencePiece tokenizer.model (protobuf: pieces, trainer and normalizer
// specs), then the tokenizer it makes on a fixed text and on ids.
#include "fuzz_support.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  skiff::fuzz::fuzz_tokenizer_file(data, size, skiff::Tokenizer::from_sentencepiece_model);
  return 0;
}
