// A ModelConfig as GGUF metadata, for skiff quantize: the keys
// config_from_gguf (and llama.cpp, for the keys it knows) reads back into it.
#pragma once
#include "model/architecture.h"

namespace skiff {

// The keys every family's files carry (shape, RoPE, windows), then the
// family's own (Architecture::to_gguf). Facts a family implies in every
// layer (biases, q/k norms, post-norms, the activation) need none. Error when
// the layers differ in a way GGUF has no key for (two windows).
GgufMetadata gguf_metadata(const ModelConfig& c);

// Whether the RoPE frequency factors are one factor for every pair (linear
// scaling), which GGUF keeps as a key; other factors are a tensor.
bool linear_rope_scaling(const ModelConfig& c);

}  // namespace skiff
