// sv-edit: the catalog's mutation tools, each a subcommand over a scene or a store revision, and
// refine, the refinement loop built from them.
#include "cli/refine.hpp"
#include "cli/tool_shell.hpp"

int main(int argc, char** argv) {
  sv::Executable exe{"sv-edit", "Edit a drawing's scene with the catalog's mutation tools"};
  exe.commands = {sv::refine_command()};
  exe.tools = sv::catalog_tools;
  return sv::run_main(argc, argv, exe);
}
