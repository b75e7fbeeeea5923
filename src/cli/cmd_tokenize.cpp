// skiff tokenize: shows how a model's tokenizer splits a text, one token per
// line (id, tab, quoted piece), or with --ids only the ids on one line.
#include <cstdio>
#include <memory>
#include <string>

#include "cli/commands.h"
#include "tokenizer/tokenizer.h"
#include "tokenizer/unicode.h"

namespace skiff::cli {

namespace {

struct TokenizeOptions {
  std::string model;
  std::string text;
  bool ids_only = false;
  bool add_special = false;
  bool no_parse_special = false;
};

void run_tokenize(const TokenizeOptions& options) {
  const auto tokenizer = Tokenizer::from_path(options.model);
  const auto ids = tokenizer->encode(options.text, options.add_special, !options.no_parse_special);
  if (options.ids_only) {
    std::string line;
    for (const int32_t id : ids) {
      if (!line.empty()) line += ' ';
      line += std::to_string(id);
    }
    std::printf("%s\n", line.c_str());
    return;
  }
  for (const int32_t id : ids) {
    // A piece that is part of a character shows as its vocabulary text (e.g. <0xF0>) instead.
    std::string piece = tokenizer->token_to_piece(id, /*render_control=*/true);
    if (!unicode::is_valid_utf8(piece)) piece = tokenizer->token_text(id);
    std::printf("%d\t'%s'\n", id, piece.c_str());
  }
}

}  // namespace

void add_tokenize_command(CLI::App& app) {
  auto options = std::make_shared<TokenizeOptions>();
  CLI::App* command = app.add_subcommand("tokenize", "Show the tokens a model's tokenizer makes of a text");
  command->add_option("-m,--model", options->model, "GGUF file or Hugging Face model directory")->required();
  command->add_option("text", options->text, "the text to tokenize")->required();
  command->add_flag("--ids", options->ids_only, "print only the token ids, space-separated, on one line");
  command->add_flag("--add-special", options->add_special, "add BOS/EOS as the model asks");
  command->add_flag("--no-parse-special", options->no_parse_special,
                    "treat text that looks like a control token as plain text");
  command->callback([options] { run_tokenize(*options); });
}

}  // namespace skiff::cli
