// The RequestError a request's parse throws, to check its status and field
// (a test failure where it throws none).
#pragma once
#include <gtest/gtest.h>

#include "api/request_fields.h"

namespace skiff::testing {

template <class Parse>
RequestError refusal(Parse parse) {
  try {
    parse();
  } catch (const RequestError& e) {
    return e;
  }
  ADD_FAILURE() << "no RequestError";
  return RequestError(0, "");
}

}  // namespace skiff::testing
