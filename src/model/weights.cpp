#include "model/weights.h"

#include <fmt/format.h>

#include <cmath>
#include <map>
#include <tuple>

#include "base/error.h"
#include "kernels/isa.h"
#include "kernels/matmul/activation_outliers.h"
#include "kernels/matmul/repack.h"
#include "kernels/quant/quant.h"
#include "model/architecture.h"

namespace skiff {
namespace {

const TensorRef& require(const TensorMap& tensors, const std::string& name) {
  auto it = tensors.find(name);
  if (it == tensors.end()) fail("model is missing tensor '{}'", name);
  return it->second;
}

Matrix load_matrix(const TensorMap& tensors, const std::string& name, int64_t rows,
                   int64_t cols) {
  const TensorRef& t = require(tensors, name);
  if (t.rows != rows || t.cols != cols)
    fail("tensor '{}' has shape [{}, {}], expected [{}, {}]", name, t.rows, t.cols, rows, cols);
  return Matrix{t.type, rows, cols, t.data};
}

std::vector<float> load_vector(const TensorMap& tensors, const std::string& name, int64_t n, float offset = 0) {
  const TensorRef& t = require(tensors, name);
  if (t.rows * t.cols != n) fail("tensor '{}' has {} elements, expected {}", name, t.rows * t.cols, n);
  std::vector<float> v(n);
  dequantize_row(t.type, t.data, v.data(), n);
  for (float& x : v) x += offset;
  return v;
}

size_t matrix_bytes(const Matrix& m) { return m.rows * row_bytes(m.type, m.cols); }

// One ColumnCache per distinct matrix, shared by the matrices on the same
// bytes and shape (a tied head and its embedding).
void attach_column_caches(ModelWeights& w) {
  std::map<std::tuple<const void*, int64_t, int64_t>, ColumnCache*> by_matrix;
  for (Matrix* m : w.matrices()) {
    ColumnCache*& cache = by_matrix[{m->data, m->rows, m->cols}];
    if (!cache) cache = w.column_caches.emplace_back(std::make_shared<ColumnCache>()).get();
    m->column_cache = cache;
  }
}

// Rows [first, first + n) of a matrix stored as rows: a view, no copy.
Matrix row_range(const Matrix& m, int64_t first, int64_t n) {
  return Matrix{m.type, n, m.cols, static_cast<const uint8_t*>(m.data) + first * row_bytes(m.type, m.cols)};
}

}  // namespace

std::string expert_name(int layer, const std::string& what, int expert) {
  return fmt::format("blk.{}.{}.{}.weight", layer, what, expert);
}

namespace {

// Loads the tensors of layer l, checking each shape against the config.
class LayerLoader {
 public:
  LayerLoader(const ModelConfig& c, const Architecture& arch, const TensorMap& tensors, float norm_offset, int l)
      : c_(c), arch_(arch), tensors_(tensors), norm_offset_(norm_offset), l_(l) {}

  AttentionWeights attention(const AttentionSpec& spec) const {
    AttentionWeights A;
    A.norm = norm("attn_norm", c_.dim);
    if (arch_.fused_qkv) {
      const Matrix qkv = matrix("attn_qkv", c_.q_dim() + 2 * c_.kv_dim(), c_.dim);
      A.wq = row_range(qkv, 0, c_.q_dim());
      A.wk = row_range(qkv, c_.q_dim(), c_.kv_dim());
      A.wv = row_range(qkv, c_.q_dim() + c_.kv_dim(), c_.kv_dim());
    } else {
      A.wq = matrix("attn_q", c_.q_dim(), c_.dim);
      A.wk = matrix("attn_k", c_.kv_dim(), c_.dim);
      A.wv = matrix("attn_v", c_.kv_dim(), c_.dim);
    }
    if (spec.qkv_bias) {
      A.bq = load_vector(tensors_, name("attn_q", "bias"), c_.q_dim());
      A.bk = load_vector(tensors_, name("attn_k", "bias"), c_.kv_dim());
      A.bv = load_vector(tensors_, name("attn_v", "bias"), c_.kv_dim());
    }
    if (spec.qk_norm) {
      A.q_norm = norm("attn_q_norm", spec.qk_norm_whole ? c_.q_dim() : c_.head_dim);
      A.k_norm = norm("attn_k_norm", spec.qk_norm_whole ? c_.kv_dim() : c_.head_dim);
    }
    A.wo = matrix("attn_output", c_.dim, c_.q_dim());
    if (spec.o_bias) A.bo = load_vector(tensors_, name("attn_output", "bias"), c_.dim);
    if (spec.sinks) {
      A.sinks = load_vector(tensors_, name("attn_sinks"), c_.n_heads);
      for (float s : A.sinks)
        if (!std::isfinite(s)) fail("tensor '{}' holds a sink of {}", name("attn_sinks"), s);
    }
    if (spec.post_norm) A.post_norm = norm("post_attention_norm", c_.dim);
    return A;
  }

