// The scene document (format "sv.scene", version 1): one JSON object every stage reads and
// writes. Sections a stage has not produced yet are absent (std::nullopt), not empty.
#pragma once
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "core/error.hpp"
#include "core/geometry.hpp"
#include "core/graph_records.hpp"

namespace sv {

using json = nlohmann::json;

constexpr const char* kSceneFormat = "sv.scene";
constexpr int kSceneVersion = 1;

struct Source {
  std::string path;    // as given on the command line ("-" for stdin)
  std::string sha256;  // of the image file's bytes; also the blob's name in the store
  int width = 0, height = 0;
  double stroke_width_px = 0;
};

// Finds elements of a vector by their `id` in constant time without having to be told of
// changes: the scene's vectors are public and changed in place by many stages and tools, so the
// index is a cache that checks every answer. A hit is verified against the element it points at;
// a miss scans the vector (as a plain search would) and, when that finds the id, rebuilds the
// index, so an index made stale by any insertion, removal or reordering repairs itself. Copies
// start empty (their vector is another one). Not thread-safe: const lookups write the cache.
template <class T>
class IdIndex {
 public:
  IdIndex() = default;
  IdIndex(const IdIndex&) {}
  IdIndex(IdIndex&&) noexcept {}
  IdIndex& operator=(const IdIndex&) {
    pos_.clear();
    return *this;
  }
  IdIndex& operator=(IdIndex&&) noexcept {
    pos_.clear();
    return *this;
  }

  const T* find(const std::vector<T>& v, const std::string& id) const {
    if (auto it = pos_.find(id); it != pos_.end() && it->second < v.size() && v[it->second].id == id)
      return &v[it->second];
    for (size_t i = 0; i < v.size(); ++i)
      if (v[i].id == id) {
        rebuild(v);
        return &v[i];
      }
    return nullptr;
  }

 private:
  void rebuild(const std::vector<T>& v) const {
    pos_.clear();
    pos_.reserve(v.size());
    for (size_t i = 0; i < v.size(); ++i) pos_.try_emplace(v[i].id, i);  // the first of equal ids wins
  }
  mutable std::unordered_map<std::string, size_t> pos_;
};

struct Vertex {
  std::string id;  // v_0001
  Vec2 p;
  int degree = 0;
  std::string kind;  // end, junction, crossing, loop, dot
  // Two 3-way junctions this far apart along the ink they share were made this one
  // (graph.meeting_merge_px); 0: none.
  double meeting_link_px = 0;
  std::optional<TangentRecord> tangent{};  // a stem touches a circle tangentially here
};

struct Edge {
  std::string id;  // e_0001
  std::string v0, v1;
  Polyline points;
  bool closed = false;
  double width_px = 0;  // mean ink width along the edge
  bool filled = false;  // the stroke standing for a filled mark (an eye, a dot); "filled" when true
  std::optional<MarkRecord> mark{};  // filled edges: what the graph measured of the mark
};

struct Graph {
  std::vector<Vertex> vertices;
  std::vector<Edge> edges;
  const Edge* edge(const std::string& id) const { return edge_index_.find(edges, id); }
  const Vertex* vertex(const std::string& id) const { return vertex_index_.find(vertices, id); }

