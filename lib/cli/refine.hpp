// sv-edit refine: the refinement loop built only from the catalog's tools. SuggestOptimizations
// ranks ready-to-run edits by draw time saved per fidelity lost; the best that keeps the whole
// refinement within the fidelity budget (against the ink) is applied as its own revision, with
// a note, and the loop repeats until none saves time. The baseline any agent should beat.
#pragma once
#include "cli/shell.hpp"

namespace sv {

ShellCommand refine_command();

}  // namespace sv
