// The four pipeline stages as registered entries for run_stage_main.
#pragma once
#include "cli/stage.hpp"

namespace sv {

Stage skeleton_stage();
Stage fit_stage();
Stage route_stage();
Stage simulate_stage();

// The declaration of a parameter of any stage (skeleton.*, graph.*, fit.*, route.*); nullptr for
// an unknown key.
const ParamSpec* find_stage_param(const std::string& key);

// The one-screen summary sv-simulate --report prints: primitives by type, strokes, pen-ups,
// robot draw time.
std::string scene_report(const Scene& s);

}  // namespace sv
