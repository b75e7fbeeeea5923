// Corrupt GGUF files: each is a valid file from GgufWriter with a few bytes
// patched, and GgufFile must throw an Error that names the problem (and the
// path) instead of reading out of bounds.
#include <gtest/gtest.h>

#include <cstring>
#include <fstream>

#include "base/error.h"
#include "error_of.h"
#include "gguf/gguf.h"
#include "gguf/gguf_writer.h"
#include "gguf_test_util.h"
#include "model/loader.h"
#include "tokenizer/tokenizer.h"

namespace skiff::gguf {
namespace {

using testing::TempFile;
using testing::find_bytes;
using testing::patch;

// Field offsets of the fixed header.
constexpr size_t kVersionAt = 4, kTensorCountAt = 8, kKvCountAt = 16;

GgufWriter base_writer() {
  GgufWriter w;
  w.set("general.name", make_string("corrupt-me"));
  w.set("meta.u32", make_uint(ValueType::UINT32, 7));
  w.set("meta.ints", make_array(ValueType::INT32, {make_int(ValueType::INT32, 1), make_int(ValueType::INT32, 2)}));
  w.set("meta.strs", make_string_array({"ab", "cde"}));
  w.set("meta.flag", make_bool(true));
  w.add_tensor("w.q8", DType::Q8_0, {32, 2}, std::vector<uint8_t>(68, 1));
  // Last, 32 bytes: the file ends where its data ends (no trailing padding).
  w.add_tensor("w.f32", DType::F32, {8}, std::vector<uint8_t>(32, 2));
  return w;
}

std::vector<uint8_t> base_file() { return base_writer().to_bytes(); }

// Where a key's u32 type tag sits (the key string is followed by it).
size_t value_type_at(const std::vector<uint8_t>& b, const std::string& key) {
  return find_bytes(b, key) + key.size();
}

// Where a tensor's descriptor fields sit, after its name.
struct TensorFields {
  size_t n_dims, ne0, type, offset;
};
TensorFields tensor_fields(const std::vector<uint8_t>& b, const std::string& name, uint32_t n_dims) {
  const size_t n = find_bytes(b, name) + name.size();
  const size_t type = n + 4 + 8 * n_dims;
  return {n, n + 4, type, type + 4};
}

void expect_error(const std::vector<uint8_t>& bytes, const std::string& needle) {
  TempFile file(bytes);
  try {
    GgufFile f(file.path());
    ADD_FAILURE() << "parsed without error; expected: " << needle;
  } catch (const Error& e) {
    const std::string msg = e.what();
    EXPECT_NE(msg.find(needle), std::string::npos) << "message: " << msg;
    EXPECT_NE(msg.find(file.path()), std::string::npos) << "message lacks the path: " << msg;
  }
}

TEST(GgufCorrupt, BaseFileIsValid) {
  TempFile file(base_file());
  GgufFile f(file.path());
  EXPECT_EQ(f.tensors().size(), 2u);
  EXPECT_EQ(f.get_string_array("meta.strs"), (std::vector<std::string>{"ab", "cde"}));
}

TEST(GgufCorrupt, BadMagic) {
  auto b = base_file();
  b[0] = 'X';
  expect_error(b, "bad magic");
  expect_error({'G', 'G'}, "bad magic");
  expect_error({}, "bad magic");
}

TEST(GgufCorrupt, UnsupportedVersion) {
  for (uint32_t v : {0u, 1u, 4u, 0x03000000u}) {
    auto b = base_file();
    patch<uint32_t>(b, kVersionAt, v);
    expect_error(b, "unsupported GGUF version " + std::to_string(v));
  }
}

TEST(GgufCorrupt, CountsPastTheEnd) {
  auto b = base_file();
  patch<uint64_t>(b, kKvCountAt, uint64_t{1} << 60);
  expect_error(b, "metadata count");
  b = base_file();
  patch<uint64_t>(b, kTensorCountAt, UINT64_MAX);
  expect_error(b, "tensor count");
  b = base_file();
  patch<uint64_t>(b, value_type_at(b, "meta.ints") + 8, uint64_t{1} << 40);  // type, elem type, length
  expect_error(b, "array of 1099511627776 elements runs past the end");
  b = base_file();
  patch<uint64_t>(b, value_type_at(b, "meta.strs") + 8, 1000);
  expect_error(b, "runs past the end");
}

TEST(GgufCorrupt, StringLengthsPastTheEnd) {
  auto b = base_file();
  patch<uint64_t>(b, find_bytes(b, "meta.u32") - 8, uint64_t{1} << 62);
  expect_error(b, "metadata key length");
  b = base_file();
  patch<uint64_t>(b, value_type_at(b, "general.name") + 4, b.size());
  expect_error(b, "string value length");
  b = base_file();
  patch<uint64_t>(b, find_bytes(b, "cde") - 8, UINT64_MAX);  // an array element
  expect_error(b, "string value length");
  b = base_file();
  patch<uint64_t>(b, find_bytes(b, "w.f32") - 8, 1 << 20);
  expect_error(b, "tensor name length");
}

TEST(GgufCorrupt, TensorOutsideTheFile) {
  auto b = base_file();
  patch<uint64_t>(b, tensor_fields(b, "w.f32", 1).offset, 1 << 20);
  expect_error(b, "tensor 'w.f32' (offset 1048576, 32 bytes) lies outside the file");
  b = base_file();
  patch<uint64_t>(b, tensor_fields(b, "w.f32", 1).offset, UINT64_MAX - 31);  // aligned, huge
  expect_error(b, "lies outside the file");
  b = base_file();
  patch<uint64_t>(b, tensor_fields(b, "w.q8", 2).ne0 + 8, 5);  // 170 bytes in a 128-byte data section
  expect_error(b, "tensor 'w.q8' (offset 0, 170 bytes) lies outside the file");
}

TEST(GgufCorrupt, TensorSizeOverflow) {
  // 2^62 F32 elements are 2^64 bytes: a size that wraps to 0 must not pass.
  auto b = base_file();
  patch<uint64_t>(b, tensor_fields(b, "w.f32", 1).ne0, uint64_t{1} << 62);
  expect_error(b, "tensor 'w.f32' of 4611686018427387904 elements is too large");
  b = base_file();
  patch<uint64_t>(b, tensor_fields(b, "w.q8", 2).ne0 + 8, uint64_t{1} << 62);
  expect_error(b, "invalid dimension");
  b = base_file();
  patch<uint64_t>(b, tensor_fields(b, "w.q8", 2).ne0 + 8, 0);
  expect_error(b, "invalid dimension 0");
}

// An unknown type leaves the tensor unreadable, not the file: its metadata
// (a tokenizer) stays usable; loading a model names the tensor (model tests).
TEST(GgufCorrupt, UnknownTensorType) {
  for (uint32_t t : {4u, 99u, UINT32_MAX}) {  // 4 was ggml's Q4_2, removed from the format
    auto b = base_file();
    patch<uint32_t>(b, tensor_fields(b, "w.f32", 1).type, t);
    TempFile file(b);
    const GgufFile f(file.path());
    const TensorInfo* w = f.find_tensor("w.f32");
    ASSERT_NE(w, nullptr);
    EXPECT_FALSE(w->readable);
    EXPECT_EQ(w->ggml_type, t);
    EXPECT_EQ(w->data, nullptr);
    EXPECT_TRUE(f.find_tensor("w.q8")->readable);
  }
}

const std::string kStoriesF32 = std::string(SKIFF_MODELS_DIR) + "/derived/stories260K-f32.gguf";

std::vector<uint8_t> stories_bytes() {
  std::ifstream in(kStoriesF32, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

// The Error loading the model at path gives ("" when it loads).
std::string load_error(const std::string& path) {
  return skiff::testing::error_of([&] { load_model(path); });
}

// stories260K with one weight of a type skiff cannot read: loading the model
// names the tensor and the type, before any weight is read; its tokenizer loads.
TEST(GgufCorrupt, UnknownTensorTypeInAModel) {
  std::vector<uint8_t> b = stories_bytes();
  patch<uint32_t>(b, tensor_fields(b, "blk.2.ffn_up.weight", 2).type, 99);
  TempFile file(b);
  const std::string error = load_error(file.path());
  EXPECT_NE(error.find("tensor 'blk.2.ffn_up.weight' has type 99"), std::string::npos) << error;
  EXPECT_EQ(Tokenizer::from_path(file.path())->encode("Once upon a time", true, false).size(), 5u);
}

// An architecture skiff does not know is named, with the known ones, before
// the tensors are looked at (one of them has an unknown type too); the
// tokenizer still loads, so `skiff tokenize` works on such a file.
TEST(GgufCorrupt, UnknownArchitecture) {
  std::vector<uint8_t> b = stories_bytes();
  const std::string key = "general.architecture";
  const size_t value = find_bytes(b, key) + key.size() + 4 + 8;  // after the type tag and the length
  ASSERT_EQ(std::string(b.begin() + value, b.begin() + value + 5), "llama");
  std::memcpy(&b[value], "mamba", 5);
  patch<uint32_t>(b, tensor_fields(b, "blk.2.ffn_up.weight", 2).type, 99);
  TempFile file(b);
  const std::string error = load_error(file.path());
  EXPECT_NE(error.find("architecture 'mamba' is not supported (supported: llama, qwen2"), std::string::npos) << error;
  EXPECT_EQ(error.find("type 99"), std::string::npos) << error;
  EXPECT_EQ(Tokenizer::from_path(file.path())->encode("Once upon a time", true, false).size(), 5u);
}

// A RoPE factor tensor is read while the config is built: one of an unknown
// type is an error naming it (it was a null read).
TEST(GgufCorrupt, UnreadableRopeFactors) {
  const GgufFile stories(kStoriesF32);
  GgufWriter w;
  for (const auto& [key, value] : stories.metadata()) w.set(key, value);
  for (const TensorInfo& t : stories.tensors())
    w.add_tensor(t.name, t.type, t.ne, std::vector<uint8_t>(t.data, t.data + t.nbytes));
  w.add_tensor("rope_freqs.weight", DType::F32, {4}, std::vector<uint8_t>(16));
  std::vector<uint8_t> b = w.to_bytes();
  patch<uint32_t>(b, tensor_fields(b, "rope_freqs.weight", 1).type, 99);
  TempFile file(b);
  const std::string error = load_error(file.path());
  EXPECT_NE(error.find("tensor 'rope_freqs.weight' has type 99"), std::string::npos) << error;
}

TEST(GgufCorrupt, RowNotWholeBlocks) {
  auto b = base_file();
  patch<uint64_t>(b, tensor_fields(b, "w.q8", 2).ne0, 16);
  expect_error(b, "not a whole number of Q8_0 blocks");
}

TEST(GgufCorrupt, UnknownValueType) {
  auto b = base_file();
  patch<uint32_t>(b, value_type_at(b, "meta.u32"), 13);
  expect_error(b, "metadata 'meta.u32' has unknown type 13");
  b = base_file();
  patch<uint32_t>(b, value_type_at(b, "meta.ints") + 4, 0xFFFF);
  expect_error(b, "unknown array element type 65535");
}

TEST(GgufCorrupt, BadValues) {
  auto b = base_file();
  patch<uint8_t>(b, value_type_at(b, "meta.flag") + 4, 2);
  expect_error(b, "bool value 2");
  b = base_file();
  std::memcpy(b.data() + find_bytes(b, "meta.strs"), "meta.ints", 9);
  expect_error(b, "duplicate metadata key 'meta.ints'");
}

TEST(GgufCorrupt, DuplicateTensorName) {
  GgufWriter w;
  w.add_tensor("t.a", DType::F32, {8}, std::vector<uint8_t>(32));
  w.add_tensor("t.b", DType::F32, {8}, std::vector<uint8_t>(32));
  auto b = w.to_bytes();
  b[find_bytes(b, "t.b") + 2] = 'a';
  expect_error(b, "duplicate tensor name 't.a'");
}

TEST(GgufCorrupt, ArraysNestedTooDeep) {
  Value v = make_array(ValueType::UINT8, {});
  for (int i = 0; i < 12; ++i) v = make_array(ValueType::ARRAY, {v});
  GgufWriter w;
  w.set("deep", v);
  expect_error(w.to_bytes(), "nested deeper");
}

TEST(GgufCorrupt, Alignment) {
  GgufWriter w = base_writer();
  w.set("general.alignment", make_uint(ValueType::UINT32, 64));
  auto b = w.to_bytes();
  patch<uint32_t>(b, value_type_at(b, "general.alignment") + 4, 48);
  expect_error(b, "general.alignment 48 is not a power of two");
  // The writer refuses a string alignment, so write another key and rename it.
  GgufWriter s = base_writer();
  s.set("general.alignmenX", make_string("64"));
  b = s.to_bytes();
  b[find_bytes(b, "general.alignmenX") + 16] = 't';
  expect_error(b, "metadata 'general.alignment': expected an integer, found string");
}

TEST(GgufCorrupt, MisalignedTensorOffset) {
  auto b = base_file();
  const size_t at = tensor_fields(b, "w.f32", 1).offset;
  uint64_t offset;
  std::memcpy(&offset, b.data() + at, 8);
  patch<uint64_t>(b, at, offset - 4);
  expect_error(b, "tensor 'w.f32' offset " + std::to_string(offset - 4) + " is not aligned to 32");
}

TEST(GgufCorrupt, DimensionCount) {
  GgufWriter w;
  w.add_tensor("five", DType::F32, {1, 1, 1, 1, 2}, std::vector<uint8_t>(8));
  expect_error(w.to_bytes(), "tensor 'five' has 5 dimensions (1 to 4 allowed)");
  auto b = base_file();
  patch<uint32_t>(b, tensor_fields(b, "w.f32", 1).n_dims, 0);
  expect_error(b, "tensor 'w.f32' has 0 dimensions");
  b = base_file();
  patch<uint32_t>(b, tensor_fields(b, "w.f32", 1).n_dims, UINT32_MAX);
  expect_error(b, "4294967295 dimensions");
}

// Every proper prefix of the file is a truncated file: each must give an
// Error, none may crash or read past the end (run this under ASan/valgrind).
TEST(GgufCorrupt, EveryTruncation) {
  const auto full = base_file();
  TempFile file;
  for (size_t n = 0; n < full.size(); ++n) {
    file.write(std::vector<uint8_t>(full.begin(), full.begin() + static_cast<std::ptrdiff_t>(n)));
    EXPECT_THROW(GgufFile{file.path()}, Error) << "prefix of " << n << " bytes parsed";
  }
}

}  // namespace
}  // namespace skiff::gguf
