// POST /v1/completions: OpenAI's legacy completions, with vLLM's extensions
// (top_k, min_p, repetition_penalty, stop_token_ids, ignore_eos).
#include <limits>

#include "api/request_fields.h"
#include "base/json.h"
#include "server/handlers.h"
#include "server/openai_shapes.h"

namespace skiff {
namespace {

ojson choice_json(const Tokenizer& tokenizer, const CompletionRequest& r, int index, const std::string& prefix,
                  const CompletionOutput& c) {
  ojson choice;
  choice["index"] = index;
  choice["text"] = prefix + c.text;
  choice["logprobs"] =
      r.params.logprobs ? completion_logprobs(tokenizer, c.logprobs, prefix.size(), r.tokens_as_ids) : ojson(nullptr);
  choice["finish_reason"] = finish_reason_json(c.finish_reason);
  choice["stop_reason"] = stop_reason_json(c);
  return choice;
}

void respond_whole(const ServedModel& served, const CompletionRequest& r, Generation& gen, HttpResponse& res) {
  ojson body = response_head("text_completion", "cmpl-", served.name);
  ojson choices = ojson::array();
  int64_t completion_tokens = 0;
  for (int p = 0; p < gen.n_prompts(); ++p) {
    const RequestOutput& out = gen.output(p);
    for (const CompletionOutput& c : out.outputs) {
      choices.push_back(choice_json(served.tokenizer, r, p * r.params.n + c.index, r.echo ? r.prompt_texts[p] : "", c));
      completion_tokens += static_cast<int64_t>(c.token_ids.size());
    }
  }
  body["choices"] = std::move(choices);
  body["usage"] = usage_json(gen.prompt_tokens(), completion_tokens);
  res.set_content(dump_json(body), "application/json");
}

// The text and tokens streamed so far, per choice, for offsets and usage.
struct StreamState {
  std::vector<size_t> text_offset;
  int64_t completion_tokens = 0;
};

void respond_streaming(const ServedModel& served, std::shared_ptr<CompletionRequest> r,
                       std::shared_ptr<Generation> gen, HttpResponse& res) {
  const ojson head = response_head("text_completion", "cmpl-", served.name);
  const int n = r->params.n;
  auto state = std::make_shared<StreamState>();
  const size_t n_prompts = static_cast<size_t>(gen->n_prompts());
  state->text_offset.assign(n_prompts * n, 0);
  std::string opening;
  if (r->echo)
    for (size_t p = 0; p < n_prompts; ++p)
      for (int i = 0; i < n; ++i) {
        opening += sse_choice(head, {{"index", p * n + i}, {"text", r->prompt_texts[p]}, {"logprobs", nullptr}, {"finish_reason", nullptr}});
        state->text_offset[p * n + i] = r->prompt_texts[p].size();
      }
  const Tokenizer& tokenizer = served.tokenizer;
  auto on_event = [r, state, head, &tokenizer, n](const ResponseChannel::Event& e) -> std::string {
    const StreamDelta& d = e.delta;
    if (d.text.empty() && d.token_ids.empty() && !d.finish_reason) return {};
    const size_t index = static_cast<size_t>(e.prompt) * n + d.index;
    ojson choice{{"index", index}, {"text", d.text}};
    choice["logprobs"] = r->params.logprobs
                             ? completion_logprobs(tokenizer, d.logprobs, state->text_offset[index], r->tokens_as_ids)
                             : ojson(nullptr);
    choice["finish_reason"] = finish_reason_json(d.finish_reason);
    state->text_offset[index] += d.text.size();
    state->completion_tokens += static_cast<int64_t>(d.token_ids.size());
    return sse_choice(head, std::move(choice));
  };
  auto on_end = [r, state, head, prompt_tokens = gen->prompt_tokens()]() -> std::string {
    if (!r->stream.include_usage) return {};
    return sse_usage(head, prompt_tokens, state->completion_tokens);
  };
  stream_events(res, std::move(gen), std::move(opening), std::move(on_event), std::move(on_end));
}

}  // namespace

void handle_completions(const ServedModel& served, const ojson& body, const HttpRequest&,
                        HttpResponse& res) {
  auto r = std::make_shared<CompletionRequest>(parse_completion_request(served, body));
  auto gen = std::make_shared<Generation>(served.engine, std::move(r->prompts), r->params);
  if (r->stream.stream) return respond_streaming(served, r, std::move(gen), res);
  respond_when_done(res, gen, [&served, r, gen](HttpResponse& res) { respond_whole(served, *r, *gen, res); });
}

}  // namespace skiff
