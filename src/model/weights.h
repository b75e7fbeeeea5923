// Weights of a Llama-family model, as views into the mapped model files (or
// into owned buffers where a conversion was needed). Names follow GGUF.
#pragma once
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "kernels/matmul/matrix.h"
#include "model/config.h"

namespace skiff {

// A tensor as a loader found it: `cols` is the contiguous dimension
// (GGUF ne[0], the last safetensors dim); `rows` the product of the others.
struct TensorRef {
  DType type = DType::F32;
  int64_t rows = 0;
  int64_t cols = 0;
  const void* data = nullptr;
};
// GGUF tensor name -> tensor; loaders translate other naming schemes to this.
using TensorMap = std::map<std::string, TensorRef>;

// A layer's weights, as its LayerSpec has them. Norm weights are the scale
// each element is multiplied by (HF Gemma's stored w is loaded as 1 + w).
// Optional tensors are empty when the spec has none. Fused files (Phi-3)
// give views into one tensor.
struct AttentionWeights {
  std::vector<float> norm;       // [dim]: the input's
  Matrix wq;                     // [q_dim, dim]
  Matrix wk;                     // [kv_dim, dim]
  Matrix wv;                     // [kv_dim, dim]
  std::vector<float> bq, bk, bv; // [q_dim], [kv_dim], [kv_dim]: qkv_bias
  std::vector<float> q_norm;     // [head_dim]: qk_norm, shared by every head
  std::vector<float> k_norm;     // [head_dim]
  Matrix wo;                     // [dim, q_dim]
  std::vector<float> bo;         // [dim]: o_bias
  std::vector<float> sinks;      // [n_heads]: sinks, one logit per query head
  std::vector<float> post_norm;  // [dim]: post_norm
};

// A dense gated FFN: down(act(gate·x) ⊙ up·x); in a mixture of experts, the
// shared expert (empty when it has none) beside the router and the experts.
struct FfnWeights {
  std::vector<float> norm;       // [dim]: the input's
  Matrix w_gate;                 // [ffn_dim, dim] (a shared expert: [shared_ffn_dim, dim])
  Matrix w_up;                   // [ffn_dim, dim]
  Matrix w_down;                 // [dim, ffn_dim]
  std::vector<float> shared_gate;  // [dim]: ExpertsSpec::shared_gate
  Matrix router;                 // [n_experts, dim]
  std::vector<Matrix> experts_gate, experts_up, experts_down;  // one per expert, of ExpertsSpec::ffn_dim
  // ExpertsSpec::biases: [n_experts], and each expert's [ffn_dim], [ffn_dim], [dim], expert by expert.
  std::vector<float> router_bias, experts_gate_bias, experts_up_bias, experts_down_bias;
  std::vector<float> post_norm;  // [dim]: post_norm
};

struct LayerWeights {
  AttentionWeights attention;
  FfnWeights ffn;
  // The layer's matrices, the attention's then the FFN's (the router, then
  // each expert's gate, up and down, after the dense or shared ones).
  std::vector<Matrix*> matrices();
  std::vector<const Matrix*> matrices() const;
};

struct ModelWeights {
  Matrix token_embedding;         // [vocab, dim]
  std::vector<LayerWeights> layers;
  std::vector<float> output_norm; // [dim]
  Matrix output;                  // [vocab, dim]; the embedding itself when tied
  std::vector<std::shared_ptr<const void>> storage;  // keeps mappings and buffers alive
  // The matrices' Matrix::column_cache (build_weights makes them); apart from
  // storage, which loaders fill after build_weights.
  std::vector<std::shared_ptr<ColumnCache>> column_caches;

  // Bytes of weights one token's decode step reads: every matrix once but only
  // the experts it is routed to (n_used of n_experts' bytes), plus one embedding row.
  size_t decode_bytes_per_token(const ModelConfig& c) const;
  // Every matrix: the embedding, each layer's, then the output head
  // (whose data is the embedding's when tied).
  std::vector<Matrix*> matrices();
  std::vector<const Matrix*> matrices() const;
  // Parameters of the layers' matrices a token uses (not the embedding or the
  // head; of the experts, the n_used it is routed to): its forward pass makes 2 FLOP of each.
  double layer_params(const ModelConfig& c) const;
};

struct Architecture;

// The name a checkpoint's tensor of one expert goes by among GGUF names
// ("blk.3.ffn_gate_exps.7.weight"); GGUF itself stacks a layer's experts in
// one 3-D tensor ("blk.3.ffn_gate_exps.weight").
std::string expert_name(int layer, const std::string& what, int expert);

// Builds the weights from tensors named as GGUF names them, as the
// architecture lays them out, checking every shape against the config; norm
// weights get norm_offset added (1 for HF Gemma). Throws Error naming a
// missing or misshapen tensor.
ModelWeights build_weights(const ModelConfig& config, const Architecture& arch, const TensorMap& tensors,
                           float norm_offset);

// Rewrites the matrices the active ISA's kernels read faster in another layout
// (panels: kernels/matmul/repack.h, panel_kernel_for), where writable(data) gives
// a writable pointer to a matrix's bytes (null: leave that matrix as it is).
// Matrices sharing data (a tied head) are repacked once and all follow; data
// shared by matrices of different shapes stays as it is. Returns the number
// of distinct matrices repacked.
int repack_for_kernels(ModelWeights& weights, const std::function<uint8_t*(const void*)>& writable);

}  // namespace skiff
