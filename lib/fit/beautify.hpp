// Beautification: near relations between fitted primitives are detected and enforced by least
// squares, as long as every primitive stays within tolerance of its points.
//
// Detected (greedy clustering, longest or largest first):
//   parallel       lines (at least relation_min_line_px long) whose directions agree within
//                  relation_angle_deg: one direction per cluster;
//   perpendicular  two such clusters at right angles: one family angle for both;
//   horizontal,    a cluster all of whose lines lie within axis_angle_deg of the axes turns
//   vertical       onto them (its angle given); a line of another cluster near an axis is held
//                  to it on its own (the solve tells whether that agrees with its cluster);
//   collinear      lines of one cluster and direction whose ends lie within
//                  collinear_offset_px of the longest one's line: one common line;
//   tangent_continuity  consecutive pieces of a chain (not two lines) whose joint turns by
//                  less than min(tangent_angle_deg, join_corner_deg), but not exactly 0;
//   equal_radius   arcs and circles whose radii agree within the tolerance;
//   concentric     arcs and circles whose centres agree within the tolerance;
//   coincident     free chain ends of different chains within the tolerance: one shared point.
// Enforced by Levenberg-Marquardt over the affected chains' joints (junction-pinned ones stay
// put), arc bulges and circles, plus one unknown per relation (its direction, radius or
// centre); residuals are the points' distances to their primitives, weighted relation
// residuals, and a weak pull of every joint to where it was. Chains stay continuous because
// neighbours share their joint. A primitive that would leave its tolerance drops out of its
// relations and the solve restarts; so does the relation furthest from holding when one stays
// above kEnforceMaxDeg / kEnforceMaxPx (it contradicts another). What survives is recorded as
// enforced, what was dropped as dropped, with the reason.
#pragma once
#include <optional>
#include <string>
#include <vector>

#include "core/relation.hpp"
#include "core/scene.hpp"
#include "fit/params.hpp"

namespace sv::fitting {

// One fitted edge: its primitives (indices into the primitive list, in chain order), the
// edge's points, whether the chain is closed (a closed chain of pieces, not a circle), and
// whether its ends are pinned to junctions.
struct ChainRef {
  std::vector<int> prims;
  const Polyline* points = nullptr;
  bool closed = false;
  bool pin_start = false, pin_end = false;
  // enforce(): ends with the same junction id (>= 0) are one point of the drawing; `held`
  // false when the points are samples of the primitives' own shapes (no source ink), which
  // then only regularize and are not held to the tolerance.
  int junction_start = -1, junction_end = -1;
  bool held = true;
};

// Enforces the relations it finds (updating shapes, fit_rms_px and fit_max_px) and returns
// the relation records: {"kind", "primitives": [ids], "residual_deg" | "residual_px",
// "status": "enforced"}, then those it dropped: {..., "status": "dropped", "reason"} (the
// residual then is how far it is from holding on the final shapes; its primitives are the
// one it was measured against, then the one that left it).
json beautify(std::vector<Primitive>& prims, const std::vector<ChainRef>& chains,
              const FitParams& p);

// An explicit relation between primitives (indices into the primitive list):
//   parallel, perpendicular (every other line at right angles to the first), horizontal,
//   vertical, collinear (one common line), equal_radius, concentric, tangent_continuity (two
//   primitives at their shared joint, or a line tangent to an arc or circle), mirror (pairs
//   (a0, b0, a1, b1, ...) reflected about one axis; an odd last one is symmetric in itself).
struct RelationSpec {
  RelationKind kind = RelationKind::parallel;
  std::vector<int> prims;
  std::optional<double> angle_rad;            // parallel, perpendicular, collinear: the given direction
  std::optional<Vec2> centre;                 // concentric: the given centre
  std::optional<std::pair<Vec2, Vec2>> axis;  // mirror: the given axis (two points on it)
};

// What enforce() did: each relation's residual after the solve (degrees for the angular
// kinds, pixels otherwise), and, when it failed, why.
struct EnforceOutcome {
  bool ok = false;
  std::vector<double> residuals;
  std::vector<std::string> units;  // "deg" or "px"
  std::vector<int> moved;          // primitives whose shape changed
  int broken = -1;                 // a primitive pushed beyond tolerance
  double broken_max_px = 0;
  int failed = -1;                 // a relation left above its residual threshold
  std::string reason;
};

// Residual thresholds of an enforced relation.
constexpr double kEnforceMaxDeg = 0.1, kEnforceMaxPx = 0.05;

// Enforces the given relations together with the model beautify solves: the primitives of
// every chain a relation touches are unknowns (joints, bulges, circles), held to their points;
// chain ends at a junction (same junction id) of a touched chain move together, other
// junctions stay put. Succeeds, updating shapes and fit_rms_px / fit_max_px, only when every
// held primitive stays within max(tolerance, its deviation before) and every relation's
// residual is within kEnforceMaxDeg / kEnforceMaxPx; otherwise leaves prims as they were.
EnforceOutcome enforce(std::vector<Primitive>& prims, const std::vector<ChainRef>& chains,
                       const std::vector<RelationSpec>& specs, const FitParams& p);

}  // namespace sv::fitting
