#include "cli/commands.h"

namespace skiff::cli {

void add_tokenize_command(CLI::App& app) { (void)app; }  // placeholder until implemented

}  // namespace skiff::cli
