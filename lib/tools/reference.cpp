// CompareToReference: a revision against what it should look like — the source image's ink, the
// source's stroke graph, a high-geometry fit of the same graph, or the revision it was made from —
// pixel by pixel, topologically or by the forms it shows (lib/semantic), with a three-panel view:
// reference, revision, difference.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <opencv2/imgproc.hpp>

#include "core/error.hpp"
#include "eval/reference_compare.hpp"
#include "fit/fit.hpp"
#include "raster/ink.hpp"
#include "semantic/fidelity.hpp"
#include "store/store.hpp"
#include "fit/params.hpp"
#include "tools/common.hpp"
#include "tools/request.hpp"
#include "tools/schema_parts.hpp"

namespace sv {

namespace {

namespace S = schema;

// The high-geometry baseline: the revision's stroke graph fitted again at tight tolerances (a
// fifth of the usual stroke-width part, half its cap), so it keeps nearly every bend of the trace.
const std::map<std::string, double> kHighGeometryFit = {
    {"fit.width_tolerance_ratio", 0.05}, {"fit.max_width_tolerance_px", 0.5}, {"fit.thick_tolerance_ratio", 0.02}};

std::vector<Polyline> drawn_paths(const Scene& s) {
  std::vector<Polyline> out;
  for (const auto& [id, path] : drawing_of(s).pieces) out.push_back(path);
  return out;
}

cv::Size image_size_of(const Scene& s) {
  if (!s.source || s.source->width <= 0 || s.source->height <= 0)
    throw Error(Code::invalid_scene, "the scene has no source size to compare on (run sv-skeleton)");
  return {s.source->width, s.source->height};
}

// What the revision is compared with.
struct Reference {
  std::string kind, description;
  std::string unavailable;  // why there is nothing to compare with ("" when there is)
  std::string revision_id;  // previous_revision
  cv::Mat gray;             // source_raster
  Scene scene;              // previous_revision, high_geometry_baseline
  std::vector<Polyline> paths;  // what the reference draws (its centrelines)
};

Reference reference_of(const ToolContext& ctx, const Scene& rev, const std::string& kind) {
  Reference ref;
  ref.kind = kind;
  if (kind == "source_raster") {
    std::string why;
    ref.gray = source_raster(ctx, rev, &why);
    ref.description = "the source image's ink";
    if (ref.gray.empty()) ref.unavailable = "no source image: " + why;
    return ref;
  }
  if (kind == "previous_revision") {
    const std::string& parent = rev.revision.parent;
    ref.description = "the previous revision";
    if (parent.empty()) {
      ref.unavailable = "the revision has no parent (it is the first of its history)";
      return ref;
    }
    if (!ctx.store || !ctx.store->has_object(parent))
      throw Error(Code::not_found, fmt::format("the parent {} is not in a store in use", parent.substr(0, 12)),
                  {{"revision", parent}});
    ref.scene = ctx.store->read_scene(parent);
    ref.revision_id = parent;
    ref.paths = drawn_paths(ref.scene);
    ref.description = "the previous revision " + parent.substr(0, 12);
    return ref;
  }
  if (!rev.graph) {
    ref.description = kind == "source_skeleton" ? "the source's stroke graph" : "a high-geometry fit of the stroke graph";
    ref.unavailable = "the scene has no stroke graph (run sv-skeleton)";
    return ref;
  }
  if (kind == "source_skeleton") {
    ref.paths = graph_paths(rev);
    ref.description = "the source's stroke graph";
    return ref;
  }
  ref.scene = rev;
  drop_downstream_of_fit(ref.scene);
  fit(ref.scene, FitOptions{kHighGeometryFit});
  ref.paths = drawn_paths(ref.scene);
  const double tol = fit_params_of(ref.scene).tolerance_px;
  ref.description = fmt::format("a high-geometry fit of the stroke graph ({} primitives within {:.2f} px)",
                                ref.scene.primitives->size(), tol);
  return ref;
}

cv::Mat gray_of(const cv::Mat& mask) { return 255 - mask * 255; }

// One of the three panels, all showing the scope's area (else the whole image).
View panel(const Scene& s, const Scope& scope, const std::string& title) {
  return View(view_area(s, scope.bounds(), 2 * stroke_width_of(s)), title, 480);
}

// ---------------------------------------------------------------- pixel

json pixel_aspect(const Scene& rev, const Reference& ref, const Scope& scope, ToolResult& r) {
  const double sw = stroke_width_of(rev), tol = default_tolerance(sw);
  View va = panel(rev, scope, "reference: " + ref.kind), vb = panel(rev, scope, "revision"),
       vd = panel(rev, scope, "difference: missed red, spurious green");
  const Drawing d = drawing_of(rev);
  for (const auto& [id, path] : d.pieces) vb.polyline(path, color::ink, 2);
  json m;
  if (ref.kind == "source_raster") {
    // Ink against the drawing laid down at the stroke's width, pixel by pixel.
    const cv::Mat ink = separate_ink(ref.gray).binary;
    const PixelComparison c = compare_masks(ink, drawing_mask(drawn_paths(rev), ink.size(), sw), tol, scope);
    m = {{"measured_on", "pixels"}, {"precision", round3(c.precision)}, {"recall", round3(c.recall)},
         {"f1", round3(c.f1)}, {"chamfer_px", c.chamfer_px}, {"tolerance_px", round3(tol)},
         {"reference_px", c.reference_px}, {"drawn_px", c.drawn_px}, {"missed_px", c.missed_px},
         {"spurious_px", c.spurious_px}};
    va.underlay(ref.gray, color::ink);
    vd.underlay(gray_of(c.agreed), color::faded);
    vd.underlay(gray_of(c.missed), color::missed);
    vd.underlay(gray_of(c.spurious), color::spurious);
  } else {
    // Centrelines against centrelines, as EvaluateRevision measures fidelity.
    const CoverageReport cov = analyze_coverage(rev, d, ref.paths, tol, scope, true);
    m = {{"measured_on", "centrelines"}, {"precision", round3(cov.metrics.precision)},
         {"recall", round3(cov.metrics.recall)}, {"f1", round3(cov.metrics.f1)},
         {"chamfer_px", cov.metrics.chamfer_px}, {"tolerance_px", round3(tol)},
         {"reference_length_px", round3(cov.metrics.reference_length_px)},
         {"drawn_length_px", round3(cov.metrics.drawn_length_px)}, {"findings", cov.findings.size()}};
    for (const auto& p : ref.paths) va.polyline(p, color::ink, 2);
    for (const auto& [id, path] : d.pieces) vd.polyline(path, color::faded, 2);
    const int radius = std::max(1, static_cast<int>(std::lround(0.5 * sw * vd.transform().scale)));
    for (Vec2 p : cov.missed) vd.dot(p, color::missed, radius);
    for (Vec2 p : cov.spurious) vd.dot(p, color::spurious, radius);
  }
  vd.legend({{"missed", color::missed}, {"spurious", color::spurious}, {"agreed", color::faded}});
  r.images["reference"] = sheet({va.finish(), vb.finish(), vd.finish()});
  // With no reference ink there is no distance to measure: no chamfer.
  const double chamfer = m["chamfer_px"];
  if (std::isfinite(chamfer)) m["chamfer_px"] = round3(chamfer);
  else m.erase("chamfer_px");
  std::string text = fmt::format("f1 {:.3f} (precision {:.3f}, recall {:.3f}), {} at {:.1f} px, on {}",
                                 m["f1"].get<double>(), m["precision"].get<double>(), m["recall"].get<double>(),
                                 std::isfinite(chamfer) ? fmt::format("chamfer {:.2f} px", chamfer)
                                                        : std::string("no chamfer (the reference draws nothing)"),
                                 tol, m["measured_on"].get<std::string>());
  if (m.contains("missed_px"))
    text += fmt::format("; {} ink px missed, {} drawn px spurious", m["missed_px"].get<int>(), m["spurious_px"].get<int>());
  r.llm_text = text;
  return m;
}

// ---------------------------------------------------------------- topology

// The stroke graph of what a scene draws: its pieces at the stroke's width, traced as ink is.
Graph drawn_graph(const Scene& s, cv::Size size) { return traced_graph(gray_of(drawing_mask(drawn_paths(s), size, stroke_width_of(s)))); }

void draw_topology(View& v, const Topology& t) {
  for (const auto& c : t.component_paths)
    for (const auto& pl : c) v.polyline(pl, color::ink, 2);
  for (Vec2 p : t.end_points) v.dot(p, color::line, 4);
  for (const auto& j : t.junctions) {
    v.ring(j.at, 6, color::circle, 2);
    v.text(j.at, std::to_string(j.degree), color::circle);
  }
  v.legend({{"end point", color::line}, {"junction (degree)", color::circle}});
}

json topology_aspect(const Scene& rev, const Reference& ref, const Scope& scope, ToolResult& r) {
  const cv::Size size = image_size_of(rev);
  const double sw = stroke_width_of(rev);
  const Graph ref_graph = ref.kind == "source_raster"     ? traced_graph(ref.gray)
                          : ref.kind == "source_skeleton" ? *rev.graph
                                                          : drawn_graph(ref.scene, size);
  const Topology a = topology_of(ref_graph, scope), b = topology_of(drawn_graph(rev, size), scope);
  const double match_px = std::max(3.0, 2 * sw);
  const BBox area = scope.everything() ? view_area(rev, BBox{}, 0) : scope.bounds();
  const std::vector<TopologyDifference> diffs = compare_topology(a, b, match_px, {(area.x0 + area.x1) / 2, (area.y0 + area.y1) / 2});
  View va = panel(rev, scope, "reference: " + ref.kind), vb = panel(rev, scope, "revision"),
       vd = panel(rev, scope, "difference: gone red, new green");
  draw_topology(va, a);
  draw_topology(vb, b);
  for (const auto& c : b.component_paths)
    for (const auto& pl : c) vd.polyline(pl, color::faded, 2);
  json list = json::array();
  for (const auto& d : diffs) {
    list.push_back(d.to_json());
    if (d.feature == "components" || d.feature == "holes") continue;
    const cv::Scalar col = d.change == "gone" ? color::missed : color::spurious;
    vd.ring(d.at, 8, col, 2);
    vd.text(d.at, d.feature, col);
  }
  vd.legend({{"gone", color::missed}, {"new", color::spurious}});
  r.images["reference"] = sheet({va.finish(), vb.finish(), vd.finish()});
  std::string text = fmt::format("components {} -> {}, holes {} -> {}, Euler number {} -> {}, end points {} -> {}, junctions {} -> {}",
                                 a.components, b.components, a.holes, b.holes, a.euler(), b.euler(), a.end_points.size(),
                                 b.end_points.size(), a.junctions.size(), b.junctions.size());
  text += diffs.empty() ? "; no differences" : fmt::format("; {} differences (matched within {:.1f} px)", diffs.size(), match_px);
  for (size_t i = 0; i < diffs.size() && i < 12; ++i) text += "\n  " + diffs[i].text;
  if (diffs.size() > 12) text += fmt::format("\n  ... {} more (all in topology.differences)", diffs.size() - 12);
  r.llm_text = text;
  return {{"reference", a.to_json()}, {"revision", b.to_json()}, {"match_px", round3(match_px)}, {"differences", list}};
}

// ---------------------------------------------------------------- semantics

// Strokes of the reference: what a revision draws, else the centrelines (the source's ink as the
// fidelity reference reads it, or the stroke graph), each kept when it touches the scope.
std::vector<semantic::Stroke> in_scope(std::vector<semantic::Stroke> strokes, const Scope& scope) {
  if (!scope.everything())
    strokes.erase(std::remove_if(strokes.begin(), strokes.end(),
                                 [&](const semantic::Stroke& s) { return !scope.touches(s.points); }),
                  strokes.end());
  return strokes;
}

json semantics_aspect(const ToolContext& ctx, const Scene& rev, const Reference& ref, const Scope& scope, ToolResult& r) {
  const double sw = stroke_width_of(rev);
  const std::vector<semantic::Stroke> a = in_scope(
      ref.kind == "previous_revision" || ref.kind == "high_geometry_baseline" ? semantic::scene_strokes(ref.scene)
      : semantic::plain_strokes(ref.kind == "source_raster" ? fidelity_reference(ctx, rev, r.warnings).paths : ref.paths),
      scope);
  const std::vector<semantic::Stroke> b = in_scope(semantic::scene_strokes(rev), scope);
  const semantic::SemanticComparison c = semantic::compare_semantics(a, b, sw, semantic::image_size(rev), default_tolerance(sw));
  json roles = json::object(), aspects = json::array();
  for (const auto& [role, counts] : c.roles) roles[role] = {{"reference", counts.first}, {"revision", counts.second}};
  View va = panel(rev, scope, "reference: " + ref.kind), vb = panel(rev, scope, "revision"),
       vd = panel(rev, scope, "difference: regions where an aspect is lost");
  for (const auto& s : a) va.polyline(s.points, color::ink, 2);
  for (const auto& s : b) vb.polyline(s.points, color::ink, 2), vd.polyline(s.points, color::faded, 2);
  for (const auto& x : c.fidelity.aspects) {
    json regions = json::array();
    for (const BBox& box : x.affected_regions) {
      regions.push_back(rect_json(box));
      vd.box(box, color::missed, 2);
      vd.text({box.x0, box.y0}, x.aspect, color::missed);
    }
    aspects.push_back({{"aspect", x.aspect}, {"scored", x.scored}, {"score", x.scored ? json(round3(x.score)) : json(nullptr)},
                       {"rationale", x.rationale}, {"offending_primitive_ids", x.offending_primitive_ids},
                       {"affected_regions", regions}});
  }
  r.images["reference"] = sheet({va.finish(), vb.finish(), vd.finish()});
  r.llm_text = c.summary;
  return {{"reference_forms", c.reference_forms}, {"revision_forms", c.candidate_forms},
          {"reference_closed_regions", c.reference_closed_regions}, {"revision_closed_regions", c.candidate_closed_regions},
          {"roles", roles}, {"aspects", aspects},
          {"overall", c.fidelity.overall ? json(round3(*c.fidelity.overall)) : json(nullptr)}};
}

// ---------------------------------------------------------------- CompareToReference

struct CompareToReferenceRequest : RegionRequest {
  std::string reference;
  std::optional<std::string> revision;  // none: the input scene
  std::string aspect;
};

ToolResult compare_to_reference(const ToolContext& ctx, const CompareToReferenceRequest& req) {
  ToolResult r;
  Scene holder;
  std::string rid;
  const Scene& rev = revision_scene(ctx, req.revision.value_or(""), holder, &rid);  // "": the input scene
  r.revision_id = rid;
  const Scope scope = req.region.is_object() ? Scope{{resolve_region(rev, req.region)}} : Scope{};
  const std::string& aspect = req.aspect;
  const Reference ref = reference_of(ctx, rev, req.reference);
  r.fields = {{"reference", ref.kind}, {"aspect", aspect}, {"reference_description", ref.description},
              {"reference_revision_id", ref.revision_id.empty() ? json(nullptr) : json(ref.revision_id)},
              {"compared", ref.unavailable.empty()}};
  if (!ref.unavailable.empty()) {
    r.warnings.push_back("nothing compared: " + ref.unavailable);
    r.llm_text = "nothing compared: " + ref.unavailable;
  } else if (aspect == "pixel") {
    r.fields["pixel"] = pixel_aspect(rev, ref, scope, r);
  } else if (aspect == "topology") {
    r.fields["topology"] = topology_aspect(rev, ref, scope, r);
  } else {
    r.fields["semantics"] = semantics_aspect(ctx, rev, ref, scope, r);
  }
  r.llm_text = fmt::format("{}{} against {} ({}): {}", rid.substr(0, 12), scope.everything() ? "" : " in " + scope.describe(),
                           ref.description, aspect, r.llm_text);
  r.fields["delta_summary"] = r.llm_text;
  return r;
}

json topology_schema() {
  return S::object({{"components", S::integer("connected pieces of ink")}, {"holes", S::integer("regions the ink encloses")},
                    {"euler_number", S::integer("components - holes", -1000000000)},
                    {"dots", S::integer("pieces too small to be strokes")}, {"end_point_count", S::integer("stroke ends")},
                    {"junction_count", S::integer("where three or more strokes meet")},
                    {"junction_degrees", {{"type", "object"}, {"additionalProperties", {{"type", "integer"}}},
                                          {"description", "degree -> junctions of that degree"}}},
                    {"end_points", S::array(S::point(), "the stroke ends")},
                    {"junctions", S::array(S::object({{"at", S::point()}, {"degree", S::integer("strokes meeting there")}}, {}, "one junction"),
                                           "the junctions")}},
                   {}, "its topology");
}

Tool compare_to_reference_entry() {
  const json difference = S::object(
      {{"feature", S::enumeration({"components", "holes", "end_point", "junction", "component"}, "what differs")},
       {"change", S::enumeration({"more", "fewer", "gone", "new"}, "gone: in the reference only; new: in the revision only")},
       {"at", S::point("where (a count: the centre of the area compared)")},
       {"reference", S::integer("the reference's count, or a junction's degree there (0: none)")},
       {"revision", S::integer("the revision's count, or a junction's degree there (0: none)")},
       {"text", S::string("the difference, in words")}},
      {}, "one difference");
  using R = CompareToReferenceRequest;
  Tool t = typed_tool<R>(
      19, "CompareToReference", "semantic",
      "A revision against a reference — the source's ink, its stroke graph, a high-geometry fit of that graph, "
      "or the previous revision — pixel by pixel (f1, chamfer, missed and spurious ink) or topologically "
      "(components, holes, junction degrees, end points, each difference located) or by its forms and semantic "
      "aspects, with a difference view.",
      {{field("reference", &R::reference,
              S::with_default(S::enumeration({"source_raster", "source_skeleton", "high_geometry_baseline", "previous_revision"},
                                             "what to compare with"),
                              "source_raster")),
        field("revision", &R::revision,
              S::nullable(S::string("a revision: HEAD, a branch, final, an id or a unique prefix (default: the input scene)"))),
        field("aspect", &R::aspect,
              S::with_default(S::enumeration({"pixel", "topology", "semantics"},
                                             "what to compare (semantics: the forms and the semantic aspects of "
                                             "EvaluateSemanticFidelity)"),
                              "pixel"))}},
      S::object({{"delta_summary", S::string("the differential summary")},
                 {"reference", S::string("the reference used")},
                 {"aspect", S::string("the aspect compared")},
                 {"reference_description", S::string("what the reference is")},
                 {"reference_revision_id", S::nullable(S::string("the previous revision compared with"))},
                 {"compared", S::boolean("false when the reference is not available (no source image, no stroke "
                                         "graph, no parent); the warning says why")},
                 {"pixel", S::object({{"measured_on", S::enumeration({"pixels", "centrelines"}, "what was compared")},
                                      {"precision", S::number("share of the drawing on the reference", 0)},
                                      {"recall", S::number("share of the reference drawn", 0)},
                                      {"f1", S::number("harmonic mean of precision and recall", 0)},
                                      {"chamfer_px", S::number("mean distance between the two, both ways", 0)},
                                      {"tolerance_px", S::number("distance that counts as covered", 0)},
                                      {"reference_px", S::integer("reference pixels")}, {"drawn_px", S::integer("drawn pixels")},
                                      {"missed_px", S::integer("reference pixels not drawn")},
                                      {"spurious_px", S::integer("drawn pixels off the reference")},
                                      {"reference_length_px", S::number("reference centreline length", 0)},
                                      {"drawn_length_px", S::number("drawn centreline length", 0)},
                                      {"findings", S::integer("clusters of missed or spurious centreline")}},
                                     {}, "with aspect pixel: the pixel comparison")},
                 {"semantics",
                  S::object({{"reference_forms", S::integer("forms of the reference")}, {"revision_forms", S::integer("forms of the revision")},
                             {"reference_closed_regions", S::integer("closed regions of the reference")},
                             {"revision_closed_regions", S::integer("closed regions of the revision")},
                             {"roles", {{"type", "object"},
                                        {"additionalProperties", S::object({{"reference", S::integer("in the reference")},
                                                                            {"revision", S::integer("in the revision")}})},
                                        {"description", "role -> forms of that role on each side"}}},
                             {"aspects", S::array(S::object({{"aspect", S::string("the aspect")},
                                                             {"scored", S::boolean("false: what it needs is missing (an oracle)")},
                                                             {"score", S::nullable(S::number("0..1; null when not scored", 0))},
                                                             {"rationale", S::string("why it scored so")},
                                                             {"offending_primitive_ids", S::array(S::id("primitive id"), "the primitives at fault")},
                                                             {"affected_regions", S::array(S::rect_region(), "where it is at fault")}},
                                                            {}, "one aspect"),
                                                  "each aspect of the revision against the reference")},
                             {"overall", S::nullable(S::number("mean of the scored aspects", 0))}},
                            {}, "with aspect semantics: forms, roles and aspects on both sides")},
                 {"topology", S::object({{"reference", topology_schema()}, {"revision", topology_schema()},
                                         {"match_px", S::number("features this close on both sides match", 0)},
                                         {"differences", S::array(difference, "each difference, located")}},
                                        {}, "with aspect topology: both sides' topology and their differences")}},
                {"delta_summary", "reference", "aspect", "compared"}),
      compare_to_reference);
  t.views_for_model = true;
  return t;
}

}  // namespace

void add_reference_tools(std::vector<Tool>& out) { out.push_back(compare_to_reference_entry()); }

}  // namespace sv
