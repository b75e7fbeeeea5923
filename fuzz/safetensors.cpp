// A model.safetensors file: the header's length, its JSON (dtypes, shapes,
// data offsets checked against the file) and the metadata.
#include "fuzz_support.h"
#include "safetensors/safetensors.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace skiff;
  const fuzz::MemoryFile input(data, size);
  fuzz::refusing_errors([&] {
    const safetensors::SafetensorsFile file(input.path());
    volatile uint8_t sum = 0;  // every tensor's first and last byte: in bounds
    for (const auto& [name, t] : file.tensors())
      if (t.nbytes) sum = sum + t.data[0] + t.data[t.nbytes - 1];
  });
  return 0;
}
