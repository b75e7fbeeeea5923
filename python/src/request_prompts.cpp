// A request's prompt ids as `skiff serve` computes them, from the model's
// tokenizer and chat template alone (no weights, no KV pool), and the chained
// KV-block hashes the engine's prefix cache keys them by (kv/prefix_hash.h).
// skiff.ray's ingress hashes each request with these so that its router sends
// a prompt to the replica whose prefix cache already holds its start; calling
// api/'s own parsers keeps the ids equal to the server's for every template
// and request shape, where a Python re-implementation would drift.
#include "request_prompts.h"

#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <limits>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "api/api_model.h"
#include "api/chat_request.h"
#include "api/completion_request.h"
#include "api/messages_request.h"
#include "api/request_body.h"
#include "base/error.h"
#include "chat/chat_template.h"
#include "kv/prefix_hash.h"
#include "tokenizer/tokenizer.h"

namespace nb = nanobind;

namespace skiff::python {
namespace {

// The hash of each full block_size-token piece of ids, each chained to the
// one before, as PagedKvCache registers and looks up cached blocks.
std::vector<uint64_t> prefix_block_hashes(const std::vector<int32_t>& ids, int block_size) {
  if (block_size < 1) fail("block_size must be at least 1, not {}", block_size);
  std::vector<uint64_t> hashes;
  uint64_t parent = kPrefixHashSeed;
  const std::span<const int32_t> all(ids);
  for (size_t start = 0; start + block_size <= ids.size(); start += block_size) {
    parent = prefix_block_hash(parent, all.subspan(start, block_size));
    hashes.push_back(parent);
  }
  return hashes;
}

class RequestPrompts {
 public:
  // chat_template: a template's text instead of the model's own (skiff serve's --chat-template).
  RequestPrompts(const std::string& model, const std::optional<std::string>& chat_template,
                 bool special_tokens_in_content)
      : special_tokens_in_content_(special_tokens_in_content) {
    nb::gil_scoped_release release;
    tokenizer_ = Tokenizer::from_path(model);
    const std::optional<std::string> source = chat_template ? chat_template : find_chat_template(model);
    if (source) chat_template_.emplace(*source);
  }

  // The first prompt's ids of a POST to `route` with this body, as the
  // server's handler of that route tokenizes it; ValueError (the server's
  // message) for a body the server would refuse before tokenizing, or a
  // route that has no prompt.
  std::vector<int32_t> prompt_ids(const std::string& route, const std::string& body) const {
    // The context is the replica's to check: here any prompt length passes.
    const ApiModel model{"", *tokenizer_, std::numeric_limits<int32_t>::max() / 2,
                         chat_template_ ? &*chat_template_ : nullptr, nullptr, special_tokens_in_content_};
    if (route == "/v1/chat/completions") return chat_prompt(model, parse_request_body(body)).ids;
    if (route == "/v1/messages") return chat_prompt(model, messages_conversation(parse_request_body(body))).ids;
    if (route == "/v1/completions") {
      CompletionRequest r = parse_completion_request(model, parse_request_body(body, PromptTokenLists::kPacked));
      return std::move(r.prompts.front());
    }
    fail("no prompt is read from requests to {}", route);
  }

  // prefix_block_hashes of prompt_ids: a router's key in one call, without
  // the ids passing through Python lists.
  std::vector<uint64_t> block_hashes(const std::string& route, const std::string& body, int block_size) const {
    return prefix_block_hashes(prompt_ids(route, body), block_size);
  }

 private:
  bool special_tokens_in_content_;
  std::unique_ptr<Tokenizer> tokenizer_;
  std::optional<ChatTemplate> chat_template_;
};

}  // namespace

void bind_request_prompts(nb::module_& m) {
  nb::class_<RequestPrompts>(m, "RequestPrompts")
      .def(nb::init<const std::string&, const std::optional<std::string>&, bool>(), nb::arg("model"),
           nb::arg("chat_template").none() = nb::none(), nb::arg("special_tokens_in_content") = false)
      // The GIL released: an ingress tokenizes long prompts on a thread beside its event loop.
      .def("prompt_ids", &RequestPrompts::prompt_ids, nb::arg("route"), nb::arg("body"),
           nb::call_guard<nb::gil_scoped_release>())
      .def("block_hashes", &RequestPrompts::block_hashes, nb::arg("route"), nb::arg("body"), nb::arg("block_size"),
           nb::call_guard<nb::gil_scoped_release>());
  m.def("prefix_block_hashes", &prefix_block_hashes, nb::arg("token_ids"), nb::arg("block_size"));
}

}  // namespace skiff::python
