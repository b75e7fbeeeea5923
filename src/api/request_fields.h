// Request fields from JSON (skiff batch lines, the server's OpenAI requests,
// the Python package's sampling parameters): the fields every request shape
// shares, read with the same checks and messages everywhere, and an error that
// knows its HTTP status and field.
#pragma once
#include <functional>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

#include "api/request_body.h"
#include "base/error.h"
#include "engine/sampling_params.h"

namespace skiff {

using ojson = nlohmann::ordered_json;

// A request the client must change: its HTTP status and, where one field is
// at fault, its name (OpenAI's error "param").
class RequestError : public Error {
 public:
  RequestError(int status, const std::string& message, std::string param = {})
      : Error(message), status_(status), param_(std::move(param)) {}
  int status() const { return status_; }
  const std::string& param() const { return param_; }

 private:
  int status_;
  std::string param_;
};

[[noreturn]] void bad_field(const std::string& param, const std::string& message);

// Typed values of field `name`: throw RequestError 400 naming it.
int64_t integer_field(const nlohmann::json& v, const std::string& name, int64_t lo, int64_t hi);
float number_field(const nlohmann::json& v, const std::string& name);
bool boolean_field(const nlohmann::json& v, const std::string& name);
std::string text_field(const nlohmann::json& v, const std::string& name);

struct SamplingFieldLimits {
  int32_t vocab_size = 0;      // stop_token_ids must be below it
  int32_t null_max_tokens = 0; // what max_tokens: null means (the context left)
};

// Sets the SamplingParams field `key` names from v (max_tokens, temperature,
// top_p, top_k, min_p, seed, stop, stop_token_ids, n, ignore_eos,
// repetition_penalty, frequency_penalty, presence_penalty); null leaves p's
// value (the caller's default), but max_tokens: null is the context left.
// Returns false when key is none of them. logprobs is
// not here: its shape differs between the APIs.
bool read_sampling_field(const std::string& key, const nlohmann::json& v, SamplingParams& p,
                         const SamplingFieldLimits& limits);

// p.validate(), its Error as a RequestError 400.
void validate_sampling(const SamplingParams& p);

// The fields of a vLLM SamplingParams object (the Python package's
// SamplingParams, a `skiff batch` line) over p: read_sampling_field's, the
// constraint fields (api/constraint_fields.h), and logprobs as the number of
// top alternatives per token (null: none); every other key goes to `other`.
// Then validate_sampling(p).
using OtherField = std::function<void(const std::string& key, const ojson& v)>;
void read_sampling_object(const ojson& fields, const SamplingFieldLimits& limits, SamplingParams& p,
                          const OtherField& other);

// "stream" and "stream_options" of either OpenAI API; false when key is neither.
struct StreamFields {
  bool stream = false;
  bool include_usage = false;
};
bool read_stream_field(const std::string& key, const nlohmann::ordered_json& v, StreamFields& s);

}  // namespace skiff
