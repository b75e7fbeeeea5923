// Test helpers for the tiny HF checkpoints of tests/data/hf and the logits
// transformers computed for them (reference.json, tools/make_hf_golden.py).
#pragma once
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <vector>

#include "model/model.h"

namespace skiff::testing {

inline const std::filesystem::path kHfDataDir = std::filesystem::path(SKIFF_SOURCE_DIR) / "tests/data/hf";

inline nlohmann::json read_json(const std::filesystem::path& path) {
  std::ifstream in(path);
  if (!in) ADD_FAILURE() << "cannot open " << path;
  return nlohmann::json::parse(in);
}

struct Reference {
  std::vector<int32_t> ids;
  std::vector<int> logit_positions;          // positions with full logits
  std::vector<std::vector<double>> logits;   // [logit_positions.size(), vocab]
  std::vector<int> argmax;                   // [ids.size()]
};

inline Reference read_reference(const std::filesystem::path& dir) {
  const nlohmann::json j = read_json(dir / "reference.json");
  Reference r;
  r.ids = j.at("token_ids").get<std::vector<int32_t>>();
  r.logit_positions = j.at("logits_positions").get<std::vector<int>>();
  r.logits = j.at("logits").get<std::vector<std::vector<double>>>();
  r.argmax = j.at("argmax").get<std::vector<int>>();
  return r;
}

// All positions' logits [n_tokens, vocab] from one batched forward pass.
inline std::vector<float> batched_logits(Model& model, const std::vector<int32_t>& ids) {
  const int n = static_cast<int>(ids.size());
  PagedKvCache kv = model.make_kv_cache(1, n, KvType::kF32);
  Batch batch;
  batch.tokens = ids;
  batch.seqs = {{0, 0, n, n}};
  std::vector<float> logits(static_cast<size_t>(n) * model.config().vocab_size);
  model.forward_and_append(batch, kv, logits.data());
  return logits;
}

}  // namespace skiff::testing
