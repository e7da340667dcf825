// sv-fit: see man/sv-fit.1.
#include "cli/shell.hpp"
#include "cli/stages.hpp"

int main(int argc, char** argv) {
  const sv::Stage stage = sv::fit_stage();
  return sv::run_main(argc, argv, {stage.name, stage.summary, &stage});
}
