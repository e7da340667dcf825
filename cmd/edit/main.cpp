// sv-edit: the catalog's mutation tools, each a subcommand over a scene or a store revision.
#include "cli/shell.hpp"

int main(int argc, char** argv) {
  return sv::run_main(argc, argv, {"sv-edit", "Edit a drawing's scene with the catalog's mutation tools"});
}