  IdIndex<Edge> edge_index_{};  // {}: aggregate initialisation (Graph{vertices, edges}) may leave them out
  IdIndex<Vertex> vertex_index_{};
};

// A run of one edge's points a primitive was fitted to (inclusive; may wrap on a closed edge).
struct SourceSpan {
  std::string edge;
  int span0 = 0, span1 = 0;
};

struct Primitive {
  std::string id;  // p_0001
  Shape shape;
  std::string edge;     // source edge id
  int span0 = 0, span1 = 0;  // index range of the edge's points it was fitted to (inclusive)
  // Further sources of a primitive fitted across a junction (a line through a T): the runs of
  // other edges' points it also covers, after the first (edge, span0, span1). Serialized, with
  // the first, as "edges": [{edge, span}] when not empty.
  std::vector<SourceSpan> more_sources;
  double fit_rms_px = 0, fit_max_px = 0;
  std::string semantic_role = "unknown";
  std::vector<std::string> issues;
  // The most the route may redraw this primitive off its shape (route.deviation_px for it):
  // 0 after an edit reshaped it on purpose, a region's value after RerunStage set one there;
  // absent, the scene's route.deviation_px.
  std::optional<double> route_deviation_px;
  // How it meets the previous (start) and the next (end) primitive of its stroke: smooth
  // (tangent-continuous: the ink has no corner there, and the robot draws through without
  // turning) or a corner; none at a junction or a free end, and for a circle.
  enum class Joint { none, smooth, corner };
  Joint joint_start = Joint::none, joint_end = Joint::none;
};
const char* joint_name(Primitive::Joint j);

// One step of the draw order. Circles are entered at `entry_deg` (angle about the centre)
// and drawn with positive sweep unless reversed.
// A step may draw part of a primitive: from arc-length fraction t0 to t1 of it (a line
// through a T is drawn in two steps so the stem joins it without a pen lift).
struct TourStep {
  std::string primitive;
  bool reverse = false;
  double entry_deg = 0;
  double t0 = 0, t1 = 1;
  bool whole() const { return t0 == 0 && t1 == 1; }
};

struct Pose {
  double x = 0, y = 0, heading_deg = 0;
};

// The drawing's longest side on paper unless told otherwise (the Doodlebot server's
// targetFootprintMm): the one default of the scene, routing and the motion model.
constexpr double kDefaultFootprintMm = 200;

// An XY pen plotter's motion (robot model "plotter"): straight moves along the page at a
// drawing speed with the pen down and a travel speed with it up, each a trapezoid with the same
// acceleration; no turning. Defaults are an AxiDraw's (robot/motion.hpp says how).
constexpr double kDefaultPlotterDrawMmS = 50;
constexpr double kDefaultPlotterTravelMmS = 150;
constexpr double kDefaultPlotterAccelMmS2 = 1000;
constexpr double kDefaultPlotterPenTimeS = 0.15;

struct Robot {
  std::string model = "doodlebot";            // "doodlebot" or "plotter"
  double ppi = 0;                             // pixels per inch the times are computed at
  double footprint_mm = kDefaultFootprintMm;  // longest side on paper; 0 when ppi was given
  double pen_time_s = 0;                      // time of one pen lift or drop
  // "plotter" only (recorded for it alone): speeds in mm/s, acceleration in mm/s².
  double draw_speed_mm_s = kDefaultPlotterDrawMmS;
  double travel_speed_mm_s = kDefaultPlotterTravelMmS;
  double accel_mm_s2 = kDefaultPlotterAccelMmS2;
  bool plotter() const { return model == "plotter"; }
  Pose start;
  // "fixed": the user gave the start and the route prices getting from it to the first stroke;
  // else "free": the route chose it, the robot placed at the first stroke facing along it, and
  // every re-routing chooses it again for the stroke then first.
  bool start_fixed = false;
};

struct Command {
  enum class Kind { line, spin, arc } kind = Kind::line;
  double distance = 0;  // line, px (negative moves backwards)
  bool pen_down = true; // line, arc (an arc with the pen up is travel)
  double degrees = 0;   // spin, arc
  double radius = 0;    // arc, px
  std::string primitive;  // the primitive a drawing command belongs to ("" for travel)

  // Length of the path the pen moves along (0 for a spin).
  double length_px() const {
    return kind == Kind::line ? std::abs(distance) : kind == Kind::arc ? std::abs(deg2rad(degrees) * radius) : 0.0;
  }
};

// sv-simulate's replay of the command stream (robot/simulate.hpp), one compact record a step: what
// the robot does (the command it executes, or a pen change before it), how long it takes and the
// pose it ends in. A step starts where the one before ended, the first at robot.start; a drawing
// step draws commands[command].primitive. Written as [command, op, duration_s, x, y, heading_deg].
struct SimStep {
  enum class Op : uint8_t { line, spin, arc, pen_up, pen_down };
  Op op = Op::line;
  uint32_t command = 0;
  double duration_s = 0;
  Pose end;
};
const char* sim_op_name(SimStep::Op op);

struct Simulation {
  std::vector<SimStep> steps;
  std::vector<std::pair<size_t, std::string>> notes;  // what to notice, by step index
  json traces;  // null, or for each step its poses [x, y, heading_deg] along the way (--trace)
  double total_s = 0, motion_time_s = 0, pen_time_s = 0, ppi = 0;
};

// The ids of a command's `primitive`: several joined by ',' where a merged line draws them all;
// none for travel and spins.
std::vector<std::string> primitive_ids(const std::string& list);

struct RevisionInfo {
  std::string id;  // not hashed; filled from the content hash
  std::string parent;
  std::string tool;
  json args = json::array();
  std::string note;
};

struct Scene {
  std::optional<Source> source;
  json config = json::object();  // "stage.key" -> {value, from, doc}
  std::optional<Graph> graph;
  std::optional<std::vector<Primitive>> primitives;
  json relations = json::array();
  json regions = json::array();
  std::optional<std::vector<TourStep>> tour;
  std::optional<Robot> robot;
  std::optional<std::vector<Command>> commands;
  std::optional<Simulation> simulation;
  json metrics;     // null when absent
  std::vector<std::string> warnings;
  RevisionInfo revision;
  json extra = json::object();  // unknown top-level keys, kept as they were

