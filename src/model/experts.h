// Routing in a mixture of experts: which experts a token goes to, and how
// their outputs are weighed, from the router's logits.
#pragma once
#include <cstdint>

#include "model/config.h"

namespace skiff {

// One token: logits [spec.n_experts] -> ids [spec.n_used], in descending
// order of the router's preference (ties to the lower id), and their weights.
// NaN logits still give distinct ids in range (their weights are NaN): a
// broken router costs that token's output, never memory safety.
void route_token(const ExpertsSpec& spec, const float* logits, int32_t* ids, float* weights);

}  // namespace skiff
