#include "engine/request.h"

#include <algorithm>

namespace skiff {

const char* finish_reason_name(FinishReason reason) {
  switch (reason) {
    case FinishReason::kStop: return "stop";
    case FinishReason::kLength: return "length";
    case FinishReason::kCancelled: return "abort";
    case FinishReason::kError: return "error";
  }
  return "unknown";
}

bool RequestOutput::finished() const {
  return std::all_of(outputs.begin(), outputs.end(),
                     [](const CompletionOutput& c) { return c.finish_reason.has_value(); });
}

}  // namespace skiff
