// sv-simulate: see man/sv-simulate.1. Besides the stage, its registered tools are subcommands
// (`sv-simulate tools` lists them).
#include "cli/shell.hpp"
#include "cli/tool_shell.hpp"
#include "cli/stages.hpp"

int main(int argc, char** argv) {
  const sv::Stage stage = sv::simulate_stage();
  sv::Executable exe{stage.name, stage.summary, &stage};
  exe.tools = sv::catalog_tools;
  return sv::run_main(argc, argv, exe);
}
