// Hugging Face directories in the forms found in the wild: sharded weights
// with an index, F16/BF16 weights, an explicit (untied) lm_head. Each is made
// from the stories260K F32 checkpoint and must agree with it.
#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "base/error.h"
#include "error_of.h"
#include "kernels/fp16.h"
#include "model/loader.h"
#include "safetensors/safetensors.h"
#include "safetensors_writer.h"
#include "tokenizer/tokenizer.h"

namespace skiff {
namespace {

namespace fs = std::filesystem;
using skiff::testing::safetensors_bytes;
using skiff::testing::StTensor;
using skiff::testing::write_file;

const fs::path kHfDir = fs::path(SKIFF_MODELS_DIR) / "derived/stories260K-hf";

std::vector<StTensor> source_tensors() {
  safetensors::SafetensorsFile f((kHfDir / "model.safetensors").string());
  std::vector<StTensor> out;
  for (const auto& [name, t] : f.tensors())
    out.push_back({name, t.dtype, t.shape, std::vector<uint8_t>(t.data, t.data + t.nbytes)});
  return out;
}

fs::path fresh_dir(const std::string& name) {
  const fs::path dir = fs::path(::testing::TempDir()) / name;
  fs::remove_all(dir);
  fs::create_directories(dir);
  fs::copy_file(kHfDir / "config.json", dir / "config.json");
  return dir;
}

std::vector<float> logits_after(const std::string& path, const std::vector<int32_t>& prompt) {
  auto model = load_model(path);
  PagedKvCache kv = model->make_kv_cache(1, 32, KvType::kF32);
  return model->prefill(kv, 0, prompt);
}

const std::vector<int32_t> kPrompt = {1, 403, 407, 261, 378, 432};

TEST(HfVariants, ShardedEqualsSingleFile) {
  const fs::path dir = fresh_dir("sharded");
  std::vector<StTensor> all = source_tensors();
  const size_t half = all.size() / 2;
  const std::vector<StTensor> a(all.begin(), all.begin() + half), b(all.begin() + half, all.end());
  write_file((dir / "model-00001-of-00002.safetensors").string(), safetensors_bytes(a));
  write_file((dir / "model-00002-of-00002.safetensors").string(), safetensors_bytes(b));
  nlohmann::json index;
  for (const StTensor& t : a) index["weight_map"][t.name] = "model-00001-of-00002.safetensors";
  for (const StTensor& t : b) index["weight_map"][t.name] = "model-00002-of-00002.safetensors";
  write_file((dir / "model.safetensors.index.json").string(), index.dump());
  EXPECT_EQ(logits_after(dir.string(), kPrompt), logits_after(kHfDir.string(), kPrompt));
}

TEST(HfVariants, HalfPrecisionWeightsAgree) {
  for (const std::string dtype : {"F16", "BF16"}) {
    const fs::path dir = fresh_dir("half_" + dtype);
    std::vector<StTensor> all = source_tensors();
    for (StTensor& t : all) {
      std::vector<uint8_t> half(t.bytes.size() / 2);
      for (size_t i = 0; i < t.bytes.size() / 4; ++i) {
        float f;
        std::memcpy(&f, &t.bytes[4 * i], 4);
        const uint16_t h = dtype == "F16" ? f32_to_fp16(f) : f32_to_bf16(f);
        std::memcpy(&half[2 * i], &h, 2);
      }
      t = {t.name, dtype, t.shape, half};
    }
    write_file((dir / "model.safetensors").string(), safetensors_bytes(all));
    const std::vector<float> got = logits_after(dir.string(), kPrompt);
    const std::vector<float> want = logits_after(kHfDir.string(), kPrompt);
    const float tol = dtype == "F16" ? 0.02f : 0.15f;  // rounding of 3 and 8 mantissa bits fewer
    for (size_t i = 0; i < want.size(); ++i) ASSERT_NEAR(got[i], want[i], tol) << dtype << " " << i;
  }
}

TEST(HfVariants, ExplicitLmHeadEqualsTied) {
  const fs::path dir = fresh_dir("untied");
  std::vector<StTensor> all = source_tensors();
  for (const StTensor& t : source_tensors())
    if (t.name == "model.embed_tokens.weight") all.push_back({"lm_head.weight", t.dtype, t.shape, t.bytes});
  write_file((dir / "model.safetensors").string(), safetensors_bytes(all));
  EXPECT_EQ(logits_after(dir.string(), kPrompt), logits_after(kHfDir.string(), kPrompt));
}

TEST(HfVariants, MissingTensorOrConfigIsAClearError) {
  const fs::path dir = fresh_dir("missing");
  std::vector<StTensor> all = source_tensors();
  std::erase_if(all, [](const StTensor& t) { return t.name == "model.layers.2.mlp.up_proj.weight"; });
  write_file((dir / "model.safetensors").string(), safetensors_bytes(all));
  try {
    load_model(dir.string());
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("blk.2.ffn_up.weight"), std::string::npos) << e.what();
  }
  fs::remove(dir / "config.json");
  EXPECT_THROW(load_model(dir.string()), Error);
  write_file((dir / "config.json").string(), "{\"model_type\": \"llama\", \"hidden_size\": \"wide\"}");
  EXPECT_THROW(load_model(dir.string()), Error);
  // Fields of the wrong type are named, not reported as a library type_error.
  for (const auto& [field, value] : {std::pair{"model_type", "[1]"}, {"tie_word_embeddings", "\"x\""},
                                     {"_name_or_path", "{}"}, {"rope_scaling", "{\"rope_type\": 3}"}}) {
    std::ifstream base(kHfDir / "config.json");
    nlohmann::json config = nlohmann::json::parse(base);
    config[field] = nlohmann::json::parse(value);
    write_file((dir / "config.json").string(), config.dump());
    try {
      load_model(dir.string());
      ADD_FAILURE() << field;
    } catch (const Error& e) {
      const std::string what = e.what();
      EXPECT_NE(what.find("config.json"), std::string::npos) << what;
      EXPECT_EQ(what.find("json.exception"), std::string::npos) << what;
      EXPECT_NE(what.find(field == std::string("rope_scaling") ? "rope_type" : field), std::string::npos) << what;
    }
  }
  // Nesting that would overflow the stack, in config.json, tokenizer.json and a safetensors header.
  const std::string deep = std::string(100000, '[') + std::string(100000, ']');
  write_file((dir / "config.json").string(), "{\"model_type\": \"llama\", \"x\": " + deep + "}");
  auto nesting_error = [&](auto&& load) {
    try {
      load();
    } catch (const Error& e) {
      return std::string(e.what()).find("nested deeper") != std::string::npos;
    }
    return false;
  };
  EXPECT_TRUE(nesting_error([&] { load_model(dir.string()); }));
  fs::copy_file(kHfDir / "config.json", dir / "config.json", fs::copy_options::overwrite_existing);
  write_file((dir / "tokenizer.json").string(), "{\"normalizer\": " + deep + "}");
  EXPECT_TRUE(nesting_error([&] { Tokenizer::from_path(dir.string()); }));
  const std::string header = "{\"t\": " + deep + "}";
  std::string file(8, '\0');
  const uint64_t n = header.size();
  std::memcpy(file.data(), &n, 8);
  write_file((dir / "model.safetensors").string(), file + header);
  EXPECT_TRUE(nesting_error([&] { load_model(dir.string()); }));
}

// The Error loading the model in dir gives ("" when it loads).
std::string load_error(const fs::path& dir) {
  return testing::error_of([&] { load_model(dir.string()); });
}

nlohmann::json base_config() {
  std::ifstream in(kHfDir / "config.json");
  return nlohmann::json::parse(in);
}

// config.json's "architectures" picks the family as in vLLM, "model_type"
// only when no class is known; an unknown one is named before any weight is
// looked for (the directory below has none).
TEST(HfVariants, ArchitecturesPickTheFamily) {
  const fs::path dir = fresh_dir("architectures");
  nlohmann::json config = base_config();
  config.erase("model_type");
  write_file((dir / "config.json").string(), config.dump());
  write_file((dir / "model.safetensors").string(), safetensors_bytes(source_tensors()));
  EXPECT_EQ(logits_after(dir.string(), kPrompt), logits_after(kHfDir.string(), kPrompt));

  const fs::path bare = fresh_dir("unknown_architecture");
  config["architectures"] = {"MambaForCausalLM"};
  config["model_type"] = "mamba";
  write_file((bare / "config.json").string(), config.dump());
  const std::string unknown = load_error(bare);
  for (const char* named : {"MambaForCausalLM", "'mamba'", "Qwen2ForCausalLM", "gemma3_text"})
    EXPECT_NE(unknown.find(named), std::string::npos) << named << " in " << unknown;
  config["model_type"] = "llama";  // the class is unknown; the type still names the family
  write_file((dir / "config.json").string(), config.dump());
  EXPECT_EQ(logits_after(dir.string(), kPrompt), logits_after(kHfDir.string(), kPrompt));
  config["architectures"] = {"LlamaForCausalLM"};  // a known class wins over the type
  config["model_type"] = "qwen2";                  // (as Qwen2, the model would want q/k/v biases)
  write_file((dir / "config.json").string(), config.dump());
  EXPECT_EQ(logits_after(dir.string(), kPrompt), logits_after(kHfDir.string(), kPrompt));
  config["architectures"] = "LlamaForCausalLM";
  write_file((dir / "config.json").string(), config.dump());
  const std::string not_array = load_error(dir);
  EXPECT_NE(not_array.find("'architectures' must be an array of strings"), std::string::npos) << not_array;
}

}  // namespace
}  // namespace skiff
