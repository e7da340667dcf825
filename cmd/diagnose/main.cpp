// sv-diagnose: the read-only tools of the catalog (inspection and diagnostics), one
// subcommand each; `sv-diagnose tools` lists them with their schemas.
#include "tools/tool.hpp"

int main(int argc, char** argv) { return sv::run_tool_subcommand(argc, argv, "sv-diagnose"); }
