// The server's request parsing, on stories260K (loaded once) with Qwen2.5's
// chat template: byte 0 picks the endpoint (completions, chat completions,
// tokenize, detokenize, Anthropic's messages and count_tokens, OpenAI's
// responses), the rest is
// its body. Each body goes as far as the
// handler goes before the engine: parsed, checked, tokenized, its template
// rendered; tokenize and detokenize answer in full. Nothing is generated.
#include "api/chat_request.h"
#include "api/completion_request.h"
#include "api/messages_request.h"
#include "api/request_fields.h"
#include "api/responses_request.h"
#include "chat/chat_template.h"
#include "fuzz_support.h"
#include "model/loader.h"
#include "server/handlers.h"
#include "tokenizer/hf_files.h"

namespace {

using namespace skiff;

struct Server {
  std::string path = fuzz::models_dir() + "/derived/stories260K-f32.gguf";
  std::unique_ptr<Model> model = load_model(path);
  std::unique_ptr<Tokenizer> tokenizer = Tokenizer::from_path(path);
  Engine engine{*model, *tokenizer};
  ServingEngine serving{engine, 0};
  ChatTemplate chat_template{hf::read_file(fuzz::shared_dir() + "/chat-templates/Qwen-Qwen2.5-7B-Instruct.jinja")};
  ServedModel served{{"stories", *tokenizer, engine.max_model_len(), &chat_template}, serving};
};

void handle(const ServedModel& served, uint8_t endpoint, std::string_view text) {
  const ojson body = parse_request_body(text);
  check_model_name(served, body);
  HttpRequest req;
  HttpResponse res;
  switch (endpoint % 7) {
    case 0: parse_completion_request(served, body); break;
    case 1: parse_chat_request(served, body); break;
    case 2: handle_tokenize(served, body, req, res); break;
    case 3: handle_detokenize(served, body, req, res); break;
    case 4: parse_messages_request(served, body); break;
    case 5: handle_count_tokens(served, body, req, res); break;
    case 6: parse_responses_request(served, body); break;  // (no previous response: the store is the server's)
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const Server server;
  if (size < 1) return 0;
  fuzz::refusing_errors([&] { handle(server.served, data[0], {reinterpret_cast<const char*>(data) + 1, size - 1}); });
  return 0;
}
