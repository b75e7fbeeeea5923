// skiff quantize IN OUT TYPE: converts a GGUF file or HF directory to a GGUF
// file with its matrices in TYPE (see convert/quantize.h).
#include <fmt/core.h>

#include <cstdio>

#include "base/error.h"
#include "cli/commands.h"
#include "convert/quantize.h"
#include "gguf/file_type.h"

namespace skiff::cli {
namespace {

struct QuantizeArgs {
  std::string input;
  std::string output;
  std::string type;
};

void quantize(const QuantizeArgs& a) {
  const auto type = gguf::file_type_from_name(a.type);
  if (!type)
    fail("unknown type '{}' ({})", a.type, gguf::kWritableFileTypes);
  const convert::QuantizeSummary s = convert::quantize_model(a.input, a.output, *type);
  fmt::print(stderr,
             "quantize: {} ({:.2f} MiB) -> {} ({:.2f} MiB, {}), {} tensors, {} fallbacks, {:.2f} s\n",
             a.input, s.input_bytes / 1048576.0, a.output, s.output_bytes / 1048576.0,
             type->name(), s.n_tensors, s.n_fallbacks, s.seconds);
}

}  // namespace

void add_quantize_command(CLI::App& app) {
  auto args = std::make_shared<QuantizeArgs>();
  CLI::App* cmd = app.add_subcommand("quantize", "convert a model to GGUF with its matrices in TYPE");
  cmd->add_option("input", args->input, "GGUF file or Hugging Face directory")->required();
  cmd->add_option("output", args->output, "output .gguf path")->required();
  cmd->add_option("type", args->type,
                  fmt::format("{} (as llama-quantize: the _M mixes give Q6_K to the output head and some attn_v / "
                              "ffn_down; MXFP4_MOE gives MXFP4 to the experts, Q8_0 to the rest)",
                              gguf::kWritableFileTypes))
      ->required();
  cmd->callback([args] { quantize(*args); });
}

}  // namespace skiff::cli
