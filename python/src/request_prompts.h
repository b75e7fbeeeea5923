// skiff._skiff.RequestPrompts: a request body's prompt ids without the model's
// weights, for a router in front of `skiff serve` replicas (skiff.ray).
#pragma once
#include <nanobind/nanobind.h>

namespace skiff::python {

void bind_request_prompts(nanobind::module_& m);

}  // namespace skiff::python
