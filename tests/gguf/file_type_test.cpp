// llama.cpp's file types: names, LLAMA_FTYPE ids, and the Q4_K_M / Q5_K_M
// rule for which matrices get Q6_K (llama-quantize's use_more_bits).
#include "gguf/file_type.h"

#include <gtest/gtest.h>

#include "base/error.h"
#include "kernels/quant/quant.h"

#include <algorithm>
#include <string>
#include <vector>

namespace skiff::gguf {
namespace {

TEST(FileType, NamesAndIds) {
  const auto q4km = file_type_from_name("q4_k_m");
  ASSERT_TRUE(q4km.has_value());
  EXPECT_EQ(q4km->base, DType::Q4_K);
  EXPECT_TRUE(q4km->medium);
  EXPECT_EQ(q4km->name(), "Q4_K_M");
  EXPECT_EQ(q4km->id(), 15u);
  EXPECT_EQ(file_type_from_name("Q5_K_M")->id(), 17u);
  EXPECT_EQ(file_type_from_name("Q4_K")->id(), 14u);  // a plain Q4_K file is llama.cpp's Q4_K_S
  EXPECT_EQ(file_type_from_name("q5_k")->id(), 16u);
  EXPECT_EQ(file_type_from_name("Q6_K")->id(), 18u);
  EXPECT_EQ(file_type_from_name("q8_0")->name(), "Q8_0");
  EXPECT_FALSE(file_type_from_name("Q8_0")->medium);
  EXPECT_FALSE(file_type_from_name("Q3_K_M").has_value());
  for (const char* name : {"F32", "F16", "BF16", "Q8_0", "Q4_0", "Q4_K", "Q5_K", "Q6_K", "Q4_K_M", "Q5_K_M", "MXFP4_MOE"})
    EXPECT_EQ(file_type_from_id(file_type_from_name(name)->id())->name(), name);
  EXPECT_FALSE(file_type_from_id(12).has_value());  // Q3_K_M
  EXPECT_FALSE(file_type_from_id(-1).has_value());
  EXPECT_FALSE(file_type_from_name("Q4_K_M2").has_value());
  const auto moe = file_type_from_name("mxfp4_moe");
  ASSERT_TRUE(moe.has_value());
  EXPECT_TRUE(moe->moe);
  EXPECT_EQ(moe->base, DType::MXFP4);
  EXPECT_EQ(moe->id(), 38u);  // LLAMA_FTYPE_MOSTLY_MXFP4_MOE
  EXPECT_FALSE(file_type_from_name("MXFP4")->moe);
  EXPECT_EQ(file_type_from_name("MXFP4")->id(), 38u);  // llama.cpp has no plain MXFP4 file type
}

// The help texts' list (kWritableFileTypes) names exactly the types skiff can
// write that have a llama.cpp file type, and the two mixes.
TEST(FileType, WritableListMatchesWhatQuantizeWrites) {
  std::vector<std::string> listed;
  std::string list(kWritableFileTypes);
  const std::string mixes = ", or the mixes ";
  const size_t at = list.find(mixes);
  ASSERT_NE(at, std::string::npos);
  list.replace(at, mixes.size(), ", ");
  for (size_t begin = 0; begin < list.size();) {
    const size_t end = std::min(list.find(", ", begin), list.size());
    listed.push_back(list.substr(begin, end - begin));
    begin = end + 2;
  }
  std::vector<std::string> writable = {"Q4_K_M", "Q5_K_M", "MXFP4_MOE"};
  for (uint32_t id = 0; id < 64; ++id) {
    const auto info = dtype_info(id);
    if (!info || !can_quantize(info->type)) continue;
    const FileType type(info->type);
    try {
      (void)type.id();
    } catch (const Error&) {
      continue;  // no llama.cpp file type of it
    }
    writable.push_back(std::string(info->name));
  }
  std::sort(listed.begin(), listed.end());
  std::sort(writable.begin(), writable.end());
  EXPECT_EQ(listed, writable);
}

// 32 layers (Llama 2 7B): Q6_K in layers 0-3 and 28-31 and every third from 6
// to 27: half of attn_v and ffn_down, as llama.cpp documents Q4_K_M.
TEST(FileType, MediumMixGivesQ6KToHeadAndUseMoreBitsLayers) {
  const FileType mix(DType::Q4_K, true);
  const MixModel model{32, true};
  std::vector<int> q6k_layers;
  for (int l = 0; l < 32; ++l) {
    const std::string p = "blk." + std::to_string(l) + ".";
    const DType v = mix.matrix_type(p + "attn_v.weight", model);
    EXPECT_EQ(mix.matrix_type(p + "ffn_down.weight", model), v) << l;
    EXPECT_EQ(mix.matrix_type(p + "attn_q.weight", model), DType::Q4_K) << l;
    EXPECT_EQ(mix.matrix_type(p + "ffn_up.weight", model), DType::Q4_K) << l;
    if (v == DType::Q6_K) q6k_layers.push_back(l);
    else EXPECT_EQ(v, DType::Q4_K) << l;
  }
  EXPECT_EQ(q6k_layers, (std::vector<int>{0, 1, 2, 3, 6, 9, 12, 15, 18, 21, 24, 27, 28, 29, 30, 31}));
  EXPECT_EQ(mix.matrix_type("output.weight", model), DType::Q6_K);
  EXPECT_EQ(mix.matrix_type("token_embd.weight", model), DType::Q4_K);
  EXPECT_EQ(mix.matrix_type("token_embd.weight", MixModel{32, false}), DType::Q6_K);  // tied head
  const FileType plain(DType::Q4_K);
  EXPECT_EQ(plain.matrix_type("output.weight", model), DType::Q4_K);
  EXPECT_EQ(plain.matrix_type("blk.0.attn_v.weight", model), DType::Q4_K);
}

// llama.cpp's 70B rule: 80 layers with grouped K/V heads; Q4_K_M only.
TEST(FileType, SeventyBillionAttnVGetsQ5K) {
  const FileType q4km(DType::Q4_K, true), q5km(DType::Q5_K, true);
  const MixModel llama70b{80, true, true}, llama65b{80, true, false};
  EXPECT_EQ(q4km.matrix_type("blk.40.attn_v.weight", llama70b), DType::Q5_K);  // use_more_bits: no
  EXPECT_EQ(q4km.matrix_type("blk.42.attn_v.weight", llama70b), DType::Q6_K);  // (42 - 10) % 3 == 2
  EXPECT_EQ(q4km.matrix_type("blk.40.ffn_down.weight", llama70b), DType::Q4_K);
  EXPECT_EQ(q4km.matrix_type("blk.40.attn_v.weight", llama65b), DType::Q4_K);
  EXPECT_EQ(q5km.matrix_type("blk.40.attn_v.weight", llama70b), DType::Q5_K);
  EXPECT_THROW(FileType(DType::Q8_0, true), Error);
}

// llama-quantize's MXFP4_MOE: the experts (3-D tensors, `*_exps` in GGUF)
// MXFP4, every other matrix Q8_0: attention, shared experts, the embedding
// and the head, tied or not; the router stays F32. Plain MXFP4 is MXFP4
// throughout.
TEST(FileType, Mxfp4MoeGivesMxfp4ToExpertsOnly) {
  const FileType mix = FileType::mxfp4_moe();
  for (const MixModel& model : {MixModel{24, true, true}, MixModel{24, false, true}}) {
    for (const char* name : {"blk.0.ffn_gate_exps.weight", "blk.0.ffn_up_exps.weight", "blk.23.ffn_down_exps.weight"})
      EXPECT_EQ(mix.matrix_type(name, model), DType::MXFP4) << name;
    for (const char* name : {"blk.0.attn_q.weight", "blk.0.attn_v.weight", "blk.0.attn_output.weight",
                             "blk.0.ffn_up_shexp.weight", "blk.0.ffn_down_shexp.weight",
                             "blk.5.ffn_down.weight", "token_embd.weight", "output.weight"})
      EXPECT_EQ(mix.matrix_type(name, model), DType::Q8_0) << name;
  }
  EXPECT_EQ(mix.matrix_type("blk.0.ffn_gate_inp.weight", MixModel{24, true}), DType::F32);
  EXPECT_EQ(FileType(DType::MXFP4).matrix_type("blk.0.attn_q.weight", MixModel{24, true}), DType::MXFP4);
  EXPECT_EQ(FileType(DType::MXFP4).matrix_type("output.weight", MixModel{24, true}), DType::MXFP4);
  EXPECT_EQ(mix.name(), "MXFP4_MOE");
}

// A mixture of experts in Q4_K_M: routers stay F32 (in every file type),
// each layer's ffn_down of every kind (experts', shared, dense) follows
// ffn_down's rule, and 8 experts (Mixtral) give attn_k and attn_v Q8_0.
TEST(FileType, MediumMixOfExperts) {
  const FileType mix(DType::Q4_K, true);
  const MixModel qwen3moe{48, true, true, 128}, mixtral{32, true, true, 8};
  for (const char* name : {"blk.0.ffn_down_exps.weight", "blk.0.ffn_down_shexp.weight", "blk.0.ffn_down.weight"}) {
    EXPECT_EQ(mix.matrix_type(name, qwen3moe), DType::Q6_K) << name;
    EXPECT_EQ(mix.matrix_type(name, qwen3moe), mix.matrix_type("blk.0.attn_v.weight", qwen3moe)) << name;
  }
  EXPECT_EQ(mix.matrix_type("blk.7.ffn_down_exps.weight", qwen3moe), DType::Q4_K);  // 7 - 6 = 1: not more bits
  EXPECT_EQ(mix.matrix_type("blk.7.ffn_gate_exps.weight", qwen3moe), DType::Q4_K);
  EXPECT_EQ(mix.matrix_type("blk.7.attn_k.weight", qwen3moe), DType::Q4_K);
  for (const FileType& type : {mix, FileType(DType::Q8_0), FileType(DType::F16)})
    EXPECT_EQ(type.matrix_type("blk.3.ffn_gate_inp.weight", qwen3moe), DType::F32);
  EXPECT_EQ(mix.matrix_type("blk.13.attn_k.weight", mixtral), DType::Q8_0);
  EXPECT_EQ(mix.matrix_type("blk.13.attn_v.weight", mixtral), DType::Q8_0);
  EXPECT_EQ(mix.matrix_type("blk.13.attn_q.weight", mixtral), DType::Q4_K);
}

TEST(FileType, MixModelFromTensorNames) {
  const MixModel m = mix_model_of({"token_embd.weight", "blk.0.attn_v.weight", "blk.15.ffn_down.weight",
                                   "blk.7.attn_norm.weight", "output.weight", "blkx.99.weight"});
  EXPECT_EQ(m.n_layers, 16);
  EXPECT_TRUE(m.has_output);
  EXPECT_FALSE(mix_model_of({"token_embd.weight", "blk.1.attn_q.weight"}).has_output);
  // Layer numbers are the file's: absurd or unparsable ones are not layers.
  EXPECT_EQ(mix_model_of({"blk.2147483647.attn_v.weight", "blk.99999999999999.ffn_down.weight",
                          "blk.x.ffn_down.weight", "blk.-3.attn_v.weight"})
                .n_layers,
            0);
}

}  // namespace
}  // namespace skiff::gguf
