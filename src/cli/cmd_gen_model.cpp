// skiff gen-model: writes a random-weight GGUF of any family (see model/random_model.h).
#include <fmt/core.h>

#include "base/error.h"
#include "cli/commands.h"
#include "gguf/file_type.h"
#include "kernels/quant/quant.h"
#include "model/random_model.h"

namespace skiff::cli {

void add_gen_model_command(CLI::App& app) {
  auto spec = std::make_shared<RandomModelSpec>();
  auto out = std::make_shared<std::string>();
  auto type = std::make_shared<std::string>("f16");
  spec->vocab_path = default_random_llama_vocab();

  CLI::App* cmd = app.add_subcommand("gen-model", "write a random-weight model (GGUF) of any shape");
  cmd->add_option("-o,--output", *out, "output .gguf path")->required();
  cmd->add_option("--arch", spec->arch, "architecture (GGUF's name: llama, qwen2, qwen3, gemma2, gemma3, phi3, qwen2moe, "
                                        "qwen3moe, olmoe, granitemoe)")->capture_default_str();
  cmd->add_option("--layers", spec->n_layers, "transformer blocks")->capture_default_str();
  cmd->add_option("--dim", spec->dim, "embedding size")->capture_default_str();
  cmd->add_option("--heads", spec->n_heads, "attention heads")->capture_default_str();
  cmd->add_option("--kv-heads", spec->n_kv_heads, "key/value heads")->capture_default_str();
  cmd->add_option("--ffn", spec->ffn_dim, "feed-forward size")->capture_default_str();
  cmd->add_option("--head-dim", spec->head_dim, "head size (0: dim / heads)")->capture_default_str();
  cmd->add_option("--experts", spec->n_experts, "experts per layer (0: a dense FFN)")->capture_default_str();
  cmd->add_option("--experts-used", spec->n_experts_used, "experts per token")->capture_default_str();
  cmd->add_option("--expert-ffn", spec->expert_ffn_dim, "each expert's feed-forward size")->capture_default_str();
  cmd->add_option("--shared-expert-ffn", spec->shared_expert_ffn_dim, "the shared expert's feed-forward size (qwen2moe)")
      ->capture_default_str();
  cmd->add_option("--type", *type, fmt::format("matrix type: {}", gguf::kWritableFileTypes))
      ->capture_default_str();
  cmd->add_option("--vocab-from", spec->vocab_path, "GGUF whose tokenizer is copied")->capture_default_str();
  cmd->add_option("--ctx", spec->context_length, "context length")->capture_default_str();
  cmd->add_option("--rope-theta", spec->rope_theta, "RoPE base frequency")->capture_default_str();
  cmd->add_option("--seed", spec->seed, "random seed")->capture_default_str();
  cmd->add_option("--name", spec->name, "general.name")->capture_default_str();

  cmd->callback([spec, out, type] {
    const auto file_type = gguf::file_type_from_name(*type);
    if (!file_type || !can_quantize(file_type->base))
      fail("--type '{}' is not one skiff writes ({})", *type, gguf::kWritableFileTypes);
    spec->file_type = *file_type;
    write_random_model(*spec, *out);
  });
}

}  // namespace skiff::cli
