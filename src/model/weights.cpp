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

}  // namespace

ModelWeights build_weights(const ModelConfig& c, const Architecture& arch, const TensorMap& tensors,
                           float norm_offset) {
  ModelWeights w;
  auto norm = [&](const std::string& name, int64_t n) { return load_vector(tensors, name, n, norm_offset); };
  w.token_embedding = load_matrix(tensors, "token_embd.weight", c.vocab_size, c.dim);
  for (int l = 0; l < c.n_layers; ++l) {
    auto name = [l](const char* what, const char* kind = "weight") { return fmt::format("blk.{}.{}.{}", l, what, kind); };
    LayerWeights L;
    L.attn_norm = norm(name("attn_norm"), c.dim);
    if (arch.fused_qkv) {
      const Matrix qkv = load_matrix(tensors, name("attn_qkv"), c.q_dim() + 2 * c.kv_dim(), c.dim);
      L.wq = row_range(qkv, 0, c.q_dim());
      L.wk = row_range(qkv, c.q_dim(), c.kv_dim());
      L.wv = row_range(qkv, c.q_dim() + c.kv_dim(), c.kv_dim());
    } else {
      L.wq = load_matrix(tensors, name("attn_q"), c.q_dim(), c.dim);
      L.wk = load_matrix(tensors, name("attn_k"), c.kv_dim(), c.dim);
      L.wv = load_matrix(tensors, name("attn_v"), c.kv_dim(), c.dim);
    }
    if (c.qkv_bias) {
      L.bq = load_vector(tensors, name("attn_q", "bias"), c.q_dim());
      L.bk = load_vector(tensors, name("attn_k", "bias"), c.kv_dim());
      L.bv = load_vector(tensors, name("attn_v", "bias"), c.kv_dim());
    }
    if (c.qk_norm) {
      L.q_norm = norm(name("attn_q_norm"), c.head_dim);
      L.k_norm = norm(name("attn_k_norm"), c.head_dim);
    }
    L.wo = load_matrix(tensors, name("attn_output"), c.dim, c.q_dim());
    if (c.post_norms) {
      L.post_attn_norm = norm(name("post_attention_norm"), c.dim);
      L.post_ffn_norm = norm(name("post_ffw_norm"), c.dim);
    }
    L.ffn_norm = norm(name("ffn_norm"), c.dim);
    if (arch.fused_gate_up) {
      const Matrix gate_up = load_matrix(tensors, name("ffn_up"), 2 * int64_t{c.ffn_dim}, c.dim);
      L.w_gate = row_range(gate_up, 0, c.ffn_dim);
      L.w_up = row_range(gate_up, c.ffn_dim, c.ffn_dim);
    } else {
      L.w_gate = load_matrix(tensors, name("ffn_gate"), c.ffn_dim, c.dim);
      L.w_up = load_matrix(tensors, name("ffn_up"), c.ffn_dim, c.dim);
    }
    L.w_down = load_matrix(tensors, name("ffn_down"), c.dim, c.ffn_dim);
    w.layers.push_back(std::move(L));
  }
  w.output_norm = norm("output_norm.weight", c.dim);
  w.output = c.tied_output ? w.token_embedding
                           : load_matrix(tensors, "output.weight", c.vocab_size, c.dim);
  attach_column_caches(w);
  return w;
}

namespace {

template <class Weights, class M>
std::vector<M*> matrices_of(Weights& w) {
  std::vector<M*> out = {&w.token_embedding};
  for (auto& L : w.layers)
    for (M* m : {&L.wq, &L.wk, &L.wv, &L.wo, &L.w_gate, &L.w_up, &L.w_down}) out.push_back(m);
  out.push_back(&w.output);
  return out;
}

bool same_shape(const Matrix& a, const Matrix& b) {
  return a.type == b.type && a.rows == b.rows && a.cols == b.cols && a.layout == b.layout;
}

}  // namespace

std::vector<Matrix*> ModelWeights::matrices() { return matrices_of<ModelWeights, Matrix>(*this); }
std::vector<const Matrix*> ModelWeights::matrices() const {
  return matrices_of<const ModelWeights, const Matrix>(*this);
}

double ModelWeights::layer_params() const {
  const std::vector<const Matrix*> all = matrices();
  double params = 0;
  for (auto m = all.begin() + 1; m + 1 != all.end(); ++m)  // between the embedding and the head
    params += static_cast<double>((*m)->rows) * static_cast<double>((*m)->cols);
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
  size_t bytes = row_bytes(token_embedding.type, token_embedding.cols);  // one embedding row
  for (const Matrix* m : matrices())
    if (m != &token_embedding) bytes += matrix_bytes(*m);
  return bytes;
}

}  // namespace skiff
