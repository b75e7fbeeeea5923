// A GGUF with general.alignment 1 or 2 packs tensors at odd addresses; the
// kernels load F32/F16 elements and vectors in place (undefined behaviour on
// misaligned pointers), so the reader copies such tensors. The model must give
// exactly the logits of the same file written with the default alignment.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <string>

#include "gguf/gguf.h"
#include "gguf/gguf_writer.h"
#include "model/loader.h"

namespace skiff {
namespace {

const std::string kModel = std::string(SKIFF_MODELS_DIR) + "/derived/stories260K-f32.gguf";

// Writes `from` again with the given alignment and a padding key that puts
// the data section `skew` bytes past a multiple of 4. Returns the data start.
uint64_t write_with_alignment(const std::string& from, const std::string& to, uint64_t alignment,
                              uint64_t skew) {
  const gguf::GgufFile in(from);
  for (size_t pad = 0;; ++pad) {
    gguf::GgufWriter out;
    for (const auto& [key, value] : in.metadata())
      if (key != "general.alignment") out.set(key, value);
    out.set("general.alignment", gguf::make_uint(gguf::ValueType::UINT32, alignment));
    out.set("test.padding", gguf::make_string(std::string(pad, 'x')));
    for (const gguf::TensorInfo& t : in.tensors())
      out.add_tensor(t.name, t.type, t.ne, std::vector<uint8_t>(t.data, t.data + t.nbytes));
    out.write(to);
    const gguf::GgufFile written(to);
    const gguf::TensorInfo& last = written.tensors().back();
    const uint64_t data_start = std::filesystem::file_size(to) - last.offset - last.nbytes;
    if (data_start % 4 == skew) return data_start;
  }
}

std::vector<float> logits_of(const std::string& path, FileLoad load) {
  auto model = load_gguf_model(std::make_shared<gguf::GgufFile>(path, load));
  PagedKvCache kv = model->make_kv_cache(1, 16);
  return model->prefill(kv, 0, std::vector<int32_t>{1, 403, 407, 261, 378});
}

TEST(GgufAlignment, SmallAlignmentGivesTheSameLogits) {
  // Read into memory, as the copied tensors are (and repacked likewise).
  const std::vector<float> expected = logits_of(kModel, FileLoad::kCopy);
  for (uint64_t alignment : {1u, 2u}) {
    const std::string path = ::testing::TempDir() + "/skiff_align_" + std::to_string(alignment) + ".gguf";
    const uint64_t data_start = write_with_alignment(kModel, path, alignment, alignment);
    EXPECT_EQ(data_start % 4, alignment);  // every F32 tensor misaligned in the file
    const gguf::GgufFile f(path);
    for (const gguf::TensorInfo& t : f.tensors())
      EXPECT_EQ(reinterpret_cast<uintptr_t>(t.data) % 32, 0u) << t.name;
    EXPECT_EQ(logits_of(path, FileLoad::kCopy), expected) << "alignment " << alignment;
    // Mapped, only the misaligned tensors are copies (and repacked into
    // panels, which sum in another order than rows as stored).
    const std::vector<float> mapped = logits_of(path, FileLoad::kMmap);
    ASSERT_EQ(mapped.size(), expected.size());
    for (size_t i = 0; i < mapped.size(); ++i)
      EXPECT_NEAR(mapped[i], expected[i], 1e-4f * (1 + std::fabs(expected[i]))) << "alignment " << alignment << " logit " << i;
    std::remove(path.c_str());
  }
}

}  // namespace
}  // namespace skiff
