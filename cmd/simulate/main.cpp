// sv-simulate: see man/sv-simulate.1. Besides the stage, its registered tools are subcommands
// (`sv-simulate tools` lists them).
#include "cli/shell.hpp"
#include "cli/stages.hpp"

int main(int argc, char** argv) {
  const sv::Stage stage = sv::simulate_stage();
  return sv::run_main(argc, argv, {stage.name, stage.summary, &stage});
}
