// stories260K (../shared), loaded once per test program, for the tests that
// drive a whole engine (engine, server): a real model that runs in
// milliseconds. Never freed: it lives as long as the test program.
#pragma once
#include <memory>
#include <string>

#include "engine/sampling_params.h"
#include "model/loader.h"
#include "tokenizer/tokenizer.h"

namespace skiff::testing {

inline const std::string kStoriesPath = std::string(SKIFF_MODELS_DIR) + "/derived/stories260K-f32.gguf";

inline Model& stories_model() {
  static const std::unique_ptr<Model> model = load_model(kStoriesPath);
  return *model;
}

inline const Tokenizer& stories_tokenizer() {
  static const std::unique_ptr<Tokenizer> tokenizer = Tokenizer::from_path(kStoriesPath);
  return *tokenizer;
}

// Greedy decoding of max_tokens at most.
inline SamplingParams greedy(int max_tokens) {
  SamplingParams p;
  p.temperature = 0;
  p.max_tokens = max_tokens;
  return p;
}

}  // namespace skiff::testing
