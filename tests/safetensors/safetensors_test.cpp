#include "safetensors/safetensors.h"

#include <gtest/gtest.h>

#include "base/error.h"
#include "safetensors_writer.h"

namespace skiff::safetensors {
namespace {

using skiff::testing::safetensors_bytes;
using skiff::testing::StTensor;
using skiff::testing::write_file;

std::string temp_path(const std::string& name) { return ::testing::TempDir() + "/" + name; }

void expect_error(const std::string& bytes, const std::string& needle) {
  const std::string path = temp_path("bad.safetensors");
  write_file(path, bytes);
  try {
    SafetensorsFile f(path);
    FAIL() << "no error for " << needle;
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
  }
}

TEST(Safetensors, ReadsTensorsAndShapes) {
  const std::string path = temp_path("ok.safetensors");
  std::vector<uint8_t> a(2 * 3 * 4, 1), b(5 * 2, 2);
  write_file(path, safetensors_bytes({{"a", "F32", {2, 3}, a}, {"b", "BF16", {5}, b}}));
  SafetensorsFile f(path);
  ASSERT_EQ(f.tensors().size(), 2u);
  const Tensor& t = f.tensors().at("a");
  EXPECT_EQ(t.dtype, "F32");
  EXPECT_EQ(t.shape, (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(t.nbytes, 24u);
  EXPECT_EQ(t.data[0], 1);
  EXPECT_EQ(f.tensors().at("b").data[0], 2);
}

TEST(Safetensors, ReadsStories260K) {
  SafetensorsFile f(std::string(SKIFF_MODELS_DIR) + "/derived/stories260K-hf/model.safetensors");
  EXPECT_EQ(f.tensors().at("model.embed_tokens.weight").shape, (std::vector<int64_t>{512, 64}));
}

TEST(Safetensors, CorruptFilesAreClearErrors) {
  std::vector<uint8_t> data(24);
  const std::string good = safetensors_bytes({{"a", "F32", {2, 3}, data}});
  expect_error("abc", "too short");
  std::string huge_len = good;
  huge_len[6] = 0x7f;
  expect_error(huge_len, "header length");
  std::string not_json = good;
  not_json[8] = '#';
  expect_error(not_json, "not a JSON object");
  expect_error(good.substr(0, good.size() - 1), "outside");  // data truncated
  expect_error(safetensors_bytes({{"a", "F33", {2, 3}, data}}), "unknown dtype");
  expect_error(safetensors_bytes({{"a", "F32", {2, 4}, data}}), "data bytes");
  // Every prefix of a valid file fails cleanly (or parses, for the full file).
  const std::string path = temp_path("prefix.safetensors");
  for (size_t n = 0; n < good.size(); ++n) {
    write_file(path, good.substr(0, n));
    EXPECT_THROW(SafetensorsFile{path}, Error) << n;
  }
}

}  // namespace
}  // namespace skiff::safetensors
