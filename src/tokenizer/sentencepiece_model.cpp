#include "base/error.h"
#include "tokenizer/tokenizer.h"
namespace skiff {
std::unique_ptr<Tokenizer> Tokenizer::from_sentencepiece_model(const std::string& path) { fail("todo {}", path); }
std::unique_ptr<Tokenizer> Tokenizer::from_tokenizer_json(const std::string& path) { fail("todo {}", path); }
}
