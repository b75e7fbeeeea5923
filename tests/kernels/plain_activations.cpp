// The kernel tests of this program compare integer kernels with references
// built from the activations as quantize_activation_row makes them (x̂), so
// they run with ActivationPrecision::kPlainInt8: the dispatcher's outliers
// and residual rows (kInt8's and kRefined's refinements of x̂) have their own
// tests in activation_precision_test.cpp and activation_outliers_test.cpp, which set the precision they test.
#include <gtest/gtest.h>

#include "kernels/matmul/matmul.h"

namespace skiff {
namespace {

class PlainActivations : public ::testing::Environment {
 public:
  void SetUp() override { set_activation_precision(ActivationPrecision::kPlainInt8); }
};

const auto* const kPlain = ::testing::AddGlobalTestEnvironment(new PlainActivations);

}  // namespace
}  // namespace skiff
