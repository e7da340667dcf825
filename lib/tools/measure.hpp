// Measurements the tools share: the drawing as the robot executes it (every command with its
// time and the primitives around it), and the coverage of the drawing against the stroke
// graph's centrelines with missed and spurious ink clustered.
#pragma once
#include <map>
#include <string>
#include <vector>

#include "core/scene.hpp"
#include "eval/coverage.hpp"
#include "tools/region.hpp"

namespace sv {

// One command as executed.
struct DrawStep {
  size_t index = 0;
  Command cmd;
  double time_s = 0;
  Pose start, end;
  Polyline path;              // swept path (empty for spins)
  bool pen_down = false;
  std::string after, before;  // travel: the primitives drawn just before and just after
};

struct Drawing {
  bool from_commands = false;  // false: no command stream; strokes are the primitives themselves
  double ppi = 0;
  std::vector<DrawStep> steps;
  std::vector<Polyline> strokes;               // pen-down paths
  std::vector<std::pair<std::string, Polyline>> pieces;  // pen-down paths by primitive ("" unknown)
  std::vector<std::pair<Vec2, Vec2>> pen_up;   // pen-up travel
  std::map<std::string, double> primitive_s;   // drawing time of each primitive
  std::map<std::string, int> draw_index;       // position in the draw order
  double total_s = 0, draw_s = 0, travel_s = 0, spin_s = 0, pen_s = 0;
  int pen_ups = 0;
};

// Pixels per inch the scene's times are computed at (robot.ppi, else its footprint, else 1).
double scene_ppi(const Scene& s);
// Replays the command stream (or, without one, lays the primitives out in tour or id order).
Drawing drawing_of(const Scene& s);


// Nearest-point queries over sample points (a uniform hash grid searched in rings).
class NearestPoints {
 public:
  NearestPoints(const std::vector<Polyline>& polys, double step);
  double distance(Vec2 q) const;
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

// The graph's edge polylines: the centrelines of the source ink.
std::vector<Polyline> reference_paths(const Scene& s);
CoverageReport analyze_coverage(const Scene& s, const Drawing& d, double tolerance_px, const Scope& scope,
                                bool cluster);

// The primitive nearest to q within the scope's primitives ("" when there are none).
std::string nearest_primitive(const Scene& s, Vec2 q, double* distance = nullptr);

// Ids in draw order (tour order, then untoured ids in id order).
std::vector<std::string> draw_order(const Scene& s);

// The scoreboard of a scene. Within a scope, fidelity is measured on the paths inside it, draw
// time is the drawing time of the primitives touching it and pen-ups those starting or ending in it.
struct Scores {
  double draw_time_s = 0, precision = 0, recall = 0, f1 = 0, chamfer_px = 0, hausdorff_px = 0;
  int primitive_count = 0, pen_up_count = 0;
  bool timed = false;  // false without a command stream
};
Scores score(const Scene& s, double tol, const Scope& scope);
// The metrics named in `wanted` (the catalog's names: draw_time, f1, chamfer, ...), each keyed
// with its unit (draw_time_s, chamfer_px).
json metrics_json(const Scores& sc, const json& wanted);

}  // namespace sv
