// What one render of a chat template may cost. Templates come inside
// downloaded model files, so a hostile one must end in a clear Error instead
// of a crash, a hang or unbounded memory.
#pragma once
#include <cstddef>
#include <cstdint>

namespace skiff {

struct ChatTemplateLimits {
  // Evaluation steps (an expression or statement evaluated, 64 bytes of text
  // built, an element of a list built or compared).
  uint64_t max_steps = 20'000'000;
  // Bytes of the rendered prompt, and of any one string the template builds.
  size_t max_output_bytes = size_t{32} << 20;
  // Loop iterations over the whole render.
  uint64_t max_loop_iterations = 2'000'000;
  // Macros calling macros (recursion included).
  int max_macro_depth = 100;
  // Statements and expressions evaluated inside one another (bounds the C++ stack).
  int max_nesting = 500;
};

}  // namespace skiff
