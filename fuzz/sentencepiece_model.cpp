// A SentencePiece tokenizer.model (protobuf: pieces, trainer and normalizer
// specs), then the tokenizer it makes on a fixed text and on ids.
#include "fuzz_support.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace skiff;
  const fuzz::MemoryFile input(data, size);
  fuzz::refusing_errors([&] {
    const auto tokenizer = Tokenizer::from_sentencepiece_model(input.path());
    fuzz::exercise_tokenizer(*tokenizer, fuzz::kSampleText, 3);
  });
  return 0;
}
