// sv-diagnose: the read-only tools of the catalog (inspection and diagnostics), one
// subcommand each; `sv-diagnose tools` lists them with their schemas.
#include "cli/shell.hpp"
#include "cli/tool_shell.hpp"

int main(int argc, char** argv) {
  sv::Executable exe{"sv-diagnose", "Inspect and diagnose a drawing's scene with the catalog's read-only tools"};
  exe.tools = sv::catalog_tools;
  return sv::run_main(argc, argv, exe);
}
