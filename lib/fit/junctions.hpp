// Where strokes meet: junctions the trace misplaced, put back from the fitted strokes.
#pragma once
#include <vector>

#include "core/scene.hpp"
#include "fit/fit.hpp"

namespace sv::fitting {

// Junctions the trace misplaced: at a junction of three or more strokes, each leaving it
// along a line, directly or after at most two pieces together shorter than three stroke
// widths (the bend the trace takes into a junction it put off the strokes' meeting point, as
// at a pencil arrow's tip), the lines are extended to the point nearest them all and the
// short pieces go, when each line passes within tolerance of that point, it lies within a
// stroke width of the traced junction, and the short pieces' points stay within
// corner_cut_px of the lines that replace them. A junction two of whose lines run on through
// it in line (within through_angle_deg) stays: merge_through_strokes joins those. `fitted`
// holds each edge's pieces; a junction one of whose edges has none (a cycle circle replaces
// it) or is closed stays. Residuals are measured anew.
void straighten_junctions(const Graph& g, std::vector<std::vector<FittedPiece>>& fitted, const FitParams& p);

}  // namespace sv::fitting
