// The constraint front ends, each compiling to the one internal Grammar.
// Every one throws skiff::Error naming what it cannot compile.
#pragma once
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "grammar/grammar.h"

namespace skiff::grammar {

// The whole text matches the pattern (as Python's re.fullmatch).
std::shared_ptr<const Grammar> compile_regex(std::string_view pattern, Limits limits = {});
// The text is exactly one of the choices.
std::shared_ptr<const Grammar> compile_choice(const std::vector<std::string>& choices, Limits limits = {});

}  // namespace skiff::grammar
