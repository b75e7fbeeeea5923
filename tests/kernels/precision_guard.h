// Test helper: sets the process-wide activation precision for a scope.
#pragma once
#include "kernels/matmul/matmul.h"

namespace skiff::testing {

struct PrecisionGuard {
  explicit PrecisionGuard(ActivationPrecision p) : saved(activation_precision()) { set_activation_precision(p); }
  ~PrecisionGuard() { set_activation_precision(saved); }
  ActivationPrecision saved;
};

}  // namespace skiff::testing
