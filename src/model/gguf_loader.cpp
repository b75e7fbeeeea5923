// Models from GGUF files (llama.cpp's tensor names and metadata keys).
#include <filesystem>
#include <new>
#include <stdexcept>

#include "base/error.h"
#include "gguf/file_type.h"
#include "gguf/gguf.h"
#include "kernels/quant/quant.h"
#include "model/architecture.h"
#include "model/loader.h"

namespace skiff {
namespace {

int positive_int(const gguf::GgufFile& f, const std::string& key, int64_t fallback) {
  const int64_t v = f.get_int(key, fallback);
  if (v <= 0 || v > (1 << 30)) fail("{}: metadata '{}' = {} is out of range", f.path(), key, v);
  return static_cast<int>(v);
}

TensorMap tensor_map(const gguf::GgufFile& f) {
  TensorMap map;
  for (const gguf::TensorInfo& t : f.tensors()) {
    if (!t.readable) fail("tensor '{}' has type {}, which skiff cannot read", t.name, t.ggml_type);
    int64_t rows = 1;
    for (size_t d = 1; d < t.ne.size(); ++d) rows *= t.ne[d];
    map[t.name] = TensorRef{t.type, rows, t.ne[0], t.data};
  }
  return map;
}

// Keys any family's file may set (skiff quantize writes them), over the
// family's defaults: the window, which layers slide (a period, or a flag per
// layer), and the windowed layers' RoPE base.
void read_sliding_window(const gguf::GgufFile& f, const std::string& p, const GgufSlidingDefaults& defaults,
                         ModelConfig& c) {
  const int window = bounded_int(f.get_int(p + "attention.sliding_window", defaults.window), "sliding window");
  std::vector<bool> sliding =
      defaults.period > 0 ? sliding_every(c.n_layers, defaults.period) : std::vector<bool>(c.n_layers, true);
  if (const gguf::Value* pattern = f.find(p + "attention.sliding_window_pattern")) {
    if (pattern->is_integer()) {
      sliding = sliding_every(c.n_layers, bounded_int(pattern->as_int(), "sliding-window period"));
    } else {
      const gguf::Array& flags = pattern->as_array();
      sliding.assign(flags.size(), false);
      for (size_t l = 0; l < flags.size(); ++l) sliding[l] = flags.at(l).as_bool();
    }
  }
  set_windows(c, sliding, window);
  const float local_theta = static_cast<float>(f.get_float(p + "rope.freq_base_swa", defaults.rope_theta));
  if (local_theta != 0) set_local_rope(c, local_theta);  // a negative one is refused by validate()
}

// YaRN, with llama.cpp's keys and defaults (betas 32 and 1, the original
// context the trained one). llama.cpp's attention factor is YaRN's default
// times rope.scaling.attn_factor; its converter writes a checkpoint's own as
// yarn_attn_factor, which takes its place. llama.cpp always rounds the blend's
// bounds out to whole pairs; skiff's own key yarn_truncate = false says the
// checkpoint did not (gpt-oss). llama.cpp reads yarn_ext_factor for no family
// skiff runs, and neither does transformers: it is not read.
void read_yarn(const gguf::GgufFile& f, const std::string& p, ModelConfig& c) {
  if (f.get_float(p + "rope.scaling.yarn_log_multiplier", 0.0) != 0)
    fail("{}: YaRN's rope.scaling.yarn_log_multiplier (DeepSeek) is not supported", f.path());
  YarnRope& y = c.rope_yarn;
  y.factor = static_cast<float>(f.get_float(p + "rope.scaling.factor", 1.0));
  y.beta_fast = static_cast<float>(f.get_float(p + "rope.scaling.yarn_beta_fast", 32.0));
  y.beta_slow = static_cast<float>(f.get_float(p + "rope.scaling.yarn_beta_slow", 1.0));
  y.truncate = f.get_bool(p + "rope.scaling.yarn_truncate", true);
  c.rope_original_ctx = positive_int(f, p + "rope.scaling.original_context_length", c.max_ctx);
  c.rope_mscale = static_cast<float>(f.get_float(
      p + "rope.scaling.yarn_attn_factor", yarn_mscale(y.factor) * f.get_float(p + "rope.scaling.attn_factor", 1.0)));
  try {
    c.rope_freq_factors = yarn_rope_factors(c.rope_dim, c.rope_theta, y, c.rope_original_ctx);
  } catch (const Error& e) {
    fail("{}: {}", f.path(), e.what());
  }
}

}  // namespace

ModelConfig config_from_gguf(const gguf::GgufFile& f) {
  ModelConfig c;
  c.arch = f.get_string("general.architecture", "");
  const Architecture* known = nullptr;
  try {
    known = &gguf_architecture(c.arch);
  } catch (const Error& e) {
    fail("{}: {}", f.path(), e.what());
  }
  const Architecture& arch = *known;
  c.name = f.get_string("general.name", std::filesystem::path(f.path()).stem().string());
  if (const auto file_type = gguf::file_type_from_id(f.get_int("general.file_type", -1)))
    c.file_type = file_type->name();
  const std::string p = c.arch + ".";
  c.n_layers = positive_int(f, p + "block_count", 0);
  c.dim = positive_int(f, p + "embedding_length", 0);
  c.n_heads = positive_int(f, p + "attention.head_count", 0);
  c.n_kv_heads = positive_int(f, p + "attention.head_count_kv", c.n_heads);
  c.head_dim = positive_int(f, p + "attention.key_length", c.dim / c.n_heads);
  c.ffn_dim = positive_int(f, p + "feed_forward_length", 0);
  c.max_ctx = positive_int(f, p + "context_length", 2048);
  c.norm_eps = static_cast<float>(f.get_float(p + "attention.layer_norm_rms_epsilon", 1e-5));
  c.rope_theta = static_cast<float>(f.get_float(p + "rope.freq_base", 10000.0));
  c.rope_dim = positive_int(f, p + "rope.dimension_count", c.head_dim);
  c.rope_style = arch.gguf_rope_style;

  const gguf::TensorInfo* emb = f.find_tensor("token_embd.weight");
  if (!emb || emb->ne.size() != 2) fail("{}: missing or malformed token_embd.weight", f.path());
  c.vocab_size = static_cast<int>(emb->ne[1]);
  c.tied_output = f.find_tensor("output.weight") == nullptr;

  const std::string scaling = f.get_string(p + "rope.scaling.type", "none");
  if (f.find_tensor("rope_freqs.weight")) {  // Llama-3 scaling
    if (scaling == "yarn") fail("{}: YaRN scaling with rope_freqs.weight is not supported", f.path());
    try {
      c.rope_freq_factors = gguf_vector(f, "rope_freqs.weight", c.rope_dim / 2);
    } catch (const Error& e) {
      fail("{}: {}", f.path(), e.what());
    }
  } else if (scaling == "linear") {
    const float factor = static_cast<float>(f.get_float(p + "rope.scaling.factor", 1.0));
    c.rope_freq_factors.assign(c.rope_dim / 2, factor);
  } else if (scaling == "yarn") {
    read_yarn(f, p, c);
  }
  try {
    c.attention_scale = static_cast<float>(f.get_float(p + "attention.scale", 0.0));
    start_layers(c);
    arch.from_gguf(f, c);
    read_sliding_window(f, p, arch.gguf_sliding, c);
    c.validate();
  } catch (const Error& e) {
    fail("{}: {}", f.path(), e.what());
  }
  return c;
}

namespace {

ModelWeights weights_from_gguf(const ModelConfig& config, const gguf::GgufFile& file) {
  try {
    return build_weights(config, gguf_architecture(config.arch), tensor_map(file), 0.0f);
  } catch (const Error& e) {
    fail("{}: {}", file.path(), e.what());
  }
}

std::unique_ptr<Model> model_from(ModelConfig config, std::shared_ptr<gguf::GgufFile> file) {
  ModelWeights weights = weights_from_gguf(config, *file);
  // In the file's private copy only: a mapping stays as the file is.
  if (file->unseal()) {
    repack_for_kernels(weights, [&](const void* data) { return file->writable(data); });
    file->seal();
  }
  weights.storage.push_back(file);
  return std::make_unique<Model>(std::move(config), std::move(weights));
}

}  // namespace

std::unique_ptr<Model> load_gguf_model(std::shared_ptr<gguf::GgufFile> file) {
  ModelConfig config = config_from_gguf(*file);  // before the pointer moves into the call
  return model_from(std::move(config), std::move(file));
}

std::unique_ptr<Model> load_model(const std::string& path, const LoadOptions& options) {
  namespace fs = std::filesystem;
  if (!fs::exists(path)) fail("model not found: {}", path);
  try {
    if (fs::is_directory(path)) return load_hf_model(path, options);
    // The header is checked (architecture, tensor types and shapes) from the
    // mapping before the weights are read into memory.
    auto file = std::make_shared<gguf::GgufFile>(path, FileLoad::kMmap);
    ModelConfig config = config_from_gguf(*file);
    if (options.weights == FileLoad::kCopy) {
      weights_from_gguf(config, *file);  // views and the norms' few bytes: every tensor checked
      file->read_into_memory();
    }
    return model_from(std::move(config), std::move(file));
  } catch (const std::bad_alloc&) {  // library errors get the file's name
    fail("{}: not enough memory to load the model", path);
  } catch (const std::length_error& e) {
    fail("{}: a size in the file is too large ({})", path, e.what());
  }
}

}  // namespace skiff
