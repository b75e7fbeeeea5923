// The library's front door, as vLLM's LLM class:
//
//   skiff::LLM llm("model.gguf");
//   std::vector<skiff::RequestOutput> outs = llm.generate({"Once upon a time"}, params);
//
// generate() queues every prompt on the continuous-batching engine and steps
// it until all have finished; outputs come back in prompt order.
#pragma once
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "engine/engine.h"
#include "model/loader.h"

namespace skiff {

struct LlmOptions {
  EngineOptions engine;
  LoadOptions load;
  // A draft model for speculative decoding (engine.speculation.method kDraft),
  // loaded with the model; empty: none.
  std::string draft_model;
};

// Loads a draft model for `target`; throws Error unless it has the same
// vocabulary (size, and the same text for every token id).
std::unique_ptr<Model> load_draft_model(const std::string& path, const LoadOptions& load,
                                        const Model& target, const Tokenizer& target_tokenizer);

class LLM {
 public:
  // Loads the model and tokenizer from a GGUF file or HF directory; throws Error.
  explicit LLM(const std::string& model_path, LlmOptions options = {});

  // One SamplingParams for every prompt, or one per prompt. Prompts are
  // encoded with the tokenizer's BOS, special tokens written in the text
  // (e.g. "<|eot_id|>") read as such, as skiff run and HF tokenizers do.
  // on_delta streams every completion's text as it is generated and may
  // call engine().cancel().
  std::vector<RequestOutput> generate(const std::vector<std::string>& prompts,
                                      const SamplingParams& params,
                                      const StreamCallback& on_delta = {});
  std::vector<RequestOutput> generate(const std::vector<std::string>& prompts,
                                      std::span<const SamplingParams> params,
                                      const StreamCallback& on_delta = {});
  // Prompts given as token ids (a distinct name: a braced list of two
  // strings would also convert to a vector of id vectors).
  std::vector<RequestOutput> generate_from_ids(const std::vector<std::vector<int32_t>>& prompts,
                                      std::span<const SamplingParams> params,
                                      const StreamCallback& on_delta = {});

  Engine& engine() { return *engine_; }
  const Tokenizer& tokenizer() const { return *tokenizer_; }
  const Model& model() const { return *model_; }

 private:
  std::unique_ptr<Model> model_;
  std::unique_ptr<Tokenizer> tokenizer_;
  std::unique_ptr<Model> draft_;
  std::unique_ptr<Engine> engine_;
};

}  // namespace skiff
