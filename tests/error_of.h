// The message of the skiff::Error an action throws, "" when it throws none:
// for tests that check what a refusal says.
#pragma once
#include <string>

#include "base/error.h"

namespace skiff::testing {

template <class F>
std::string error_of(F&& action) {
  try {
    action();
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

}  // namespace skiff::testing
