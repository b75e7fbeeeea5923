// The cost counters of one render, checked against ChatTemplateLimits.
#pragma once
#include <cstdint>
#include <string>

#include "base/error.h"
#include "chat/template_limits.h"

namespace skiff::jinja {

class Budget {
 public:
  explicit Budget(const ChatTemplateLimits& limits) : limits_(limits) {}
  const ChatTemplateLimits& limits() const { return limits_; }

  void step(uint64_t n = 1) {
    steps_ += n;
    if (steps_ > limits_.max_steps)
      fail("chat template: evaluation exceeds {} steps (an endless or huge computation?)", limits_.max_steps);
  }
  // A string of `bytes` is about to be built: over the size limit fails, and
  // its bytes are paid for in steps.
  void build_string(size_t bytes) {
    if (bytes > limits_.max_output_bytes)
      fail("chat template: a string would exceed {} bytes", limits_.max_output_bytes);
    step(bytes / 64);
  }
  void loop_iteration() {
    if (++iterations_ > limits_.max_loop_iterations)
      fail("chat template: loops exceed {} iterations in all", limits_.max_loop_iterations);
    step();
  }

  // Held while one evaluation runs inside another.
  class Nested {
   public:
    explicit Nested(Budget& budget) : budget_(budget) {
      if (++budget_.nesting_ > budget_.limits_.max_nesting) {
        --budget_.nesting_;
        fail("chat template: evaluation nests deeper than {} levels", budget_.limits_.max_nesting);
      }
    }
    ~Nested() { --budget_.nesting_; }
    Nested(const Nested&) = delete;
    Nested& operator=(const Nested&) = delete;

   private:
    Budget& budget_;
  };

 private:
  const ChatTemplateLimits& limits_;
  uint64_t steps_ = 0;
  uint64_t iterations_ = 0;
  int nesting_ = 0;
};

}  // namespace skiff::jinja
