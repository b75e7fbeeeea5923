#include "model/weights.h"

#include <fmt/format.h>

#include <map>

#include "base/error.h"
#include "kernels/isa.h"
#include "kernels/quant.h"
#include "kernels/repack.h"

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

std::vector<float> load_vector(const TensorMap& tensors, const std::string& name, int64_t n) {
  const TensorRef& t = require(tensors, name);
  if (t.rows * t.cols != n) fail("tensor '{}' has {} elements, expected {}", name, t.rows * t.cols, n);
  std::vector<float> v(n);
  dequantize_row(t.type, t.data, v.data(), n);
  return v;
}

size_t matrix_bytes(const Matrix& m) { return m.rows * row_bytes(m.type, m.cols); }

}  // namespace

ModelWeights build_weights(const ModelConfig& c, const TensorMap& tensors) {
  ModelWeights w;
  w.token_embedding = load_matrix(tensors, "token_embd.weight", c.vocab_size, c.dim);
  for (int l = 0; l < c.n_layers; ++l) {
    auto name = [l](const char* what) { return fmt::format("blk.{}.{}.weight", l, what); };
    LayerWeights L;
    L.attn_norm = load_vector(tensors, name("attn_norm"), c.dim);
    L.wq = load_matrix(tensors, name("attn_q"), c.q_dim(), c.dim);
    L.wk = load_matrix(tensors, name("attn_k"), c.kv_dim(), c.dim);
    L.wv = load_matrix(tensors, name("attn_v"), c.kv_dim(), c.dim);
    L.wo = load_matrix(tensors, name("attn_output"), c.dim, c.q_dim());
    L.ffn_norm = load_vector(tensors, name("ffn_norm"), c.dim);
    L.w_gate = load_matrix(tensors, name("ffn_gate"), c.ffn_dim, c.dim);
    L.w_up = load_matrix(tensors, name("ffn_up"), c.ffn_dim, c.dim);
    L.w_down = load_matrix(tensors, name("ffn_down"), c.dim, c.ffn_dim);
    w.layers.push_back(std::move(L));
  }
  w.output_norm = load_vector(tensors, "output_norm.weight", c.dim);
  w.output = c.tied_output ? w.token_embedding
                           : load_matrix(tensors, "output.weight", c.vocab_size, c.dim);
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
  if (active_isa() != Isa::kAvx512) return 0;  // only those kernels read panels
  std::map<const void*, std::vector<Matrix*>> by_data;  // a tied head shares the embedding's
  for (Matrix* m : w.matrices()) by_data[m->data].push_back(m);
  int repacked = 0;
  for (auto& [data, group] : by_data) {
    Matrix& first = *group.front();
    bool alike = true;
    for (const Matrix* m : group) alike = alike && same_shape(*m, first);
    uint8_t* bytes = alike && can_repack(first) ? writable(data) : nullptr;
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