  FfnWeights ffn(const FfnSpec& spec) const {
    FfnWeights F;
    F.norm = norm(arch_.ffn_norm_name.c_str(), c_.dim);
    if (spec.kind == FfnKind::kExperts) {
      experts(spec.experts, F);
    } else if (arch_.fused_gate_up) {
      const Matrix gate_up = matrix("ffn_up", 2 * int64_t{c_.ffn_dim}, c_.dim);
      F.w_gate = row_range(gate_up, 0, c_.ffn_dim);
      F.w_up = row_range(gate_up, c_.ffn_dim, c_.ffn_dim);
      F.w_down = matrix("ffn_down", c_.dim, c_.ffn_dim);
    } else {
      dense("", c_.ffn_dim, F);
    }
    if (spec.post_norm) F.post_norm = norm("post_ffw_norm", c_.dim);
    return F;
  }

 private:
  // ffn_gate, ffn_up and ffn_down with `suffix` ("_shexp": a shared expert).
  void dense(const std::string& suffix, int64_t ffn_dim, FfnWeights& F) const {
    F.w_gate = matrix(("ffn_gate" + suffix).c_str(), ffn_dim, c_.dim);
    F.w_up = matrix(("ffn_up" + suffix).c_str(), ffn_dim, c_.dim);
    F.w_down = matrix(("ffn_down" + suffix).c_str(), c_.dim, ffn_dim);
  }

  void experts(const ExpertsSpec& spec, FfnWeights& F) const {
    F.router = matrix("ffn_gate_inp", spec.n_experts, c_.dim);
    if (spec.shared_ffn_dim > 0) dense("_shexp", spec.shared_ffn_dim, F);
    if (spec.shared_gate) F.shared_gate = load_vector(tensors_, name("ffn_gate_inp_shexp"), c_.dim);
    const int64_t f = spec.ffn_dim;
    if (tensors_.count(name("ffn_gate_up_exps"))) {  // each expert's gate rows, then its up rows (Granite)
      const std::vector<Matrix> gate_up = expert_matrices("ffn_gate_up_exps", spec.n_experts, 2 * f, c_.dim);
      for (const Matrix& m : gate_up) {
        F.experts_gate.push_back(row_range(m, 0, f));
        F.experts_up.push_back(row_range(m, f, f));
      }
    } else {
      F.experts_gate = expert_matrices("ffn_gate_exps", spec.n_experts, f, c_.dim);
      F.experts_up = expert_matrices("ffn_up_exps", spec.n_experts, f, c_.dim);
    }
    F.experts_down = expert_matrices("ffn_down_exps", spec.n_experts, c_.dim, f);
    if (spec.biases) {
      F.router_bias = load_vector(tensors_, name("ffn_gate_inp", "bias"), spec.n_experts);
      F.experts_gate_bias = load_vector(tensors_, name("ffn_gate_exps", "bias"), spec.n_experts * f);
      F.experts_up_bias = load_vector(tensors_, name("ffn_up_exps", "bias"), spec.n_experts * f);
      F.experts_down_bias = load_vector(tensors_, name("ffn_down_exps", "bias"), int64_t{spec.n_experts} * c_.dim);
    }
  }

  // n matrices of [rows, cols]: views into one 3-D tensor (GGUF's), or a
  // tensor per expert (a checkpoint's, named as expert_name gives).
  std::vector<Matrix> expert_matrices(const char* what, int n, int64_t rows, int64_t cols) const {
    std::vector<Matrix> out;
    if (tensors_.count(name(what))) {
      const Matrix all = matrix(what, n * rows, cols);
      for (int e = 0; e < n; ++e) out.push_back(row_range(all, e * rows, rows));
      return out;
    }
    for (int e = 0; e < n; ++e) out.push_back(load_matrix(tensors_, expert_name(l_, what, e), rows, cols));
    return out;
  }

  std::string name(const char* what, const char* kind = "weight") const {
    return fmt::format("blk.{}.{}.{}", l_, what, kind);
  }
  Matrix matrix(const char* what, int64_t rows, int64_t cols) const {
    return load_matrix(tensors_, name(what), rows, cols);
  }
  std::vector<float> norm(const char* what, int64_t n) const {
    return load_vector(tensors_, name(what), n, norm_offset_);
  }

