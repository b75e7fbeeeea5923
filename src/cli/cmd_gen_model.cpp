#include "cli/commands.h"

namespace skiff::cli {

void add_gen_model_command(CLI::App& app) { (void)app; }  // placeholder until implemented

}  // namespace skiff::cli
