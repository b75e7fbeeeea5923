// Attention of one query vector over a run of cached keys/values (one head).
// Plain two-pass softmax; flash attention over paged blocks replaces it later.
#pragma once

namespace skiff {

// keys/values point at position 0 of this head; consecutive positions are
// `stride` floats apart. scores is scratch [n_ctx]; out receives [head_dim].
void attend(const float* query, const float* keys, const float* values, int n_ctx, int stride,
            int head_dim, float* scores, float* out);

}  // namespace skiff
