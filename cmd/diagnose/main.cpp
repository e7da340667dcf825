// sv-diagnose: the read-only tools of the catalog (inspection and diagnostics), one
// subcommand each; `sv-diagnose tools` lists them with their schemas.
#include "cli/shell.hpp"

int main(int argc, char** argv) {
  return sv::run_main(argc, argv, {"sv-diagnose", "Inspect and diagnose a drawing's scene with the catalog's read-only tools"});
}
