#include "model/weights.h"

#include <fmt/format.h>

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
      A.q_norm = norm("attn_q_norm", c_.head_dim);
      A.k_norm = norm("attn_k_norm", c_.head_dim);
    }
    A.wo = matrix("attn_output", c_.dim, c_.q_dim());
    if (spec.post_norm) A.post_norm = norm("post_attention_norm", c_.dim);
    return A;
  }

  FfnWeights ffn(const FfnSpec& spec) const {
    FfnWeights F;
    F.norm = norm("ffn_norm", c_.dim);
    if (arch_.fused_gate_up) {
      const Matrix gate_up = matrix("ffn_up", 2 * int64_t{c_.ffn_dim}, c_.dim);
      F.w_gate = row_range(gate_up, 0, c_.ffn_dim);
      F.w_up = row_range(gate_up, c_.ffn_dim, c_.ffn_dim);
    } else {
      F.w_gate = matrix("ffn_gate", c_.ffn_dim, c_.dim);
      F.w_up = matrix("ffn_up", c_.ffn_dim, c_.dim);
    }
    F.w_down = matrix("ffn_down", c_.dim, c_.ffn_dim);
    if (spec.post_norm) F.post_norm = norm("post_ffw_norm", c_.dim);
    return F;
  }

 private:
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
  return {&L.attention.wq, &L.attention.wk, &L.attention.wv, &L.attention.wo,
          &L.ffn.w_gate,   &L.ffn.w_up,     &L.ffn.w_down};
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

double ModelWeights::layer_params() const {
  double params = 0;
  for (const LayerWeights& L : layers)
    for (const Matrix* m : L.matrices()) params += static_cast<double>(m->rows) * static_cast<double>(m->cols);
  return params;
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

size_t ModelWeights::decode_bytes_per_token() const {
  size_t bytes = row_bytes(token_embedding.type, token_embedding.cols) + matrix_bytes(output);  // one embedding row
  for (const LayerWeights& L : layers)
    for (const Matrix* m : L.matrices()) bytes += matrix_bytes(*m);
  return bytes;
}

}  // namespace skiff
