#include "engine/llm.h"

#include <unordered_map>

#include "base/error.h"

namespace skiff {

std::unique_ptr<Model> load_draft_model(const std::string& path, const LoadOptions& load,
                                        const Model& target, const Tokenizer& target_tokenizer) {
  auto draft = load_model(path, load);
  check_draft_compatible(target, *draft);
  const auto tokenizer = Tokenizer::from_path(path);
  if (tokenizer->n_vocab() != target_tokenizer.n_vocab())
    fail("the draft model {} has a tokenizer of {} tokens, the model one of {}", path,
         tokenizer->n_vocab(), target_tokenizer.n_vocab());
  for (int32_t id = 0; id < target_tokenizer.n_vocab(); ++id)
    if (tokenizer->token_text(id) != target_tokenizer.token_text(id))
      fail("the draft model {} has another tokenizer: token {} is '{}' there, '{}' in the model",
           path, id, tokenizer->token_text(id), target_tokenizer.token_text(id));
  return draft;
}

LLM::LLM(const std::string& model_path, LlmOptions options)
    : model_(load_model(model_path, options.load)), tokenizer_(Tokenizer::from_path(model_path)) {
  if (!options.draft_model.empty()) {
    draft_ = load_draft_model(options.draft_model, options.load, *model_, *tokenizer_);
    options.engine.speculation.draft = draft_.get();
    options.engine.speculation.method = SpecMethod::kDraft;
  }
  engine_ = std::make_unique<Engine>(*model_, *tokenizer_, options.engine);
}

std::vector<RequestOutput> LLM::generate(const std::vector<std::string>& prompts,
                                         const SamplingParams& params,
                                         const StreamCallback& on_delta) {
  const std::vector<SamplingParams> each(prompts.size(), params);
  return generate(prompts, each, on_delta);
}

std::vector<RequestOutput> LLM::generate(const std::vector<std::string>& prompts,
                                         std::span<const SamplingParams> params,
                                         const StreamCallback& on_delta) {
  std::vector<std::vector<int32_t>> encoded;
  encoded.reserve(prompts.size());
  for (const std::string& prompt : prompts)
    encoded.push_back(tokenizer_->encode(prompt, /*add_special=*/true, /*parse_special=*/true));
  return generate_from_ids(encoded, params, on_delta);
}

std::vector<RequestOutput> LLM::generate_from_ids(const std::vector<std::vector<int32_t>>& prompts,
                                         std::span<const SamplingParams> params,
                                         const StreamCallback& on_delta) {
  if (params.size() != prompts.size())
    fail("generate: {} prompts but {} sampling parameter sets", prompts.size(), params.size());
  std::unordered_map<RequestId, size_t> order;
  try {
    for (size_t i = 0; i < prompts.size(); ++i)
      order[engine_->add_request(prompts[i], params[i], on_delta)] = i;
  } catch (const Error&) {
    // All or nothing: the prompts queued before the bad one are withdrawn.
    for (const auto& [id, index] : order) engine_->cancel(id);
    engine_->run_to_completion();
    throw;
  }
  std::vector<RequestOutput> outputs(prompts.size());
  for (RequestOutput& out : engine_->run_to_completion()) {
    const auto it = order.find(out.request_id);
    if (it != order.end()) outputs[it->second] = std::move(out);
  }
  return outputs;
}

}  // namespace skiff
