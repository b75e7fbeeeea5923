// GgufWriter -> GgufFile round trips: every value type, nested arrays, both
// versions, non-default alignment, tensor bytes and their placement.
#include <gtest/gtest.h>

#include <malloc.h>

#include <cmath>

#include "base/error.h"
#include "gguf/gguf.h"
#include "gguf/gguf_writer.h"
#include "gguf_test_util.h"

namespace skiff::gguf {
namespace {

using testing::TempFile;

// One value of each scalar type at an extreme of its range, plus strings.
std::vector<std::pair<std::string, Value>> scalar_values() {
  return {
      {"u8", make_uint(ValueType::UINT8, 255)},
      {"i8", make_int(ValueType::INT8, -128)},
      {"u16", make_uint(ValueType::UINT16, 65535)},
      {"i16", make_int(ValueType::INT16, -32768)},
      {"u32", make_uint(ValueType::UINT32, 4294967295u)},
      {"i32", make_int(ValueType::INT32, -2147483647 - 1)},
      {"u64", make_uint(ValueType::UINT64, UINT64_MAX)},
      {"i64", make_int(ValueType::INT64, INT64_MIN)},
      {"f32", make_float(ValueType::FLOAT32, 0.1)},
      {"f64", make_float(ValueType::FLOAT64, -1e300)},
      {"bool_t", make_bool(true)},
      {"bool_f", make_bool(false)},
      {"str", make_string("héllo\nworld")},
      {"str_empty", make_string("")},
  };
}

Value nested_array() {
  // [[1, 2], [], [3]] of int32, and [["a"], ["b", "c"]] of strings, in one array of arrays.
  auto ints = [](std::vector<int64_t> xs) {
    std::vector<Value> v;
    for (int64_t x : xs) v.push_back(make_int(ValueType::INT32, x));
    return make_array(ValueType::INT32, std::move(v));
  };
  Value int_rows = make_array(ValueType::ARRAY, {ints({1, 2}), ints({}), ints({3})});
  Value str_rows = make_array(ValueType::ARRAY, {make_string_array({"a"}), make_string_array({"b", "c"})});
  return make_array(ValueType::ARRAY, {int_rows, str_rows});
}

// Values compare by declared type and content (floats bitwise).
void expect_same(const Value& a, const Value& b, const std::string& where) {
  ASSERT_EQ(a.type, b.type) << where;
  ASSERT_EQ(a.data.index(), b.data.index()) << where;
  if (const auto* arr = std::get_if<Array>(&a.data)) {
    const Array& other = std::get<Array>(b.data);
    ASSERT_EQ(arr->elem_type, other.elem_type) << where;
    ASSERT_EQ(arr->size(), other.size()) << where;
    for (size_t i = 0; i < arr->size(); ++i)
      expect_same(arr->at(i), other.at(i), where + "[" + std::to_string(i) + "]");
  } else if (const auto* d = std::get_if<double>(&a.data)) {
    EXPECT_EQ(std::memcmp(d, &std::get<double>(b.data), sizeof(double)), 0) << where;
  } else if (const auto* u = std::get_if<uint64_t>(&a.data)) {
    EXPECT_EQ(*u, std::get<uint64_t>(b.data)) << where;
  } else if (const auto* i = std::get_if<int64_t>(&a.data)) {
    EXPECT_EQ(*i, std::get<int64_t>(b.data)) << where;
  } else if (const auto* flag = std::get_if<bool>(&a.data)) {
    EXPECT_EQ(*flag, std::get<bool>(b.data)) << where;
  } else {
    EXPECT_EQ(std::get<std::string>(a.data), std::get<std::string>(b.data)) << where;
  }
}

std::vector<uint8_t> pattern_bytes(size_t n, uint8_t seed) {
  std::vector<uint8_t> b(n);
  for (size_t i = 0; i < n; ++i) b[i] = static_cast<uint8_t>(seed + i * 7);
  return b;
}

class RoundTrip : public ::testing::TestWithParam<uint32_t> {};

TEST_P(RoundTrip, EveryValueTypeAndNestedArrays) {
  GgufWriter w(GetParam());
  auto values = scalar_values();
  values.emplace_back("nested", nested_array());
  values.emplace_back("empty_array", make_array(ValueType::FLOAT32, {}));
  values.emplace_back("bools", make_array(ValueType::BOOL, {make_bool(true), make_bool(false)}));
  for (const auto& [k, v] : values) w.set(k, v);
  TempFile file(w.to_bytes());

  GgufFile f(file.path());
  EXPECT_EQ(f.version(), GetParam());
  ASSERT_EQ(f.metadata().size(), values.size());
  for (const auto& [k, v] : values) {
    const Value* got = f.find(k);
    ASSERT_NE(got, nullptr) << k;
    expect_same(*got, v, k);
  }
  EXPECT_FLOAT_EQ(static_cast<float>(f.get_float("f32", 0)), 0.1f);
  EXPECT_TRUE(f.tensors().empty());
}

TEST_P(RoundTrip, TensorsOfEveryTypeAtAlignedOffsets) {
  for (uint64_t alignment : {32u, 64u, 8u, 2u, 1u}) {
    GgufWriter w(GetParam());
    if (alignment != 32) w.set("general.alignment", make_uint(ValueType::UINT32, alignment));
    struct Case { std::string name; DType type; std::vector<int64_t> ne; };
    const std::vector<Case> cases = {
        {"f32", DType::F32, {3}},       {"f16", DType::F16, {5, 3}},
        {"bf16", DType::BF16, {7, 1, 2}}, {"q8_0", DType::Q8_0, {32, 3}},
        {"q4_0", DType::Q4_0, {64, 1, 1, 2}}, {"q4_k", DType::Q4_K, {256, 2}},
        {"q6_k", DType::Q6_K, {512}},
    };
    std::vector<std::vector<uint8_t>> data;
    for (size_t i = 0; i < cases.size(); ++i) {
      int64_t rows = 1;
      for (size_t d = 1; d < cases[i].ne.size(); ++d) rows *= cases[i].ne[d];
      data.push_back(pattern_bytes(row_bytes(cases[i].type, cases[i].ne[0]) * rows, uint8_t(i)));
      w.add_tensor(cases[i].name, cases[i].type, cases[i].ne, data.back());
    }
    const std::vector<uint8_t> bytes = w.to_bytes();
    EXPECT_EQ(bytes.size() % alignment, 0u);
    TempFile file(bytes);

    GgufFile f(file.path());
    EXPECT_EQ(f.alignment(), alignment);
    ASSERT_EQ(f.tensors().size(), cases.size());
    for (size_t i = 0; i < cases.size(); ++i) {
      const TensorInfo& t = f.tensors()[i];
      EXPECT_EQ(t.name, cases[i].name);
      EXPECT_EQ(t.type, cases[i].type);
      EXPECT_EQ(t.ne, cases[i].ne);
      EXPECT_EQ(t.offset % alignment, 0u) << t.name;
      // The mapping is page-aligned, so this also checks the data section start.
      EXPECT_EQ(reinterpret_cast<uintptr_t>(t.data) % alignment, 0u) << t.name;
      // Kernels load F16/F32 and vectors in place: a small file alignment gets copies.
      EXPECT_EQ(reinterpret_cast<uintptr_t>(t.data) % 32, 0u) << t.name << " alignment " << alignment;
      ASSERT_EQ(t.nbytes, data[i].size()) << t.name;
      EXPECT_EQ(std::memcmp(t.data, data[i].data(), t.nbytes), 0) << t.name;
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Versions, RoundTrip, ::testing::Values(2u, 3u));

TEST(GgufWriter, StreamsProducedTensorsAndWritesFiles) {
  GgufWriter w;
  int calls = 0;
  w.add_tensor("t", DType::F32, {4}, [&] {
    ++calls;
    return pattern_bytes(16, 3);
  });
  TempFile file;
  w.write(file.path());
  EXPECT_EQ(calls, 1);
  GgufFile f(file.path());
  EXPECT_EQ(std::memcmp(f.find_tensor("t")->data, pattern_bytes(16, 3).data(), 16), 0);
}

TEST(GgufWriter, RejectsInconsistentInput) {
  GgufWriter w;
  EXPECT_THROW(w.set("general.alignment", make_uint(ValueType::UINT32, 24)), Error);
  EXPECT_THROW(w.add_tensor("t", DType::F32, {4}, std::vector<uint8_t>(15)), Error);
  EXPECT_THROW(w.add_tensor("q", DType::Q8_0, {16}, std::vector<uint8_t>(17)), Error);
  EXPECT_THROW(make_uint(ValueType::UINT8, 256), Error);
  EXPECT_THROW(make_int(ValueType::INT16, 40000), Error);
  EXPECT_THROW(make_array(ValueType::INT32, {make_string("x")}), Error);
  EXPECT_THROW(w.write("/nonexistent-dir/x.gguf"), Error);
  w.add_tensor("t", DType::F32, {1}, std::vector<uint8_t>(4));
  EXPECT_THROW(w.add_tensor("t", DType::F32, {1}, std::vector<uint8_t>(4)), Error);
}

TEST(GgufWriter, ReplacingAKeyKeepsOneEntry) {
  GgufWriter w;
  w.set("k", make_string("a"));
  w.set("k", make_string("b"));
  TempFile file(w.to_bytes());
  GgufFile f(file.path());
  EXPECT_EQ(f.metadata().size(), 1u);
  EXPECT_EQ(f.get_string("k", ""), "b");
}

// A number array costs its size in memory, not a Value per element (a 100 MB
// u8 array took 4.8 GB and 18 s before).
TEST(GgufMemory, NumberArraysCostAboutTheirFileSize) {
  constexpr size_t kBytes = size_t{64} << 20;
  TempFile file;
  {
    Array a;
    a.elem_type = ValueType::UINT8;
    a.packed.assign(kBytes, 7);
    GgufWriter w;
    w.set("big", Value{ValueType::ARRAY, std::move(a)});
    w.write(file.path());
  }
  const size_t before = mallinfo2().uordblks;
  GgufFile f(file.path());
  const size_t grown = mallinfo2().uordblks - before;
  EXPECT_LT(grown, kBytes + kBytes / 4);
  const Array& big = f.find("big")->as_array();
  ASSERT_EQ(big.size(), kBytes);
  EXPECT_EQ(big.at(kBytes - 1).as_int(), 7);
  EXPECT_THROW(big.at(kBytes), Error);
}

TEST(GgufMemory, PackedBoolsAreChecked) {
  Array a;
  a.elem_type = ValueType::BOOL;
  a.packed = {1, 0, 2};
  GgufWriter w;
  w.set("flags", Value{ValueType::ARRAY, std::move(a)});
  TempFile file(w.to_bytes());
  try {
    GgufFile f(file.path());
    FAIL() << "accepted a bool of 2";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("neither 0 nor 1"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace skiff::gguf
