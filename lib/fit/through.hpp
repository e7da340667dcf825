// Through strokes: a straight line or a smooth arc that passes through a junction of the
// stroke graph (the bar of a T) is one primitive of the drawing, though the graph splits it
// into two edges there.
//
// At every junction the chain ends that continue each other (their directions within
// through_angle_deg of a straight continuation) are paired, best continuation first, each end
// at most once; each pair's primitives (and what they were already merged with) are refitted
// as one: a line between the outer ends, or an arc between them curving the same way. The
// merge is kept only when every source point lies within the tolerance (or the members'
// largest deviation, when larger). The other chain ends at that junction (the stem of the T)
// are then moved onto the merged primitive, where that keeps them within tolerance, so the
// drawing stays connected.
#pragma once
#include <string>
#include <vector>

#include "core/scene.hpp"
#include "fit/params.hpp"

namespace sv::fitting {

// Merges through strokes in `prims` (primitives of the graph's edges, in edge order, each
// with its edge and span) and renumbers the ids p_0001... in order. A merged primitive keeps
// the place, edge and span of its first member and lists the others in more_sources. Returns,
// per original primitive, its new index (members of one merge share it).
std::vector<int> merge_through_strokes(std::vector<Primitive>& prims, const Graph& graph,
                                       const FitParams& p);

// Retraced runs: where two strokes share ink at an acute angle or a tangent, the graph may make
// them one edge that runs out along a branch and back (graph/junctions.hpp, cusps), and the fit
// then has a primitive that only goes back over its neighbour on that edge. It is not a stroke
// of the drawing: a primitive that meets its neighbour on the same edge (ends within join_px)
// turning back (within 30 degrees of a reversal) and lies within `tolerance_px` of it everywhere
// is absorbed into it (listed in its more_sources; a line reaches along itself to the turning
// point), so the next primitive starts on the neighbour's interior, as a T's stem does on its
// bar; the route draws that stretch again or travels over it, whichever is faster.
// Renumbers the ids and returns, per original primitive, its new index.
std::vector<int> absorb_retraces(std::vector<Primitive>& prims, double tolerance_px, double join_px);

}  // namespace sv::fitting