  const Primitive* primitive(const std::string& id) const {
    return primitives ? primitive_index_.find(*primitives, id) : nullptr;
  }

  IdIndex<Primitive> primitive_index_{};
};

// Records a configuration value with its provenance ("default", "stroke_width", "image", "fit": derived
// from the fit stage's config, "user").
void set_config(Scene& s, const std::string& key, double value, const std::string& from,
                const std::string& doc);
double config_value(const Scene& s, const std::string& key, double fallback);

// Conversion. to_json rounds every coordinate to 1e-4 (times to 1e-6) so the serialization
// is canonical; it leaves the simulation out (scene_members writes it). from_json validates
// against the schema and refuses unknown major versions.
json to_json(const Scene& s, bool with_revision_id = true);
Scene scene_from_json(const json& j);

// Limits on every JSON text sv reads (scenes, tool requests), checked while parsing so that
// nothing deep or huge is built before it is refused; each is far above what a real drawing
// needs (a 100,000-primitive scene is about 60 MB and 6 levels deep). Documented in the man pages
// (LIMITS).
constexpr size_t kMaxSceneBytes = size_t(256) << 20;    // a scene document
constexpr size_t kMaxRequestBytes = size_t(64) << 20;   // a tool request (--request, --request-file)
constexpr size_t kMaxImageFileBytes = size_t(1) << 30;  // an image file (a drawing, a scene's source)
constexpr int kMaxJsonDepth = 64;                       // nested arrays and objects
constexpr size_t kMaxJsonStringBytes = size_t(1) << 20; // one string or key
constexpr size_t kMaxJsonArrayItems = 10'000'000;       // one array (or object's keys)
constexpr size_t kMaxIdChars = 64;                      // an id (p_0001): checked by the schema

// Parses JSON text under the limits above; malformed text or a limit exceeded is an Error with
// `code`, its message starting with `what`.
json parse_json_limited(const std::string& text, Code code, const std::string& what);

// Parses text (refuses malformed or truncated JSON, or JSON beyond the limits, with invalid_scene).
Scene parse_scene(const std::string& text);
// The scene's text as (key, serialised value) members in key order: those of `doc` (to_json of the
// scene), and the simulation, which to_json leaves out and join_members writes record by record
// straight into the text (its member's value here is empty).
struct SceneMembers {
  std::vector<std::pair<std::string, std::string>> members;
  const Simulation* simulation = nullptr;
};
SceneMembers scene_members(const Scene& s, const json& doc);
// The members joined as dump() joins an object's.
std::string join_members(const SceneMembers& m);
// Canonical bytes: sorted keys, fixed number formatting, revision.id left out.
std::string canonical_bytes(const Scene& s);
// SHA-256 of canonical_bytes; sets s.revision.id and returns it.
std::string assign_revision_id(Scene& s);
// Text written to stdout: canonical with revision.id, newline-terminated.
std::string dump_scene(const Scene& s);

double round_to(double v, double quantum);
// Rounding for output: numbers in results carry no noise below these quanta.
double round3(double v);
json point_json(Vec2 p);
std::string pt_text(Vec2 p);  // "(12.5,30)"
std::string shape_text(const Shape& s);  // "line (1,2) to (30,2), 29.0 px"

// The primitive `id`; throws Error(not_found).
const Primitive& primitive_or_throw(const Scene& s, const std::string& id);
// The edge points a primitive was fitted to (span may wrap on closed edges); empty when the
// scene has no graph or the primitive no provenance.
Polyline source_points(const Scene& s, const Primitive& p);
double stroke_width_of(const Scene& s);  // source estimate, 2 px when unknown

// A stage replaces its own sections; whatever later stages derived from the old ones is stale.
void drop_downstream_of_fit(Scene& s);
void drop_downstream_of_route(Scene& s);

}  // namespace sv
