// GET /kv/prefix_blocks: what the prefix cache holds, for a router that sends
// each request to the server that has its prefix cached (skiff.ray reports it
// as its replica's routing stats). Outside /v1, which OpenAI's API owns, and
// beside the server's other routes of its own (/tokenize, /metrics), as vLLM's.
#include <charconv>

#include "api/request_fields.h"
#include "server/handlers.h"

namespace skiff {

namespace {

constexpr size_t kDefaultListedBlocks = 1024;

size_t limit_param(const HttpRequest& req) {
  const std::optional<std::string> text = req.query_param("limit");
  if (!text) return kDefaultListedBlocks;
  size_t limit = 0;
  const auto [end, error] = std::from_chars(text->data(), text->data() + text->size(), limit);
  if (error != std::errc() || end != text->data() + text->size() || limit > ServingEngine::kMaxListedBlocks)
    bad_field("limit", fmt::format("limit must be an integer in [0, {}], got '{}'",
                                   ServingEngine::kMaxListedBlocks, *text));
  return limit;
}

}  // namespace

void handle_prefix_blocks(const ServedModel& served, const HttpRequest& req, HttpResponse& res) {
  const PrefixCacheListing listing = served.engine.prefix_cache(limit_param(req));
  // Hashes as JSON's unsigned 64-bit integers: exact in Python (as
  // _skiff.prefix_block_hashes gives them), not in a reader of doubles.
  const ojson out{{"object", "prefix_cache"},
                  {"block_size", listing.block_size},
                  {"total_blocks", listing.total_blocks},
                  {"cached_blocks", listing.cached_blocks},
                  {"hashes", listing.hashes}};
  res.set_content(dump_json(out), "application/json");
}

}  // namespace skiff
