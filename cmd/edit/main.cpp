// sv-edit: the catalog's mutation tools, each a subcommand over a scene or a store revision.
#include "tools/tool.hpp"

int main(int argc, char** argv) { return sv::run_tool_subcommand(argc, argv, "sv-edit"); }
