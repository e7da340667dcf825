// sv-commit's history tools: list, check out, revert, branch, commit, done.
#include "tools/tool.hpp"

namespace sv {

void add_history_tools(std::vector<Tool>&) {}

}  // namespace sv
