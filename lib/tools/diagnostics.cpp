// Diagnostics: where the drawing departs from the source (fit, noise, coverage), where the
// robot spends its time, which near-relations and topological defects the geometry carries.
// Every finding names the primitives it is about and where it is; distances scale with the
// stroke width, the one knob read from the image.
// Each tool's registry entry (catalog number, name, group, schemas) stands right after its handler.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <numeric>

#include "core/error.hpp"
#include "edit/edit.hpp"
#include "fit/primitive_fit.hpp"
#include "robot/motion.hpp"
#include "tools/common.hpp"
#include "tools/request.hpp"
#include "tools/schema_parts.hpp"

namespace sv {

namespace {

namespace S = schema;

double turn_rad(Vec2 from, Vec2 to) { return std::atan2(cross(from, to), dot(from, to)); }

// ---------------------------------------------------------------- AnalyzeGeometricFit

struct FitReport {
  const Primitive* p = nullptr;
  int points = 0;
  double rms = 0, max_dev = 0, mean_signed = 0, hausdorff = 0, chamfer = 0;
  bool flagged = false;
  std::string kind;  // suggested issue kind, "" when none
};

// Signed distance: positive on the left of travel (the +90° side in the y-down frame).
double signed_distance(const Shape& s, Vec2 q) {
  if (s.type == PrimType::line) return cross(unit(s.p1 - s.p0), q - s.p0);
  if (s.type == PrimType::circle || std::isfinite(s.radius)) {
    double d = dist(q, s.center) - s.radius;
    return s.type == PrimType::arc && s.bulge < 0 ? -d : d;
  }
  return s.distance_to(q);
}

// Where each finding of the diagnostics is.
json finding_location_schema() { return S::point("where the finding is, image pixels"); }

FitReport fit_report(const Scene& sc, const Primitive& p, double threshold) {
  FitReport r;
  r.p = &p;
  Polyline src = source_points(sc, p);
  r.points = static_cast<int>(src.size());
  if (src.empty()) {  // no provenance: the stage's own residuals
    r.rms = p.fit_rms_px, r.max_dev = p.fit_max_px, r.hausdorff = p.fit_max_px;
  } else {
    double ss = 0, sum = 0;
    for (Vec2 q : src) {
      double d = p.shape.distance_to(q);
      ss += d * d;
      sum += signed_distance(p.shape, q);
      r.max_dev = std::max(r.max_dev, d);
    }
    r.rms = std::sqrt(ss / src.size());
    r.mean_signed = sum / src.size();
    // The other direction: primitive samples to the source polyline.
    NearestPoints to_src({src}, 0.25);
    double worst = 0, total = 0;
    Polyline samples = p.shape.sample(0.5);
    for (Vec2 q : samples) {
      double d = to_src.distance(q);
      worst = std::max(worst, d);
      total += d;
    }
    r.chamfer = samples.empty() ? 0 : total / samples.size();
    r.hausdorff = std::max(r.max_dev, worst);
  }
  r.flagged = r.max_dev > threshold || r.hausdorff > threshold;
  if (r.flagged) {
    // A bow to one side means the wrong kind of curve; a local excursion means a washed-out
    // detail (a corner or a bump cut across).
    bool bowed = r.rms > 0 && std::abs(r.mean_signed) > 0.5 * r.rms;
    r.kind = p.shape.type == PrimType::line && bowed ? "wrong_primitive_type" : "over_smoothed";
  }
  return r;
}

struct FitRequest : RegionRequest {
  json filter;  // primitive_filter's shape, as filtered_primitives takes it
  std::vector<std::string> metrics;
  std::optional<double> flag_threshold_px;  // none: half a stroke width, at least 1 px
};

ToolResult analyze_geometric_fit(const ToolContext& ctx, const FitRequest& req) {
  ToolResult r;
  Scene diagnosed;
  if (wants_issues(req.filter)) diagnosed = with_diagnosed_issues(ctx);
  const Scene& s = wants_issues(req.filter) ? diagnosed : ctx.scene;
  Scope scope = scope_of_regions(s, {req.region, req.filter.value("in_region", json())});
  Drawing d = drawing_of(s);
  const double sw = stroke_width_of(s);
  // Half a stroke width: the drawn line then stays inside the source ink.
  const double threshold = req.flag_threshold_px.value_or(std::max(1.0, 0.5 * sw));
  const std::set<std::string> metrics(req.metrics.begin(), req.metrics.end());
  std::vector<FitReport> reps;
  for (const Primitive* p : filtered_primitives(s, d, req.filter, scope)) reps.push_back(fit_report(s, *p, threshold));
  std::stable_sort(reps.begin(), reps.end(), [](const FitReport& a, const FitReport& b) { return a.max_dev > b.max_dev; });
  json list = json::array();
  std::string text;
  int flagged = 0;
  for (const auto& f : reps) {
    json o = {{"primitive_id", f.p->id}, {"rms_px", round3(f.rms)}, {"max_dev_px", round3(f.max_dev)},
              {"flagged", f.flagged}, {"suggested_kind", f.kind.empty() ? json(nullptr) : json(f.kind)},
              {"location", point_json(shape_mid(f.p->shape))}, {"point_count", f.points}};
    if (metrics.count("hausdorff")) o["hausdorff_px"] = round3(f.hausdorff);
    if (metrics.count("directed_chamfer")) o["directed_chamfer_px"] = round3(f.chamfer);
    list.push_back(o);
    flagged += f.flagged;
    if (f.flagged)
      text += fmt::format("{} rms {:.2f} max {:.2f} at {} -> {}\n", f.p->id, f.rms, f.max_dev, pt_text(shape_mid(f.p->shape)), f.kind);
  }
  r.fields = {{"reports", list}, {"flag_threshold_px", round3(threshold)}, {"flagged_count", flagged}};
  double worst = reps.empty() ? 0 : reps.front().max_dev;
  r.llm_text = fmt::format("{} primitives checked, {} flagged (max deviation > {:.2f} px); worst {:.2f} px\n", reps.size(),
                           flagged, threshold, worst) + text;
  r.human_text = r.llm_text;
  for (size_t i = 0; i < reps.size() && i < 10; ++i)
    r.human_text += fmt::format("  #{} {}: rms {:.2f}, max {:.2f}, Hausdorff {:.2f}, chamfer {:.2f} px over {} points\n", i + 1,
                                reps[i].p->id, reps[i].rms, reps[i].max_dev, reps[i].hausdorff, reps[i].chamfer, reps[i].points);
  View v = scene_view(ctx, s, scope, fmt::format("fit deviation (red at {:.1f} px and above)", threshold));
  for (const auto& f : reps) {
    v.shape(f.p->shape, color::ramp(f.max_dev / threshold), 3);
    if (f.flagged) v.label_shape(f.p->shape, f.p->id, color::missed);
  }
  v.legend({{"0 px", color::ramp(0)}, {fmt::format("{:.1f} px", threshold / 2), color::ramp(0.5)},
            {fmt::format(">= {:.1f} px (flagged)", threshold), color::ramp(1)}});
  r.images["fit"] = v.finish();
  if (!v.labels_note().empty()) r.warnings.push_back(v.labels_note());
  return r;
}

Tool analyze_geometric_fit_entry() {
  using R = FitRequest;
  return typed_tool<R>(
      9, "AnalyzeGeometricFit", "diagnostics",
      "Per-primitive fit against the source points it was fitted to: rms, max deviation, Hausdorff, "
      "directed chamfer; flags and the issue kind to suspect.",
      {{field("filter", &R::filter, S::with_default(S::primitive_filter(), json::object())),
        field("metrics", &R::metrics,
              S::with_default(S::array(S::enumeration({"rms", "max_dev", "hausdorff", "directed_chamfer"}, "a measure"), "measures to report"),
                              json::array({"rms", "max_dev"}))),
        field("flag_threshold_px", &R::flag_threshold_px,
              S::nullable(S::number("flag above this deviation (default half a stroke width, at least 1 px)", 0)))}},
      S::object({{"reports", S::array(S::object({{"primitive_id", S::string("the primitive")},
                                                 {"rms_px", S::number("rms distance of its source points", 0)},
                                                 {"max_dev_px", S::number("largest distance of a source point", 0)},
                                                 {"hausdorff_px", S::number("Hausdorff distance to its source points", 0)},
                                                 {"directed_chamfer_px", S::number("directed chamfer distance to its source points", 0)},
                                                 {"flagged", S::boolean("its deviation is above flag_threshold_px")},
                                                 {"suggested_kind", S::nullable(S::issue_kind())},
                                                 {"location", finding_location_schema()},
                                                 {"point_count", S::integer("source points measured")}},
                                                {"primitive_id", "rms_px", "max_dev_px", "flagged", "suggested_kind", "location"},
                                                "one primitive's fit"), "worst first")},
                 {"flag_threshold_px", S::number("the deviation flagged above", 0)}, {"flagged_count", S::integer("primitives flagged")}},
                {"reports", "flag_threshold_px"}),
      analyze_geometric_fit);
}

// ---------------------------------------------------------------- IdentifyNoise

struct NoiseParams {
  double amplitude_sw;  // a wiggle smaller than this (in stroke widths) is tremor, not shape
  double piece_sw;      // pieces shorter than this are tremor-sized
  double speck_sw;      // isolated marks shorter than this are specks
  int min_pieces;
};

NoiseParams noise_params(const std::string& sensitivity) {
  if (sensitivity == "aggressive") return {1.0, 8, 2.0, 3};
  if (sensitivity == "conservative") return {0.5, 4, 0.5, 4};
  return {0.75, 6, 1.0, 3};
}

// Largest distance of the points from their best line (orthogonal regression) or circle
// (Kåsa), whichever fits better; `what` names it.
double smooth_fit_amplitude(const Polyline& pts, std::string& what, double& rms) {
  // Distances to the infinite best line and to the whole best circle: the amplitude of what
  // rides on the smooth shape, not the shape's extent.
  const fitting::LineFit line = fitting::fit_line(pts);
  const Vec2 n = perp(line.dir);
  double line_max = 0, line_ss = 0;
  for (Vec2 p : pts) {
    double d = std::abs(dot(p - line.centroid, n));
    line_max = std::max(line_max, d), line_ss += d * d;
  }
  double circ_max = INFINITY, circ_ss = INFINITY;
  if (auto c = fitting::kasa_circle(pts)) {
    circ_max = 0, circ_ss = 0;
    for (Vec2 p : pts) {
      double d = std::abs(dist(p, c->center) - c->radius);
      circ_max = std::max(circ_max, d), circ_ss += d * d;
    }
  }
  const double n_pts = double(pts.size());
  if (circ_max < 0.8 * line_max) {
    what = "an arc";
    rms = std::sqrt(circ_ss / n_pts);
    return circ_max;
  }
  what = "a line";
  rms = std::sqrt(line_ss / n_pts);
  return line_max;
}

struct Verdict {
  std::string verdict = "likely_signal", action = "keep";
  std::vector<std::string> evidence;
};

// Why an isolated short mark is a deliberate dot (the dot of an i, a full stop), "" when it is
// not: its ink is round — the graph collapsed it to a dot, or it is no longer than it is wide —
// and at least most of a stroke wide. A speck of noise is smaller ink, or a sliver.
std::string deliberate_dot(const Scene& s, const Primitive& p, double sw) {
  const Edge* e = s.graph && !p.edge.empty() ? s.graph->edge(p.edge) : nullptr;
  if (!e) return "";
  bool graph_dot = false;
  for (const std::string& id : {e->v0, e->v1})
    if (const Vertex* v = s.graph->vertex(id)) graph_dot = graph_dot || v->kind == "dot";
  const double len = std::max(p.shape.length(), e->points.empty() ? 0.0 : dist(e->points.front(), e->points.back()));
  const bool round = graph_dot || len <= e->width_px;
  if (!round || e->width_px < 0.75 * sw) return "";
  return fmt::format("isolated round mark {:.1f} px wide and {:.1f} px long ({}): a deliberate dot, not a speck",
                     e->width_px, len, graph_dot ? "the stroke graph's dot" : "no longer than wide");
}

// Runs of consecutive primitives along one source edge, joined end to start.
std::vector<std::vector<const Primitive*>> edge_runs(const Scene& s) {
  std::map<std::string, std::vector<const Primitive*>> by_edge;
  if (s.primitives)
    for (const auto& p : *s.primitives)
      if (!p.edge.empty() && p.shape.type != PrimType::circle) by_edge[p.edge].push_back(&p);
  std::vector<std::vector<const Primitive*>> runs;
  for (auto& [e, ps] : by_edge) {
    std::stable_sort(ps.begin(), ps.end(), [](auto* a, auto* b) { return a->span0 < b->span0; });
    std::vector<const Primitive*> run;
    for (const Primitive* p : ps) {
      if (!run.empty() && dist(run.back()->shape.p1, p->shape.p0) > 0.5) {
        runs.push_back(run);
        run.clear();
      }
      run.push_back(p);
    }
    if (!run.empty()) runs.push_back(run);
  }
  return runs;
}

// Tremor: several short pieces whose joints turn alternately left and right, all within a
// small amplitude of one smooth line or arc. Such pieces encode the hand's shake.
void judge_tremor(const std::vector<const Primitive*>& run, const NoiseParams& np, double sw,
                  std::map<std::string, Verdict>& out) {
  size_t i = 0;
  while (i < run.size()) {
    size_t j = i;
    while (j < run.size() && run[j]->shape.length() < np.piece_sw * sw) ++j;
    if (j - i >= size_t(np.min_pieces)) {
      Polyline pts;
      double len = 0;
      for (size_t k = i; k < j; ++k) {
        Polyline smp = run[k]->shape.sample(0.5);
        pts.insert(pts.end(), smp.begin() + (k == i ? 0 : 1), smp.end());
        len += run[k]->shape.length();
      }
      int joints = 0, alternations = 0, prev_sign = 0;
      for (size_t k = i + 1; k < j; ++k) {
        double t = turn_rad(run[k - 1]->shape.end_tangent(), run[k]->shape.start_tangent());
        int sign = t > 1e-3 ? 1 : t < -1e-3 ? -1 : 0;
        ++joints;
        if (sign != 0 && prev_sign != 0 && sign != prev_sign) ++alternations;
        if (sign != 0) prev_sign = sign;
      }
      std::string what;
      double rms = 0, amp = smooth_fit_amplitude(pts, what, rms);
      bool small = amp <= np.amplitude_sw * sw;
      bool zigzag = joints >= 2 && alternations * 2 >= joints - 1;
      Verdict v;
      v.evidence = {fmt::format("{} pieces {}..{} over {:.0f} px, mean piece {:.1f} px (< {:.0f} stroke widths)", j - i,
                                run[i]->id, run[j - 1]->id, len, len / (j - i), np.piece_sw),
                    fmt::format("turn direction alternates at {} of {} joints", alternations, std::max(0, joints - 1)),
                    fmt::format("amplitude {:.2f} px = {:.2f} stroke widths about {} (rms {:.2f} px)", amp, amp / sw, what, rms)};
      if (small && zigzag) {
        v.verdict = "likely_noise", v.action = "smooth";
      } else if (small) {
        v.verdict = "ambiguous", v.action = "investigate";
      }
      if (v.verdict != "likely_signal")
        for (size_t k = i; k < j; ++k) out[run[k]->id] = v;
    }
    i = j + 1;
  }
}

struct NoiseRequest : RegionRequest {
  json in_region;
  std::string sensitivity;
};

ToolResult identify_noise(const ToolContext& ctx, const NoiseRequest& req) {
  ToolResult r;
  const Scene& s = ctx.scene;
  Scope scope = scope_of_regions(s, {req.region, req.in_region});
  const double sw = stroke_width_of(s);
  const std::string& sensitivity = req.sensitivity;
  const NoiseParams np = noise_params(sensitivity);
  std::map<std::string, Verdict> judged;
  for (const auto& run : edge_runs(s)) judge_tremor(run, np, sw, judged);
  // Specks: short marks touching nothing else.
  if (s.primitives)
    for (const auto& p : *s.primitives) {
      if (judged.count(p.id) || p.shape.length() >= np.speck_sw * sw) continue;
      bool touches = false;
      for (const auto& q : *s.primitives)
        if (q.id != p.id)
          for (Vec2 e : shape_samples(p.shape)) touches = touches || q.shape.distance_to(e) <= sw;
      if (!touches) {
        if (std::string why = deliberate_dot(s, p, sw); !why.empty())
          judged[p.id] = {"likely_signal", "keep", {why}};
        else
          judged[p.id] = {"likely_noise", "discard",
                          {fmt::format("isolated mark {:.1f} px long (< {:.1f} stroke widths), touching no other primitive",
                                       p.shape.length(), np.speck_sw)}};
      }
    }
  json list = json::array();
  std::string text;
  std::map<std::string, int> counts = {{"likely_noise", 0}, {"ambiguous", 0}, {"likely_signal", 0}};
  std::vector<std::pair<std::vector<std::string>, std::string>> groups;
  if (s.primitives)
    for (const auto& p : *s.primitives) {
      if (!scope.touches(p)) continue;
      Verdict v = judged.count(p.id) ? judged[p.id] : Verdict{};
      if (v.evidence.empty())
        v.evidence = {fmt::format("{} of {:.1f} px, fit rms {:.2f} px: no tremor or speck pattern", prim_type_name(p.shape.type),
                                  p.shape.length(), p.fit_rms_px)};
      counts[v.verdict]++;
      list.push_back({{"primitive_id", p.id}, {"verdict", v.verdict}, {"evidence", v.evidence},
                      {"proposed_action", v.action}, {"location", point_json(shape_mid(p.shape))}});
      if (v.verdict != "likely_signal") {
        // Pieces judged together share their evidence: one line per group.
        std::string why = fmt::format("{} -> {}: {}", v.verdict, v.action, fmt::join(v.evidence, "; "));
        if (groups.empty() || groups.back().second != why) groups.push_back({{}, why});
        groups.back().first.push_back(p.id);
      }
    }
  for (const auto& [ids, why] : groups)
    text += fmt::format("{} {}\n", ids.size() > 2 ? ids.front() + ".." + ids.back() : fmt::format("{}", fmt::join(ids, ",")), why);
  r.fields = {{"verdicts", list}, {"counts", counts}, {"sensitivity", sensitivity}};
  r.llm_text = fmt::format("{} likely noise, {} ambiguous, {} likely signal ({})\n", counts["likely_noise"],
                           counts["ambiguous"], counts["likely_signal"], sensitivity) + text;
  View v = scene_view(ctx, s, scope, "noise verdicts");
  if (s.primitives)
    for (const auto& p : *s.primitives) {
      auto it = judged.find(p.id);
      cv::Scalar c = it == judged.end() ? color::faded : it->second.verdict == "likely_noise" ? color::missed : color::arc;
      v.shape(p.shape, c, 2);
    }
  v.legend({{"likely noise", color::missed}, {"ambiguous", color::arc}, {"likely signal", color::faded}});
  r.images["noise"] = v.finish();
  return r;
}

Tool identify_noise_entry() {
  using R = NoiseRequest;
  return typed_tool<R>(
      10, "IdentifyNoise", "diagnostics",
      "Signal or noise, per primitive, with evidence: hand tremor encoded as zig-zag pieces, isolated specks.",
      {{field("in_region", &R::in_region, S::region("only primitives touching this region")),
        field("sensitivity", &R::sensitivity,
              S::with_default(S::enumeration({"aggressive", "balanced", "conservative"}, "how readily a piece is called noise"), "balanced"))}},
      S::object({{"verdicts", S::array(S::object({{"primitive_id", S::string("the primitive")},
                                                  {"verdict", S::enumeration({"likely_noise", "ambiguous", "likely_signal"}, "noise or signal")},
                                                  {"evidence", S::array(S::string("a fact"), "measured facts behind the verdict")},
                                                  {"proposed_action", S::enumeration({"smooth", "discard", "keep", "investigate"}, "what to do with it")},
                                                  {"location", finding_location_schema()}},
                                                 {"primitive_id", "verdict", "evidence", "proposed_action", "location"}, "one primitive's verdict"),
                                      "the verdicts")},
                 {"counts", {{"type", "object"}, {"additionalProperties", {{"type", "integer"}}}, {"description", "verdict -> primitives"}}},
                 {"sensitivity", S::string("the sensitivity used")}},
                {"verdicts"}),
      identify_noise);
}

// ---------------------------------------------------------------- AnalyzeCoverage

struct CoverageRequest : RegionRequest {
  std::optional<std::string> revision;  // none: the input scene
  std::optional<double> tolerance_px;   // none: default_tolerance of the stroke width
  bool cluster_findings;
};

ToolResult analyze_coverage_tool(const ToolContext& ctx, const CoverageRequest& req) {
  ToolResult r;
  Scene holder;
  const Scene& s = revision_scene(ctx, req.revision.value_or(""), holder);
  Scope scope = scope_of_regions(s, {req.region});
  const double sw = stroke_width_of(s);
  const double tol = req.tolerance_px.value_or(default_tolerance(sw));
  Drawing d = drawing_of(s);
  const FidelityReference ref = fidelity_reference(ctx, s, r.warnings);
  CoverageReport cov = analyze_coverage(s, d, ref.paths, tol, scope, req.cluster_findings);
  if (ref.paths.empty()) r.warnings.push_back("no reference centrelines: nothing to compare the drawing with");
  json findings = json::array();
  std::string text;
  BBox pad;
  for (const auto& f : cov.findings) {
    BBox b = f.box;
    b.x0 -= tol, b.y0 -= tol, b.x1 += tol, b.y1 += tol;
    findings.push_back({{"region", rect_json(b)}, {"kind", f.kind}, {"area_px", f.area_px}, {"length_px", round3(f.length_px)},
                        {"nearest_primitive_id", f.nearest_primitive.empty() ? json(nullptr) : json(f.nearest_primitive)},
                        {"nearest_distance_px", round3(f.nearest_distance_px)}, {"severity", f.severity},
                        {"location", point_json(f.centroid)}});
    text += fmt::format("{} {} {:.0f} px at {} box [{:.0f},{:.0f},{:.0f},{:.0f}] near {}\n", f.severity, f.kind, f.length_px,
                        pt_text(f.centroid), b.x0, b.y0, b.x1, b.y1, f.nearest_primitive.empty() ? "-" : f.nearest_primitive);
  }
  const Coverage& m = cov.metrics;
  r.fields = {{"precision", round3(m.precision)}, {"recall", round3(m.recall)}, {"f1", round3(m.f1)},
              {"chamfer_px", round3(m.chamfer_px)}, {"hausdorff_px", round3(m.hausdorff_px)}, {"tolerance_px", round3(tol)},
              {"findings", findings}, {"reference", ref.describe()}};
  r.llm_text = fmt::format("vs {} at {:.1f} px: precision {:.3f} recall {:.3f} f1 {:.3f} chamfer {:.2f} px; {} findings\n",
                           ref.describe(), tol, m.precision, m.recall, m.f1, m.chamfer_px, findings.size()) + text;
  View v = scene_view(ctx, s, scope, "coverage: red missed ink, green spurious ink");
  for (const auto& [id, path] : d.pieces) v.polyline(path, color::ink, 1);
  int radius = std::max(1, static_cast<int>(std::lround(0.5 * sw * v.transform().scale)));
  for (Vec2 p : cov.missed) v.dot(p, color::missed, radius);
  for (Vec2 p : cov.spurious) v.dot(p, color::spurious, radius);
  std::vector<BBox> boxes;
  std::vector<std::string> titles;
  for (size_t i = 0; i < cov.findings.size(); ++i) {
    const auto& f = cov.findings[i];
    v.box(f.box, f.kind == "missed_ink" ? color::missed : color::spurious, 1);
    v.text({f.box.x0, f.box.y0}, "#" + std::to_string(i + 1), color::ink, 0, -3);
    boxes.push_back(f.box);
    titles.push_back(fmt::format("#{} {} {} {:.0f} px", i + 1, f.severity, f.kind, f.length_px));
  }
  v.legend({{"missed ink", color::missed}, {"spurious ink", color::spurious}, {"drawn", color::ink}, {"source", color::source}});
  r.images["coverage"] = v.finish();
  if (!boxes.empty())
    r.images["findings"] = findings_sheet(ctx, s, boxes, titles, [&](View& t, size_t i) {
      for (const auto& [id, path] : d.pieces) t.polyline(path, color::ink, 1);
      int rr = std::max(1, static_cast<int>(std::lround(0.5 * sw * t.transform().scale)));
      for (Vec2 p : cov.missed) t.dot(p, color::missed, rr);
      for (Vec2 p : cov.spurious) t.dot(p, color::spurious, rr);
      t.box(cov.findings[i].box, color::highlight, 1);
    });
  return r;
}

Tool analyze_coverage_tool_entry() {
  using R = CoverageRequest;
  return typed_tool<R>(
      11, "AnalyzeCoverage", "diagnostics",
      "Where the drawing misses source ink or draws where there is none, clustered into regions with "
      "severity; precision, recall, f1 and chamfer against the source image's ink centrelines.",
      {{field("revision", &R::revision, S::nullable(S::string("another revision (default: the input scene)"))),
        field("tolerance_px", &R::tolerance_px,
              S::nullable(S::number("distance that still counts as covered (default max(2, stroke width / 2))", 0))),
        field("cluster_findings", &R::cluster_findings,
              S::with_default(S::boolean("group adjacent disagreements into regions"), true))}},
      S::object({{"precision", S::number("share of the drawing on the ink", 0)}, {"recall", S::number("share of the ink drawn", 0)},
                 {"f1", S::number("harmonic mean of precision and recall", 0)},
                 {"chamfer_px", S::number("mean distance between drawing and ink, both ways", 0)},
                 {"hausdorff_px", S::number("largest such distance", 0)}, {"tolerance_px", S::number("distance that counts as covered", 0)},
                 {"findings", S::array(S::object({{"region", S::rect_region()},
                                                  {"kind", S::enumeration({"missed_ink", "spurious_ink"}, "ink not drawn, or drawn with no ink")},
                                                  {"area_px", S::integer("ink area: length times stroke width")},
                                                  {"length_px", S::number("centreline length (a dot counts one stroke width)", 0)},
                                                  {"nearest_primitive_id", S::nullable(S::string("the primitive closest to it"))},
                                                  {"nearest_distance_px", S::number("its distance", 0)},
                                                  {"severity", S::enumeration({"minor", "moderate", "severe"}, "by length: under 2, under 8, else stroke widths")},
                                                  {"location", finding_location_schema()}},
                                                 {"region", "kind", "area_px", "nearest_primitive_id", "severity", "location"},
                                                 "one disagreement"), "largest first")},
                 {"reference", S::string("the ink's centrelines, or without the image the stroke graph's")}},
                {"precision", "recall", "f1", "chamfer_px", "findings"}),
      analyze_coverage_tool);
}

// ---------------------------------------------------------------- IdentifyExpensiveOperations

struct Op {
  std::string kind, after, before, rationale;
  double time_s = 0, magnitude = 0;
  std::string unit;
  Vec2 at;
};

// How much longer an arc takes than a straight line of the same length.
double arc_line_ratio(const DrawStep& st, const Robot& robot) {
  double len = std::abs(deg2rad(st.cmd.degrees)) * std::abs(st.cmd.radius);
  Command line;
  line.kind = Command::Kind::line;
  line.distance = len;
  double lt = len > 0 ? command_time_s(line, robot) : 0;
  return lt > 0 ? st.time_s / lt : 0;
}

struct ExpensiveRequest : RegionRequest {
  int top_k;
  std::vector<std::string> kinds;
};

ToolResult identify_expensive_operations(const ToolContext& ctx, const ExpensiveRequest& req) {
  ToolResult r;
  const Scene& s = ctx.scene;
  Scope scope = scope_of_regions(s, {req.region});
  Drawing d = drawing_of(s);
  const std::set<std::string> kinds(req.kinds.begin(), req.kinds.end());
  if (!d.from_commands) r.warnings.push_back("no command stream: nothing to time (run sv-route)");
  // The robot's wheel base in pixels: tighter arcs turn the inner wheel backwards.
  const double wheel_px = 2.93 * d.ppi;
  std::vector<Op> ops;
  auto name = [](const std::string& id) { return id.empty() ? std::string("the start") : id; };
  for (size_t k = 0; k < d.steps.size(); ++k) {
    const DrawStep& st = d.steps[k];
    Vec2 at{st.start.x, st.start.y};
    if (!scope.contains(at) && !scope.contains({st.end.x, st.end.y})) continue;
    const Command& c = st.cmd;
    // A plotter's spins only say where the next command points: they take no time.
    if (c.kind == Command::Kind::spin && kinds.count("spin") && !d.robot.plotter() && std::abs(c.degrees) >= 1) {
      bool at_joint = k + 1 < d.steps.size() && d.steps[k + 1].pen_down && !st.after.empty();
      std::string why = at_joint
          ? fmt::format("spin of {:.0f}° between {} and {} at {}: the next stroke leaves {}", std::abs(c.degrees), name(st.after),
                        name(st.before), pt_text(at),
                        std::abs(c.degrees) > 135 ? std::string("nearly opposite to the way the last one arrived")
                                                  : fmt::format("at {:.0f}° to the way the last one arrived", std::abs(c.degrees)))
          : fmt::format("spin of {:.0f}° at {} to face the next move towards {}", std::abs(c.degrees), pt_text(at), name(st.before));
      ops.push_back({"spin", st.after, st.before, why, st.time_s, std::abs(c.degrees), "deg", at});
    }
    if (c.kind != Command::Kind::spin && !c.pen_down && kinds.count("pen_up"))
      ops.push_back({"pen_up", st.after, st.before,
                     fmt::format("pen-up travel of {:.0f} px from {} to {}", c.length_px(), name(st.after), name(st.before)),
                     st.time_s, c.length_px(), "px", at});
    if (c.kind == Command::Kind::arc && c.pen_down) {
      // One cause per arc, so that each second is counted once: inside the wheel base the arc
      // is tight (that is why it is slow), else slow when it takes much longer than a line. An
      // arc drawing several primitives (ids joined by ',') is named by its first.
      const double ratio = arc_line_ratio(st, d.robot);
      const std::string first = c.primitive.substr(0, c.primitive.find(','));
      std::string what = c.primitive;
      std::replace(what.begin(), what.end(), ',', '+');
      if (kinds.count("tight_arc") && !d.robot.plotter() && std::abs(c.radius) < wheel_px)
        ops.push_back({"tight_arc", "", first,
                       fmt::format("arc of {} with radius {:.1f} px, inside the wheel base ({:.1f} px): the inner wheel runs "
                                   "backwards; it takes {:.1f}x the time of a straight line of its length",
                                   what, std::abs(c.radius), wheel_px, ratio),
                       st.time_s, std::abs(c.radius), "px", at});
      else if (kinds.count("slow_arc") && ratio >= 1.5)
        ops.push_back({"slow_arc", "", first,
                       fmt::format("arc of {} takes {:.1f}x the time of a straight line of its length", what, ratio),
                       st.time_s, ratio, "x", at});
    }
  }
  std::stable_sort(ops.begin(), ops.end(), [](const Op& a, const Op& b) { return a.time_s > b.time_s; });
  double all = 0;
  for (const auto& o : ops) all += o.time_s;
  const size_t k = std::min(ops.size(), static_cast<size_t>(req.top_k));
  double top = 0;
  for (size_t i = 0; i < k; ++i) top += ops[i].time_s;
  std::string pareto = ops.empty() ? "no costly operations of the kinds asked"
      : fmt::format("top {} of {} operations take {:.1f} s, {:.0f}% of the {:.1f} s these kinds cost and {:.0f}% of the {:.1f} s total",
                    k, ops.size(), top, all > 0 ? 100 * top / all : 0, all, d.total_s > 0 ? 100 * top / d.total_s : 0, d.total_s);
  json list = json::array();
  std::string text;
  for (size_t i = 0; i < k; ++i) {
    const Op& o = ops[i];
    list.push_back({{"after_primitive_id", o.after.empty() ? json(nullptr) : json(o.after)},
                    {"before_primitive_id", o.before.empty() ? json(nullptr) : json(o.before)},
                    {"kind", o.kind}, {"time_ms", round3(1000 * o.time_s)}, {"magnitude", round3(o.magnitude)},
                    {"unit", o.unit}, {"rationale", o.rationale}, {"location", point_json(o.at)}});
    text += fmt::format("#{} {} {:.0f} ms: {}\n", i + 1, o.kind, 1000 * o.time_s, o.rationale);
  }
  r.fields = {{"operations", list}, {"pareto_summary", pareto}, {"total_time_ms", round3(1000 * d.total_s)}};
  r.llm_text = pareto + "\n" + text;
  View v = scene_view(ctx, s, scope, "costly operations (rings: spins, dashed: pen-up travel)");
  for (const auto& [id, path] : d.pieces) v.polyline(path, color::faded, 2);
  for (size_t i = 0; i < k; ++i) {
    const Op& o = ops[i];
    cv::Scalar c = o.kind == "spin" ? color::missed : o.kind == "pen_up" ? color::line : color::arc;
    // Labels of operations at about one place go one under another.
    int row = 0;
    for (size_t j = 0; j < i; ++j) row += dist(ops[j].at, o.at) * v.transform().scale < 15;
    if (o.kind == "pen_up") {
      for (const auto& st : d.steps)
        if (st.cmd.kind != Command::Kind::spin && !st.cmd.pen_down && Vec2{st.start.x, st.start.y} == o.at)
          v.polyline(st.path, c, 2, true);
    } else {
      v.ring(o.at, 6 + 6 * std::min(3.0, o.time_s), c, 2);
    }
    // The view's font has no degree sign.
    v.text(o.at, fmt::format("#{} {} {:.0f} {}", i + 1, o.kind, o.magnitude, o.unit), c, 12, -8 + 13.0 * row);
  }
  v.legend({{"spin", color::missed}, {"pen-up travel", color::line}, {"slow or tight arc", color::arc}});
  r.images["operations"] = v.finish();
  return r;
}

Tool identify_expensive_operations_entry() {
  using R = ExpensiveRequest;
  return typed_tool<R>(
      12, "IdentifyExpensiveOperations", "diagnostics",
      "Where the robot's time goes: spins, pen-up travel, slow and tight arcs, costliest first, with a Pareto summary.",
      {{field("top_k", &R::top_k, S::with_default(S::integer("at most this many operations", 1), 20)),
        field("kinds", &R::kinds,
              S::with_default(S::array(S::enumeration({"pen_up", "spin", "slow_arc", "tight_arc"}, "an operation kind"), "kinds to report"),
                              json::array({"pen_up", "spin"})))}},
      S::object({{"operations", S::array(S::object({{"after_primitive_id", S::nullable(S::string("drawn just before it"))},
                                                    {"before_primitive_id", S::nullable(S::string("drawn just after it"))},
                                                    {"kind", S::enumeration({"pen_up", "spin", "slow_arc", "tight_arc"}, "what costs the time")},
                                                    {"time_ms", S::number("its time", 0)}, {"magnitude", S::number("degrees, px or ratio", 0)},
                                                    {"unit", S::string("deg, px or x")}, {"rationale", S::string("why it costs")},
                                                    {"location", finding_location_schema()}},
                                                   {"after_primitive_id", "before_primitive_id", "kind", "time_ms", "rationale", "location"},
                                                   "one operation"), "costliest first")},
                 {"pareto_summary", S::string("how few operations take most of the time")},
                 {"total_time_ms", S::number("the whole drawing's time", 0)}},
                {"operations", "pareto_summary"}),
      identify_expensive_operations);
}

// ---------------------------------------------------------------- CheckForConsistency

struct Finding {
  std::string relation;
  std::vector<std::string> ids;
  double deviation = 0;
  std::string unit, action;
  Vec2 at;
  json edit = nullptr;  // the edit request that makes it exact, with snap_exact
};

double line_angle_deg(const Shape& s) { return rad2deg(angle_of(s.p1 - s.p0)); }
// Difference of two undirected line angles, in [0, 90].
double undirected_diff(double a, double b) {
  double d = std::fmod(std::abs(a - b), 180.0);
  return std::min(d, 180 - d);
}

struct ConsistencyRequest : RegionRequest {
  std::vector<std::string> relations;
  double angular_tolerance_deg;
  std::optional<double> distance_tolerance_px;  // none: the stroke width
};

ToolResult check_for_consistency(const ToolContext& ctx, const ConsistencyRequest& req) {
  ToolResult r;
  const Scene& s = ctx.scene;
  Scope scope = scope_of_regions(s, {req.region});
  const double sw = stroke_width_of(s);
  const double atol = req.angular_tolerance_deg, dtol = req.distance_tolerance_px.value_or(sw);
  // Below these a relation already holds (the beautify stage enforced it); not a finding.
  const double exact_deg = 0.05, exact_px = 0.01;
  const std::set<std::string> want(req.relations.begin(), req.relations.end());
  std::vector<const Primitive*> ps;
  if (s.primitives)
    for (const auto& p : *s.primitives)
      if (scope.touches(p)) ps.push_back(&p);
  std::vector<Finding> out;
  // Well inside the tolerance the relation is surely meant; near its edge, look first.
  auto action = [&](double dev, double tol) { return dev <= 0.75 * tol ? "snap_exact" : "investigate"; };
  auto add = [&](const std::string& rel, const Primitive* a, const Primitive* b, double dev, const std::string& unit, double tol) {
    out.push_back({rel, {a->id, b->id}, dev, unit, action(dev, tol), (shape_mid(a->shape) + shape_mid(b->shape)) * 0.5});
  };
  const double min_line = 2 * sw;  // shorter lines have no reliable direction
  for (size_t i = 0; i < ps.size(); ++i)
    for (size_t j = i + 1; j < ps.size(); ++j) {
      const Primitive *a = ps[i], *b = ps[j];
      const Shape &A = a->shape, &B = b->shape;
      bool lines = A.type == PrimType::line && B.type == PrimType::line && A.length() >= min_line && B.length() >= min_line;
      if (lines) {
        double d = undirected_diff(line_angle_deg(A), line_angle_deg(B));
        if (want.count("parallel") && d > exact_deg && d <= atol) add("parallel", a, b, d, "deg", atol);
        if (want.count("perpendicular") && std::abs(90 - d) > exact_deg && std::abs(90 - d) <= atol)
          add("perpendicular", a, b, std::abs(90 - d), "deg", atol);
        if (want.count("collinear") && d <= atol) {
          Vec2 n = perp(unit(A.p1 - A.p0));
          double off = std::max(std::abs(dot(B.p0 - A.p0, n)), std::abs(dot(B.p1 - A.p0, n)));
          if (off > exact_px && off <= dtol) add("collinear", a, b, off, "px", dtol);
        }
      }
      bool round_a = A.type != PrimType::line && std::isfinite(A.radius), round_b = B.type != PrimType::line && std::isfinite(B.radius);
      if (round_a && round_b) {
        double dr = std::abs(A.radius - B.radius), dc = dist(A.center, B.center);
        if (want.count("equal_radius") && dr > exact_px && dr <= dtol) add("equal_radius", a, b, dr, "px", dtol);
        if (want.count("concentric") && dc > exact_px && dc <= dtol) add("concentric", a, b, dc, "px", dtol);
      }
      if (A.type != PrimType::circle && B.type != PrimType::circle) {
        // Each end with the direction leaving the joint along its primitive; G1 when the two
        // directions are opposite.
        for (auto [pa, out_a] : {std::pair{A.p0, A.start_tangent()}, std::pair{A.p1, -A.end_tangent()}})
          for (auto [pb, out_b] : {std::pair{B.p0, B.start_tangent()}, std::pair{B.p1, -B.end_tangent()}}) {
            double gap = dist(pa, pb);
            if (want.count("endpoint_coincident") && gap > exact_px && gap <= dtol)
              out.push_back({"endpoint_coincident", {a->id, b->id}, gap, "px", action(gap, dtol), (pa + pb) * 0.5});
            if (want.count("tangent_continuity") && gap <= dtol) {
              double defl = std::abs(rad2deg(turn_rad(-out_a, out_b)));
              if (defl > exact_deg && defl <= atol)
                out.push_back({"tangent_continuity", {a->id, b->id}, defl, "deg", action(defl, atol), (pa + pb) * 0.5});
            }
          }
      }
    }
  for (const char* axis : {"symmetry_vertical", "symmetry_horizontal"}) {
    if (!want.count(axis) || ps.empty()) continue;
    // Mirror about the centre of the drawing's bounding box.
    BBox all;
    for (auto* p : ps)
      for (Vec2 q : shape_samples(p->shape)) all.add(q);
    bool vertical = std::string(axis) == "symmetry_vertical";
    double c = vertical ? (all.x0 + all.x1) / 2 : (all.y0 + all.y1) / 2;
    auto mirror = [&](Vec2 q) { return vertical ? Vec2{2 * c - q.x, q.y} : Vec2{q.x, 2 * c - q.y}; };
    for (size_t i = 0; i < ps.size(); ++i) {
      double best = INFINITY;
      const Primitive* mate = nullptr;
      Polyline mirrored;
      for (Vec2 q : shape_samples(ps[i]->shape)) mirrored.push_back(mirror(q));
      for (size_t j = 0; j < ps.size(); ++j) {
        if (j == i || ps[j]->shape.type != ps[i]->shape.type) continue;
        double worst = 0;
        for (Vec2 q : mirrored) worst = std::max(worst, ps[j]->shape.distance_to(q));
        if (worst < best) best = worst, mate = ps[j];
      }
      if (mate && ps[i]->id < mate->id && best > exact_px && best <= dtol)
        add(axis, ps[i], mate, best, "px", dtol);
    }
  }
  std::stable_sort(out.begin(), out.end(), [](const Finding& a, const Finding& b) {
    return std::tie(a.relation, b.deviation) < std::tie(b.relation, a.deviation);
  });
  // snap_exact only with the edit that does it, and only when that edit holds: EnforceRelation
  // for the relations it knows, tried on a copy with its solver (which keeps every primitive
  // near its ink); SnapEndpoints for ends that nearly meet. Mirror symmetry about the
  // drawing's centre is no relation an edit takes as such: look first.
  static const std::set<std::string> enforceable = {"parallel", "perpendicular", "equal_radius", "concentric",
                                                    "collinear", "tangent_continuity"};
  for (auto& f : out) {
    if (f.action != "snap_exact") continue;
    if (f.relation == "endpoint_coincident") {
      f.edit = {{"tool", "SnapEndpoints"}, {"tolerance_px", std::ceil(f.deviation * 100 + 1) / 100}};
    } else if (enforceable.count(f.relation)) {
      Scene trial = s;
      try {
        enforce_relations(trial, json::array({{{"kind", f.relation}, {"primitives", f.ids}}}));
        f.edit = {{"tool", "EnforceRelation"}, {"relation", f.relation}, {"primitive_ids", f.ids}};
      } catch (const Error&) {
        f.action = "investigate";
      }
    } else {
      f.action = "investigate";
    }
  }
  json list = json::array();
  std::string text;
  for (const auto& f : out) {
    list.push_back({{"relation", f.relation}, {"primitive_ids", f.ids}, {"deviation", round3(f.deviation)},
                    {"deviation_unit", f.unit}, {"suggested_action", f.action}, {"location", point_json(f.at)},
                    {"suggested_edit", f.edit}});
    text += fmt::format("{} {} off by {:.2f} {} at {} -> {}\n", f.relation, fmt::join(f.ids, ","), f.deviation, f.unit,
                        pt_text(f.at), f.action);
  }
  r.fields = {{"findings", list}, {"checked_relations", want}, {"angular_tolerance_deg", atol},
              {"distance_tolerance_px", round3(dtol)}};
  r.llm_text = fmt::format("{} near-relations within {:.1f}° / {:.1f} px (exact ones omitted)\n", out.size(), atol, dtol) + text;
  View v = scene_view(ctx, s, scope, "near relations");
  for (auto* p : ps) v.shape(p->shape, color::faded, 2);
  for (size_t i = 0; i < out.size(); ++i)
    for (const auto& id : out[i].ids) {
      const Primitive& p = *s.primitive(id);
      v.shape(p.shape, color::highlight, 2);
      v.label_shape(p.shape, id, color::ink);
    }
  for (size_t i = 0; i < out.size() && i < 40; ++i) v.text(out[i].at, fmt::format("{} {:.1f} {}", out[i].relation, out[i].deviation, out[i].unit), color::missed, 0, 12);
  v.legend({{"in a near relation", color::highlight}, {"other", color::faded}});
  r.images["consistency"] = v.finish();
  if (!v.labels_note().empty()) r.warnings.push_back(v.labels_note());
  return r;
}

Tool check_for_consistency_entry() {
  using R = ConsistencyRequest;
  return typed_tool<R>(
      13, "CheckForConsistency", "diagnostics",
      "Near-but-not-exact relations: parallel, perpendicular, equal radius, concentric, collinear, endpoint "
      "coincidence, tangent continuity (G1), mirror symmetry.",
      {{field("relations", &R::relations,
              S::with_default(S::array(S::enumeration({"parallel", "perpendicular", "equal_radius", "concentric", "collinear",
                                                       "endpoint_coincident", "tangent_continuity", "symmetry_horizontal",
                                                       "symmetry_vertical"}, "a relation"), "relations to check"),
                              json::array({"parallel", "perpendicular", "equal_radius", "concentric", "endpoint_coincident"}))),
        field("angular_tolerance_deg", &R::angular_tolerance_deg, S::with_default(S::number("angle within which a relation nearly holds", 0), 5.0)),
        field("distance_tolerance_px", &R::distance_tolerance_px,
              S::nullable(S::number("default: the stroke width", 0)))}},
      S::object({{"findings", S::array(S::object({{"relation", S::string("the relation nearly held")},
                                                  {"primitive_ids", S::array(S::id("primitive id"), "the primitives it holds between")},
                                                  {"deviation", S::number("how far from exact", 0)},
                                                  {"deviation_unit", S::enumeration({"deg", "px"}, "unit of the deviation")},
                                                  {"suggested_action", S::enumeration({"snap_exact", "leave", "investigate"}, "snap_exact: suggested_edit makes it exact")},
                                                  {"suggested_edit", S::nullable({{"type", "object"}, {"description", "with snap_exact: the edit request ({\"tool\": NAME, ...fields}, as sv-edit takes it in a batch)"}})},
                                                  {"location", finding_location_schema()}},
                                                 {"relation", "primitive_ids", "deviation", "suggested_action", "location"},
                                                 "one near relation"), "the near relations")},
                 {"checked_relations", S::array(S::string("a relation"), "the relations checked")},
                 {"angular_tolerance_deg", S::number("the angle tolerance used", 0)},
                 {"distance_tolerance_px", S::number("the distance tolerance used", 0)}},
                {"findings"}),
      check_for_consistency);
}

// ---------------------------------------------------------------- CheckTopology

struct TopoFinding {
  std::string kind;
  std::vector<std::string> ids, vertices;
  Vec2 at;
  double gap = -1;
};

// The graph vertices within `radius` of any of `points`, in graph order: where the source
// strokes a finding is about meet or end.
std::vector<std::string> vertices_near(const Scene& s, const std::vector<Vec2>& points, double radius) {
  std::vector<std::string> out;
  if (s.graph)
    for (const auto& v : s.graph->vertices)
      for (Vec2 q : points)
        if (dist(v.p, q) <= radius) {
          out.push_back(v.id);
          break;
        }
  return out;
}

// The end vertices of the graph edges the primitives were fitted to.
std::vector<std::string> edge_vertices(const Scene& s, const std::vector<const Primitive*>& ps) {
  std::vector<std::string> out;
  for (const Primitive* p : ps)
    if (const Edge* e = s.graph && !p->edge.empty() ? s.graph->edge(p->edge) : nullptr)
      for (const std::string& v : {e->v0, e->v1})
        if (std::find(out.begin(), out.end(), v) == out.end()) out.push_back(v);
  return out;
}

// Arcs and circles grouped by common centre and radius; a group whose angles nearly close a
// circle without being one closed chain is a broken loop.
void find_broken_loops(const std::vector<const Primitive*>& ps, double sw, std::vector<TopoFinding>& out) {
  std::vector<const Primitive*> arcs;
  for (auto* p : ps)
    if (p->shape.type == PrimType::arc && std::isfinite(p->shape.radius)) arcs.push_back(p);
  std::vector<bool> used(arcs.size(), false);
  for (size_t i = 0; i < arcs.size(); ++i) {
    if (used[i]) continue;
    std::vector<const Primitive*> group = {arcs[i]};
    used[i] = true;
    const Shape& a = arcs[i]->shape;
    for (size_t j = i + 1; j < arcs.size(); ++j) {
      const Shape& b = arcs[j]->shape;
      if (!used[j] && dist(a.center, b.center) <= std::max(1.0, 0.5 * sw) && std::abs(a.radius - b.radius) <= 0.1 * a.radius) {
        group.push_back(arcs[j]);
        used[j] = true;
      }
    }
    // Angular coverage in 1° bins about the first arc's centre.
    std::vector<bool> bins(360, false);
    for (auto* p : group) {
      double a0 = angle_of(p->shape.p0 - a.center), sweep = p->shape.sweep_rad();
      int n = std::max(1, static_cast<int>(std::ceil(std::abs(rad2deg(sweep)) * 2)));
      for (int k = 0; k <= n; ++k) {
        double ang = rad2deg(a0 + sweep * k / n);
        bins[static_cast<size_t>(std::fmod(std::fmod(ang, 360) + 360, 360)) % 360] = true;
      }
    }
    int covered = static_cast<int>(std::count(bins.begin(), bins.end(), true));
    if (covered < 330) continue;
    // Closed when every arc's end meets another arc's start (or end).
    bool closed = covered == 360;
    for (auto* p : group) {
      bool met = false;
      for (auto* q : group)
        if (q != p) met = met || dist(p->shape.p1, q->shape.p0) < 0.05 || dist(p->shape.p1, q->shape.p1) < 0.05;
      closed = closed && met && group.size() > 1;
    }
    if (closed) continue;
    // The largest uncovered stretch of angle: where the loop is open.
    int best_len = 0, best_start = 0;
    for (int s0 = 0; s0 < 360; ++s0) {
      if (bins[s0] || !bins[(s0 + 359) % 360]) continue;
      int len = 0;
      while (len < 360 && !bins[(s0 + len) % 360]) ++len;
      if (len > best_len) best_len = len, best_start = s0;
    }
    double mid = deg2rad(best_start + best_len / 2.0);
    // Single arc: the gap is between its own ends; otherwise the chord of the open stretch.
    double gap = group.size() == 1 ? dist(a.p0, a.p1) : 2 * a.radius * std::sin(deg2rad(best_len) / 2);
    TopoFinding f{"broken_loop", {}, {}, a.center + from_angle(mid) * a.radius, gap};
    for (auto* p : group) f.ids.push_back(p->id);
    out.push_back(f);
  }
}

struct TopologyRequest : RegionRequest {
  std::optional<double> gap_tolerance_px;  // none: 1.5 stroke widths
};

ToolResult check_topology(const ToolContext& ctx, const TopologyRequest& req) {
  ToolResult r;
  const Scene& s = ctx.scene;
  Scope scope = scope_of_regions(s, {req.region});
  const double sw = stroke_width_of(s);
  const double gap_tol = req.gap_tolerance_px.value_or(1.5 * sw);
  const double joined = 0.05;  // ends closer than this are one vertex
  std::vector<const Primitive*> ps;
  if (s.primitives)
    for (const auto& p : *s.primitives)
      if (scope.touches(p)) ps.push_back(&p);
  std::vector<TopoFinding> out;
  auto ends = [](const Primitive* p) {
    return p->shape.type == PrimType::circle ? std::vector<Vec2>{} : std::vector<Vec2>{p->shape.p0, p->shape.p1};
  };
  // Near-miss junctions and dangling ends.
  for (auto* p : ps)
    for (Vec2 e : ends(p)) {
      double nearest = INFINITY;
      const Primitive* other = nullptr;
      bool attached = false;
      for (auto* q : ps) {
        if (q == p) continue;
        double d = q->shape.distance_to(e);
        if (d <= joined) attached = true;
        if (d < nearest) nearest = d, other = q;
      }
      // Its own other end closes a loop on itself.
      if (dist(p->shape.p0, p->shape.p1) <= joined) attached = true;
      if (attached) continue;
      // A near miss is an end that stops just short of a stroke it heads for: within half a
      // stroke width any end counts; farther, only one whose stroke points at the other (the
      // gap between two letters, or beside a stroke, is a separate mark).
      if (other && nearest <= gap_tol) {
        Vec2 aim;
        double best = INFINITY;
        for (Vec2 q : other->shape.sample(0.5))
          if (dist(q, e) < best) best = dist(q, e), aim = q;
        const Vec2 heading = e == p->shape.p0 ? -p->shape.start_tangent() : p->shape.end_tangent();
        if (nearest <= 0.5 * sw || dot(heading, unit(aim - e)) >= std::cos(deg2rad(45))) {
          out.push_back({"near_miss_junction", {p->id, other->id}, vertices_near(s, {e, aim}, sw), e, nearest});
          continue;
        }
      }
      // A free end is a defect only where the graph joins strokes (dots and loops end freely).
      if (s.graph && p->shape.length() >= sw) {
        for (const auto& v : s.graph->vertices)
          if ((v.kind == "junction" || v.kind == "crossing") && dist(v.p, e) <= sw) {
            out.push_back({"dangling_endpoint", {p->id}, {v.id}, e, dist(v.p, e)});
            break;
          }
      }
    }
  // The same near-miss seen from both sides is one finding.
  std::vector<TopoFinding> dedup;
  for (const auto& f : out) {
    bool dup = false;
    for (const auto& g : dedup)
      dup = dup || (f.kind == "near_miss_junction" && g.kind == f.kind && g.ids[0] == f.ids[1] && g.ids[1] == f.ids[0] &&
                    dist(g.at, f.at) <= gap_tol);
    if (!dup) dedup.push_back(f);
  }
  out = dedup;
  const size_t before_loops = out.size();
  find_broken_loops(ps, sw, out);
  for (size_t k = before_loops; k < out.size(); ++k) out[k].vertices = vertices_near(s, {out[k].at}, sw);
  // Duplicate edges: most of the shorter one lies on the other.
  for (size_t i = 0; i < ps.size(); ++i)
    for (size_t j = i + 1; j < ps.size(); ++j) {
      const Primitive *a = ps[i], *b = ps[j];
      const Primitive* shorter = a->shape.length() <= b->shape.length() ? a : b;
      const Primitive* longer = shorter == a ? b : a;
      Polyline smp = shape_samples(shorter->shape);
      int on = 0;
      double sum = 0;
      for (Vec2 q : smp) {
        double d = longer->shape.distance_to(q);
        on += d <= 0.5 * sw;
        sum += d;
      }
      if (shorter->shape.length() >= sw && on >= 0.9 * smp.size())
        out.push_back({"duplicate_edge", {a->id, b->id}, edge_vertices(s, {a, b}), shape_mid(shorter->shape), sum / smp.size()});
    }
  // Redundant vertices: two pieces meeting smoothly, alone, on one line or one circle.
  for (size_t i = 0; i < ps.size(); ++i)
    for (size_t j = 0; j < ps.size(); ++j) {
      if (i == j) continue;
      const Shape &A = ps[i]->shape, &B = ps[j]->shape;
      if (A.type == PrimType::circle || B.type == PrimType::circle || A.type != B.type) continue;
      if (dist(A.p1, B.p0) > joined) continue;
      int others = 0;
      for (auto* q : ps)
        if (q != ps[i] && q != ps[j] && q->shape.distance_to(A.p1) <= joined) ++others;
      if (others) continue;
      double defl = std::abs(rad2deg(turn_rad(A.end_tangent(), B.start_tangent())));
      bool same_curve = A.type == PrimType::line
                          ? defl < 1.0
                          : defl < 1.0 && dist(A.center, B.center) < 0.5 && std::abs(A.radius - B.radius) < 0.01 * A.radius;
      if (same_curve) out.push_back({"redundant_vertex", {ps[i]->id, ps[j]->id}, vertices_near(s, {A.p1}, sw), A.p1, 0});
    }
  json list = json::array();
  std::string text;
  for (const auto& f : out) {
    json g = f.gap < 0 ? json(nullptr) : json(round3(f.gap));
    list.push_back({{"kind", f.kind}, {"primitive_ids", f.ids}, {"vertex_ids", f.vertices}, {"location", point_json(f.at)},
                    {"gap_px", g}});
    text += fmt::format("{} {} at {}{}\n", f.kind, fmt::join(f.ids, ","), pt_text(f.at),
                        f.gap < 0 ? "" : fmt::format(" gap {:.2f} px", f.gap));
  }
  std::map<std::string, int> counts;
  for (const auto& f : out) counts[f.kind]++;
  r.fields = {{"findings", list}, {"gap_tolerance_px", round3(gap_tol)}};
  r.llm_text = fmt::format("{} topology findings (gap tolerance {:.1f} px){}\n", out.size(), gap_tol,
                           counts.empty() ? "" : ": " + json(counts).dump()) + text;
  View v = scene_view(ctx, s, scope, "topology findings");
  for (auto* p : ps) v.shape(p->shape, color::faded, 2);
  std::vector<BBox> boxes;
  std::vector<std::string> titles;
  for (size_t i = 0; i < out.size(); ++i) {
    const auto& f = out[i];
    for (const auto& id : f.ids) v.shape(s.primitive(id)->shape, color::highlight, 2);
    v.ring(f.at, 10, color::missed, 2);
    v.text(f.at, fmt::format("#{} {}", i + 1, f.kind), color::missed, 12, -10);
    BBox b;
    b.add(f.at);
    boxes.push_back(b);
    titles.push_back(fmt::format("#{} {} {}", i + 1, f.kind, fmt::join(f.ids, ",")));
  }
  v.legend({{"finding", color::missed}, {"primitives involved", color::highlight}});
  r.images["topology"] = v.finish();
  if (!boxes.empty())
    r.images["findings"] = findings_sheet(ctx, s, boxes, titles, [&](View& t, size_t i) {
      for (const auto& id : out[i].ids) {
        t.shape(s.primitive(id)->shape, color::highlight, 2);
        t.label_shape(s.primitive(id)->shape, id, color::ink);
      }
      t.ring(out[i].at, 10, color::missed, 2);
    });
  return r;
}

Tool check_topology_entry() {
  using R = TopologyRequest;
  return typed_tool<R>(
      14, "CheckTopology", "diagnostics",
      "Topological defects: near-miss junctions, dangling ends the graph joins, duplicate edges, broken "
      "loops, redundant vertices.",
      {{field("gap_tolerance_px", &R::gap_tolerance_px, S::nullable(S::number("default 1.5 stroke widths", 0)))}},
      S::object({{"findings", S::array(S::object({{"kind", S::enumeration({"near_miss_junction", "dangling_endpoint", "duplicate_edge",
                                                                           "broken_loop", "redundant_vertex"}, "the defect")},
                                                  {"primitive_ids", S::array(S::id("primitive id"), "the primitives involved")},
                                                  {"vertex_ids", S::array(S::id("vertex id"), "graph vertices involved")},
                                                  {"location", finding_location_schema()},
                                                  {"gap_px", S::nullable(S::number("the gap, for a near miss", 0))}},
                                                 {"kind", "primitive_ids", "location", "gap_px"}, "one defect"), "the defects")},
                 {"gap_tolerance_px", S::number("the gap tolerance used", 0)}},
                {"findings"}),
      check_topology);
}

}  // namespace

Scene with_diagnosed_issues(const ToolContext& ctx) {
  Scene out = ctx.scene;
  if (!out.primitives) return out;
  std::map<std::string, std::set<std::string>> found;
  auto run = [&](const char* name, const char* list) {
    const Tool& t = *find_tool(name);
    return t.run(ctx, normalize_request(t, json::object())).fields[list];
  };
  auto mark = [&](const json& id, const std::string& kind) { found[id.get<std::string>()].insert(kind); };
  for (const auto& f : run("AnalyzeGeometricFit", "reports"))
    if (f["flagged"].get<bool>() && f["suggested_kind"].is_string()) mark(f["primitive_id"], f["suggested_kind"]);
  for (const auto& f : run("IdentifyNoise", "verdicts"))
    if (f["verdict"] == "likely_noise") mark(f["primitive_id"], f["proposed_action"] == "smooth" ? "under_smoothed" : "spurious_stroke");
  const std::map<std::string, std::string> topology = {{"near_miss_junction", "topology_gap"},
                                                       {"dangling_endpoint", "topology_gap"},
                                                       {"duplicate_edge", "topology_overlap"},
                                                       {"broken_loop", "broken_loop"}};
  for (const auto& f : run("CheckTopology", "findings"))
    if (auto k = topology.find(f["kind"].get<std::string>()); k != topology.end())
      for (const auto& id : f["primitive_ids"]) mark(id, k->second);
  for (const auto& f : run("CheckForConsistency", "findings"))
    if (f["suggested_action"] == "snap_exact")
      for (const auto& id : f["primitive_ids"]) mark(id, "misaligned");
  for (auto& p : *out.primitives) {
    std::set<std::string> all(p.issues.begin(), p.issues.end());
    all.insert(found[p.id].begin(), found[p.id].end());
    p.issues.assign(all.begin(), all.end());
  }
  return out;
}

// The entries defined above, each after its handler (the catalog number, not this list, orders them).
void add_diagnostic_tools(std::vector<Tool>& out) {
  for (auto entry : {analyze_geometric_fit_entry, identify_noise_entry, analyze_coverage_tool_entry,
                     identify_expensive_operations_entry, check_for_consistency_entry, check_topology_entry})
    out.push_back(entry());
}

}  // namespace sv
