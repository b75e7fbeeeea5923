// tokenizer.ggml.pre names as llama.cpp's vocabulary loader (llama_vocab::
// impl::load) maps them: the pre-tokenizer and the vocabulary flags it sets
// with it.
#include "base/error.h"
#include "tokenizer/pretokenizer.h"

namespace skiff {

namespace {

using T = PreTokenizer;

struct NameEntry {
  std::string_view name;
  PreTokenizerChoice choice;
};

constexpr PreTokenizerChoice plain(T type) { return {type}; }
// llama3 and tekken: whole-token words skip merging, and BOS is added.
constexpr PreTokenizerChoice llama3_like(T type) { return {type, true, true}; }
constexpr PreTokenizerChoice no_merge(T type) { return {type, true}; }
constexpr PreTokenizerChoice spm_style(T type) { return {type, false, false, true}; }
// GLM 4/5: whole-token words skip merging, and the BOS id defaults to none.
constexpr PreTokenizerChoice glm_like(T type) { return {type, true, false, false, true}; }

constexpr NameEntry kNames[] = {
    {"default", plain(T::Default)},
    {"minicpm5", no_merge(T::Minicpm5)},
    {"llama3", llama3_like(T::Llama3)}, {"llama-v3", llama3_like(T::Llama3)},
    {"llama-bpe", llama3_like(T::Llama3)}, {"falcon3", llama3_like(T::Llama3)},
    {"falcon-h1", llama3_like(T::Llama3)}, {"pixtral", llama3_like(T::Llama3)},
    {"midm-2.0", llama3_like(T::Llama3)}, {"lfm2", llama3_like(T::Llama3)},
    {"jina-v5-nano", llama3_like(T::Llama3)},
    {"deepseek-llm", plain(T::DeepseekLlm)},
    {"deepseek-coder", plain(T::DeepseekCoder)},
    {"deepseek-v3", plain(T::Deepseek3Llm)},
    {"spark2_5", plain(T::Spark25)},
    {"youtu", no_merge(T::Youtu)},
    {"falcon", plain(T::Falcon)},
    {"mpt", plain(T::Gpt2)},
    {"starcoder", plain(T::Starcoder)},
    {"gpt-2", plain(T::Gpt2)}, {"phi-2", plain(T::Gpt2)}, {"jina-es", plain(T::Gpt2)},
    {"jina-de", plain(T::Gpt2)}, {"gigachat", plain(T::Gpt2)}, {"jina-v2-es", plain(T::Gpt2)},
    {"jina-v2-de", plain(T::Gpt2)}, {"a.x-4.0", plain(T::Gpt2)}, {"mellum", plain(T::Gpt2)},
    {"modern-bert", plain(T::Gpt2)},
    {"jais-2", plain(T::Jais2)},
    {"gemma4", spm_style(T::Gemma4)}, {"granite-embed-multi-311m", spm_style(T::Gemma4)},
    {"sarvam-moe", spm_style(T::SarvamMoe)},
    // llama.cpp also sets add_sep for these, which only BERT-style encoders use.
    {"jina-v1-en", plain(T::Gpt2)}, {"jina-v2-code", plain(T::Gpt2)}, {"roberta-bpe", plain(T::Gpt2)},
    {"whitespace", plain(T::Whitespace)},
    {"refact", plain(T::Starcoder)},
    {"command-r", plain(T::Starcoder)},
    {"qwen2", plain(T::Qwen2)}, {"deepseek-r1-qwen", plain(T::Qwen2)}, {"kormo", plain(T::Qwen2)},
    {"f2llmv2", plain(T::Qwen2)},
    {"qwen35", plain(T::Qwen35)},
    {"stablelm2", plain(T::Qwen2)},
    {"olmo", plain(T::Gpt2)},
    {"dbrx", plain(T::Llama3)},
    {"smaug-bpe", plain(T::Llama3)},
    {"poro-chat", plain(T::Poro)},
    {"glm4", glm_like(T::Llama3)}, {"glm5", glm_like(T::Llama3)},
    {"chatglm-bpe", {T::Llama3, false, false, false, true}},  // merges every word
    {"viking", plain(T::Viking)},
    {"jais", plain(T::Gpt2)},
    {"tekken", llama3_like(T::Tekken)},
    {"smollm", plain(T::Starcoder)},
    {"codeshell", plain(T::Starcoder)},
    {"bloom", plain(T::Poro)},
    {"gpt3-finnish", plain(T::Poro)},
    {"exaone", plain(T::Starcoder)},
    {"exaone4", plain(T::Gpt2)},
    {"exaone-moe", plain(T::ExaoneMoe)},
    {"chameleon", {T::Chameleon, false, true}},
    {"minerva-7b", plain(T::Starcoder)},
    {"megrez", plain(T::Qwen2)},
    {"gpt-4o", plain(T::Gpt4o)}, {"llama4", plain(T::Gpt4o)}, {"kanana2", plain(T::Gpt4o)},
    {"talkie", plain(T::Gpt4o)},
    {"granite-embed-multi-97m", no_merge(T::GraniteEmbMulti)},
    {"tiny_aya", plain(T::TinyAya)}, {"cohere2moe", plain(T::TinyAya)},
    {"superbpe", plain(T::Superbpe)},
    {"trillion", plain(T::Gpt2)},
    {"granite-docling", plain(T::Gpt2)},
    {"bailingmoe", plain(T::Bailingmoe)}, {"bailingmoe2", plain(T::Bailingmoe)},
    {"llada-moe", plain(T::Bailingmoe)},
    {"seed-coder", plain(T::SeedCoder)},
    {"hunyuan", plain(T::Qwen2)},
    {"hunyuan-dense", plain(T::Deepseek3Llm)},
    {"hy_v4", plain(T::Deepseek3Llm)},
    {"joyai-llm", plain(T::Deepseek3Llm)},
    {"ufakzeka", plain(T::Ufakzeka)},
    {"grok-2", plain(T::Qwen2)},
    {"laguna", {T::Laguna}},
    {"minimax-m2", plain(T::Gpt4o)},
    {"solar-open", plain(T::Qwen2)},
    {"mellum2", plain(T::Starcoder)},
    {"kimi-k2", plain(T::KimiK2)},
    {"afmoe", plain(T::Afmoe)},
};

}  // namespace

PreTokenizerChoice pre_tokenizer_from_name(std::string_view name) {
  for (const NameEntry& entry : kNames) {
    if (entry.name == name) return entry.choice;
  }
  fail("unknown pre-tokenizer '{}' (tokenizer.ggml.pre): llama.cpp knows no such name either", name);
}

std::string_view canonical_pre_tokenizer_name(PreTokenizer type) {
  for (const NameEntry& entry : kNames) {
    if (entry.choice.type == type) return entry.name;
  }
  return "default";
}

std::vector<std::string_view> pre_tokenizer_names() {
  std::vector<std::string_view> names;
  for (const NameEntry& entry : kNames) names.push_back(entry.name);
  return names;
}

}  // namespace skiff
