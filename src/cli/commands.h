// Each skiff subcommand lives in its own file and registers itself here.
#pragma once
#include <CLI/CLI.hpp>

namespace skiff::cli {

void add_run_command(CLI::App& app);
void add_tokenize_command(CLI::App& app);
void add_gen_model_command(CLI::App& app);
void add_bench_command(CLI::App& app);
void add_quantize_command(CLI::App& app);
void add_batch_command(CLI::App& app);
void add_bench_throughput_command(CLI::App& app);
void add_perplexity_command(CLI::App& app);
void add_serve_command(CLI::App& app);
void add_bench_serve_command(CLI::App& app);
void add_bench_spec_command(CLI::App& app);
void add_chat_command(CLI::App& app);
void add_template_command(CLI::App& app);
void add_grammar_command(CLI::App& app);

}  // namespace skiff::cli
