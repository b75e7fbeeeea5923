// model.safetensors.index.json: the weight map that names a sharded model's files.
#include "base/json.h"
#include "fuzz_support.h"
#include "safetensors/safetensors.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace skiff;
  fuzz::refusing_errors(
      [&] { safetensors::index_shards(parse_json({reinterpret_cast<const char*>(data), size})); });
  return 0;
}
