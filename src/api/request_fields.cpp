#include "api/request_fields.h"

#include "api/constraint_fields.h"

#include <cmath>
#include <limits>
#include <set>

#include "base/json.h"

namespace skiff {

using nlohmann::json;

void bad_field(const std::string& param, const std::string& message) {
  throw RequestError(400, message, param);
}

int64_t integer_field(const json& v, const std::string& name, int64_t lo, int64_t hi) {
  if (!v.is_number_integer()) bad_field(name, fmt::format("{} must be an integer, got {}", name, json_excerpt(v)));
  // nlohmann reads every non-negative integer as unsigned.
  if ((v.is_number_unsigned() && (v.get<uint64_t>() > static_cast<uint64_t>(hi) ||
                                  (lo > 0 && v.get<uint64_t>() < static_cast<uint64_t>(lo)))) ||
      (!v.is_number_unsigned() && (v.get<int64_t>() < lo || v.get<int64_t>() > hi)))
    bad_field(name, fmt::format("{} must be in [{}, {}], got {}", name, lo, hi, json_excerpt(v)));
  return v.get<int64_t>();
}

float number_field(const json& v, const std::string& name) {
  if (!v.is_number()) bad_field(name, fmt::format("{} must be a number, got {}", name, json_excerpt(v)));
  const double x = v.get<double>();
  if (!std::isfinite(x) || std::fabs(x) > std::numeric_limits<float>::max())
    bad_field(name, fmt::format("{} is out of range: {}", name, json_excerpt(v)));
  return static_cast<float>(x);
}

bool boolean_field(const json& v, const std::string& name) {
  if (!v.is_boolean()) bad_field(name, fmt::format("{} must be true or false, got {}", name, json_excerpt(v)));
  return v.get<bool>();
}

std::string text_field(const json& v, const std::string& name) {
  if (!v.is_string()) bad_field(name, fmt::format("{} must be a string, got {}", name, json_excerpt(v)));
  return v.get<std::string>();
}

namespace {

constexpr int64_t kInt32Max = std::numeric_limits<int32_t>::max();

// Each stop string is searched for after every token: bound their number and size.
constexpr size_t kMaxStopStrings = 64;
constexpr size_t kMaxStopBytes = 4096;

std::vector<std::string> stop_strings(const json& v) {
  std::vector<std::string> stop;
  if (v.is_string()) {
    stop.push_back(v.get<std::string>());
  } else if (v.is_array()) {
    for (const json& s : v) {
      if (!s.is_string()) bad_field("stop", fmt::format("stop must be a string or a list of strings, got {}", json_excerpt(v)));
      stop.push_back(s.get<std::string>());
    }
  } else {
    bad_field("stop", fmt::format("stop must be a string or a list of strings, got {}", v.type_name()));
  }
  if (stop.size() > kMaxStopStrings) bad_field("stop", fmt::format("stop: at most {} strings, got {}", kMaxStopStrings, stop.size()));
  for (const std::string& s : stop)
    if (s.size() > kMaxStopBytes) bad_field("stop", fmt::format("stop: a string of {} bytes is over the limit of {}", s.size(), kMaxStopBytes));
  return stop;
}

std::vector<int32_t> stop_token_ids(const json& v, int32_t vocab_size) {
  std::vector<int32_t> ids;
  if (!v.is_array())
    bad_field("stop_token_ids", fmt::format("stop_token_ids must be a list of token ids, got {}", v.type_name()));
  if (v.size() > kMaxStopStrings)
    bad_field("stop_token_ids", fmt::format("stop_token_ids: at most {} ids, got {}", kMaxStopStrings, v.size()));
  for (const json& t : v) ids.push_back(static_cast<int32_t>(integer_field(t, "stop_token_ids", 0, vocab_size - 1)));
  return ids;
}

uint64_t seed_field(const json& v) {
  if (!v.is_number_integer() || (!v.is_number_unsigned() && v.get<int64_t>() < 0))
    bad_field("seed", fmt::format("seed must be an integer >= 0 or null, got {}", json_excerpt(v)));
  return v.get<uint64_t>();
}

}  // namespace

bool read_sampling_field(const std::string& key, const json& v, SamplingParams& p,
                         const SamplingFieldLimits& limits) {
  static const std::set<std::string, std::less<>> kFields = {
      "max_tokens", "temperature", "top_p", "top_k", "min_p", "seed", "stop", "stop_token_ids",
      "n", "ignore_eos", "repetition_penalty", "frequency_penalty", "presence_penalty", "min_tokens",
      "skip_special_tokens"};
  if (!kFields.contains(key)) return false;
  if (v.is_null()) {  // the caller's default, except that max_tokens: null means all the context left
    if (key == "max_tokens") p.max_tokens = std::max(1, limits.null_max_tokens);
    return true;
  }
  if (key == "max_tokens") p.max_tokens = static_cast<int32_t>(integer_field(v, key, 1, kInt32Max));
  else if (key == "temperature") p.temperature = number_field(v, key);
  else if (key == "top_p") p.top_p = number_field(v, key);
  else if (key == "top_k") p.top_k = static_cast<int32_t>(integer_field(v, key, -1, kInt32Max));
  else if (key == "min_p") p.min_p = number_field(v, key);
  else if (key == "seed") p.seed = seed_field(v);
  else if (key == "stop") p.stop = stop_strings(v);
  else if (key == "stop_token_ids") p.stop_token_ids = stop_token_ids(v, limits.vocab_size);
  else if (key == "n") p.n = static_cast<int32_t>(integer_field(v, key, 1, kInt32Max));
  else if (key == "ignore_eos") p.ignore_eos = boolean_field(v, key);
  else if (key == "min_tokens") p.min_tokens = static_cast<int32_t>(integer_field(v, key, 0, kInt32Max));
  else if (key == "skip_special_tokens") p.skip_special_tokens = boolean_field(v, key);
  else if (key == "repetition_penalty") p.repetition_penalty = number_field(v, key);
  else if (key == "frequency_penalty") p.frequency_penalty = number_field(v, key);
  else p.presence_penalty = number_field(v, key);
  return true;
}

void validate_sampling(const SamplingParams& p) {
  try {
    p.validate();
  } catch (const Error& e) {
    throw RequestError(400, e.what());
  }
}

bool read_stream_field(const std::string& key, const nlohmann::ordered_json& v, StreamFields& s) {
  if (key == "stream") {
    s.stream = !v.is_null() && boolean_field(v, key);
  } else if (key == "stream_options") {
    if (!v.is_null() && !v.is_object()) bad_field(key, "stream_options must be an object");
    if (v.is_object() && v.contains("include_usage") && !v["include_usage"].is_null())
      s.include_usage = boolean_field(v["include_usage"], "stream_options.include_usage");
  } else {
    return false;
  }
  return true;
}

void read_sampling_object(const ojson& fields, const SamplingFieldLimits& limits, SamplingParams& p,
                          const OtherField& other) {
  for (const auto& [key, v] : fields.items()) {
    if (key == "logprobs") {
      if (v.is_null()) p.logprobs.reset();
      else p.logprobs = static_cast<int32_t>(integer_field(v, key, 0, kMaxLogprobs));
    } else if (!read_sampling_field(key, v, p, limits) && !read_constraint_field(key, v, p)) {
      other(key, v);
    }
  }
  validate_sampling(p);
}

}  // namespace skiff
