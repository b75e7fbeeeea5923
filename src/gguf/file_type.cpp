#include "gguf/file_type.h"

#include <algorithm>
#include <cctype>
#include <charconv>

#include "base/error.h"

namespace skiff::gguf {
namespace {

constexpr std::string_view kMediumSuffix = "_M", kMoeSuffix = "_MOE";

// llama-quantize's choice of layers that get more bits.
bool use_more_bits(int layer, int n_layers) {
  return layer < n_layers / 8 || layer >= 7 * n_layers / 8 || (layer - n_layers / 8) % 3 == 2;
}

// N of "blk.N.<rest>", or -1 (also for N past any real model, so that layer
// counts from a file's names stay far from int overflow).
constexpr int kMaxLayer = 1 << 20;
int layer_of(std::string_view tensor) {
  constexpr std::string_view kPrefix = "blk.";
  if (tensor.substr(0, kPrefix.size()) != kPrefix) return -1;
  int layer = -1;
  const char* first = tensor.data() + kPrefix.size();
  const auto [end, ec] = std::from_chars(first, tensor.data() + tensor.size(), layer);
  const bool ok = ec == std::errc() && end != tensor.data() + tensor.size() && *end == '.';
  return ok && layer <= kMaxLayer ? layer : -1;
}

bool ends_with(std::string_view s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.substr(s.size() - suffix.size()) == suffix;
}

}  // namespace

MixModel mix_model_of(const std::vector<std::string>& tensor_names) {
  MixModel m;
  m.has_output = false;
  for (const std::string& name : tensor_names) {
    m.has_output = m.has_output || name == "output.weight";
    m.n_layers = std::max(m.n_layers, layer_of(name) + 1);
  }
  return m;
}

FileType::FileType(DType type, bool k_medium) : base(type), medium(k_medium) {
  if (medium && base != DType::Q4_K && base != DType::Q5_K)
    fail("no _M mix of {}: only Q4_K_M and Q5_K_M", dtype_info(base).name);
}

FileType FileType::mxfp4_moe() {
  FileType type(DType::MXFP4);
  type.moe = true;
  return type;
}

std::string FileType::name() const {
  return std::string(dtype_info(base).name) + std::string(medium ? kMediumSuffix : moe ? kMoeSuffix : "");
}

uint32_t FileType::id() const {
  switch (base) {
    case DType::F32: return 0;
    case DType::F16: return 1;
    case DType::Q4_0: return 2;
    case DType::Q4_1: return 3;
    case DType::Q8_0: return 7;
    case DType::Q5_0: return 8;
    case DType::Q5_1: return 9;
    case DType::Q2_K: return 10;
    case DType::Q3_K: return 11;  // Q3_K_S
    case DType::IQ4_NL: return 25;
    case DType::IQ4_XS: return 30;
    case DType::TQ1_0: return 36;
    case DType::TQ2_0: return 37;
    case DType::MXFP4: return 38;  // MOSTLY_MXFP4_MOE (llama.cpp has no plain MXFP4 file type)
    case DType::NVFP4: return 39;
    case DType::IQ2_XXS: return 19;
    case DType::IQ2_XS: return 20;
    case DType::IQ3_XXS: return 23;
    case DType::IQ1_S: return 24;
    case DType::IQ3_S: return 26;
    case DType::IQ2_S: return 28;
    case DType::IQ1_M: return 31;
    case DType::Q4_K: return medium ? 15 : 14;  // Q4_K_M, Q4_K_S
    case DType::Q5_K: return medium ? 17 : 16;  // Q5_K_M, Q5_K_S
    case DType::Q6_K: return 18;
    case DType::BF16: return 32;
  }
  fail("no llama.cpp file type for dtype {}", static_cast<uint32_t>(base));
}

DType FileType::matrix_type(std::string_view tensor, const MixModel& model) const {
  // A router is small and decides which experts run: llama-quantize never quantizes it.
  if (tensor.find(".ffn_gate_inp") != std::string_view::npos) return DType::F32;
  if (moe) return tensor.find("_exps") != std::string_view::npos ? DType::MXFP4 : DType::Q8_0;
  if (!medium) return base;
  if (tensor == "output.weight" || (!model.has_output && tensor == "token_embd.weight")) return DType::Q6_K;
  const int layer = layer_of(tensor);
  const bool attn_v = ends_with(tensor, ".attn_v.weight");
  // Mixtral's 8 experts: llama-quantize spends the bytes on attn_k and attn_v.
  if (model.n_experts == 8 && (attn_v || ends_with(tensor, ".attn_k.weight"))) return DType::Q8_0;
  const bool ffn_down = tensor.find(".ffn_down") != std::string_view::npos;  // dense, shared or experts'
  if (layer >= 0 && (attn_v || ffn_down) && use_more_bits(layer, model.n_layers)) return DType::Q6_K;
  // llama.cpp's 70B: 8 query heads share each attn_v, a small matrix worth more bits.
  if (attn_v && base == DType::Q4_K && model.n_layers == 80 && model.grouped_kv) return DType::Q5_K;
  return base;
}

std::optional<FileType> file_type_from_id(int64_t id) {
  if (id == FileType::mxfp4_moe().id()) return FileType::mxfp4_moe();
  for (DType type : {DType::F32, DType::F16, DType::BF16, DType::Q8_0, DType::Q4_0, DType::Q4_1, DType::Q5_0,
                     DType::Q5_1, DType::Q2_K, DType::Q3_K, DType::Q4_K, DType::Q5_K, DType::Q6_K, DType::IQ4_NL,
                     DType::IQ4_XS})
    for (bool medium : {false, true}) {
      if (medium && type != DType::Q4_K && type != DType::Q5_K) continue;
      const FileType ft(type, medium);
      if (ft.id() == id) return ft;
    }
  return std::nullopt;
}

std::optional<FileType> file_type_from_name(std::string_view name) {
  std::string upper(name);
  std::transform(upper.begin(), upper.end(), upper.begin(),
                 [](unsigned char c) { return static_cast<char>(std::toupper(c)); });
  if (upper == "Q4_K_M") return FileType(DType::Q4_K, true);
  if (upper == "Q5_K_M") return FileType(DType::Q5_K, true);
  if (upper == "MXFP4_MOE") return FileType::mxfp4_moe();
  if (const auto type = dtype_from_name(upper)) return FileType(*type);
  return std::nullopt;
}

}  // namespace skiff::gguf
