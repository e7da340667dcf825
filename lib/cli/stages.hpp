// The four pipeline stages as registered entries for the shell (cli/shell.hpp).
#pragma once
#include "cli/stage.hpp"

namespace sv {

Stage skeleton_stage();
Stage fit_stage();
Stage route_stage();
Stage simulate_stage();

// The one-screen summary sv-simulate --report prints: primitives by type, strokes, pen-ups,
// robot draw time.
std::string scene_report(const Scene& s);

}  // namespace sv
