// The geometric edits of a scene: merge, split, replace, refit, smooth, snap, enforce a relation.
//
// Each takes the scene as it is and returns the edited copy with the primitives it created or
// reshaped (`touched`, for settle()) and what it measured; a refusal is an Error (no_result
// when the geometry does not allow the edit, invalid_selection for a bad request, not_found for
// an unknown id). Conventions:
//   - new primitives get fresh ids (never a reused one); merge, split, replace and refit remove
//     the ids they replace, smooth changes its primitive in place (same id), snap and enforce
//     move geometry in place;
//   - connectivity is kept: an end shared with a primitive outside the edit before it is shared
//     after it (the edit pins such ends, or moves the neighbour's end along, re-deriving an arc
//     through its middle point);
//   - a primitive fitted to a graph edge keeps that provenance (edge and point span) where the
//     new geometry still stands for those points, and its fit_rms_px / fit_max_px are measured
//     against them.
#pragma once
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "core/scene.hpp"

namespace sv::edit {

struct GeometryEdit {
  Scene scene;                      // the edited copy
  std::set<std::string> touched;    // primitives whose geometry changed or that are new
  std::vector<std::string> warnings;
};

// Replaces a chain of primitives by one line, arc or circle ("auto": a line, else an arc, else
// for a closed loop a circle) fitted to their source points, within `tolerance_px` (default:
// the scene's fit.tolerance_px).
struct Merged : GeometryEdit {
  std::string id, kind;
  double fit_rms_px = 0, fit_max_px = 0, tolerance_px = 0;
};
Merged merge_primitives(const Scene& s, const std::vector<std::string>& ids, const std::string& target_kind,
                        std::optional<double> tolerance_px);

// Where a primitive splits: at an arc-length fraction, near a point, at the sharpest corner or
// at the inflection of its source points.
struct SplitAt {
  enum Kind { fraction, point, corner, inflection } kind = fraction;
  double t = 0;
  Vec2 q;
};
struct Split : GeometryEdit {
  std::vector<std::string> ids;  // the two pieces, in drawing order
  Vec2 at;                       // where they meet
  std::string how;               // "t=0.5", "near (3,4)", "corner at (3,4)"
  PrimType type = PrimType::line;  // of the primitive split
};
Split split_primitive(const Scene& s, const std::string& id, const SplitAt& at);

// Swaps primitives for one explicit shape; with `snap`, its ends move onto other primitives'
// endpoints within max(2 px, stroke width).
struct Replaced : GeometryEdit {
  std::string id;
  int snapped_ends = 0;
};
Replaced replace_by_shape(const Scene& s, const std::vector<std::string>& ids, Shape shape, bool snap);

// Re-runs the fitter on the span of one source edge the primitives cover.
struct RefitOptions {
  bool force_subdivide = false;  // end with more pieces than before
  bool forbid_arcs = false;
  bool forbid_circle = false;
  std::optional<double> arc_cost_scale;  // multiplies fit.arc_cost
  std::vector<Vec2> split_points;        // forced breakpoints (snapped to the nearest source point)
};
struct Refitted : GeometryEdit {
  std::string edge;
  std::vector<Primitive> pieces;  // the new primitives, in order
};
Refitted refit_polyline(const Scene& s, const std::vector<std::string>& ids, const RefitOptions& o);

// Closes near-miss junctions: ends of different primitives closer than the tolerance (default
// max(1, stroke width / 2)) move to their mean, and an end that close to another primitive's
// interior (a T) moves onto it; with `vertex_ids`, only those near them. Refused (no_result)
// when there is nothing to snap.
struct Snapped : GeometryEdit {
  std::vector<std::string> clusters;  // the nearest graph vertex id of each, or "at x,y"
  double max_move_px = 0;
  double tolerance_px = 0;
};
Snapped snap_endpoints(const Scene& s, const std::vector<std::string>& vertex_ids, std::optional<double> tolerance_px);

// Makes a relation exact (see enforce_relations) and records it, replacing an earlier record
// of the same relation on the same primitives.
struct Enforced : GeometryEdit {
  double residual = 0;
  bool degrees = true;             // the residual's unit: deg, else px
  std::vector<std::string> moved;  // primitives whose geometry moved
};
Enforced enforce_relation(const Scene& s, const std::string& kind, const std::vector<std::string>& ids,
                          const json& axis);

// Refits one primitive to its source points as a single line, arc or circle (`kind`, default
// its own type), ignoring the tolerance and the worst `trim_share` of the points; ends shared
// with neighbours stay put.
struct Smoothed : GeometryEdit {
  std::string id;
  PrimType type = PrimType::line;
  double rms_before = 0, rms_after = 0, max_after_px = 0, tolerance_px = 0;
};
Smoothed smooth_primitive(const Scene& s, const std::string& id, double trim_share, std::optional<std::string> kind);

}  // namespace sv::edit
