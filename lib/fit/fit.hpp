// The fit stage: each stroke-graph edge (a centreline polyline) becomes the fewest lines,
// arcs and whole circles that stay within a tolerance tied to the stroke width.
//
// Method, per edge:
//   1. a dot (an edge shorter than a pixel) becomes a short line the pen's width draws;
//   2. a closed loop whose points all lie within tolerance of one circle becomes that circle, and
//      so does a cycle of edges through junctions (a circle a stroke ends on or crosses, which
//      the graph cuts into several edges; fit/cycles.hpp); the strokes meeting it end on it;
//   3. sharp corners split the edge (they stay sharp, never rounded by an arc);
//   4. between corners, dynamic programming over breakpoints finds the fewest pieces, each a
//      line (orthogonal regression) or an arc (Kasa, then Gauss-Newton on radial residuals)
//      whose every point is within tolerance; among those, the least squared residual, with
//      lines preferred over arcs;
//   5. adjacent pieces are joined at one point (corner: the intersection of their curves;
//      smooth: where they touch, or the breakpoint projected onto both), ends are pinned to
//      the graph's junctions, and every piece is refitted between its joined endpoints;
//   6. where the ink has no corner, runs of pieces are refitted tangent-continuous
//      (fit/tangent.hpp), so the robot draws through their joints without turning;
//   7. beautify: near relations (parallel, perpendicular, horizontal, vertical, collinear,
//      tangent continuity at smooth joints, equal radius, concentric, coincident ends) are
//      enforced by least squares where every primitive stays within tolerance; the others are
//      recorded as dropped with the reason (a normal outcome, not a warning);
//   8. through strokes (fit/through.hpp): chain ends at a junction that continue each other
//      straight or on one circle (the bar of a T) are refitted as one primitive when it stays
//      within tolerance, and the stem is moved onto it.
#pragma once
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "core/scene.hpp"
#include "fit/params.hpp"

namespace sv {

// The overrides of `sv-fit --fast`: after the faithful fit, runs of pieces merge into one
// wherever it stays within the stroke's ink (half its width from the centreline) and the robot
// draws it faster (fit/robot_merge.hpp); the README gives the measured times and fidelity.
std::map<std::string, double> fast_overrides();

// The noise of traced centrelines: the spread of each point about the chord of its two
// neighbours (a smooth curve barely departs from it at ~1 px spacing), as a root-mean-square
// over the closest 90 % (corners are not noise), divided by sqrt(1.5) to give the noise of one
// point. 0 without interior points.
double trace_noise_px(const std::vector<const Polyline*>& polylines);

// One fitted piece of a polyline: the shape, the inclusive index range of the points it was
// fitted to (on a closed polyline it may wrap past the last point: span0 > span1), and the
// distances of those points to the shape.
struct FittedPiece {
  Shape shape;
  int span0 = 0, span1 = 0;
  double rms_px = 0, max_px = 0;
};

// Where a chain must start and end: junction positions (unset: the end point projected onto
// the chain). A closed chain whose start is pinned (its vertex joins other edges) starts and
// ends at `start`; otherwise it starts where the fit finds a natural break.
struct ChainEnds {
  std::optional<Vec2> start, end;
  bool pin_closed_start = false;
};

// Fits one polyline into a continuous chain of pieces (consecutive pieces share endpoints
// exactly; a closed chain ends where it starts; a circle stands alone).
std::vector<FittedPiece> fit_polyline(const Polyline& points, bool closed, const FitParams& p,
                                      const ChainEnds& ends = {});

// Replaces scene.primitives with the fit of every graph edge (ids p_0001.. in edge order,
// then along each edge; a through stroke where its first part was, a circle of a graph cycle
// where its first edge was), scene.relations with the
// relations beautify detected ("status": "enforced", or "dropped" with its "reason"), and
// records the thresholds in scene.config. Needs scene.graph.
void fit(Scene& scene, const FitOptions& opt);

// Joints whose tangents agree this closely (radians) are smooth: the fit makes them agree to
// rounding, and a scene's 1e-4 px ends and 1e-6 bulges keep them within it.
constexpr double kSmoothJointRad = 1e-4;
// Records on every primitive how it meets the previous and the next primitive of its stroke
// (consecutive primitives of one edge sharing an end; the last and the first, when they close
// it): smooth (tangents within kSmoothJointRad, not two lines) or corner.
void record_joints(std::vector<Primitive>& prims);

}  // namespace sv
