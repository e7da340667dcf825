// sv-edit's geometric edits: merge, split, replace, refit, smooth, snap, enforce a relation. The
// geometry is lib/edit's (edit/geometry.hpp); these handlers read the request, call it and
// report what it did.
// Each tool's registry entry (catalog number, name, group, schemas) stands right after its handler.
#include <fmt/format.h>

#include "core/error.hpp"
#include "edit/edit.hpp"
#include "edit/geometry.hpp"
#include "tools/common.hpp"
#include "tools/edit_common.hpp"
#include "tools/request.hpp"
#include "tools/schema_parts.hpp"

namespace sv {

namespace {

namespace S = schema;

Vec2 point_of(const json& q) { return {q.at(0).get<double>(), q.at(1).get<double>()}; }

// Takes the edited scene and what settling needs out of `e` (its own report stays).
ToolResult result_of(edit::GeometryEdit& e) {
  ToolResult r;
  r.scene = std::move(e.scene);
  r.touched = std::move(e.touched);
  r.warnings = std::move(e.warnings);
  return r;
}

// ---------------------------------------------------------------- MergePrimitives

struct MergeRequest {
  std::vector<std::string> primitive_ids;
  std::string target_kind;
  std::optional<double> fit_tolerance_px;
};

ToolResult merge_primitives(const ToolContext& ctx, const MergeRequest& req) {
  const std::vector<std::string>& ids = req.primitive_ids;
  edit::Merged m = edit::merge_primitives(ctx.scene, ids, req.target_kind, req.fit_tolerance_px);
  ToolResult r = result_of(m);
  r.fields = {{"new_primitive_id", m.id},
              {"kind", m.kind},
              {"fit_rms_px", round_to(m.fit_rms_px, 1e-4)},
              {"fit_max_px", round_to(m.fit_max_px, 1e-4)}};
  r.llm_text = fmt::format("merged {} into {} {} (rms {:.2f} px, max {:.2f} px, tolerance {:.2f} px)", id_list(ids),
                           m.kind, m.id, m.fit_rms_px, m.fit_max_px, m.tolerance_px);
  return r;
}

Tool merge_primitives_entry() {
  using R = MergeRequest;
  return typed_tool<R>(
      23, "MergePrimitives", "mutation",
      "Replace a chain of primitives by one line, arc or circle fitted to their source points (ends at the "
      "chain's outer ends); refused when the fit leaves the tolerance.",
      {{field("primitive_ids", &R::primitive_ids, primitive_ids_schema("the primitives to merge into one")),
        field("target_kind", &R::target_kind,
              S::with_default(S::enumeration({"line", "arc", "circle", "auto"},
                                             "auto: a line, else an arc, else (a closed loop) a circle"),
                              "auto")),
        field("fit_tolerance_px", &R::fit_tolerance_px,
              S::nullable(S::number("largest distance of a point to the merged shape (default: the scene's "
                                    "fit.tolerance_px)",
                                    0)))},
       {"primitive_ids"}},
      S::object({{"new_primitive_id", S::string("the merged primitive")},
                 {"kind", S::string("line, arc or circle")},
                 {"fit_rms_px", S::number("rms distance of the group's source points from it")},
                 {"fit_max_px", S::number("largest such distance")}}),
      merge_primitives, ToolKind::edit);
}

// ---------------------------------------------------------------- SplitPrimitive

struct SplitRequest {
  std::string primitive_id;
  json at;  // [x, y], a fraction t or "auto_corner" / "auto_inflection"
};

ToolResult split_primitive(const ToolContext& ctx, const SplitRequest& req) {
  const json& at = req.at;
  edit::SplitAt where;
  if (at.is_number()) {
    where = {edit::SplitAt::fraction, at.get<double>(), {}};
  } else if (at.is_array()) {
    where = {edit::SplitAt::point, 0, point_of(at)};
  } else if (at == "auto_corner" || at == "auto_inflection") {
    where.kind = at == "auto_corner" ? edit::SplitAt::corner : edit::SplitAt::inflection;
  } else {
    throw Error(Code::invalid_selection, "at must be [x, y], a number t in (0, 1), \"auto_corner\" or \"auto_inflection\"",
                {{"reason", "bad split position"}});
  }
  const std::string& id = req.primitive_id;
  edit::Split s = edit::split_primitive(ctx.scene, id, where);
  ToolResult r = result_of(s);
  r.fields = {{"new_primitive_ids", s.ids}, {"split_point", point_json(s.at)}};
  r.llm_text = fmt::format("split {} {} at {} ({}) into {}", prim_type_name(s.type), id, pt_text(s.at), s.how,
                           id_list(s.ids));
  return r;
}

json point_or_t_schema() {
  return {
      {"description",
       "where to split: [x, y] (snapped to the nearest point on the primitive), a number t in (0, 1) (arc-length "
       "fraction; circles from angle 0), \"auto_corner\" (the sharpest turn of the source points) or "
       "\"auto_inflection\" (where their curvature changes sign)"},
      {"anyOf", json::array({S::point(), {{"type", "number"}}, S::enumeration({"auto_corner", "auto_inflection"}, "found from the source points")})}};
}

Tool split_primitive_entry() {
  using R = SplitRequest;
  return typed_tool<R>(
      24, "SplitPrimitive", "mutation",
      "Split a primitive in two at a point, a parameter, its sharpest corner or its inflection; both pieces "
      "get fresh ids (a circle becomes two half circles).",
      {{field("primitive_id", &R::primitive_id, S::id("the primitive to split")),
        field("at", &R::at, point_or_t_schema())},
       {"primitive_id", "at"}},
      S::object({{"new_primitive_ids", S::array(S::id("primitive id"), "the two pieces, in drawing order")},
                 {"split_point", S::point("where the pieces meet")}}),
      split_primitive, ToolKind::edit);
}

// ---------------------------------------------------------------- ReplacePrimitive

struct ReplaceRequest {
  std::vector<std::string> primitive_ids;
  json replacement;  // replacement_spec_schema's shape
  bool snap_to_existing_endpoints;
};

ToolResult replace_primitive(const ToolContext& ctx, const ReplaceRequest& req) {
  const std::vector<std::string>& ids = req.primitive_ids;
  const Shape shape = shape_from_spec(req.replacement);
  edit::Replaced e = edit::replace_by_shape(ctx.scene, ids, shape, req.snap_to_existing_endpoints);
  const Shape drawn = e.scene.primitive(e.id)->shape;
  ToolResult r = result_of(e);
  r.fields = {{"new_primitive_id", e.id}, {"snapped_end_count", e.snapped_ends}};
  r.llm_text = fmt::format("replaced {} by {} {} ({:.1f} px){}", id_list(ids), prim_type_name(drawn.type), e.id,
                           drawn.length(),
                           e.snapped_ends ? fmt::format(", {} end(s) snapped onto existing endpoints", e.snapped_ends) : "");
  return r;
}

Tool replace_primitive_entry() {
  using R = ReplaceRequest;
  return typed_tool<R>(
      26, "ReplacePrimitive", "mutation", "Swap primitives for one explicit shape; its ends snap onto existing endpoints nearby.",
      {{field("primitive_ids", &R::primitive_ids, primitive_ids_schema("the primitives the shape replaces")),
        field("replacement", &R::replacement, replacement_spec_schema("the new primitive")),
        field("snap_to_existing_endpoints", &R::snap_to_existing_endpoints,
              S::with_default(S::boolean("move the new ends onto other primitives' endpoints within max(2 px, stroke width)"),
                              true))},
       {"primitive_ids", "replacement"}},
      S::object({{"new_primitive_id", S::string("the replacement")},
                 {"snapped_end_count", S::integer("ends moved onto existing endpoints")}}),
      replace_primitive, ToolKind::edit);
}

// ---------------------------------------------------------------- RefitPolyline

struct RefitRequest {
  std::vector<std::string> primitive_ids;
  bool force_subdivide;
  bool forbid_arc_shortcut;
  bool forbid_circle_shortcut;
  std::optional<double> mdl_lambda_scale;
  json extra_split_points;  // [[x, y], ...]
};

ToolResult refit_polyline(const ToolContext& ctx, const RefitRequest& req) {
  const std::vector<std::string>& ids = req.primitive_ids;
  edit::RefitOptions o;
  o.force_subdivide = req.force_subdivide;
  o.forbid_arcs = req.forbid_arc_shortcut;
  o.forbid_circle = req.forbid_circle_shortcut;
  o.arc_cost_scale = req.mdl_lambda_scale;
  for (const auto& q : req.extra_split_points) o.split_points.push_back(point_of(q));
  edit::Refitted e = edit::refit_polyline(ctx.scene, ids, o);
  json summary = json::array();
  std::vector<std::string> new_ids;
  std::string kinds;
  for (const Primitive& p : e.pieces) {
    new_ids.push_back(p.id);
    summary.push_back({{"primitive_id", p.id},
                       {"type", prim_type_name(p.shape.type)},
                       {"fit_rms_px", round_to(p.fit_rms_px, 1e-4)},
                       {"fit_max_px", round_to(p.fit_max_px, 1e-4)}});
    kinds += (kinds.empty() ? "" : ",") + std::string(prim_type_name(p.shape.type));
  }
  const std::string edge = e.edge;
  ToolResult r = result_of(e);
  r.fields = {{"new_primitive_ids", new_ids}, {"fit_summary", summary}};
  r.llm_text = fmt::format("refitted {} of {} as {} piece(s) [{}]: {}", id_list(ids), edge, new_ids.size(), kinds,
                           id_list(new_ids));
  return r;
}

Tool refit_polyline_entry() {
  using R = RefitRequest;
  return typed_tool<R>(
      27, "RefitPolyline", "mutation",
      "Re-run the fitter on the span of one source edge the primitives cover, with overrides (no arcs, no circle, "
      "more or fewer pieces, forced breakpoints); the run's ends stay where they were.",
      {{field("primitive_ids", &R::primitive_ids,
              S::array(S::id("primitive id"), "consecutive primitives of one source edge")),
        field("force_subdivide", &R::force_subdivide,
              S::with_default(S::boolean("end with more pieces than before (the longest is split at its middle until "
                                         "it does)"),
                              false)),
        field("forbid_arc_shortcut", &R::forbid_arc_shortcut, S::with_default(S::boolean("lines only"), false)),
        field("forbid_circle_shortcut", &R::forbid_circle_shortcut,
              S::with_default(S::boolean("a closed loop may not become one circle"), false)),
        field("mdl_lambda_scale", &R::mdl_lambda_scale,
              S::nullable(S::number("multiplies fit.arc_cost, the description-length penalty of an arc over a line", 0))),
        field("extra_split_points", &R::extra_split_points,
              S::with_default(S::array(S::point(), "forced breakpoints (snapped to the nearest source point)"),
                              json::array()))},
       {"primitive_ids"}},
      S::object({{"new_primitive_ids", S::array(S::id("primitive id"), "the primitives of the refit")},
                 {"fit_summary", S::array(S::object({{"primitive_id", S::string("a new primitive")},
                                                     {"type", S::primitive_type()},
                                                     {"fit_rms_px", S::number("rms distance of its source points")},
                                                     {"fit_max_px", S::number("largest such distance")}},
                                                    {}, "one new primitive's fit"),
                                          "one entry per new primitive")}}),
      refit_polyline, ToolKind::edit);
}

// ---------------------------------------------------------------- SnapEndpoints

struct SnapRequest {
  std::optional<std::vector<std::string>> vertex_ids;  // none: every cluster
  std::optional<double> tolerance_px;
  bool rerun_solver;
};

ToolResult snap_endpoints(const ToolContext& ctx, const SnapRequest& req) {
  edit::Snapped e = edit::snap_endpoints(ctx.scene, req.vertex_ids.value_or(std::vector<std::string>{}), req.tolerance_px);
  const json affected = e.clusters;
  const double max_move = e.max_move_px, tol = e.tolerance_px;
  ToolResult r = result_of(e);
  if (!req.rerun_solver) r.touched.clear();
  r.fields = {{"affected_vertex_ids", affected}, {"max_displacement_px", round_to(max_move, 1e-4)}};
  r.llm_text = fmt::format("snapped {} near-miss junction(s) within {:.2f} px ({}), largest move {:.2f} px",
                           affected.size(), tol, affected.size() <= 8 ? affected.dump() : std::string("..."), max_move);
  return r;
}

Tool snap_endpoints_entry() {
  using R = SnapRequest;
  return typed_tool<R>(
      28, "SnapEndpoints", "mutation",
      "Close near-miss junctions: ends of different primitives closer than the tolerance (but not one "
      "point) move to their mean, an end that nearly meets another primitive's interior (a T) moves onto "
      "it; arcs keep passing through their middle. Refused (no_result) when nothing is within the "
      "tolerance.",
      {{field("vertex_ids", &R::vertex_ids,
              S::nullable(S::array(S::id("graph vertex id"), "only clusters near these vertices (default: all)"))),
        field("tolerance_px", &R::tolerance_px, S::nullable(S::number("default max(1, stroke width / 2)", 0))),
        field("rerun_solver", &R::rerun_solver,
              S::with_default(S::boolean("re-solve the relations of the moved primitives"), true))}},
      S::object({{"affected_vertex_ids", S::array(S::string("the nearest graph vertex id, or \"at x,y\""),
                                                  "the clusters snapped")},
                 {"max_displacement_px", S::number("largest end move")}}),
      snap_endpoints, ToolKind::edit);
}

// ---------------------------------------------------------------- EnforceRelation

struct EnforceRequest {
  std::string relation;
  std::vector<std::string> primitive_ids;
  json axis;  // a direction, a point, a line or null, as the relation takes it
  bool rerun_solver;
};

ToolResult enforce_relation(const ToolContext& ctx, const EnforceRequest& req) {
  const std::vector<std::string>& ids = req.primitive_ids;
  const std::string& kind = req.relation;
  edit::Enforced e = edit::enforce_relation(ctx.scene, kind, ids, req.axis);
  const std::vector<std::string> moved = e.moved;
  const double residual = e.residual;
  const char* unit = e.degrees ? "deg" : "px";
  ToolResult r = result_of(e);
  if (!req.rerun_solver) r.touched.clear();
  r.fields = {{"residual_after", residual}, {"residual_unit", unit}, {"affected_primitive_ids", moved}};
  r.llm_text = fmt::format("{} {} enforced: residual {:.4g} {}; moved {}", kind, id_list(ids), residual, unit,
                           moved.empty() ? "nothing" : id_list(moved));
  return r;
}

json axis_schema() {
  return {
      {"description",
       "parallel/perpendicular/collinear: a direction in degrees or a line [[x0, y0], [x1, y1]]; concentric: the "
       "centre [x, y]; mirror: a number x (the vertical axis x = number) or a line [[x0, y0], [x1, y1]] (default: "
       "solved); horizontal/vertical: none"},
      {"anyOf", json::array({{{"type", "number"}}, S::point(), S::array(S::point(), "a line: two points"), {{"type", "null"}}})},
      {"default", nullptr}};
}

Tool enforce_relation_entry() {
  using R = EnforceRequest;
  return typed_tool<R>(
      29, "EnforceRelation", "mutation",
      "Make a relation exact with the beautify solver, every primitive held within tolerance of its source points; "
      "refused (unsolvable_constraint) when it cannot hold. Recorded in the scene's relations and re-solved after "
      "later edits.",
      {{field("relation", &R::relation,
              S::enumeration({"parallel", "perpendicular", "equal_radius", "concentric", "collinear",
                              "tangent_continuity", "mirror", "horizontal", "vertical"},
                             "perpendicular: every other line at right angles to the first; mirror: pairs a0, b0, a1, "
                             "b1, ... (an odd last one symmetric in itself); tangent_continuity: two primitives at their "
                             "shared end, or a line tangent to an arc or circle")),
        field("primitive_ids", &R::primitive_ids, primitive_ids_schema("the primitives the relation holds between")), field("axis", &R::axis, axis_schema()),
        field("rerun_solver", &R::rerun_solver,
              S::with_default(S::boolean("re-solve the other recorded relations of the moved primitives too"), true))},
       {"relation", "primitive_ids"}},
      S::object({{"residual_after", S::number("how far from exact the relation is")},
                 {"residual_unit", S::enumeration({"deg", "px"}, "unit of the residual")},
                 {"affected_primitive_ids", S::array(S::id("primitive id"), "primitives whose geometry moved")}}),
      enforce_relation, ToolKind::edit);
}

// ---------------------------------------------------------------- SmoothPrimitive

struct SmoothRequest {
  std::string primitive_id;
  std::string strength;
  std::optional<std::string> target_kind;  // none: keep the type
};

ToolResult smooth_primitive(const ToolContext& ctx, const SmoothRequest& req) {
  // Strength: the share of the worst points the fit ignores (robust trimming).
  const std::string& strength = req.strength;
  const double trim = strength == "mild" ? 0.0 : strength == "moderate" ? 0.05 : 0.15;
  edit::Smoothed e = edit::smooth_primitive(ctx.scene, req.primitive_id, trim, req.target_kind);
  ToolResult r = result_of(e);
  r.fields = {{"new_primitive_id", e.id},
              {"kind", prim_type_name(e.type)},
              {"rms_before", round_to(e.rms_before, 1e-4)},
              {"rms_after", round_to(e.rms_after, 1e-4)},
              {"max_after_px", round_to(e.max_after_px, 1e-4)}};
  r.llm_text = fmt::format("smoothed {} ({}, {}): rms {:.3f} -> {:.3f} px, max {:.2f} px", e.id, strength,
                           prim_type_name(e.type), e.rms_before, e.rms_after, e.max_after_px);
  return r;
}

Tool smooth_primitive_entry() {
  using R = SmoothRequest;
  return typed_tool<R>(
      30, "SmoothPrimitive", "mutation",
      "Refit one primitive to its source points as a single line, arc or circle, ignoring the tolerance "
      "(ends shared with neighbours stay put); the id stays the same.",
      {{field("primitive_id", &R::primitive_id, S::id("the primitive")),
        field("strength", &R::strength,
              S::with_default(S::enumeration({"mild", "moderate", "strong"}, "share of the worst points ignored: 0, 5 or 15 %"),
                              "moderate")),
        field("target_kind", &R::target_kind, S::nullable(S::enumeration({"line", "arc"}, "default: keep the type")))},
       {"primitive_id"}},
      S::object({{"new_primitive_id", S::string("the same id: changed in place")},
                 {"kind", S::string("its type after: line or arc")},
                 {"rms_before", S::number("px, the old shape against the source points")},
                 {"rms_after", S::number("px, the new shape against the same points")},
                 {"max_after_px", S::number("px, the new shape's largest distance from those points")}}),
      smooth_primitive, ToolKind::edit);
}

}  // namespace

// The entries defined above, each after its handler (the catalog number, not this list, orders them).
void add_geometry_edit_tools(std::vector<Tool>& out) {
  for (auto entry : {merge_primitives_entry, split_primitive_entry, replace_primitive_entry, refit_polyline_entry,
                     snap_endpoints_entry, enforce_relation_entry, smooth_primitive_entry})
    out.push_back(entry());
}

}  // namespace sv
