// Perplexity of a text, computed as llama.cpp's llama-perplexity computes it,
// so figures compare across the two: the text is tokenized once (with BOS
// where the model adds one), cut into chunks of n_ctx tokens (the first token
// of each replaced by BOS where the model adds one), every chunk evaluated
// from an empty context, and each scored on its second half: the logits at
// positions n_ctx/2 .. n_ctx-2 predicting the token after each.
#pragma once
#include <functional>
#include <string>

#include "model/model.h"
#include "tokenizer/tokenizer.h"

namespace skiff {

struct PerplexityOptions {
  int n_ctx = 512;     // tokens per chunk
  int max_chunks = 0;  // 0: every whole chunk of the text
  int n_batch = 2048;  // tokens per forward pass (a chunk takes ceil(n_ctx / n_batch))
  KvType kv_type = KvType::kF16;
};

struct PerplexityResult {
  int n_tokens = 0;  // of the whole text
  int n_chunks = 0;
  int n_scored = 0;  // predictions scored
  double ppl = 0;
  double ppl_error = 0;  // llama-perplexity's "+/-": ppl · the standard error of the mean NLL
  double seconds = 0;    // evaluating the chunks
};

// Called after each chunk with its number (from 1) and the running perplexity.
using ChunkCallback = std::function<void(int chunk, double running_ppl)>;

// Throws Error when the text has fewer tokens than one chunk (2 × n_ctx are
// not needed: one chunk is enough) or the options are out of range.
PerplexityResult perplexity(Model& model, const Tokenizer& tokenizer, const std::string& text,
                            const PerplexityOptions& options, const ChunkCallback& on_chunk = {});

}  // namespace skiff
