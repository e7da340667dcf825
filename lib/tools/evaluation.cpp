// Evaluation: the scoreboard of a revision (draw time against fidelity), the difference
// between two revisions, and where a revision sits on the time/fidelity plane against the
// baselines a drawing of the same source could have had; and the robot's execution step by step.
// Each tool's registry entry (catalog number, name, group, schemas) stands right after its handler.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <opencv2/imgproc.hpp>

#include "core/error.hpp"
#include "edit/edit.hpp"
#include "render/view.hpp"
#include "robot/simulate.hpp"
#include "route/route.hpp"
#include "semantic/fidelity.hpp"
#include "store/history.hpp"
#include "store/store.hpp"
#include "tools/common.hpp"
#include "tools/request.hpp"
#include "tools/schema_parts.hpp"

namespace sv {

namespace {

namespace S = schema;

const json kAllMetrics = {"draw_time", "primitive_count", "pen_up_count", "precision", "recall", "f1", "f1_1px", "chamfer"};

std::string metrics_text(const json& m) {
  std::string out;
  for (auto it = m.begin(); it != m.end(); ++it)
    out += fmt::format("{}{}={}", out.empty() ? "" : " ", it.key(), it.value().dump());
  return out;
}

// ---------------------------------------------------------------- EvaluateRevision

struct EvaluateRequest : RegionRequest {
  std::optional<std::string> revision_id;  // none: the input scene
  std::vector<std::string> metrics;
};

ToolResult evaluate_revision(const ToolContext& ctx, const EvaluateRequest& req) {
  ToolResult r;
  Scene holder;
  std::string rid;
  const Scene& s = revision_scene(ctx, req.revision_id.value_or(""), holder, &rid);
  r.revision_id = rid;
  const Scope scope = scope_of_regions(s, {req.region});
  const double sw = stroke_width_of(s), tol = default_tolerance(sw);
  const FidelityReference ref = fidelity_reference(ctx, s, r.warnings);
  Scores sc = score(s, ref.paths, tol, scope);
  json wanted = json::array();
  bool want_semantic = false;
  for (const auto& m : req.metrics) {
    if (m == "semantic_overall") want_semantic = true;
    else wanted.push_back(m);
  }
  if (!sc.timed) r.warnings.push_back("no command stream: draw time and pen-ups are 0 (run sv-route)");
  if (ref.paths.empty()) r.warnings.push_back("no reference centrelines: fidelity has nothing to compare with");
  json m = metrics_json(sc, wanted);
  // The mean of EvaluateSemanticFidelity's measured aspects (recognizability needs an oracle).
  if (want_semantic) m["semantic_overall"] = *semantic::scene_fidelity(s, ref.paths, scope, semantic::measured_aspects()).overall;
  r.fields = {{"metrics", m}, {"evaluated_revision_id", rid}, {"tolerance_px", round3(tol)}, {"reference", ref.describe()}};
  std::string graph_text;
  // How closely the drawing follows the stroke graph, apart from fidelity to the ink.
  if (ref.from_ink && s.graph) {
    const double graph_f1 = score(s, graph_paths(s), tol, scope).f1;
    r.fields["graph_f1"] = round3(graph_f1);
    graph_text = fmt::format("; f1 {:.3f} against the stroke graph", graph_f1);
  }
  r.llm_text = fmt::format("{}{}: {}", rid.substr(0, 12), scope.everything() ? "" : " in " + scope.describe(), metrics_text(m));
  r.human_text = r.llm_text + fmt::format(" (fidelity at {:.1f} px against {}{}; times from the firmware motion model at "
                                          "{:.1f} px/in)", tol, ref.describe(), graph_text, scene_ppi(s));
  Drawing d = drawing_of(s);
  CoverageReport cov = analyze_coverage(s, d, ref.paths, tol, scope, true);
  View v = scene_view(ctx, s, scope, fmt::format("{} f1 {:.3f}, {:.1f} s", rid.substr(0, 12), sc.f1, sc.draw_time_s));
  for (const auto& [id, path] : d.pieces) v.polyline(path, color::ink, 2);
  int radius = std::max(1, static_cast<int>(std::lround(0.5 * sw * v.transform().scale)));
  for (Vec2 p : cov.missed) v.dot(p, color::missed, radius);
  for (Vec2 p : cov.spurious) v.dot(p, color::spurious, radius);
  v.legend({{"drawn", color::ink}, {"missed ink", color::missed}, {"spurious ink", color::spurious}});
  r.images["evaluation"] = v.finish();
  return r;
}

json metric_schema() {
  return S::enumeration({"draw_time", "primitive_count", "pen_up_count", "precision", "recall", "f1", "f1_1px", "chamfer",
                         "semantic_overall"}, "f1_1px: f1 at a 1 px tolerance");
}

json metrics_schema() {
  return {{"type", "object"}, {"additionalProperties", {{"type", "number"}}},
          {"description", "the scoreboard: draw_time_s, counts, precision, recall, f1, f1_1px, chamfer_px"}};
}

Tool evaluate_revision_entry() {
  using R = EvaluateRequest;
  return typed_tool<R>(
      36, "EvaluateRevision", "evaluation",
      "The scoreboard of a revision: draw time, f1, precision, recall, chamfer, primitive count, pen-ups.",
      {{field("revision_id", &R::revision_id,
              S::nullable(S::string("a revision: HEAD, a branch, final, an id or a unique prefix (default: the input scene)"))),
        field("metrics", &R::metrics,
              S::with_default(S::array(metric_schema(), "what to measure"),
                              json::array({"draw_time", "f1", "f1_1px", "chamfer", "primitive_count", "pen_up_count"})))}},
      S::object({{"metrics", metrics_schema()}, {"evaluated_revision_id", S::string("the revision measured")},
                 {"tolerance_px", S::number("distance that counts as covered", 0)},
                 {"reference", S::string("the ink's centrelines, or without the image the stroke graph's")},
                 {"graph_f1", S::number("f1 against the stroke graph (when measured against the ink)", 0)}},
                {"metrics"}),
      evaluate_revision);
}

// ---------------------------------------------------------------- CompareRevisions

struct CompareRequest : RegionRequest {
  std::string revision_a;
  std::optional<std::string> revision_b;  // none: the input scene
  bool include_visual_diff;
};

ToolResult compare_revisions(const ToolContext& ctx, const CompareRequest& req) {
  ToolResult r;
  Scene ha, hb;
  std::string ida, idb;
  const Scene& a = revision_scene(ctx, req.revision_a, ha, &ida);
  const Scene& b = revision_scene(ctx, req.revision_b.value_or(""), hb, &idb);
  const double tol = default_tolerance(stroke_width_of(b));
  // The region is resolved in each revision (a primitive set must exist in the one it names).
  const Scope scope_a = scope_of_regions(a, {req.region}), scope_b = scope_of_regions(b, {req.region});
  Scores sa = score(a, fidelity_reference(ctx, a, r.warnings).paths, tol, scope_a);
  Scores sb = score(b, fidelity_reference(ctx, b, r.warnings).paths, tol, scope_b);
  json ma = metrics_json(sa, kAllMetrics), mb = metrics_json(sb, kAllMetrics), delta = json::object();
  for (auto it = mb.begin(); it != mb.end(); ++it) delta[it.key()] = round3(it.value().get<double>() - ma[it.key()].get<double>());
  std::vector<std::string> added, removed, changed;
  if (b.primitives)
    for (const auto& p : *b.primitives) {
      const Primitive* q = a.primitive(p.id);
      if (!scope_b.touches(p) && !(q && scope_a.touches(*q))) continue;
      if (!q) added.push_back(p.id);
      else if (!same_shape(p.shape, q->shape, 1e-6, 1e-6)) changed.push_back(p.id);
    }
  if (a.primitives)
    for (const auto& p : *a.primitives)
      if (!b.primitive(p.id) && scope_a.touches(p)) removed.push_back(p.id);
  r.fields = {{"metric_deltas", delta}, {"metrics_a", ma}, {"metrics_b", mb}, {"revision_a_id", ida}, {"revision_b_id", idb},
              {"added_primitive_ids", added}, {"removed_primitive_ids", removed}, {"changed_primitive_ids", changed}};
  r.llm_text = fmt::format("{} -> {}: deltas (b - a) {}; added {} removed {} changed {}", ida.substr(0, 12), idb.substr(0, 12),
                           metrics_text(delta), json(added).dump(), json(removed).dump(), json(changed).dump());
  r.human_text = r.llm_text + fmt::format("\n  a: {}\n  b: {}", metrics_text(ma), metrics_text(mb));
  if (!req.include_visual_diff) return r;
  r.images["comparison"] = change_sheet(a, b, "a " + ida.substr(0, 12), "b " + idb.substr(0, 12), added, removed, changed);
  return r;
}

Tool compare_revisions_entry() {
  using R = CompareRequest;
  Tool t = typed_tool<R>(
      37, "CompareRevisions", "evaluation",
      "Two revisions side by side: metric deltas (b - a), added, removed and changed primitive ids, a visual diff.",
      {{field("revision_a", &R::revision_a, S::string("a revision: HEAD, a branch, final, an id or a unique prefix")),
        field("revision_b", &R::revision_b,
              S::nullable(S::string("a revision: HEAD, a branch, final, an id or a unique prefix (default: the input scene)"))),
        field("include_visual_diff", &R::include_visual_diff, S::with_default(S::boolean("draw a view of what changed"), true))},
       {"revision_a"}},
      S::object({{"metric_deltas", metrics_schema()}, {"metrics_a", metrics_schema()}, {"metrics_b", metrics_schema()},
                 {"revision_a_id", S::string("revision a, in full")}, {"revision_b_id", S::string("revision b, in full")},
                 {"added_primitive_ids", S::array(S::id("primitive id"), "in b only")},
                 {"removed_primitive_ids", S::array(S::id("primitive id"), "in a only")},
                 {"changed_primitive_ids", S::array(S::id("primitive id"), "in both, reshaped or re-routed")}},
                {"metric_deltas", "added_primitive_ids", "removed_primitive_ids", "changed_primitive_ids"}),
      compare_revisions);
  t.views_for_model = true;
  return t;
}

// ---------------------------------------------------------------- ProjectParetoPosition

struct Point {
  std::string name, source;
  double time_s = 0, fidelity = 0;
};

// The primitives drawn in id order, each forwards: fitted geometry without route optimization.
Scene unrouted(const Scene& s) {
  Scene c = s;
  c.tour = std::vector<TourStep>{};
  for (const auto& p : *s.primitives) c.tour->push_back({p.id, false, 0});
  emit_tour(c, route_options_of(s));
  return c;
}

// The stroke graph's edges drawn as they are, one short line per polyline segment, in edge
// order: the unfitted trace.
Scene polyline_trace(const Scene& s) {
  Scene c = s;
  c.primitives = std::vector<Primitive>{};
  c.tour = std::vector<TourStep>{};
  int n = 0;
  for (const auto& e : s.graph->edges)
    for (size_t i = 1; i < e.points.size(); ++i) {
      if (dist(e.points[i - 1], e.points[i]) < 1e-9) continue;
      Primitive p;
      p.id = fmt::format("p_{:04d}", ++n);
      p.shape = Shape::line(e.points[i - 1], e.points[i]);
      c.primitives->push_back(p);
      c.tour->push_back({p.id, false, 0});
    }
  emit_tour(c, route_options_of(s));
  return c;
}

double fidelity_of(const Scores& sc, const std::string& axis) { return axis == "chamfer" ? sc.chamfer_px : sc.f1; }
// a dominates b: no slower, no less faithful, and better in one.
bool dominates(const Point& a, const Point& b, bool lower_better) {
  bool fid_ge = lower_better ? a.fidelity <= b.fidelity : a.fidelity >= b.fidelity;
  bool fid_gt = lower_better ? a.fidelity < b.fidelity : a.fidelity > b.fidelity;
  return a.time_s <= b.time_s && fid_ge && (a.time_s < b.time_s || fid_gt);
}

cv::Mat pareto_chart(const std::vector<Point>& pts, const std::string& axis, size_t self) {
  const int W = 640, H = 420, L = 70, R = 20, T = 30, B = 50;
  cv::Mat img(H, W, CV_8UC3, cv::Scalar(255, 255, 255));
  double t0 = 0, t1 = 0, f0 = INFINITY, f1 = -INFINITY;
  for (const auto& p : pts) t1 = std::max(t1, p.time_s), f0 = std::min(f0, p.fidelity), f1 = std::max(f1, p.fidelity);
  t1 = t1 > 0 ? t1 * 1.1 : 1;
  if (axis == "f1") f0 = std::max(0.0, std::min(f0 - 0.05, 0.9)), f1 = 1.0;
  else f1 = f1 > f0 ? f1 * 1.1 : f0 + 1, f0 = 0;
  auto X = [&](double t) { return L + (t - t0) / (t1 - t0) * (W - L - R); };
  auto Y = [&](double f) { return H - B - (f - f0) / (f1 - f0) * (H - T - B); };
  const int face = cv::FONT_HERSHEY_SIMPLEX;
  cv::rectangle(img, {L, T}, {W - R, H - B}, color::faded, 1);
  for (int k = 0; k <= 5; ++k) {
    double t = t0 + (t1 - t0) * k / 5, f = f0 + (f1 - f0) * k / 5;
    cv::line(img, {int(X(t)), T}, {int(X(t)), H - B}, color::grid, 1);
    cv::line(img, {L, int(Y(f))}, {W - R, int(Y(f))}, color::grid, 1);
    cv::putText(img, fmt::format("{:.3g}", t), {int(X(t)) - 12, H - B + 16}, face, 0.38, color::ink, 1, cv::LINE_AA);
    cv::putText(img, fmt::format("{:.3g}", f), {8, int(Y(f)) + 4}, face, 0.38, color::ink, 1, cv::LINE_AA);
  }
  cv::putText(img, "draw time (s)", {W / 2 - 40, H - 12}, face, 0.45, color::ink, 1, cv::LINE_AA);
  cv::putText(img, axis == "chamfer" ? "chamfer px (lower is better)" : "f1 (higher is better)", {8, 18}, face, 0.45,
              color::ink, 1, cv::LINE_AA);
  for (size_t i = 0; i < pts.size(); ++i) {
    cv::Point c(int(X(pts[i].time_s)), int(Y(pts[i].fidelity)));
    cv::Scalar col = i == self ? color::missed : color::line;
    cv::circle(img, c, i == self ? 6 : 4, col, cv::FILLED, cv::LINE_AA);
    cv::putText(img, pts[i].name, c + cv::Point(8, -6 - 12 * int(i % 2)), face, 0.4, col, 1, cv::LINE_AA);
  }
  return img;
}

struct ParetoRequest : RegionRequest {
  std::optional<std::string> revision_id;  // none: the input scene
  std::string fidelity_axis;
};

ToolResult project_pareto_position(const ToolContext& ctx, const ParetoRequest& req) {
  ToolResult r;
  Scene holder;
  std::string rid;
  const Scene& s = revision_scene(ctx, req.revision_id.value_or(""), holder, &rid);
  r.revision_id = rid;
  std::string axis = req.fidelity_axis;
  if (axis == "semantic_overall") {
    r.warnings.push_back("semantic_overall needs an oracle (AskOracle); projecting on f1 instead");
    axis = "f1";
  }
  const bool lower_better = axis == "chamfer";
  const double tol = default_tolerance(stroke_width_of(s));
  const Scope scope = scope_of_regions(s, {req.region});
  // Every point is measured against this revision's reference: one plane for all.
  const FidelityReference ref = fidelity_reference(ctx, s, r.warnings);
  std::vector<Point> pts;
  auto add = [&](const std::string& name, const std::string& source, const Scene& sc) {
    Scores x = score(sc, ref.paths, tol, scope_of_regions(sc, {req.region}));
    pts.push_back({name, source, x.draw_time_s, fidelity_of(x, axis)});
  };
  add("this", rid, s);
  if (!s.commands || s.commands->empty()) r.warnings.push_back("this revision has no command stream: its time is 0 (run sv-route)");
  if (s.graph && !s.graph->edges.empty()) add("polyline_trace", "the stroke graph drawn unfitted, edge by edge", polyline_trace(s));
  if (s.primitives && !s.primitives->empty()) add("fitted_unrouted", "these primitives in id order, unoptimized", unrouted(s));
  // Earlier revisions of this drawing that the robot could draw.
  if (ctx.store && !rid.empty() && ctx.store->has_object(rid)) {
    for (const auto& rec : revision_chain(*ctx.store, rid, 64)) {
      if (rec.id == rid) continue;
      if (!rec.problem.empty()) {  // an unreadable ancestor ends the chain; the rest still counts
        r.warnings.push_back(fmt::format("ancestor {} cannot be read (sv-commit fsck)", rec.id.substr(0, 12)));
        continue;
      }
      Scene anc = ctx.store->read_scene(rec.id);
      if (!anc.commands || anc.commands->empty()) continue;
      add(rec.tool + "@" + rec.id.substr(0, 8), "ancestor revision " + rec.id, anc);
    }
  }
  json dominated_by = json::array(), dominates_list = json::array(), points = json::array();
  for (size_t i = 1; i < pts.size(); ++i) {
    if (dominates(pts[i], pts[0], lower_better)) dominated_by.push_back(pts[i].name);
    if (dominates(pts[0], pts[i], lower_better)) dominates_list.push_back(pts[i].name);
  }
  std::string text;
  for (const auto& p : pts) {
    points.push_back({{"name", p.name}, {"source", p.source}, {"draw_time_s", round3(p.time_s)}, {"fidelity", round3(p.fidelity)}});
    text += fmt::format("{} {:.1f} s {} {:.3f}\n", p.name, p.time_s, axis, p.fidelity);
  }
  const bool front = dominated_by.empty();
  r.fields = {{"dominated_by", dominated_by}, {"dominates", dominates_list}, {"on_pareto_front", front},
              {"points", points}, {"fidelity_axis", axis}};
  r.llm_text = fmt::format("{} on the Pareto front{}; dominated by {}; dominates {}\n", front ? "ON" : "NOT",
                           scope.everything() ? "" : " (in " + scope.describe() + ")", dominated_by.dump(), dominates_list.dump()) + text;
  r.images["pareto"] = pareto_chart(pts, axis, 0);
  return r;
}

Tool project_pareto_position_entry() {
  using R = ParetoRequest;
  return typed_tool<R>(
      38, "ProjectParetoPosition", "evaluation",
      "Where a revision sits on the draw-time/fidelity plane against its baselines: the unfitted polyline "
      "trace, the fitted primitives unrouted, and its ancestors in the store.",
      {{field("revision_id", &R::revision_id,
              S::nullable(S::string("a revision: HEAD, a branch, final, an id or a unique prefix (default: the input scene)"))),
        field("fidelity_axis", &R::fidelity_axis,
              S::with_default(S::enumeration({"f1", "chamfer", "semantic_overall"}, "the fidelity measure"), "f1"))}},
      S::object({{"dominated_by", S::array(S::string("a point's name"), "points faster and more faithful")},
                 {"dominates", S::array(S::string("a point's name"), "points slower and less faithful")},
                 {"on_pareto_front", S::boolean("no point dominates it")},
                 {"points", S::array(S::object({{"name", S::string("the point")}, {"source", S::string("where it comes from")},
                                                {"draw_time_s", S::number("its draw time", 0)}, {"fidelity", S::number("its fidelity", 0)}},
                                               {"name", "draw_time_s", "fidelity"}, "one point"), "this revision first")},
                 {"fidelity_axis", S::string("the fidelity measure used")}},
                {"dominated_by", "dominates", "on_pareto_front"}),
      project_pareto_position);
}

// ---------------------------------------------------------------- RobotSimulate

json pose_json(const Pose& p) { return json::array({p.x, p.y, p.heading_deg}); }

std::string pose_text(const Pose& p) { return fmt::format("({:.1f}, {:.1f}, {:.1f}°)", p.x, p.y, p.heading_deg); }

constexpr size_t kLoggedSteps = 150;  // steps the text lists; `steps` has them all

struct RobotSimulateRequest : RegionRequest {
  std::optional<std::string> revision_id;  // none: the input scene
  bool return_trace;
};

ToolResult robot_simulate(const ToolContext& ctx, const RobotSimulateRequest& req) {
  ToolResult r;
  Scene holder;
  std::string rid;
  Scene run = revision_scene(ctx, req.revision_id.value_or(""), holder, &rid);
  r.revision_id = rid;
  if (!run.commands || !run.robot) {
    r.warnings.push_back("no command stream: the robot has nothing to execute (run sv-route)");
    r.fields = {{"total_time_ms", 0}, {"steps", json::array()}};
    r.llm_text = rid.substr(0, 12) + ": no command stream, nothing to simulate";
    return r;
  }
  // The same replay sv-simulate runs, so the times are the scene's simulated metrics.
  simulate(run, SimulateOptions{req.return_trace});
  const Simulation& sim = *run.simulation;
  const double total_ms = round_to(sim.total_s * 1000, 1e-3);
  std::vector<std::vector<std::string>> notes(sim.steps.size());
  for (const auto& [step, text] : sim.notes) notes[step].push_back(text);
  json steps = json::array();
  std::string log;
  size_t noted = 0;
  const Pose& from = run.robot->start;  // rounded as a step's pose is
  Pose at{round_to(from.x, 1e-4), round_to(from.y, 1e-4), round_to(wrap_deg(from.heading_deg), 1e-4)};
  for (size_t i = 0; i < sim.steps.size(); ++i) {
    // The catalog's SimStep (milliseconds); a drawing step draws its command's primitives.
    const SimStep& st = sim.steps[i];
    const bool drawing = st.op != SimStep::Op::pen_up && st.op != SimStep::Op::pen_down;
    const std::string drawn = drawing ? (*run.commands)[st.command].primitive : std::string();
    const json ids = primitive_ids(drawn);
    json step = {{"op", sim_op_name(st.op)},
                 {"primitive_id", ids.empty() ? json(nullptr) : ids[0]},
                 {"primitive_ids", ids},
                 {"duration_ms", round_to(st.duration_s * 1000, 1e-3)},
                 {"start_pose", pose_json(at)},
                 {"end_pose", pose_json(st.end)},
                 {"notes", notes[i]}};
    if (!sim.traces.is_null() && !sim.traces[i].is_null()) step["trace"] = sim.traces[i];
    noted += !notes[i].empty();
    if (steps.size() < kLoggedSteps) {
      std::string text;
      for (const auto& n : notes[i]) text += "; " + n;
      log += fmt::format("{:>4} {:<8} {:<8} {:>9.1f} ms {} -> {}{}\n", steps.size(), sim_op_name(st.op),
                         drawn.empty() ? "-" : drawn, step["duration_ms"].get<double>(), pose_text(at),
                         pose_text(st.end), text);
    }
    steps.push_back(std::move(step));
    at = st.end;
  }
  if (steps.size() > kLoggedSteps) log += fmt::format("... {} more steps (all in `steps`)\n", steps.size() - kLoggedSteps);
  r.fields = {{"total_time_ms", total_ms},
              {"motion_time_ms", round_to(sim.motion_time_s * 1000, 1e-3)},
              {"pen_time_ms", round_to(sim.pen_time_s * 1000, 1e-3)},
              {"ppi", sim.ppi},
              {"steps", steps}};
  r.llm_text = fmt::format("{}: {} steps, {:.1f} s ({:.1f} s moving, {:.1f} s pen lifts and drops) at {:.1f} px/in; {} with "
                           "notes\n",
                           rid.substr(0, 12), steps.size(), total_ms / 1000, sim.motion_time_s, sim.pen_time_s,
                           sim.ppi, noted) + log;
  r.human_text = r.llm_text + "(an animated SVG of the robot drawing it: sv-simulate --animate FILE)";

  // The trace over the drawing: pen-down paths coloured by when they are drawn (blue first, red
  // last), pen-up travel dashed, long-way spins ringed.
  const Scope scope = scope_of_regions(run, {req.region});
  View v = scene_view(ctx, run, scope, fmt::format("{} robot: {:.1f} s, {} steps", rid.substr(0, 12), total_ms / 1000, steps.size()));
  const auto when = command_times(sim);
  const double total_s = std::max(sim.total_s, 1e-9);
  for (const DrawnPiece& p : drawn_pieces(run, 1.0)) {
    if (p.pen_down) v.polyline(p.path, color::ramp(when.at(p.command).first / total_s), 2);
    else v.polyline(p.path, color::pen_up, 1, true);
  }
  for (const SimStep& st : sim.steps) {
    const Command& c = (*run.commands)[st.command];
    if (st.op != SimStep::Op::spin || !long_way_spin(c)) continue;
    const Vec2 at{st.end.x, st.end.y};  // a spin turns in place
    v.ring(at, 8, color::circle, 2);
    v.text(at, fmt::format("spin {:.0f} deg", c.degrees), color::circle);
  }
  Vec2 start{run.robot->start.x, run.robot->start.y};
  v.dot(start, color::spurious, 4);
  v.legend({{"drawn first", color::ramp(0)}, {"drawn last", color::ramp(1)}, {"pen-up travel", color::pen_up},
            {"long-way spin", color::circle}, {"start", color::spurious}});
  r.images["robot"] = v.finish();
  return r;
}

Tool robot_simulate_entry() {
  using R = RobotSimulateRequest;
  const json pose = S::tuple({S::number("x, image pixels"), S::number("y, image pixels"), S::number("heading, degrees")},
                             "x, y, heading");
  const json step = S::object(
      {{"op", S::enumeration({"line", "spin", "arc", "pen_up", "pen_down"}, "the command")},
       {"primitive_id", S::nullable(S::id("the primitive a line or arc draws (the first, when it draws several); "
                                               "null for spins, pen changes and travel"))},
       {"primitive_ids", S::array(S::id("primitive id"), "every primitive the step draws")},
       {"duration_ms", S::number("from the firmware's motion model", 0)},
       {"start_pose", pose},
       {"end_pose", pose},
       {"notes", S::array(S::string("a note"), "what to notice: a long-way spin, pen-up travel, backward driving, ...")},
       {"trace", S::array(pose, "the poses along the step (about every pixel or 15 degrees; farther apart beyond a million px of moves); only with return_trace")}},
      {"op", "primitive_id", "primitive_ids", "duration_ms", "start_pose", "end_pose", "notes"}, "one command");
  return typed_tool<R>(
      39, "RobotSimulate", "evaluation",
      "The firmware's execution step by step: each line, arc, spin and pen change with its duration, poses "
      "and notes; the trace over the drawing.",
      {{field("revision_id", &R::revision_id,
              S::nullable(S::string("a revision: HEAD, a branch, final, an id or a unique prefix (default: the input scene)"))),
        field("return_trace", &R::return_trace,
              S::with_default(S::boolean("add each step's per-tick pose log (large)"), false))}},
      S::object({{"total_time_ms", S::number("the whole drawing: sv-simulate's draw time", 0)},
                 {"motion_time_ms", S::number("moving: the evaluation scorer's time", 0)},
                 {"pen_time_ms", S::number("pen lifts and drops", 0)},
                 {"ppi", S::number("the robot's scale, pixels per inch", 0)},
                 {"steps", S::array(step, "in the order the robot executes them")}},
                {"total_time_ms", "steps"}),
      robot_simulate);
}

}  // namespace

// The entries defined above, each after its handler (the catalog number, not this list, orders them).
void add_evaluation_tools(std::vector<Tool>& out) {
  for (auto entry : {evaluate_revision_entry, compare_revisions_entry, project_pareto_position_entry,
                     robot_simulate_entry})
    out.push_back(entry());
}

}  // namespace sv
