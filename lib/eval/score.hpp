// Fidelity of a drawing against reference centrelines within a scope — missed and spurious
// ink clustered into findings — and the scoreboard of a scene (draw time against fidelity).
#pragma once
#include <map>
#include <string>
#include <vector>

#include "core/scene.hpp"
#include "eval/coverage.hpp"
#include "eval/drawing.hpp"
#include "eval/scope.hpp"

namespace sv {

// Nearest-point queries over sample points (a uniform hash grid searched in rings).
class NearestPoints {
 public:
  NearestPoints(const std::vector<Polyline>& polys, double step);
  // The distance to the nearest point; with `cap`, any value above it may read as INFINITY (the
  // search stops there, so a far query costs no more than a near one).
  double distance(Vec2 q, double cap = INFINITY) const;
  bool empty() const { return pts_.empty(); }

 private:
  long cell(double v) const;
  std::vector<Vec2> pts_;
  double cell_;
  std::map<std::pair<long, long>, std::vector<size_t>> grid_;
};

// Polylines densified to `step` and cut to the parts inside the scope.
std::vector<Polyline> clip_to_scope(const std::vector<Polyline>& polys, const Scope& scope, double step = 0.5);

struct InkFinding {
  std::string kind;  // missed_ink or spurious_ink
  BBox box;
  Vec2 centroid;
  double length_px = 0;
  int area_px = 0;   // length times stroke width: the ink it stands for
  std::string nearest_primitive;
  double nearest_distance_px = 0;
  std::string severity;  // minor, moderate, severe
};

struct CoverageReport {
  Coverage metrics;
  double tolerance_px = 0;
  std::vector<InkFinding> findings;  // largest first
  std::vector<Vec2> missed, spurious;  // every flagged sample, for the diff picture
};

// The drawing `d` of scene `s` against the reference centrelines (eval/ink_reference.hpp),
// both cut to the scope. Clustered, disagreements within a stroke width merge into one finding.
CoverageReport analyze_coverage(const Scene& s, const Drawing& d, const std::vector<Polyline>& reference,
                                double tolerance_px, const Scope& scope, bool cluster);

// The scoreboard of a scene. Within a scope, fidelity is measured on the paths inside it, draw
// time is the drawing time of the primitives touching it and pen-ups those starting or ending in it.
struct Scores {
  double draw_time_s = 0, precision = 0, recall = 0, f1 = 0, chamfer_px = 0, hausdorff_px = 0;
  double f1_1px = 0;  // f1 at a 1 px tolerance, from the same distances
  int primitive_count = 0, pen_up_count = 0;
  bool timed = false;  // false without a command stream
};
Scores score(const Scene& s, const std::vector<Polyline>& reference, double tol, const Scope& scope);
// The page's diagonal (what a distance reads as when there is nothing to measure to).
double image_diagonal(const Scene& s);
// The metrics named in `wanted` (the catalog's names: draw_time, f1, chamfer, f1_1px, ...), each keyed
// with its unit (draw_time_s, chamfer_px) and rounded to 0.001.
json metrics_json(const Scores& sc, const json& wanted);

}  // namespace sv
