// Drafting with a second, smaller model that shares the target's vocabulary.
// The draft keeps its own paged KV per sequence, in step with the target's:
// each step it catches up on the tokens it has not seen (the prompt, then the
// tokens accepted since), then decodes up to k tokens, one ragged forward pass
// per drafted position over every drafting sequence. Rejected positions are
// rolled back from its cache as from the target's.
#pragma once
#include <unordered_map>

#include "engine/proposer.h"
#include "engine/sampler.h"
#include "kv/paged_kv_cache.h"

namespace skiff {

class DraftModelProposer : public Proposer {
 public:
  // max_model_len caps a sequence, as in the engine (also at the draft's own
  // context: past it the draft proposes nothing).
  DraftModelProposer(Model& draft, KvType kv_type, int block_size, size_t kv_bytes,
                     int max_model_len);

  void propose(std::span<Draft* const> drafts) override;
  void rollback(const Sequence& seq, int n_final) override;
  void forget(const Sequence& seq) override;

  const PagedKvCache& kv_cache() const { return kv_; }

 private:
  struct State {
    int kv_seq;
    Sampler sampler;  // the request's transforms over the draft's logits
    std::vector<int32_t> context;  // the sequence's tokens, then this step's drafts
  };
  struct Active {
    Draft* draft;
    State* state;
    int n_rounds;  // tokens to draft this step
  };
  State& state_for(const Draft& draft);
  std::vector<Active> start_round(std::span<Draft* const> drafts);
  void run_round(std::span<Active> active, int round);
  void draw(Active& a, const float* logits);

  Model& model_;
  PagedKvCache kv_;
  std::unordered_map<const Sequence*, State> states_;
  std::vector<float> logits_;
  std::vector<float> probs_;
};

}  // namespace skiff
