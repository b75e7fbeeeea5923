#include "kernels/matmul/repack.h"

#include <omp.h>

#include <cstring>
#include <vector>

#include "base/error.h"
#include "kernels/quant/quant.h"
#include "kernels/quant/quant_formats.h"

namespace skiff {
namespace {

// Where a GGUF block of 32 keeps its parts: its scale at 0 (fp16 d, MXFP4's
// E8M0 byte), then its fp16 min, 32-bit fifth bits and quants (32 int8 for
// Q8_0, else 16 nibble bytes); -1: none.
struct Block32Parts {
  int bytes, m, qh, qs;
};
Block32Parts block32_parts(DType type) {
  switch (type) {
    case DType::Q8_0: return {34, -1, -1, 2};
    case DType::Q4_1: return {20, 2, -1, 4};
    case DType::Q5_0: return {22, -1, 2, 6};
    case DType::Q5_1: return {24, 2, 4, 8};
    case DType::MXFP4: return {17, -1, -1, 1};
    default: return {18, -1, -1, 2};  // Q4_0, IQ4_NL
  }
}

// Where byte j of a block's quants (j < 32 for Q8_0, < 16 for Q4_0) of row i
// goes in its unit.
int64_t panel_offset(int j, int i) { return (j / 4) * 64 + 4 * i + j % 4; }

// Calls fill(group, block, i) for each 256-column super-block: its group in
// the panel and row i's GGUF block of it (blocks of block_bytes).
template <class Fill>
void for_each_super_block(const uint8_t* rows, int64_t cols, int64_t block_bytes, int64_t group_bytes, uint8_t* panel,
                          Fill fill) {
  const int64_t supers = cols / 256, row_bytes = supers * block_bytes;
  for (int64_t s = 0; s < supers; ++s)
    for (int i = 0; i < kPanelRowCount; ++i) fill(panel + s * group_bytes, rows + i * row_bytes + s * block_bytes, i);
}

bool k_quant_panels(DType type) {
  return type == DType::Q2_K || type == DType::Q3_K || type == DType::Q4_K || type == DType::Q6_K ||
         type == DType::IQ4_XS;
}

bool is_float(DType type) { return type == DType::F32 || type == DType::F16 || type == DType::BF16; }

// A float panel (F32, F16, BF16; e bytes an element) from its 16 rows: column
// k of every row together.
void repack_float_panel(const uint8_t* rows, int64_t cols, size_t e, uint8_t* panel) {
  for (int i = 0; i < kPanelRowCount; ++i)
    for (int64_t k = 0; k < cols; ++k) std::memcpy(panel + e * (k * kPanelRowCount + i), rows + e * (i * cols + k), e);
}

// Where row i's parts of one unit lie in the panel (repack.h), against its block.
struct UnitPlace {
  int64_t d, m, qh;  // byte offsets in the unit (-1: none)
};
UnitPlace unit_place(DType type, int i) {
  const int64_t weights = panel_weight_bytes(type);
  return {weights + panel_scale_bytes(type) * i, panel_has_min(type) ? weights + 2 * kPanelRowCount + 2 * i : -1,
          panel_has_qh(type) ? kPanelQhAt + 4 * i : -1};
}

// A block's 32 fifth bits (bit k: column k) as the panel holds them: byte c,
// bit j is column c + 4j (repack.h); and back.
constexpr int panel_fifth_bit(int k) { return 8 * (k % 4) + k / 4; }
uint32_t transpose_fifth_bits(uint32_t qh) {
  uint32_t out = 0;
  for (int k = 0; k < 32; ++k) out |= (qh >> k & 1u) << panel_fifth_bit(k);
  return out;
}
uint32_t fifth_bits_of_panel(uint32_t panel_qh) {
  uint32_t qh = 0;
  for (int k = 0; k < 32; ++k) qh |= (panel_qh >> panel_fifth_bit(k) & 1u) << k;
  return qh;
}

// A panel of blocks of 32 from its 16 rows (the unit layout in repack.h).
void repack_blocks_panel(DType type, const uint8_t* rows, int64_t cols, uint8_t* panel) {
  const Block32Parts b = block32_parts(type);
  const int64_t units = cols / 32, row_bytes = units * b.bytes, unit_bytes = panel_unit_bytes(type);
  const int quant_bytes = type == DType::Q8_0 ? 32 : 16;
  for (int64_t u = 0; u < units; ++u) {
    uint8_t* unit = panel + u * unit_bytes;
    for (int i = 0; i < kPanelRowCount; ++i) {
      const uint8_t* block = rows + i * row_bytes + u * b.bytes;
      const UnitPlace at = unit_place(type, i);
      std::memcpy(unit + at.d, block, panel_scale_bytes(type));
      if (b.m >= 0) std::memcpy(unit + at.m, block + b.m, 2);
      if (b.qh >= 0) {
        uint32_t qh;
        std::memcpy(&qh, block + b.qh, 4);
        qh = transpose_fifth_bits(qh);
        std::memcpy(unit + at.qh, &qh, 4);
      }
      for (int j = 0; j < quant_bytes; j += 4) {  // 4 bytes at a time: Q8_0 int8 + 128 as u8; nibbles as they are
        uint32_t four;
        std::memcpy(&four, block + b.qs + j, 4);
        if (type == DType::Q8_0) four ^= 0x80808080u;
        std::memcpy(unit + panel_offset(j, i), &four, 4);
      }
    }
  }
}

// Row i's GGUF block of unit u, rebuilt from a panel of blocks of 32.
void block32_from_panel(DType type, const uint8_t* panel, int64_t u, int i, uint8_t* block) {
  const Block32Parts b = block32_parts(type);
  const uint8_t* unit = panel + u * panel_unit_bytes(type);
  const UnitPlace at = unit_place(type, i);
  std::memcpy(block, unit + at.d, panel_scale_bytes(type));
  if (b.m >= 0) std::memcpy(block + b.m, unit + at.m, 2);
  if (b.qh >= 0) {
    uint32_t qh;
    std::memcpy(&qh, unit + at.qh, 4);
    qh = fifth_bits_of_panel(qh);
    std::memcpy(block + b.qh, &qh, 4);
  }
  for (int j = 0; j < (type == DType::Q8_0 ? 32 : 16); ++j)
    block[b.qs + j] = static_cast<uint8_t>(unit[panel_offset(j, i)] ^ (type == DType::Q8_0 ? 0x80 : 0));
}

// Q4_K's sub-block j of a block: the low (j even) or high nibbles of qs[32·(j/2) ..].
constexpr int64_t kQ4KScales = 4, kQ4KQs = 16;  // offsets in a GGUF Q4_K block (after d, dmin)
constexpr int64_t kQ4KBlockBytes = 144;

uint8_t q4_k_nibble(const uint8_t* block, int j, int e) {
  const uint8_t byte = block[kQ4KQs + 32 * (j / 2) + e];
  return j % 2 ? byte >> 4 : byte & 0x0F;
}

// A Q4_K panel from its 16 rows (the layout in repack.h).
void repack_q4_k_panel(const uint8_t* rows, int64_t cols, uint8_t* panel) {
  const auto fill = [](uint8_t* group, const uint8_t* block, int i) {
    for (int j = 0; j < 8; ++j)
      for (int k = 0; k < 16; ++k)  // byte k: column k (low nibble) and 16 + k (high)
        group[kQ4KPanelWeights + j * panel_weight_bytes(DType::Q4_K) + panel_offset(k, i)] =
            static_cast<uint8_t>(q4_k_nibble(block, j, k) | q4_k_nibble(block, j, 16 + k) << 4);
    for (int v = 0; v < 3; ++v) std::memcpy(group + kQ4KPanelScales + 64 * v + 4 * i, block + kQ4KScales + 4 * v, 4);
    std::memcpy(group + kQ4KPanelD + 2 * i, block, 2);
    std::memcpy(group + kQ4KPanelDmin + 2 * i, block + 2, 2);
  };
  for_each_super_block(rows, cols, kQ4KBlockBytes, kQ4KPanelGroupBytes, panel, fill);
}

// Row i's GGUF Q4_K block of super-block s, rebuilt from a panel.
void q4_k_block_from_panel(const uint8_t* panel, int64_t s, int i, uint8_t* block) {
  const uint8_t* group = panel + s * kQ4KPanelGroupBytes;
  std::memcpy(block, group + kQ4KPanelD + 2 * i, 2);
  std::memcpy(block + 2, group + kQ4KPanelDmin + 2 * i, 2);
  for (int v = 0; v < 3; ++v) std::memcpy(block + kQ4KScales + 4 * v, group + kQ4KPanelScales + 64 * v + 4 * i, 4);
  for (int j = 0; j < 8; j += 2)
    for (int e = 0; e < 32; ++e) {
      const auto nibble = [&](int unit) {  // element e of the unit: byte e % 16, low nibble for e < 16
        const uint8_t byte = group[kQ4KPanelWeights + unit * panel_weight_bytes(DType::Q4_K) + panel_offset(e % 16, i)];
        return e < 16 ? byte & 0x0F : byte >> 4;
      };
      block[kQ4KQs + 16 * j + e] = static_cast<uint8_t>(nibble(j) | nibble(j + 1) << 4);
    }
}

// IQ4_XS blocks: fp16 d, 16-bit scales_h, 4 bytes of scales_l, then sub-block
// j's 16 nibble bytes at 8 + 16j (low nibbles its columns 0..15).
constexpr int64_t kIq4XsBlockBytes = 136, kIq4XsQs = 8;

// An IQ4_XS panel from its 16 rows (the layout in repack.h).
void repack_iq4_xs_panel(const uint8_t* rows, int64_t cols, uint8_t* panel) {
  const auto fill = [](uint8_t* group, const uint8_t* block, int i) {
    std::memcpy(group + kIq4XsPanelD + 2 * i, block, 2);
    std::memcpy(group + kIq4XsPanelScalesHigh + 2 * i, block + 2, 2);
    std::memcpy(group + kIq4XsPanelScalesLow + 4 * i, block + 4, 4);
    for (int j = 0; j < 8; ++j)
      for (int k = 0; k < 16; ++k)
        group[kIq4XsPanelWeights + 256 * j + panel_offset(k, i)] = block[kIq4XsQs + 16 * j + k];
  };
  for_each_super_block(rows, cols, kIq4XsBlockBytes, kIq4XsPanelGroupBytes, panel, fill);
}

// Row i's GGUF IQ4_XS block of super-block s, rebuilt from a panel.
void iq4_xs_block_from_panel(const uint8_t* panel, int64_t s, int i, uint8_t* block) {
  const uint8_t* group = panel + s * kIq4XsPanelGroupBytes;
  std::memcpy(block, group + kIq4XsPanelD + 2 * i, 2);
  std::memcpy(block + 2, group + kIq4XsPanelScalesHigh + 2 * i, 2);
  std::memcpy(block + 4, group + kIq4XsPanelScalesLow + 4 * i, 4);
  for (int j = 0; j < 8; ++j)
    for (int k = 0; k < 16; ++k)
      block[kIq4XsQs + 16 * j + k] = group[kIq4XsPanelWeights + 256 * j + panel_offset(k, i)];
}

// Q6_K: where a level's low 4 bits and top 2 bits lie (byte offsets, shifts),
// in a GGUF block (element e: quant.cpp's q6_position) and in a panel group
// (element e of row i: column e % 32 of unit e / 32, the layout in repack.h).
struct Q6Bits {
  int64_t low, high;
  int low_shift, high_shift;
};
constexpr int64_t kQ6KScalesAt = 192, kQ6KDAt = 208, kQ6KBlockBytes = 210;  // in a GGUF Q6_K block

Q6Bits q6_k_block_bits(int e) {
  const int half = e / 128, k = (e % 128) / 32, l = e % 32;
  return {64 * half + l + 32 * (k % 2), 128 + 32 * half + l, 4 * (k / 2), 2 * k};
}
Q6Bits q6_k_panel_bits(int e, int i) {
  const int c = e % 32, c16 = c % 16;
  const int64_t unit = kQ6KPanelWeights + (e / 32) * kQ6KPanelUnitBytes, at = 4 * i + c16 % 4;
  return {unit + 64 * (c16 / 4) + at, unit + 4 * 64 + 64 * (c / 16) + at, 4 * (c / 16), 2 * (c16 / 4)};
}
int q6_k_level(const uint8_t* bytes, Q6Bits b) {
  return (bytes[b.low] >> b.low_shift & 0x0F) | (bytes[b.high] >> b.high_shift & 3) << 4;
}
void set_q6_k_level(uint8_t* bytes, Q6Bits b, int level) {  // into zeroed bits
  bytes[b.low] = static_cast<uint8_t>(bytes[b.low] | (level & 0x0F) << b.low_shift);
  bytes[b.high] = static_cast<uint8_t>(bytes[b.high] | (level >> 4) << b.high_shift);
}

// A Q6_K panel from its 16 rows (the layout in repack.h), a byte at a time:
// unit u of a block is elements 32u.. (half h = u / 4, quarter k = u % 4),
// whose low 4 bits are those of ql[64h + 32(k % 2) + l] >> 4(k / 2) and top 2
// bits of qh[32h + l] >> 2k (q6_k_block_bits).
void repack_q6_k_panel(const uint8_t* rows, int64_t cols, uint8_t* panel) {
  const auto fill = [](uint8_t* group, const uint8_t* block, int i) {
    for (int u = 0; u < 8; ++u) {
      const int h = u / 4, k = u % 4, shift = 4 * (k / 2);
      const uint8_t* ql = block + 64 * h + 32 * (k % 2);
      const uint8_t* qh = block + 128 + 32 * h;
      uint8_t* unit = group + kQ6KPanelWeights + u * kQ6KPanelUnitBytes;
      for (int b = 0; b < 16; ++b)  // columns b (low nibble) and 16 + b (high)
        unit[panel_offset(b, i)] = static_cast<uint8_t>((ql[b] >> shift & 0x0F) | (ql[16 + b] >> shift & 0x0F) << 4);
      for (int v = 0; v < 2; ++v)
        for (int c = 0; c < 4; ++c) {  // bits 2m, 2m + 1: column 16v + 4m + c
          int top = 0;
          for (int m = 0; m < 4; ++m) top |= (qh[16 * v + 4 * m + c] >> 2 * k & 3) << 2 * m;
          unit[4 * 64 + 64 * v + 4 * i + c] = static_cast<uint8_t>(top);
        }
    }
    for (int j = 0; j < 16; ++j) group[kQ6KPanelScales + 16 * j + i] = block[kQ6KScalesAt + j];
    std::memcpy(group + kQ6KPanelD + 2 * i, block + kQ6KDAt, 2);
  };
  for_each_super_block(rows, cols, kQ6KBlockBytes, kQ6KPanelGroupBytes, panel, fill);
}

// Row i's GGUF Q6_K block of super-block s, rebuilt from a panel.
void q6_k_block_from_panel(const uint8_t* panel, int64_t s, int i, uint8_t* block) {
  const uint8_t* group = panel + s * kQ6KPanelGroupBytes;
  std::memset(block, 0, kQ6KBlockBytes);
  for (int e = 0; e < 256; ++e) set_q6_k_level(block, q6_k_block_bits(e), q6_k_level(group, q6_k_panel_bits(e, i)));
  for (int j = 0; j < 16; ++j) block[kQ6KScalesAt + j] = group[kQ6KPanelScales + 16 * j + i];
  std::memcpy(block + kQ6KDAt, group + kQ6KPanelD + 2 * i, 2);
}

// Q3_K: where a level's low 2 bits and third bit lie (byte offsets, shifts), in
// a GGUF block (element e = 128h + 32s + l: quant_k_low.cpp) and in a panel
// group (element e of row i: column e % 32 of unit e / 32, the layout in repack.h).
constexpr int64_t kQ3KQsAt = 32, kQ3KScalesAt = 96, kQ3KDAt = 108, kQ3KBlockBytes = 110;  // in a GGUF Q3_K block

Q6Bits q3_k_block_bits(int e) { return {kQ3KQsAt + 32 * (e / 128) + e % 32, e % 32, 2 * ((e % 128) / 32), e / 32}; }
Q6Bits q3_k_panel_bits(int e, int i) {
  const int c = e % 32, half = c / 16, m = (c % 16) / 4;
  const int64_t unit = kQ3KPanelWeights + (e / 32) * kQ3KPanelUnitBytes, at = 4 * i + c % 4;
  if (m < 3) return {unit + 64 * m + at, unit + 64 * m + at, 3 * half, 3 * half + 2};
  return {unit + 64 * half + at, unit + 2 * 64 + at, 6, 6 + half};
}
int q3_k_level(const uint8_t* bytes, Q6Bits b) {
  return (bytes[b.low] >> b.low_shift & 3) | (bytes[b.high] >> b.high_shift & 1) << 2;
}
void set_q3_k_level(uint8_t* bytes, Q6Bits b, int level) {  // into zeroed bits
  bytes[b.low] = static_cast<uint8_t>(bytes[b.low] | (level & 3) << b.low_shift);
  bytes[b.high] = static_cast<uint8_t>(bytes[b.high] | (level >> 2) << b.high_shift);
}

// Scale j (0..63, sc + 32) of a GGUF block: a nibble of byte j % 8, 2 bits of byte 8 + j % 4.
int q3_k_block_scale(const uint8_t* block, int j) {
  const uint8_t* sc = block + kQ3KScalesAt;
  return (sc[j % 8] >> 4 * (j / 8) & 0x0F) | (sc[8 + j % 4] >> 2 * (j / 4) & 3) << 4;
}
void set_q3_k_block_scale(uint8_t* block, int j, int v) {  // into zeroed bits
  uint8_t* sc = block + kQ3KScalesAt;
  sc[j % 8] = static_cast<uint8_t>(sc[j % 8] | (v & 0x0F) << 4 * (j / 8));
  sc[8 + j % 4] = static_cast<uint8_t>(sc[8 + j % 4] | (v >> 4) << 2 * (j / 4));
}

// The pieces of scale j of row i in a panel group: `bits` bits of t = v ^ 32
// (sc's 6-bit two's complement) from bit `from`, at bit `shift` of a 16-bit word.
struct Q3ScalePiece {
  int64_t word;
  int shift, bits, from;
};
int q3_k_scale_pieces(int j, int i, Q3ScalePiece out[2]) {
  const int k = j / 2;
  const auto word = [&](int v) { return kQ3KPanelScales + 64 * v + 4 * i + 2 * (j % 2); };
  if (k < 6) {
    out[0] = {word(k / 2), 6 * (k % 2), 6, 0};
    return 1;
  }
  out[0] = {word(k - 6), 12, 4, 2};
  out[1] = {word(2), 12 + 2 * (k - 6), 2, 0};
  return 2;
}
int q3_k_panel_scale(const uint8_t* group, int j, int i) {
  Q3ScalePiece pieces[2];
  int t = 0;
  for (int n = q3_k_scale_pieces(j, i, pieces), k = 0; k < n; ++k) {
    uint16_t word;
    std::memcpy(&word, group + pieces[k].word, 2);
    t |= (word >> pieces[k].shift & ((1 << pieces[k].bits) - 1)) << pieces[k].from;
  }
  return t ^ 32;
}
void set_q3_k_panel_scale(uint8_t* group, int j, int i, int v) {  // into zeroed bits
  Q3ScalePiece pieces[2];
  for (int n = q3_k_scale_pieces(j, i, pieces), k = 0; k < n; ++k) {
    uint16_t word;
    std::memcpy(&word, group + pieces[k].word, 2);
    word = static_cast<uint16_t>(word | ((v ^ 32) >> pieces[k].from & ((1 << pieces[k].bits) - 1)) << pieces[k].shift);
    std::memcpy(group + pieces[k].word, &word, 2);
  }
}

// A Q3_K panel from its 16 rows (the layout in repack.h).
void repack_q3_k_panel(const uint8_t* rows, int64_t cols, uint8_t* panel) {
  std::memset(panel, 0, cols / 256 * kQ3KPanelGroupBytes);
  const auto fill = [](uint8_t* group, const uint8_t* block, int i) {
    for (int e = 0; e < 256; ++e) set_q3_k_level(group, q3_k_panel_bits(e, i), q3_k_level(block, q3_k_block_bits(e)));
    for (int j = 0; j < 16; ++j) set_q3_k_panel_scale(group, j, i, q3_k_block_scale(block, j));
    std::memcpy(group + kQ3KPanelD + 2 * i, block + kQ3KDAt, 2);
  };
  for_each_super_block(rows, cols, kQ3KBlockBytes, kQ3KPanelGroupBytes, panel, fill);
}

// Row i's GGUF Q3_K block of super-block s, rebuilt from a panel.
void q3_k_block_from_panel(const uint8_t* panel, int64_t s, int i, uint8_t* block) {
  const uint8_t* group = panel + s * kQ3KPanelGroupBytes;
  std::memset(block, 0, kQ3KBlockBytes);
  for (int e = 0; e < 256; ++e) set_q3_k_level(block, q3_k_block_bits(e), q3_k_level(group, q3_k_panel_bits(e, i)));
  for (int j = 0; j < 16; ++j) set_q3_k_block_scale(block, j, q3_k_panel_scale(group, j, i));
  std::memcpy(block + kQ3KDAt, group + kQ3KPanelD + 2 * i, 2);
}

// Q2_K: where a level's 2 bits lie in a GGUF block (element e = 128h + 32s + l:
// quant_k_low.cpp) and in a panel group (the layout in repack.h), and where
// sub-block j's scale/min byte lies in each.
constexpr int64_t kQ2KQsAt = 16, kQ2KDAt = 80, kQ2KBlockBytes = 84;  // in a GGUF Q2_K block

Q6Bits q2_k_block_bits(int e) { return {kQ2KQsAt + 32 * (e / 128) + e % 32, 0, 2 * ((e % 128) / 32), 0}; }
Q6Bits q2_k_panel_bits(int e, int i) {
  const int c = e % 32, g = (c % 16) / 4;
  return {kQ2KPanelWeights + (e / 32) * kQ2KPanelUnitBytes + 64 * (g / 2) + 4 * i + c % 4, 0, 4 * (c / 16) + 2 * (g % 2), 0};
}
int64_t q2_k_panel_scale(int j, int i) { return kQ2KPanelScales + 64 * (j / 4) + 4 * i + 2 * (j % 2) + (j / 2) % 2; }

// A Q2_K panel from its 16 rows (the layout in repack.h).
void repack_q2_k_panel(const uint8_t* rows, int64_t cols, uint8_t* panel) {
  std::memset(panel, 0, cols / 256 * kQ2KPanelGroupBytes);
  const auto fill = [](uint8_t* group, const uint8_t* block, int i) {
    for (int e = 0; e < 256; ++e) {
      const Q6Bits from = q2_k_block_bits(e), to = q2_k_panel_bits(e, i);
      group[to.low] = static_cast<uint8_t>(group[to.low] | (block[from.low] >> from.low_shift & 3) << to.low_shift);
    }
    for (int j = 0; j < 16; ++j) group[q2_k_panel_scale(j, i)] = block[j];
    std::memcpy(group + kQ2KPanelD + 2 * i, block + kQ2KDAt, 2);
    std::memcpy(group + kQ2KPanelDmin + 2 * i, block + kQ2KDAt + 2, 2);
  };
  for_each_super_block(rows, cols, kQ2KBlockBytes, kQ2KPanelGroupBytes, panel, fill);
}

// Row i's GGUF Q2_K block of super-block s, rebuilt from a panel.
void q2_k_block_from_panel(const uint8_t* panel, int64_t s, int i, uint8_t* block) {
  const uint8_t* group = panel + s * kQ2KPanelGroupBytes;
  std::memset(block, 0, kQ2KBlockBytes);
  for (int e = 0; e < 256; ++e) {
    const Q6Bits from = q2_k_panel_bits(e, i), to = q2_k_block_bits(e);
    block[to.low] = static_cast<uint8_t>(block[to.low] | (group[from.low] >> from.low_shift & 3) << to.low_shift);
  }
  for (int j = 0; j < 16; ++j) block[j] = group[q2_k_panel_scale(j, i)];
  std::memcpy(block + kQ2KDAt, group + kQ2KPanelD + 2 * i, 2);
  std::memcpy(block + kQ2KDAt + 2, group + kQ2KPanelDmin + 2 * i, 2);
}

}  // namespace

bool can_repack(const Matrix& m) {
  switch (m.type) {
    case DType::Q8_0: case DType::Q4_0: case DType::Q4_1: case DType::Q5_0: case DType::Q5_1: case DType::IQ4_NL:
    case DType::MXFP4: case DType::Q2_K: case DType::Q3_K: case DType::Q4_K: case DType::Q6_K: case DType::IQ4_XS:
    case DType::F32: case DType::F16: case DType::BF16:
      break;
    default:
      return false;
  }
  return m.layout == MatrixLayout::kRows && m.rows > 0 && m.rows % kPanelRowCount == 0 && m.cols % 64 == 0;
}

void repack(Matrix& m, uint8_t* data) {
  if (!can_repack(m) || data != m.data)
    fail("repack: a {}x{} {} matrix cannot be repacked", m.rows, m.cols, dtype_info(m.type).name);
  const int64_t panel_bytes = kPanelRowCount * static_cast<int64_t>(row_bytes(m.type, m.cols));
  const int64_t n_panels = m.rows / kPanelRowCount;
  // Each thread's copy of a panel's 16 rows before they are overwritten,
  // allocated here: an exception must not leave a parallel region.
  std::vector<uint8_t> copies(static_cast<size_t>(omp_get_max_threads()) * panel_bytes);
#pragma omp parallel
  {
    uint8_t* rows = copies.data() + omp_get_thread_num() * panel_bytes;
#pragma omp for schedule(static)
    for (int64_t p = 0; p < n_panels; ++p) {
      uint8_t* panel = data + p * panel_bytes;
      std::memcpy(rows, panel, panel_bytes);
      if (is_float(m.type)) repack_float_panel(rows, m.cols, dtype_info(m.type).type_size, panel);
      else if (m.type == DType::Q4_K) repack_q4_k_panel(rows, m.cols, panel);
      else if (m.type == DType::Q6_K) repack_q6_k_panel(rows, m.cols, panel);
      else if (m.type == DType::Q3_K) repack_q3_k_panel(rows, m.cols, panel);
      else if (m.type == DType::Q2_K) repack_q2_k_panel(rows, m.cols, panel);
      else if (m.type == DType::IQ4_XS) repack_iq4_xs_panel(rows, m.cols, panel);
      else repack_blocks_panel(m.type, rows, m.cols, panel);
    }
  }
  m.layout = MatrixLayout::kPanels;
}

const uint8_t* panel_start(const Matrix& m, int64_t p) {
  return static_cast<const uint8_t*>(m.data) + p * kPanelRowCount * row_bytes(m.type, m.cols);
}

void panel_block(const Matrix& m, int64_t r, int64_t b, float* out) {
  const uint8_t* panel = panel_start(m, r / kPanelRowCount);
  const int i = static_cast<int>(r % kPanelRowCount);
  if (is_float(m.type)) {  // a block is one element: gathered, then converted
    const size_t e = dtype_info(m.type).type_size;
    return dequantize_row(m.type, panel + e * (b * kPanelRowCount + i), out, 1);
  }
  // Through the GGUF block, so bit-identical to dequantize_row.
  uint8_t block[kQ6KBlockBytes];
  if (k_quant_panels(m.type)) {
    const auto block_from_panel = m.type == DType::Q2_K     ? q2_k_block_from_panel
                                  : m.type == DType::Q3_K   ? q3_k_block_from_panel
                                  : m.type == DType::Q4_K   ? q4_k_block_from_panel
                                  : m.type == DType::IQ4_XS ? iq4_xs_block_from_panel
                                                            : q6_k_block_from_panel;
    block_from_panel(panel, b, i, block);
  } else {
    block32_from_panel(m.type, panel, b, i, block);
  }
  dequantize_row(m.type, block, out, static_cast<int64_t>(dtype_info(m.type).block_size));
}

bool panel_reads_columns(DType type) {
  return !is_float(type);  // the K-quant super-block groups and the blocks of 32
}

namespace {

float fp16_at(const uint8_t* at) {
  uint16_t h;
  std::memcpy(&h, at, 2);
  return fp16_to_f32(h);
}

// Element e of row i of a K-quant panel group, with dequantize_row's float
// operations (quant.cpp, quant_k_low.cpp), so bit-identical to it.
float q6_k_element(const uint8_t* group, int e, int i) {
  const auto scale = static_cast<int8_t>(group[kQ6KPanelScales + 16 * (e / 16) + i]);
  const int level = q6_k_level(group, q6_k_panel_bits(e, i));
  return fp16_at(group + kQ6KPanelD + 2 * i) * static_cast<float>(scale) * static_cast<float>(level - 32);
}
float q4_k_element(const uint8_t* group, int e, int i) {
  uint8_t scales[12], sc, min;
  for (int v = 0; v < 3; ++v) std::memcpy(scales + 4 * v, group + kQ4KPanelScales + 64 * v + 4 * i, 4);
  unpack_scale_min(scales, e / 32, sc, min);
  const uint8_t* nibbles = group + kQ4KPanelWeights + (e / 32) * panel_weight_bytes(DType::Q4_K);
  const int l = e % 32;
  const uint8_t byte = nibbles[panel_offset(l % 16, i)];
  const int level = l < 16 ? byte & 0x0F : byte >> 4;
  return fp16_at(group + kQ4KPanelD + 2 * i) * sc * static_cast<float>(level) -
         fp16_at(group + kQ4KPanelDmin + 2 * i) * min;
}
float q3_k_element(const uint8_t* group, int e, int i) {
  const float scale = fp16_at(group + kQ3KPanelD + 2 * i) * static_cast<float>(q3_k_panel_scale(group, e / 16, i) - 32);
  return scale * static_cast<float>(q3_k_level(group, q3_k_panel_bits(e, i)) - 4);
}
float q2_k_element(const uint8_t* group, int e, int i) {
  const uint8_t sm = group[q2_k_panel_scale(e / 16, i)];
  const float scale = fp16_at(group + kQ2KPanelD + 2 * i) * static_cast<float>(sm & 0xF);
  const float min = fp16_at(group + kQ2KPanelDmin + 2 * i) * static_cast<float>(sm >> 4);
  const Q6Bits b = q2_k_panel_bits(e, i);
  return scale * static_cast<float>(group[b.low] >> b.low_shift & 3) - min;
}

float iq4_xs_element(const uint8_t* group, int e, int i) {
  const int j = e / 32, l = e % 32;
  uint16_t high;
  std::memcpy(&high, group + kIq4XsPanelScalesHigh + 2 * i, 2);
  const int ls = (group[kIq4XsPanelScalesLow + 4 * i + j / 2] >> 4 * (j % 2) & 0xF) | (high >> 2 * j & 3) << 4;
  const uint8_t byte = group[kIq4XsPanelWeights + 256 * j + panel_offset(l % 16, i)];
  const float scale = fp16_at(group + kIq4XsPanelD + 2 * i) * static_cast<float>(ls - 32);
  return scale * static_cast<float>(kIq4Levels[l < 16 ? byte & 0x0F : byte >> 4]);
}

// Column c (0..31) of row i of a unit of a blocks-of-32 panel, with
// dequantize_row's float operations (quant.cpp, quant_blocks32.cpp, quant_other.cpp).
float block32_element(DType type, const uint8_t* unit, int c, int i) {
  const UnitPlace at = unit_place(type, i);
  const float d = type == DType::MXFP4 ? e8m0_half(unit[at.d]) : fp16_at(unit + at.d);
  if (type == DType::Q8_0) return static_cast<float>(static_cast<int8_t>(unit[panel_offset(c, i)] ^ 0x80)) * d;
  const uint8_t byte = unit[panel_offset(c % 16, i)];
  int q = c < 16 ? byte & 0x0F : byte >> 4;
  if (at.qh >= 0) {
    uint32_t qh;
    std::memcpy(&qh, unit + at.qh, 4);
    q |= static_cast<int>(qh >> panel_fifth_bit(c) & 1u) << 4;
  }
  if (at.m >= 0) return d * static_cast<float>(q) + fp16_at(unit + at.m);
  if (type == DType::IQ4_NL) return d * static_cast<float>(kIq4Levels[q]);
  if (type == DType::MXFP4) return d * static_cast<float>(kE2M1Doubled[q]);
  return type == DType::Q5_0 ? d * static_cast<float>(q - 16) : static_cast<float>(q - 8) * d;
}

// A K-quant panel type's element reader and the layout of its super-block
// group: the scales first (header_bytes), then a unit of unit_bytes per 32 columns.
struct ColumnReader {
  float (*element)(const uint8_t* group, int e, int i);
  int64_t group_bytes, header_bytes, unit_bytes;
};
ColumnReader column_reader(DType type) {
  switch (type) {
    case DType::Q6_K: return {q6_k_element, kQ6KPanelGroupBytes, kQ6KPanelWeights, kQ6KPanelUnitBytes};
    case DType::Q4_K:
      return {q4_k_element, kQ4KPanelGroupBytes, kQ4KPanelWeights, panel_weight_bytes(DType::Q4_K)};
    case DType::Q3_K: return {q3_k_element, kQ3KPanelGroupBytes, kQ3KPanelWeights, kQ3KPanelUnitBytes};
    case DType::IQ4_XS:
      return {iq4_xs_element, kIq4XsPanelGroupBytes, kIq4XsPanelWeights, panel_weight_bytes(DType::IQ4_XS)};
    case DType::Q2_K: return {q2_k_element, kQ2KPanelGroupBytes, kQ2KPanelWeights, kQ2KPanelUnitBytes};
    default: fail("panel_column: {} panels are not read by column", dtype_info(type).name);
  }
}

void prefetch_bytes(const uint8_t* at, int64_t n) {
  for (int64_t k = 0; k < n; k += 64) __builtin_prefetch(at + k);
}

// Where column c of panel p lies: its blocks-of-32 unit, or its K-quant super-block group.
const uint8_t* block32_unit(const Matrix& m, int64_t p, int64_t c) {
  return panel_start(m, p) + (c / 32) * panel_unit_bytes(m.type);
}
const uint8_t* k_quant_group(const Matrix& m, const ColumnReader& reader, int64_t p, int64_t c) {
  return panel_start(m, p) + (c / 256) * reader.group_bytes;
}

}  // namespace

void panel_column(const Matrix& m, int64_t p, int64_t c, float* out) {
  if (!k_quant_panels(m.type)) {
    const uint8_t* unit = block32_unit(m, p, c);
    for (int i = 0; i < kPanelRowCount; ++i) out[i] = block32_element(m.type, unit, static_cast<int>(c % 32), i);
    return;
  }
  const ColumnReader reader = column_reader(m.type);
  const uint8_t* group = k_quant_group(m, reader, p, c);
  const int e = static_cast<int>(c % 256);
  if (isa_supported(Isa::kAvx2) && k_quant_panel_column_avx2(m.type, group, e, out)) return;
  for (int i = 0; i < kPanelRowCount; ++i) out[i] = reader.element(group, e, i);
}

void prefetch_panel_column(const Matrix& m, int64_t p, int64_t c) {
  if (!k_quant_panels(m.type)) return prefetch_bytes(block32_unit(m, p, c), panel_unit_bytes(m.type));
  const ColumnReader reader = column_reader(m.type);
  const uint8_t* group = k_quant_group(m, reader, p, c);
  prefetch_bytes(group, reader.header_bytes);
  prefetch_bytes(group + reader.header_bytes + (c % 256 / 32) * reader.unit_bytes, reader.unit_bytes);
}

void panel_row(const Matrix& m, int64_t r, float* out) {
  if (is_float(m.type)) {  // the row's elements gathered, then converted as a row
    const uint8_t* panel = panel_start(m, r / kPanelRowCount);
    const size_t e = dtype_info(m.type).type_size;
    const int64_t i = r % kPanelRowCount;
    std::vector<uint8_t> row(e * m.cols);
    for (int64_t k = 0; k < m.cols; ++k) std::memcpy(&row[e * k], panel + e * (k * kPanelRowCount + i), e);
    return dequantize_row(m.type, row.data(), out, m.cols);
  }
  const int64_t block = static_cast<int64_t>(dtype_info(m.type).block_size);
  for (int64_t b = 0; b < m.cols / block; ++b) panel_block(m, r, b, out + block * b);
}

}  // namespace skiff
