#include "kernels/repack.h"

#include <cstring>
#include <vector>

#include "base/error.h"
#include "kernels/fp16.h"

namespace skiff {
namespace {

constexpr int64_t kQ8BlockBytes = 34;  // fp16 scale + 32 int8

}  // namespace

bool can_repack_q8_0(const Matrix& m) {
  return m.type == DType::Q8_0 && m.layout == MatrixLayout::kRows && m.rows % kQ8PanelRows == 0 &&
         m.cols % 64 == 0 && m.rows > 0;
}

void repack_q8_0(Matrix& m, uint8_t* data) {
  if (!can_repack_q8_0(m) || data != m.data) fail("repack_q8_0: a {}x{} matrix cannot be repacked", m.rows, m.cols);
  const int64_t units = m.cols / 32, row_bytes = units * kQ8BlockBytes;
  const int64_t panel_bytes = kQ8PanelRows * row_bytes;
  const int64_t n_panels = m.rows / kQ8PanelRows;
#pragma omp parallel
  {
    std::vector<uint8_t> rows(panel_bytes);  // the panel's 16 rows, before they are overwritten
#pragma omp for schedule(static)
    for (int64_t p = 0; p < n_panels; ++p) {
      uint8_t* panel = data + p * panel_bytes;
      std::memcpy(rows.data(), panel, panel_bytes);
      for (int64_t u = 0; u < units; ++u) {
        uint8_t* unit = panel + u * kQ8PanelUnitBytes;
        for (int i = 0; i < kQ8PanelRows; ++i) {
          const uint8_t* block = rows.data() + i * row_bytes + u * kQ8BlockBytes;
          std::memcpy(unit + kQ8PanelWeightBytes + 2 * i, block, 2);
          for (int j = 0; j < 32; ++j)
            unit[(j / 4) * 64 + 4 * i + j % 4] = static_cast<uint8_t>(block[2 + j] ^ 0x80);  // int8 + 128
        }
      }
    }
  }
  m.layout = MatrixLayout::kQ8_0Panels;
}

void q8_0_panel_row(const Matrix& m, int64_t r, float* out) {
  const int64_t i = r % kQ8PanelRows, units = m.cols / 32;
  for (int64_t u = 0; u < units; ++u) {
    const uint8_t* unit = q8_panel(m, r / kQ8PanelRows) + u * kQ8PanelUnitBytes;
    uint16_t h;
    std::memcpy(&h, unit + kQ8PanelWeightBytes + 2 * i, 2);
    const float d = fp16_to_f32(h);
    for (int j = 0; j < 32; ++j) out[32 * u + j] = d * static_cast<int8_t>(unit[(j / 4) * 64 + 4 * i + j % 4] ^ 0x80);
  }
}

}  // namespace skiff
