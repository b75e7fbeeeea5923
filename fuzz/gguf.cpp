// A GGUF file from the internet: the header, metadata and tensor table
// (GgufFile, mapped and read into memory), the model config and tokenizer it
// declares, and, when all of that loads, the model itself and one short
// prefill (every tensor's bytes are in the input, so a model that loads is
// tiny and its forward pass costs little).
#include <vector>

#include "fuzz_support.h"
#include "gguf/gguf.h"
#include "model/loader.h"
#include "tokenizer/tokenizer.h"

namespace {

using namespace skiff;

void read_metadata(const gguf::GgufFile& f) {
  for (const auto& entry : f.metadata()) {
    const std::string& key = entry.first;
    fuzz::refusing_errors([&] { f.get_int(key, 0); });
    fuzz::refusing_errors([&] { f.get_float(key, 0); });
    fuzz::refusing_errors([&] { f.get_string(key, ""); });
    fuzz::refusing_errors([&] { f.get_string_array(key); });
    fuzz::refusing_errors([&] { f.get_float_array(key); });
    fuzz::refusing_errors([&] { f.get_int_array(key); });
  }
}

void run_model(std::shared_ptr<gguf::GgufFile> file) {
  config_from_gguf(*file);
  auto tokenizer = Tokenizer::from_gguf(*file);
  auto model = load_gguf_model(file);
  PagedKvCache kv = model->make_kv_cache(1, 8);
  const std::vector<int32_t> tokens{0, model->config().vocab_size - 1};
  model->prefill(kv, 0, tokens);
  tokenizer->decode(tokens);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const fuzz::MemoryFile input(data, size);
  fuzz::refusing_errors([&] {
    auto file = std::make_shared<gguf::GgufFile>(input.path(), FileLoad::kMmap);
    read_metadata(*file);
    run_model(file);
  });
  fuzz::refusing_errors([&] { run_model(std::make_shared<gguf::GgufFile>(input.path(), FileLoad::kCopy)); });
  return 0;
}
