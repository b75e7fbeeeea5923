#include "engine/proposer.h"

#include "base/error.h"
#include "engine/draft_model_proposer.h"
#include "engine/ngram_proposer.h"
#include "engine/suffix_proposer.h"
#include "model/model.h"

namespace skiff {

const char* spec_method_name(SpecMethod method) {
  switch (method) {
    case SpecMethod::kNone: return "none";
    case SpecMethod::kDraft: return "draft";
    case SpecMethod::kNgram: return "ngram";
    case SpecMethod::kSuffix: return "suffix";
  }
  return "unknown";
}

std::optional<SpecMethod> spec_method_from_name(std::string_view name) {
  for (SpecMethod m : {SpecMethod::kNone, SpecMethod::kDraft, SpecMethod::kNgram, SpecMethod::kSuffix})
    if (name == spec_method_name(m)) return m;
  return std::nullopt;
}

void check_draft_compatible(const Model& target, const Model& draft) {
  const int32_t target_vocab = target.config().vocab_size, draft_vocab = draft.config().vocab_size;
  if (draft_vocab != target_vocab)
    fail("the draft model's vocabulary has {} tokens and the target's {}: speculative decoding "
         "needs one vocabulary (a draft from the same model family)",
         draft_vocab, target_vocab);
}

std::shared_ptr<Proposer> make_proposer(const SpeculationOptions& o, const Model& target,
                                        const DraftKvOptions& kv) {
  if (o.k < 1 || o.k > kMaxSpecK) fail("speculative decoding: k must be in [1, {}], not {}", kMaxSpecK, o.k);
  if (o.custom) return o.custom;
  switch (o.method) {
    case SpecMethod::kNone: return nullptr;
    case SpecMethod::kNgram: return std::make_shared<NgramProposer>(o.ngram_min, o.ngram_max);
    case SpecMethod::kSuffix: return std::make_shared<SuffixProposer>(o.suffix);
    case SpecMethod::kDraft:
      if (!o.draft) fail("speculative decoding with a draft model, but no draft model was given");
      check_draft_compatible(target, *o.draft);
      return std::make_shared<DraftModelProposer>(*o.draft, kv.type, kv.block_size, kv.bytes,
                                                  kv.max_model_len);
  }
  return nullptr;
}

}  // namespace skiff
