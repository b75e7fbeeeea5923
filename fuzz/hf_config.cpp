// config.json of a Hugging Face model: the hyperparameters, RoPE scaling and
// each architecture's own keys, read into a validated ModelConfig.
#include "base/json.h"
#include "fuzz_support.h"
#include "model/loader.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace skiff;
  fuzz::refusing_errors([&] {
    const ModelConfig c = config_from_hf(parse_json({reinterpret_cast<const char*>(data), size}));
    c.score_scale();
  });
  return 0;
}
