// dequantize_row / quantize_row against tests/data/quant_golden.json, written
// by tools/make_quant_golden.py from the gguf package's numpy reference.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <fstream>

#include "kernels/dtype.h"
#include "kernels/quant/quant.h"

namespace skiff {
namespace {

const nlohmann::json& golden() {
  static const nlohmann::json j = [] {
    std::ifstream f(std::string(SKIFF_SOURCE_DIR) + "/tests/data/quant_golden.json");
    EXPECT_TRUE(f.good()) << "tests/data/quant_golden.json missing";
    return nlohmann::json::parse(f);
  }();
  return j;
}

std::vector<uint8_t> from_hex(const std::string& hex) {
  std::vector<uint8_t> out(hex.size() / 2);
  for (size_t i = 0; i < out.size(); ++i) out[i] = static_cast<uint8_t>(std::stoi(hex.substr(2 * i, 2), nullptr, 16));
  return out;
}

std::vector<float> from_bits(const nlohmann::json& bits) {
  std::vector<float> out;
  for (uint32_t b : bits.get<std::vector<uint32_t>>()) {
    float f;
    std::memcpy(&f, &b, 4);
    out.push_back(f);
  }
  return out;
}

uint32_t bits_of(float f) {
  uint32_t b;
  std::memcpy(&b, &f, 4);
  return b;
}

DType type_of(const nlohmann::json& c) {
  const auto t = dtype_from_name(c.at("type").get<std::string>());
  EXPECT_TRUE(t.has_value()) << c.at("type");
  return *t;
}

TEST(QuantGolden, DequantizeMatchesNumpyReferenceBitForBit) {
  const auto& cases = golden().at("dequantize");
  ASSERT_EQ(cases.size(), 25u);  // F16, BF16, Q8_0, Q4_0, Q4_K, Q6_K, Q5_K, Q4_1, Q5_0, Q5_1, IQ4_NL, Q2_K, Q3_K, IQ4_XS,
                                 // TQ1_0, TQ2_0, MXFP4, IQ2_XXS, IQ2_XS, IQ2_S, IQ3_XXS, IQ3_S, IQ1_S, IQ1_M, NVFP4
  for (const auto& c : cases) {
    const DType type = type_of(c);
    const std::vector<uint8_t> bytes = from_hex(c.at("bytes_hex"));
    const std::vector<float> want = from_bits(c.at("f32_bits"));
    ASSERT_EQ(row_bytes(type, static_cast<int64_t>(want.size())), bytes.size()) << c.at("type");
    std::vector<float> got(want.size());
    dequantize_row(type, bytes.data(), got.data(), static_cast<int64_t>(got.size()));
    for (size_t i = 0; i < want.size(); ++i) {
      if (std::isnan(want[i])) {
        EXPECT_TRUE(std::isnan(got[i])) << c.at("type") << " element " << i;
      } else {
        ASSERT_EQ(bits_of(got[i]), bits_of(want[i]))
            << c.at("type") << " element " << i << ": " << got[i] << " vs " << want[i];
      }
    }
  }
}

TEST(QuantGolden, QuantizeMatchesGgmlReferenceBitForBit) {
  const auto& cases = golden().at("quantize");
  ASSERT_EQ(cases.size(), 8u);  // F16, BF16, Q8_0, Q4_0, Q4_1, Q5_0, Q5_1, MXFP4
  for (const auto& c : cases) {
    const DType type = type_of(c);
    const std::vector<float> input = from_bits(c.at("f32_bits"));
    const std::vector<uint8_t> want = from_hex(c.at("bytes_hex"));
    std::vector<uint8_t> got(row_bytes(type, static_cast<int64_t>(input.size())));
    ASSERT_EQ(got.size(), want.size()) << c.at("type");
    quantize_row(type, input.data(), got.data(), static_cast<int64_t>(input.size()));
    for (size_t i = 0; i < want.size(); ++i)
      ASSERT_EQ(got[i], want[i]) << c.at("type") << " byte " << i;
  }
}

}  // namespace
}  // namespace skiff
