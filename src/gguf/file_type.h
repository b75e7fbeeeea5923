// A GGUF file's quantization as llama.cpp names it (`general.file_type`): one
// type for every matrix, one of the K-quant "medium" mixes, Q4_K_M and
// Q5_K_M, the files most people download, or MXFP4_MOE. A medium mix keeps its
// base type for most matrices and gives Q6_K to the output head (the embedding
// when tied) and to attn_v and ffn_down in the layers llama-quantize's
// use_more_bits picks: the first and last eighth of the layers and every third
// one in between; in an 80-layer model with grouped K/V heads (Llama 70B) the
// other attn_v of a Q4_K_M get Q5_K. In a mixture of experts, ffn_down's rule
// covers the experts' and the shared expert's, 8 experts (Mixtral) give
// attn_k and attn_v Q8_0, and a router (ffn_gate_inp) stays F32 in every file
// type, as llama-quantize never quantizes it. MXFP4_MOE (gpt-oss's release) gives MXFP4
// to the experts (the 3-D `*_exps` tensors: llama-quantize takes every tensor
// with more than one expert slice) and Q8_0 to every other matrix, the head
// and a shared expert's included.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "kernels/dtype.h"

namespace skiff::gguf {

// What the mix rule needs to know of the model.
struct MixModel {
  int n_layers = 0;
  bool has_output = true;   // false: the head is tied to token_embd
  bool grouped_kv = false;  // fewer K/V heads than query heads
  int n_experts = 0;        // a mixture of experts' count, 0 when dense
};
// The MixModel of a model with these tensors (GGUF names): layers counted from
// the blk.N names.
MixModel mix_model_of(const std::vector<std::string>& tensor_names);

struct FileType {
  DType base = DType::F16;  // every matrix, or most of them in a mix (MXFP4_MOE: the experts)
  bool medium = false;      // the _M mix (base Q4_K or Q5_K)
  bool moe = false;         // MXFP4_MOE (base MXFP4)

  // Implicit: a plain type is the file type of that type throughout. Throws
  // Error for a medium mix of another base than Q4_K or Q5_K.
  FileType(DType type, bool k_medium = false);
  static FileType mxfp4_moe();

  std::string name() const;  // "Q4_K_M", "MXFP4_MOE", or the base type's name
  // llama.cpp's LLAMA_FTYPE; a file of plain Q3_K / Q4_K / Q5_K gets its _S id (whose
  // llama.cpp mix differs a little: Q6_K head, some Q5_K layers), one of plain
  // MXFP4 MXFP4_MOE's. Throws Error for a type llama.cpp has no file type for.
  uint32_t id() const;
  // The type of the matrix named `tensor` (GGUF names, "blk.7.ffn_down.weight").
  DType matrix_type(std::string_view tensor, const MixModel& model) const;
};

// The file types skiff writes (quantize, gen-model), for their help and errors.
inline constexpr std::string_view kWritableFileTypes =
    "F32, F16, BF16, Q8_0, Q4_0, Q4_1, Q5_0, Q5_1, IQ4_NL, IQ4_XS, MXFP4, Q2_K, Q3_K, Q4_K, Q5_K, Q6_K, or the mixes "
    "Q4_K_M, Q5_K_M, MXFP4_MOE";

// "Q8_0", "q4_k_m", ...: a DType name or Q4_K_M / Q5_K_M / MXFP4_MOE; nullopt otherwise.
std::optional<FileType> file_type_from_name(std::string_view name);
// The FileType whose id() is `id`; nullopt for ids skiff has no FileType for.
std::optional<FileType> file_type_from_id(int64_t id);

}  // namespace skiff::gguf
