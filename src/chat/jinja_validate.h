// The checks jinja2 makes when it compiles a template: every filter and test
// named must exist, except inside if blocks and conditional expressions,
// where a missing one fails only if it runs.
#pragma once
#include "chat/jinja_ast.h"

namespace skiff::jinja {

// Throws Error "chat template error at line L, column C: No filter named 'x'."
void validate_template(const Template& t);

}  // namespace skiff::jinja
