// The regular parts of JSON Schema values, as regex text: numbers within
// bounds (an intersection of "at least" and "at most" languages over decimal
// strings, built digit by digit) and the string formats of draft 2020-12.
#pragma once
#include <optional>
#include <string>

namespace skiff::grammar {

// JSON number syntax; integer: digits alone. JSON Schema counts 1.0 as an
// integer too, but a model writing "age": 91.0000 is never what a client
// wants, so an integer is written without a fraction (a deviation that only
// ever rejects).
std::string json_number_regex(bool integer);

// A bound: a number written in decimal (as JSON prints it).
struct NumberBound {
  std::string value;  // e.g. "-1.5", "10"
  bool exclusive = false;
};
// Numbers in plain decimal (no exponent) that are >= (or >) the bound.
std::string at_least_regex(const NumberBound& lower);
std::string at_most_regex(const NumberBound& upper);

// The regex of a string format's values, or nullopt for a format not
// enforced (JSON Schema treats unknown formats as annotations).
std::optional<std::string> format_regex(const std::string& format);

}  // namespace skiff::grammar