  const ModelConfig& c_;
  const Architecture& arch_;
  const TensorMap& tensors_;
  float norm_offset_;
  int l_;
};

}  // namespace

ModelWeights build_weights(const ModelConfig& c, const Architecture& arch, const TensorMap& tensors,
                           float norm_offset) {
  ModelWeights w;
  w.token_embedding = load_matrix(tensors, "token_embd.weight", c.vocab_size, c.dim);
  for (int l = 0; l < c.n_layers; ++l) {
    const LayerLoader load(c, arch, tensors, norm_offset, l);
    w.layers.push_back({load.attention(c.layers[l].attention), load.ffn(c.layers[l].ffn)});
  }
  w.output_norm = load_vector(tensors, "output_norm.weight", c.dim, norm_offset);
  w.output = c.tied_output ? w.token_embedding
                           : load_matrix(tensors, "output.weight", c.vocab_size, c.dim);
  attach_column_caches(w);
  return w;
}

namespace {

template <class Layer, class M>
std::vector<M*> layer_matrices(Layer& L) {
  std::vector<M*> out;
  for (M* m : {&L.attention.wq, &L.attention.wk, &L.attention.wv, &L.attention.wo, &L.ffn.w_gate, &L.ffn.w_up,
               &L.ffn.w_down, &L.ffn.router})
    if (m->data) out.push_back(m);  // a mixture without a shared expert has no dense FFN, a dense one no router
  for (size_t e = 0; e < L.ffn.experts_gate.size(); ++e)
    for (auto* experts : {&L.ffn.experts_gate, &L.ffn.experts_up, &L.ffn.experts_down}) out.push_back(&(*experts)[e]);
  return out;
}

// Sums size(m) over the layers' matrices, counting their experts' as the fraction
// of them a token is routed to.
template <class Size>
double active_sum(const ModelWeights& w, const ModelConfig& c, Size size) {
  double sum = 0;
  for (size_t l = 0; l < w.layers.size(); ++l) {
    const FfnWeights& F = w.layers[l].ffn;
    const ExpertsSpec& spec = c.layers[l].ffn.experts;
    const double used = F.experts_gate.empty() ? 1.0 : static_cast<double>(spec.n_used) / spec.n_experts;
    double all = 0, experts = 0;
    for (const Matrix* m : w.layers[l].matrices()) all += size(*m);
    for (const auto* set : {&F.experts_gate, &F.experts_up, &F.experts_down})
      for (const Matrix& m : *set) experts += size(m);
    sum += all - (1.0 - used) * experts;
  }
  return sum;
}

template <class Weights, class M>
std::vector<M*> matrices_of(Weights& w) {
  std::vector<M*> out = {&w.token_embedding};
  for (auto& L : w.layers)
    for (M* m : L.matrices()) out.push_back(m);
  out.push_back(&w.output);
  return out;
}

bool same_shape(const Matrix& a, const Matrix& b) {
  return a.type == b.type && a.rows == b.rows && a.cols == b.cols && a.layout == b.layout;
}

}  // namespace

std::vector<Matrix*> LayerWeights::matrices() { return layer_matrices<LayerWeights, Matrix>(*this); }
std::vector<const Matrix*> LayerWeights::matrices() const {
  return layer_matrices<const LayerWeights, const Matrix>(*this);
}

std::vector<Matrix*> ModelWeights::matrices() { return matrices_of<ModelWeights, Matrix>(*this); }
std::vector<const Matrix*> ModelWeights::matrices() const {
  return matrices_of<const ModelWeights, const Matrix>(*this);
}

double ModelWeights::layer_params(const ModelConfig& c) const {
  return active_sum(*this, c, [](const Matrix& m) { return static_cast<double>(m.rows) * static_cast<double>(m.cols); });
}

int repack_for_kernels(ModelWeights& w, const std::function<uint8_t*(const void*)>& writable) {
  std::map<const void*, std::vector<Matrix*>> by_data;  // a tied head shares the embedding's
  for (Matrix* m : w.matrices()) by_data[m->data].push_back(m);
  int repacked = 0;
  for (auto& [data, group] : by_data) {
    Matrix& first = *group.front();
    bool alike = true;
    for (const Matrix* m : group) alike = alike && same_shape(*m, first);
    uint8_t* bytes =
        alike && can_repack(first) && panel_kernel_for(active_isa(), first.type) ? writable(data) : nullptr;
    if (!bytes) continue;
    repack(first, bytes);
    for (Matrix* m : group) m->layout = first.layout;
    ++repacked;
  }
  return repacked;
}

size_t ModelWeights::decode_bytes_per_token(const ModelConfig& c) const {
  const double layers = active_sum(*this, c, [](const Matrix& m) { return static_cast<double>(matrix_bytes(m)); });
  // One embedding row, the layers, the head.
  return row_bytes(token_embedding.type, token_embedding.cols) + static_cast<size_t>(layers) + matrix_bytes(output);
}

}  // namespace skiff
