// sv-edit's geometric edits: merge, split, replace, refit, smooth, snap, enforce a relation.
#include "tools/tool.hpp"

namespace sv {

void add_geometry_edit_tools(std::vector<Tool>&) {}

}  // namespace sv
