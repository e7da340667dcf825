// sv-simulate: see man/sv-simulate.1. Its first argument may name one of its registered tools
// (render, evaluate-revision, compare-revisions, project-pareto-position).
#include "cli/stages.hpp"
#include "tools/tool.hpp"

int main(int argc, char** argv) {
  if (argc > 1 && sv::is_tool_subcommand(argv[1], "sv-simulate"))
    return sv::run_tool_subcommand(argc, argv, "sv-simulate");
  return sv::run_stage_main(argc, argv, sv::simulate_stage());
}
