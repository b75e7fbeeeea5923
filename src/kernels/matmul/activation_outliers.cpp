#include "kernels/matmul/activation_outliers.h"

#include <omp.h>

#include <algorithm>
#include <cmath>
#include <limits>

#include "kernels/matmul/repack.h"
#include "kernels/matmul/row_sums.h"
#include "kernels/quant/quant.h"

namespace skiff {

namespace {

// The magnitude over which a value of this row is an outlier, or infinity
// when the row has none (also rows with a NaN or an infinity:
// quantize_q8_span handles them). Eight lanes, each summing every eighth
// value (row_sums.h: the same bits on every ISA).
float outlier_limit(const float* row, int64_t cols) {
  constexpr int kLanes = 8;
  float sum_sq[kLanes], amax[kLanes];
  lane_sums_of_squares(row, cols, sum_sq, amax);
  int64_t i = cols / kLanes * kLanes;
  for (; i < cols; ++i) {
    sum_sq[0] += row[i] * row[i];
    amax[0] = std::max(amax[0], std::fabs(row[i]));
  }
  for (int k = 1; k < kLanes; ++k) {
    sum_sq[0] += sum_sq[k];
    amax[0] = std::max(amax[0], amax[k]);
  }
  const float limit = kOutlierRatio * std::sqrt(sum_sq[0] / static_cast<float>(cols));
  return amax[0] > limit ? limit : std::numeric_limits<float>::infinity();
}

// Writes token t's values over `limit` into slots, in column order, as many
// as fit; returns how many. Four at a time: one compare and a mask test.
int64_t take_outliers(const float* row, int64_t cols, float limit, int t, std::span<ActivationOutliers::Value> slots) {
  int64_t n = 0, i = 0;
  auto take = [&](int64_t at) {
    if (n < static_cast<int64_t>(slots.size())) slots[n++] = {t, at, row[at]};
  };
  for (; i + 4 <= cols; i += 4) {
    const int mask = abs_over_mask4(row + i, limit);
    if (mask == 0) continue;  // nearly always
    for (int k = 0; k < 4; ++k)
      if (mask >> k & 1) take(i + k);
  }
  for (; i < cols; ++i)
    if (std::fabs(row[i]) > limit) take(i);
  return n;
}

int threads_for(int64_t work) { return work >= (int64_t{1} << 16) ? omp_get_max_threads() : 1; }

// fn(t) for t in [0, n), on the threads when `work` is worth waking them for.
// A decode step's row runs here: a one-thread parallel region costs more than the scan.
template <class F>
void for_rows(int n, int64_t work, F&& fn) {
  const int threads = threads_for(work);
  if (threads == 1) {
    for (int t = 0; t < n; ++t) fn(t);
    return;
  }
#pragma omp parallel for num_threads(threads)
  for (int t = 0; t < n; ++t) fn(t);
}

}  // namespace

bool split_outliers(const float* x, int n_tokens, int64_t cols, ActivationOutliers& out, size_t buffer) {
  // A lone row without outliers (most decode calls) is only scanned, and one
  // with outliers not scanned again.
  const float lone_limit = n_tokens == 1 ? outlier_limit(x, cols) : 0.0f;
  if (n_tokens == 1 && !std::isfinite(lone_limit)) return false;
  // Reused across calls: a fresh 10 MB buffer a prefill's ffn_down call cost page faults.
  thread_local std::vector<std::vector<float>> buffers;  // this thread's; the workers below write into them
  if (buffers.size() <= buffer) buffers.resize(buffer + 1);  // moves keep the others' rows where they are
  std::vector<float>& rows = buffers[buffer];
  if (rows.size() < static_cast<size_t>(n_tokens) * cols) rows.resize(static_cast<size_t>(n_tokens) * cols);
  float* const rest = rows.data();
  // k values over 16x the RMS hold more than k·256/cols of the row's sum of
  // squares, so k < cols/256; a slot more covers rounding. Allocated here:
  // nothing may throw inside the parallel region.
  const int64_t slots_per_token = cols / 256 + 1;
  std::vector<ActivationOutliers::Value> slots(n_tokens * slots_per_token);
  std::vector<int64_t> counts(n_tokens, 0);
  // Each row is copied right after its scan, while it is in cache: a prompt's
  // rows nearly always hold an outlier somewhere, and a second pass over them
  // read them from memory again.
  for_rows(n_tokens, n_tokens * cols, [&](int t) {
    const float* row = x + t * cols;
    float* rest_row = rest + t * cols;
    const float limit = n_tokens == 1 ? lone_limit : outlier_limit(row, cols);
    std::copy(row, row + cols, rest_row);
    if (!std::isfinite(limit)) return;
    counts[t] = take_outliers(row, cols, limit, t, std::span(slots).subspan(t * slots_per_token, slots_per_token));
    for (int64_t k = 0; k < counts[t]; ++k) rest_row[slots[t * slots_per_token + k].col] = 0.0f;
  });
  if (std::all_of(counts.begin(), counts.end(), [](int64_t n) { return n == 0; })) return false;
  out.rest = rest;
  for (int t = 0; t < n_tokens; ++t)
    out.values.insert(out.values.end(), slots.begin() + t * slots_per_token,
                      slots.begin() + t * slots_per_token + counts[t]);
  return true;
}

const float* ColumnCache::find(int64_t col) {
  std::lock_guard lock(mutex_);
  auto it = columns_.find(col);
  return it == columns_.end() ? nullptr : it->second.get();
}

void ColumnCache::keep(int64_t col, const float* column, int64_t rows) {
  std::lock_guard lock(mutex_);
  if (columns_.size() >= kMaxColumns || columns_.count(col)) return;
  auto copy = std::make_unique<float[]>(rows);
  std::copy(column, column + rows, copy.get());
  columns_.emplace(col, std::move(copy));
}

namespace {

// Block b (block_size columns) of row r, as matrix_row would give it.
void matrix_block(const Matrix& w, int64_t r, int64_t b, float* out) {
  if (w.layout == MatrixLayout::kPanels) return panel_block(w, r, b, out);
  const DTypeInfo& info = dtype_info(w.type);
  dequantize_row(w.type, w.row(r) + b * info.type_size, out, static_cast<int64_t>(info.block_size));
}

}  // namespace

// How many panels ahead fill_columns asks for the lines it will read.
constexpr int64_t kColumnPrefetchPanels = 8;

void fill_columns(const Matrix& w, std::span<const ColumnFill> fills, int64_t r0, int64_t r1) {
  const int64_t n = static_cast<int64_t>(fills.size());
  if (n == 0 || r0 >= r1) return;
  if (w.layout == MatrixLayout::kPanels && panel_reads_columns(w.type)) {
    const int64_t p0 = r0 / kPanelRowCount, p1 = (r1 + kPanelRowCount - 1) / kPanelRowCount;
    for (int64_t p = p0; p < p1; ++p) {
      float values[kPanelRowCount];
      if (p + kColumnPrefetchPanels < p1)
        for (int64_t k = 0; k < n; ++k) prefetch_panel_column(w, p + kColumnPrefetchPanels, fills[k].col);
      const int64_t first = std::max(r0, p * kPanelRowCount), last = std::min(r1, (p + 1) * kPanelRowCount);
      const int64_t from = first - p * kPanelRowCount, to = last - p * kPanelRowCount;  // of the panel's rows
      for (int64_t k = 0; k < n; ++k) {
        panel_column(w, p, fills[k].col, values);
        std::copy(values + from, values + to, fills[k].column + first);
      }
    }
    return;
  }
  const int64_t block = static_cast<int64_t>(dtype_info(w.type).block_size);
  for (int64_t r = r0; r < r1; ++r) {
    float values[256];  // the largest block
    int64_t decoded = -1;
    for (int64_t k = 0; k < n; ++k) {
      const int64_t b = fills[k].col / block;
      if (b != decoded) matrix_block(w, r, decoded = b, values);
      fills[k].column[r] = values[fills[k].col - b * block];
    }
  }
}

namespace {

// The distinct columns of these outliers, ascending.
std::vector<int64_t> outlier_columns(std::span<const ActivationOutliers::Value> values) {
  std::vector<int64_t> cols;
  for (const auto& v : values) cols.push_back(v.col);
  std::sort(cols.begin(), cols.end());
  cols.erase(std::unique(cols.begin(), cols.end()), cols.end());
  return cols;
}

// Pointers to w's columns `cols`: kept ones from its cache, the others in
// out.filled, listed in out.fills for the threads to fill.
std::vector<const float*> find_columns(const Matrix& w, std::span<const int64_t> cols, ProductOutliers& out) {
  std::vector<const float*> found(cols.size());
  size_t missing = 0;
  for (size_t k = 0; k < cols.size(); ++k)
    if (!(found[k] = w.column_cache ? w.column_cache->find(cols[k]) : nullptr)) ++missing;
  out.filled.reset(new float[missing * w.rows]);
  for (size_t k = 0; k < cols.size(); ++k) {
    if (found[k]) continue;
    float* column = out.filled.get() + out.fills.size() * w.rows;
    out.fills.push_back({cols[k], column});
    found[k] = column;
  }
  return found;
}

// The outliers of product p's rows, renumbered by them (values: by token).
std::vector<ActivationOutliers::Value> outliers_of(const RoutedProduct& p, const ActivationOutliers& outliers) {
  if (p.rows.empty()) return outliers.values;
  std::vector<ActivationOutliers::Value> mine;
  for (size_t i = 0; i < p.rows.size(); ++i) {
    const auto by_token = [](const ActivationOutliers::Value& v, int t) { return v.token < t; };
    for (auto v = std::lower_bound(outliers.values.begin(), outliers.values.end(), p.rows[i], by_token);
         v != outliers.values.end() && v->token == p.rows[i]; ++v)
      mine.push_back({static_cast<int>(i), v->col, v->value});
  }
  return mine;
}

}  // namespace

std::vector<ProductOutliers> outlier_terms(std::span<const RoutedProduct> products,
                                           const ActivationOutliers& outliers) {
  std::vector<ProductOutliers> out(products.size());
  for (size_t p = 0; p < products.size(); ++p) {
    const std::vector<ActivationOutliers::Value> values = outliers_of(products[p], outliers);
    if (values.empty()) continue;
    const std::vector<int64_t> cols = outlier_columns(values);
    const std::vector<const float*> columns = find_columns(*products[p].w, cols, out[p]);
    for (const auto& v : values)
      out[p].terms.push_back(
          {v.token, v.value, columns[std::lower_bound(cols.begin(), cols.end(), v.col) - cols.begin()]});
  }
  return out;
}

void keep_filled_columns(std::span<const RoutedProduct> products, std::span<const ProductOutliers> outliers) {
  for (size_t p = 0; p < products.size(); ++p) {
    const Matrix& w = *products[p].w;
    if (w.column_cache)
      for (const ColumnFill& fill : outliers[p].fills) w.column_cache->keep(fill.col, fill.column, w.rows);
  }
}

}  // namespace skiff
