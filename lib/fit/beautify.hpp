// Beautification: near relations between fitted primitives are detected and enforced by least
// squares, as long as every primitive stays within tolerance of its points.
//
// Detected (greedy clustering, longest or largest first):
//   parallel       lines (at least relation_min_line_px long) whose directions agree within
//                  relation_angle_deg: one direction per cluster;
//   perpendicular  two such clusters at right angles: one family angle for both;
//   equal_radius   arcs and circles whose radii agree within the tolerance;
//   concentric     arcs and circles whose centres agree within the tolerance;
//   coincident     free chain ends of different chains within the tolerance: one shared point.
// Enforced by Levenberg-Marquardt over the affected chains' joints (junction-pinned ones stay
// put), arc bulges and circles, plus one unknown per relation (its direction, radius or
// centre); residuals are the points' distances to their primitives, weighted relation
// residuals, and a weak pull of every joint to where it was. Chains stay continuous because
// neighbours share their joint. A primitive that would leave its tolerance drops out of its
// relations and the solve restarts; what survives is recorded.
#pragma once
#include <vector>

#include "core/scene.hpp"
#include "fit/fit.hpp"

namespace sv::fitting {

// One fitted edge: its primitives (indices into the primitive list, in chain order), the
// edge's points, whether the chain is closed (a closed chain of pieces, not a circle), and
// whether its ends are pinned to junctions.
struct ChainRef {
  std::vector<int> prims;
  const Polyline* points = nullptr;
  bool closed = false;
  bool pin_start = false, pin_end = false;
};

// Enforces the relations it finds (updating shapes, fit_rms_px and fit_max_px) and returns
// the relation records: {"kind", "primitives": [ids], "residual_deg" | "residual_px"}.
json beautify(std::vector<Primitive>& prims, const std::vector<ChainRef>& chains,
              const FitParams& p);

}  // namespace sv::fitting
