// skiff: command-line entry point. Subcommands are defined in cmd_*.cpp.
#include <cstdio>
#include <exception>
#include <new>

#include "base/error.h"
#include "cli/commands.h"
#include "kernels/isa.h"

int main(int argc, char** argv) {
  CLI::App app{"skiff: LLM inference engine"};
  app.require_subcommand(1);
  skiff::cli::add_run_command(app);
  skiff::cli::add_tokenize_command(app);
  skiff::cli::add_gen_model_command(app);
  skiff::cli::add_bench_command(app);
  skiff::cli::add_quantize_command(app);
  skiff::cli::add_batch_command(app);
  skiff::cli::add_bench_throughput_command(app);
  skiff::cli::add_perplexity_command(app);
  skiff::cli::add_serve_command(app);
  skiff::cli::add_bench_serve_command(app);
  skiff::cli::add_bench_spec_command(app);
  skiff::cli::add_chat_command(app);
  skiff::cli::add_template_command(app);
  skiff::cli::add_grammar_command(app);
  try {
    skiff::active_isa();  // a bad SKIFF_ISA is reported before any work starts
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e);
  } catch (const std::bad_alloc&) {
    std::fprintf(stderr, "skiff: error: out of memory\n");
    return 1;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "skiff: error: %s\n", e.what());
    return 1;
  }
  return 0;
}
