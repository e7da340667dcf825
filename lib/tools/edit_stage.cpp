// sv-edit's escalations: ReorderTour (the draw order by hand, or pins with the rest re-optimized),
// RerunStage (a pipeline stage again with other thresholds, on a region or the whole drawing),
// SimulateEdit (a batch of edits as a dry run; the suggestion group's, served by sv-edit) and
// ApplyEdits (a batch, or what SimulateEdit and SuggestOptimizations measured, applied as one edit).
// Each tool's registry entry (catalog number, name, group, schemas) stands right after its handler.
#include <fmt/format.h>

#include <algorithm>
#include <functional>
#include <map>
#include <regex>

#include "core/cancel.hpp"
#include "core/error.hpp"
#include "edit/edit.hpp"
#include "fit/fit.hpp"
#include "graph/skeletonize.hpp"
#include "suggest/rank.hpp"
#include "tools/common.hpp"
#include "tools/edit_common.hpp"
#include "tools/edit_session.hpp"
#include "tools/loss_budget.hpp"
#include "tools/request.hpp"
#include "tools/schema_parts.hpp"

namespace sv {

namespace {

namespace S = schema;

bool reverse_of(const json& dir) { return dir.get<std::string>() == "reverse"; }

// The scene's route options, with the request's `start` over the scene's own when given.
RouteOptions route_options_with_start(const Scene& s, const std::optional<std::string>& start) {
  RouteOptions o = route_options_of(s);
  if (start) o.start = parse_start(*start);
  return o;
}

// The start of `after` as a result field, and a sentence on it when the edit moved the first
// stroke or changed the start (else "").
std::string state_start(const Scene& before, const Scene& after, json& fields) {
  const StartCost was = start_cost(before), now = start_cost(after);
  fields["start"] = start_json(now);
  if (!start_moved(was, now)) return "";
  std::string text = start_text(now);
  if (now.fixed && was.fixed) text += fmt::format(" (was {:.2f} s)", was.to_first_stroke_s);
  return text;
}

json start_request_schema() {
  return S::nullable(S::string(
      "free (the robot is placed at the first stroke, facing along it) or X,Y,HEADING_DEG (it starts there, and the "
      "way to the first stroke counts); default: the scene's own start"));
}

json start_result_schema() {
  return S::object({{"mode", S::enumeration({"free", "fixed"}, "free: placed at the first stroke; fixed: starts at x, y")},
                    {"x", S::number("start x, image pixels")},
                    {"y", S::number("start y, image pixels")},
                    {"heading_deg", S::number("start heading, degrees")},
                    {"first_primitive", S::string("the primitive drawn first")},
                    {"to_first_stroke_s", S::number("turns and pen-up travel before the first stroke (0 when free)")}},
                   {}, "where the robot starts and what getting to the first stroke costs");
}

// ---------------------------------------------------------------- ReorderTour

struct ReorderRequest {
  json full_order;        // [[primitive_id, direction], ...]; null: not given
  json pinned_positions;  // [[index, primitive_id, direction], ...]; null: not given
  bool rerun_optimizer;
  std::optional<std::string> start;
};

ToolResult reorder_tour(const ToolContext& ctx, const ReorderRequest& req) {
  Scene out = editable(ctx.scene);
  if (!out.tour) throw Error(Code::invalid_scene, "the scene has no tour (run sv-route first)");
  const bool full = !req.full_order.is_null(), pinned = !req.pinned_positions.is_null();
  if (full == pinned) throw Error(Code::invalid_selection, "give either full_order or pinned_positions");
  const double before_s = drawing_of(ctx.scene).total_s;
  std::map<std::string, double> entry;
  for (const TourStep& t : *out.tour) entry[t.primitive] = t.entry_deg;
  if (full) {
    std::vector<TourStep> tour;
    std::set<std::string> seen;
    for (const auto& step : req.full_order) {
      if (!step.is_array() || step.size() != 2 || !step[0].is_string() || !step[1].is_string())
        throw Error(Code::invalid_selection, "a full_order step is [primitive_id, \"forward\"|\"reverse\"]");
      const std::string id = primitive_or_throw(ctx.scene, step[0]).id;
      if (!seen.insert(id).second) throw Error(Code::invalid_selection, id + " appears twice in full_order", {{"id", id}});
      tour.push_back({id, reverse_of(step[1]), entry[id]});
    }
    std::vector<std::string> missing;
    for (const auto& p : *out.primitives)
      if (!seen.count(p.id)) missing.push_back(p.id);
    if (!missing.empty())
      throw Error(Code::invalid_selection, "full_order leaves out " + id_list(missing), {{"missing", missing}});
    out.tour = std::move(tour);
    emit_tour(out, route_options_with_start(ctx.scene, req.start));
  } else {
    std::vector<PinnedStep> pins;
    for (const auto& p : req.pinned_positions) {
      if (!p.is_array() || p.size() != 3 || !p[0].is_number_integer() || p[0].get<long long>() < 0 || !p[1].is_string() || !p[2].is_string())
        throw Error(Code::invalid_selection, "a pinned position is [index, primitive_id, \"forward\"|\"reverse\"]");
      pins.push_back({static_cast<size_t>(p[0].get<long long>()), primitive_or_throw(ctx.scene, p[1]).id, reverse_of(p[2])});
    }
    route_with_pins(out, route_options_with_start(ctx.scene, req.start), pins, req.rerun_optimizer);
  }
  const double after_s = drawing_of(out).total_s;
  ToolResult r;
  r.reroute = false;
  r.fields = {{"draw_time_before_ms", round3(1000 * before_s)}, {"draw_time_after_ms", round3(1000 * after_s)}};
  r.llm_text = fmt::format("tour {}: draw time {:.2f} s -> {:.2f} s", full ? "set in full" : "re-routed around the pins",
                           before_s, after_s);
  if (std::string start = state_start(ctx.scene, out, r.fields); !start.empty()) r.llm_text += "; " + start;
  r.scene = std::move(out);
  return r;
}

json dir_schema() {
  return S::enumeration({"forward", "reverse"}, "from p0 to p1, or back");
}

Tool reorder_tour_entry() {
  using R = ReorderRequest;
  return typed_tool<R>(
      33, "ReorderTour", "mutation",
      "Set the draw order by hand: a full order, or a few primitives pinned at positions with the rest "
      "re-optimized around them. With a free start the robot is placed at the new first stroke; with a fixed "
      "one the way from it counts; the start field sets either, and the result states what the start costs.",
      {{field("full_order", &R::full_order,
              S::nullable(S::array(S::tuple({S::id("primitive id"), dir_schema()}, "[primitive_id, \"forward\"|\"reverse\"]"),
                                   "every primitive once, in drawing order"))),
        field("pinned_positions", &R::pinned_positions,
              S::nullable(S::array(S::tuple({S::integer("0-based position"), S::id("primitive id"), dir_schema()},
                                            "[index, primitive_id, \"forward\"|\"reverse\"]"),
                                   "0-based positions to hold"))),
        field("rerun_optimizer", &R::rerun_optimizer, S::with_default(S::boolean("re-optimize the unpinned steps"), true)),
        field("start", &R::start, start_request_schema())}},
      S::object({{"draw_time_before_ms", S::number("the draw time before")}, {"draw_time_after_ms", S::number("the draw time after")},
                 {"start", start_result_schema()}}),
      reorder_tour, ToolKind::edit);
}

// ---------------------------------------------------------------- RerunStage

// The user's earlier settings of these stages (from the config) with the request's over them;
// keys may be given without the stage prefix when the stage has one.
std::map<std::string, double> overrides_for(const Scene& s, const json& given, std::initializer_list<const char*> prefixes) {
  std::map<std::string, double> out;
  auto has_prefix = [&](const std::string& k) {
    return std::any_of(prefixes.begin(), prefixes.end(), [&](const char* p) { return k.rfind(p, 0) == 0; });
  };
  for (auto it = s.config.begin(); it != s.config.end(); ++it)
    if (has_prefix(it.key()) && it.value().value("from", "") == "user" && it.value()["value"].is_number())
      out[it.key()] = it.value()["value"];
  for (auto it = given.begin(); it != given.end(); ++it) {
    if (!it.value().is_number())
      throw Error(Code::invalid_selection, "config override " + it.key() + " must be a number", {{"key", it.key()}});
    std::string key = it.key();
    if (!has_prefix(key)) {
      if (prefixes.size() != 1)
        throw Error(Code::invalid_selection, fmt::format("config override '{}' needs its stage prefix (skeleton. or graph.)", key),
                    {{"key", key}});
      key = *prefixes.begin() + key;
    }
    out[key] = it.value();
  }
  return out;
}

// Gives fitted primitives their ids in `out`: an unchanged shape keeps the id it had, anything
// else gets a fresh one; relations are renamed to match.
void adopt(Scene& out, std::vector<Primitive> fresh, json relations, const std::vector<Primitive>& old,
           std::set<std::string>& touched) {
  std::map<std::string, std::string> rename;
  std::set<std::string> used;
  for (Primitive& p : fresh) {
    auto it = std::find_if(old.begin(), old.end(),
                           [&](const Primitive& o) { return !used.count(o.id) && same_shape(o.shape, p.shape, 1e-3, 1e-6); });
    std::string id = it != old.end() ? it->id : fresh_primitive_id(out);
    if (it != old.end()) {  // unchanged: the primitive stays as it was, with its new provenance
      Primitive kept = *it;
      kept.edge = p.edge, kept.span0 = p.span0, kept.span1 = p.span1;
      kept.id = p.id;
      p = kept;
    } else {
      touched.insert(id);
    }
    used.insert(id);
    rename[p.id] = id;
    p.id = id;
  }
  for (auto& r : relations)
    for (auto& id : r["primitives"]) id = rename[id.get<std::string>()];
  out.primitives->insert(out.primitives->end(), fresh.begin(), fresh.end());
  for (auto& r : relations) out.relations.push_back(r);
}

// Fits the edges in `edges` of `base`'s graph; returns the primitives (temporary ids) and the
// relations beautify found among them, and records the fit thresholds in `out`'s config.
std::pair<std::vector<Primitive>, json> fit_edges(const Scene& base, const std::set<std::string>& edges,
                                                  const std::map<std::string, double>& overrides, Scene& out) {
  Scene tmp;
  tmp.source = base.source;
  tmp.config = out.config;
  tmp.graph = Graph{base.graph->vertices, {}};
  for (const Edge& e : base.graph->edges)
    if (edges.count(e.id)) tmp.graph->edges.push_back(e);
  fit(tmp, FitOptions{overrides});
  out.config = tmp.config;
  return {std::move(*tmp.primitives), tmp.relations};
}

std::set<std::string> edges_in(const Scene& s, const Scope& scope) {
  std::set<std::string> out;
  for (const Edge& e : s.graph->edges)
    if (scope.everything() || scope.touches(e.points)) out.insert(e.id);
  return out;
}

// Removes the primitives of the given edges, and those touching the scope; returns them.
std::vector<Primitive> take_primitives(Scene& out, const std::set<std::string>& edges, const Scope& scope) {
  std::vector<Primitive> taken, kept;
  for (Primitive& p : *out.primitives)
    ((edges.count(p.edge) || scope.everything() || scope.touches(p)) ? taken : kept).push_back(std::move(p));
  *out.primitives = std::move(kept);
  std::set<std::string> gone;
  for (const auto& p : taken) gone.insert(p.id);
  json rel = json::array();
  for (const auto& r : out.relations) {
    bool hit = false;
    for (const auto& id : r.value("primitives", json::array())) hit = hit || gone.count(id.get<std::string>());
    if (!hit) rel.push_back(r);
  }
  out.relations = rel;
  return taken;
}

// A stage run in a region changes the settings there only: the drawing's own stay as they were
// (a key only the request set is dropped from them), and each of the request's overrides is
// recorded as the region's, "region:LABEL:KEY" in the config (GetConfig lists it).
void keep_settings_outside(Scene& out, const Scene& before, const std::map<std::string, double>& requested,
                           const Scope& scope, const std::string& stage) {
  json config = json::object();
  for (auto it = out.config.begin(); it != out.config.end(); ++it) {
    if (before.config.contains(it.key())) config[it.key()] = before.config[it.key()];
    else if (!requested.count(it.key())) config[it.key()] = it.value();
  }
  for (auto it = before.config.begin(); it != before.config.end(); ++it)
    if (!config.contains(it.key())) config[it.key()] = it.value();
  out.config = config;
  const std::string where = scope.describe();
  for (const auto& [key, value] : requested)
    set_config(out, "region:" + where + ":" + key, value, "user",
               fmt::format("{} inside {} only (RerunStage {})", key, where, stage));
}

// "N primitive(s) replaced by M": the taken primitives the refit removed and the new ones it
// made (an unchanged shape keeps its id and counts as neither).
std::string replaced_text(const std::vector<Primitive>& taken, const Scene& out, const std::set<std::string>& fresh) {
  size_t removed = 0;
  for (const auto& p : taken) removed += out.primitive(p.id) == nullptr;
  std::string text = fmt::format("{} primitive(s) replaced by {}", removed, fresh.size());
  if (size_t same = taken.size() - removed) text += fmt::format(", {} unchanged", same);
  return text;
}

struct RerunRequest : RegionRequest {
  std::string stage;
  json config_overrides;  // config key -> number; checked key by key (overrides_for)
  std::optional<std::string> start;
};

ToolResult rerun_stage(const ToolContext& ctx, const RerunRequest& req) {
  const std::string& stage = req.stage;
  if (req.start && stage != "route_optimize")
    throw Error(Code::invalid_selection, "start applies to the route: give it with stage route_optimize", {{"stage", stage}});
  Scene out = ctx.scene;
  out.warnings.clear();
  // The old primitives are taken out before the refit is adopted: without the marks pinned
  // here, a fresh id counted from the survivors could be one adopt keeps for an unchanged shape.
  carry_id_marks(ctx.scene, out);
  const Scope scope = req.region.is_object() ? Scope{{resolve_region(ctx.scene, req.region)}} : Scope{};
  const json& given = req.config_overrides;
  ToolResult r;
  std::string summary;
  if (stage == "route_optimize") {
    if (!out.primitives) throw Error(Code::invalid_scene, "the scene has no primitives (run sv-fit first)");
    RouteOptions o = route_options_with_start(ctx.scene, req.start);
    const auto requested = overrides_for(Scene{}, given, {"route."});
    const double before_s = drawing_of(ctx.scene).total_s;
    if (scope.everything()) {
      for (const auto& [k, v] : requested) o.overrides[k] = v;
      route(out, o);
    } else {
      // Everything outside the region keeps its place and direction in the tour; the region's
      // primitives are re-ordered and re-oriented among their own places.
      if (!out.tour) throw Error(Code::invalid_scene, "the scene has no tour to keep outside the region (run sv-route first)");
      // A region's route setting is its primitives' own: the other keys shape the whole tour.
      for (const auto& [k, v] : requested) {
        if (k != "route.deviation_px")
          throw Error(Code::invalid_selection,
                      fmt::format("{} applies to the whole drawing: in a region only route.deviation_px can be set", k),
                      {{"key", k}});
        if (!(v >= 0)) throw Error(Code::invalid_selection, "route.deviation_px must be at least 0", {{"key", k}});
        for (Primitive& p : *out.primitives)
          if (scope.touches(p)) p.route_deviation_px = v;
      }
      std::vector<PinnedStep> pins;
      std::set<std::string> seen;
      for (const TourStep& t : *out.tour) {
        if (!seen.insert(t.primitive).second) continue;
        const Primitive* p = out.primitive(t.primitive);
        if (p && !scope.touches(*p)) pins.push_back({seen.size() - 1, t.primitive, t.reverse});
      }
      route_with_pins(out, o, pins, true);
      keep_settings_outside(out, ctx.scene, requested, scope, stage);
    }
    r.reroute = false;
    summary = fmt::format("re-routed: draw time {:.2f} s -> {:.2f} s", before_s, drawing_of(out).total_s);
    if (std::string start = state_start(ctx.scene, out, r.fields); !start.empty()) summary += "; " + start;
  } else if (stage == "vectorize" || stage == "segment" || stage == "beautify") {
    if (!out.graph) throw Error(Code::invalid_scene, "the scene has no graph (run sv-skeleton first)");
    if (!out.primitives) out.primitives = std::vector<Primitive>{};
    auto overrides = overrides_for(ctx.scene, given, {"fit."});
    if (stage == "beautify" && !overrides.count("fit.beautify")) overrides["fit.beautify"] = 1;
    std::set<std::string> edges = edges_in(ctx.scene, scope);
    std::vector<Primitive> old = take_primitives(out, edges, scope);
    // Primitives touching the region belong to edges refitted whole.
    for (const auto& p : old)
      if (!p.edge.empty()) edges.insert(p.edge);
    auto [fresh, rel] = fit_edges(ctx.scene, edges, overrides, out);
    adopt(out, std::move(fresh), rel, old, r.touched);
    if (!scope.everything()) keep_settings_outside(out, ctx.scene, overrides_for(Scene{}, given, {"fit."}), scope, stage);
    summary = fmt::format("{} {} edge(s): {}", stage, edges.size(), replaced_text(old, out, r.touched));
  } else {  // skeletonize, graph: trace the source again
    std::string why;
    cv::Mat gray = source_raster(ctx, ctx.scene, &why);
    if (gray.empty()) throw Error(Code::no_result, "cannot re-trace: " + why, {{"reason", why}});
    Scene traced;
    traced.source = ctx.scene.source;
    skeletonize(traced, gray, SkeletonOptions{overrides_for(ctx.scene, given, {"skeleton.", "graph."})});
    for (const auto& w : traced.warnings) r.warnings.push_back(w);
    // Config of the new trace replaces the old trace's keys.
    for (auto it = traced.config.begin(); it != traced.config.end(); ++it) out.config[it.key()] = it.value();
    std::set<std::string> new_edges = edges_in(traced, scope);
    if (!out.graph || scope.everything()) {
      out.graph = traced.graph;
    } else {
      // Inside the region the new trace's edges replace the old ones; new vertices and edges get
      // ids after the old graph's, so the primitives outside keep their provenance.
      std::set<std::string> old_edges = edges_in(ctx.scene, scope);
      Graph g;
      g.vertices = out.graph->vertices;
      for (const Edge& e : out.graph->edges)
        if (!old_edges.count(e.id)) g.edges.push_back(e);
      int next_v = static_cast<int>(g.vertices.size()), next_e = 0;
      for (const Edge& e : out.graph->edges) next_e = std::max(next_e, std::atoi(e.id.c_str() + 2));
      std::map<std::string, std::string> vmap;
      auto vertex_id = [&](const std::string& v) {
        if (auto it = vmap.find(v); it != vmap.end()) return it->second;
        Vertex nv = *traced.graph->vertex(v);
        nv.id = fmt::format("v_{:04d}", ++next_v);
        g.vertices.push_back(nv);
        return vmap[v] = nv.id;
      };
      std::set<std::string> renamed;
      for (const Edge& e : traced.graph->edges)
        if (new_edges.count(e.id)) {
          Edge ne = e;
          ne.id = fmt::format("e_{:04d}", ++next_e);
          ne.v0 = vertex_id(e.v0);
          ne.v1 = vertex_id(e.v1);
          g.edges.push_back(ne);
          renamed.insert(ne.id);
        }
      new_edges = renamed;
      out.graph = g;
    }
    if (!out.primitives) {
      summary = fmt::format("re-traced: {} edges", out.graph->edges.size());
    } else {
      std::vector<Primitive> old = take_primitives(out, {}, scope);
      if (!scope.everything()) {
        // Old primitives of edges that are gone go too.
        std::set<std::string> live;
        for (const Edge& e : out.graph->edges) live.insert(e.id);
        std::vector<Primitive> kept;
        for (Primitive& p : *out.primitives) (live.count(p.edge) || p.edge.empty() ? kept : old).push_back(std::move(p));
        *out.primitives = std::move(kept);
      }
      auto [fresh, rel] = fit_edges(out, new_edges, overrides_for(ctx.scene, json::object(), {"fit."}), out);
      adopt(out, std::move(fresh), rel, old, r.touched);
      summary = fmt::format("re-traced {} edge(s): {}", new_edges.size(), replaced_text(old, out, r.touched));
    }
    if (!scope.everything())
      keep_settings_outside(out, ctx.scene, overrides_for(Scene{}, given, {"skeleton.", "graph."}), scope, stage);
  }
  if (!scope.everything()) summary += " in " + scope.describe();
  std::vector<std::string> affected(r.touched.begin(), r.touched.end());
  r.fields["summary"] = summary;
  r.fields["affected_primitive_ids"] = affected;
  r.llm_text = summary;
  r.scene = std::move(out);
  return r;
}

Tool rerun_stage_entry() {
  using R = RerunRequest;
  return typed_tool<R>(
      34, "RerunStage", "mutation",
      "Run a pipeline stage again with config overrides, on a region or the whole drawing: skeletonize or "
      "graph (re-trace the source; skeleton.*, graph.* keys), segment, vectorize or beautify (refit; fit.* "
      "keys), route_optimize (route.* keys; in a region only its primitives are re-ordered, the rest of the tour "
      "stays, and only route.deviation_px can be set there; the whole drawing is searched afresh and from the "
      "current tour, which stays unless a faster one is found; the start field sets the robot's start, free or "
      "X,Y,HEADING_DEG). Overrides given with a region hold inside it only and are recorded as "
      "region:REGION:KEY. The highest-leverage edit: fix the threshold, not the primitive.",
      {{field("stage", &R::stage,
              S::enumeration({"skeletonize", "segment", "graph", "vectorize", "beautify", "route_optimize"}, "the stage to run again")),
        field<R, json>("region", &R::region, S::region("only here (default: the whole drawing)")),
        field("config_overrides", &R::config_overrides,
              S::with_default({{"type", "object"}, {"description", "config key -> number (see GetConfig)"}}, json::object())),
        field("start", &R::start, start_request_schema())},
       {"stage"}},
      S::object({{"summary", S::string("what the stage did")},
                 {"affected_primitive_ids", S::array(S::id("primitive id"), "new or reshaped primitives")},
                 {"start", start_result_schema()}}),
      rerun_stage, ToolKind::edit);
}

// ---------------------------------------------------------------- SimulateEdit

// What AnalyzeCoverage would find: how many clusters of missed or spurious ink, and their length.
json coverage_findings(const Scene& s, const std::vector<Polyline>& reference) {
  if (!s.primitives) return json::object();
  CoverageReport cov = analyze_coverage(s, drawing_of(s), reference, default_tolerance(stroke_width_of(s)), Scope{}, true);
  double missed = 0, spurious = 0;
  for (const auto& f : cov.findings) (f.kind == "missed_ink" ? missed : spurious) += f.length_px;
  return {{"coverage_findings", cov.findings.size()}, {"missed_ink_px", round3(missed)}, {"spurious_ink_px", round3(spurious)}};
}

// How many primitives carry each semantic role, so a dry run shows which labelled parts an edit removes.
json semantic_aspects(const Scene& s) {
  std::map<std::string, int> roles;
  if (s.primitives)
    for (const auto& p : *s.primitives) roles[p.semantic_role]++;
  return {{"semantic_roles", roles}};
}

// Several batches tried from the same revision. Those within the budget are ranked as
// SuggestOptimizations ranks its candidates: draw time saved per fidelity lost (suggest::merit).
// One over the budget keeps its row, as the caller asked for it, but no rank: it follows them,
// marked with the bounds it exceeds. A refused one comes last.
ToolResult simulate_alternatives(const ToolContext& ctx, const json& alts, const suggest::Budget& budget) {
  const EditBaseline base = edit_baseline(ctx);
  enum Standing { ranked, over_budget, refused };
  struct Tried {
    size_t index;
    json row;
    Standing standing;
    double merit;
  };
  std::vector<Tried> tried;
  for (size_t i = 0; i < alts.size(); ++i) {
    report_progress(double(i), double(alts.size()), "alternatives simulated");
    json row = {{"alternative", i}};
    try {
      const std::vector<EditStep> steps = parse_batch(alts[i]);
      EditSession s = apply_edits(ctx, steps, &base);
      suggest::Effect e{s.before, s.after, 1.0};
      const double merit = suggest::merit(e, {"draw_time"});
      const std::vector<std::string> exceeded = suggest::exceeded(e, budget);
      row.update({{"after", s.after}, {"draw_time_delta_ms", std::round(e.delta("draw_time_s") * 1000)},
                  {"f1_delta", round3(e.delta("f1"))}, {"f1_1px_delta", round3(e.delta("f1_1px"))},
                  {"chamfer_px_delta", round3(e.delta("chamfer_px"))}, {"risk", suggest::risk(e)},
                  {"merit", round_to(merit, 1e-4)}, {"new_primitive_ids", s.added}, {"removed_primitive_ids", s.removed},
                  {"changed_primitive_ids", s.changed}});
      if (!exceeded.empty()) row["over_budget"] = exceeded;
      const json apply = apply_request(ctx, steps);
      row.update({{"apply_id", apply["apply_id"]}, {"apply", apply}, {"command", apply_command(ctx, apply)}});
      tried.push_back({i, row, exceeded.empty() ? ranked : over_budget, merit});
    } catch (const Error& err) {
      row["refused"] = {{"code", code_name(err.code())}, {"message", err.what()}};
      tried.push_back({i, row, refused, -INFINITY});
    }
  }
  std::stable_sort(tried.begin(), tried.end(), [](const Tried& a, const Tried& b) {
    return a.standing != b.standing ? a.standing < b.standing : a.merit > b.merit;
  });
  ToolResult r;
  r.warnings = base.warnings;
  json table = json::array();
  r.llm_text = fmt::format("simulated {} alternatives from the same revision (nothing changed); ranked by draw time saved "
                           "per fidelity lost{}:",
                           alts.size(), budget.bounded() ? ", those within the budget" : "");
  for (size_t k = 0; k < tried.size(); ++k) {
    json& row = tried[k].row;
    std::string line;
    if (tried[k].standing == ranked) {
      row["rank"] = k + 1;
      line = fmt::format("rank {}: ", k + 1);
    } else if (tried[k].standing == over_budget) {
      line = fmt::format("over budget ({}): ", fmt::join(row["over_budget"].get<std::vector<std::string>>(), ", "));
    } else {
      line = "refused: ";
    }
    line += fmt::format("alternative {}: ", tried[k].index);
    r.llm_text += "\n" + line +
                  (tried[k].standing == refused
                       ? row["refused"]["message"].get<std::string>()
                       : fmt::format("{:+.0f} ms, f1 {:+.3f}, f1@1px {:+.3f}, chamfer {:+.3f} px, {} risk, apply_id {}",
                                     row["draw_time_delta_ms"].get<double>(), row["f1_delta"].get<double>(),
                                     row["f1_1px_delta"].get<double>(), row["chamfer_px_delta"].get<double>(),
                                     row["risk"].get<std::string>(), row["apply_id"].get<std::string>()));
    if (row.contains("command")) r.human_text += fmt::format("\nalternative {} apply: {}", tried[k].index, row["command"].get<std::string>());
    table.push_back(row);
  }
  r.human_text = r.llm_text + r.human_text;
  r.fields = {{"before", base.before},
              {"after", !tried.empty() && tried[0].standing == ranked ? tried[0].row["after"] : json::object()},
              {"alternatives", table}};
  return r;
}

struct SimulateRequest : LossBudgetRequest {
  json edits;         // the batch, as parse_batch reads it
  json alternatives;  // batches, each as edits
  std::vector<std::string> metrics_to_report;
  bool return_render;
};

ToolResult simulate_edit(const ToolContext& ctx, const SimulateRequest& req) {
  if (!req.alternatives.empty()) {
    if (!req.edits.empty()) throw Error(Code::invalid_selection, "give edits or alternatives, not both");
    return simulate_alternatives(ctx, req.alternatives, req.budget());
  }
  std::vector<EditStep> steps = parse_batch(req.edits);
  EditSession s = apply_edits(ctx, steps);
  json before = json::object(), after = json::object();
  const std::map<std::string, std::vector<const char*>> keys = {
      {"draw_time", {"draw_time_s"}}, {"primitive_count", {"primitive_count"}}, {"pen_up_count", {"pen_up_count"}},
      {"pixel_fidelity", {"precision", "recall", "f1", "f1_1px", "chamfer_px"}}};
  const std::vector<Polyline> ref = fidelity_reference(ctx, ctx.scene, s.warnings).paths;
  const std::map<std::string, std::function<json(const Scene&)>> measured = {
      {"coverage_findings", [&](const Scene& x) { return coverage_findings(x, ref); }}, {"semantic_aspects", semantic_aspects}};
  for (const std::string& name : req.metrics_to_report) {
    if (auto it = measured.find(name); it != measured.end()) {
      before.update(it->second(ctx.scene));
      after.update(it->second(s.scene));
      continue;
    }
    for (const char* k : keys.at(name)) {
      if (s.before.contains(k)) before[k] = s.before[k];
      if (s.after.contains(k)) after[k] = s.after[k];
    }
  }
  ToolResult r;
  r.warnings = s.warnings;
  const json apply = apply_request(ctx, steps);
  r.fields = {{"before", before}, {"after", after}, {"new_primitive_ids", s.added},
              {"removed_primitive_ids", s.removed}, {"changed_primitive_ids", s.changed}, {"edits", s.results},
              {"apply_id", apply["apply_id"]}, {"apply", apply}, {"command", apply_command(ctx, apply)}};
  r.llm_text = "simulated (nothing changed): " + s.llm_text + "\n" + edit_summary(s) +
               fmt::format("\napply exactly this: ApplyEdits with apply_id {} and these edits", apply["apply_id"].get<std::string>());
  if (const auto exceeded = suggest::exceeded({s.before, s.after, 1.0}, req.budget()); !exceeded.empty()) {
    r.fields["over_budget"] = exceeded;
    r.llm_text += fmt::format("\nover budget: {}", fmt::join(exceeded, ", "));
  }
  for (const auto& [k, v] : after.items())
    if (!s.after.contains(k)) r.llm_text += fmt::format("\n{}: {} -> {}", k, before.value(k, json()).dump(), v.dump());
  r.human_text = r.llm_text + "\napply: " + r.fields["command"].get<std::string>();
  if (req.return_render)
    r.images["simulation"] = change_sheet(ctx.scene, s.scene, "before", "after (simulated)", s.added, s.removed, s.changed);
  return r;
}

json ids_schema(const std::string& doc) { return S::array(S::id("primitive id"), doc); }

json over_budget_schema() {
  return S::array(S::enumeration({"max_f1_loss", "max_f1_1px_loss", "max_chamfer_gain_px"}, "a bound of the request"),
                  "the bounds the batch exceeds (absent: within them)");
}

json alternative_schema() {
  return S::object(
      {{"alternative", S::integer("its place in the request's alternatives, from 0")},
       {"rank", S::integer("from 1, best first; only for those within the budget", 1)},
       {"after", S::open_object("the scoreboard after it")},
       {"draw_time_delta_ms", S::number("after - before; negative = faster")},
       {"f1_delta", S::number("f1 against the ink, after - before")},
       {"f1_1px_delta", S::number("f1 at 1 px, after - before")},
       {"chamfer_px_delta", S::number("chamfer distance to the ink, after - before")},
       {"risk", S::enumeration({"low", "medium", "high"}, "how much fidelity it puts at stake")},
       {"merit", S::number("draw time saved per fidelity lost: the rank")},
       {"new_primitive_ids", ids_schema("primitives it would add")},
       {"removed_primitive_ids", ids_schema("primitives it would remove")},
       {"changed_primitive_ids", ids_schema("primitives it would reshape or re-route")},
       {"over_budget", over_budget_schema()},
       {"apply_id", S::string("the id that applies exactly this batch to this revision")},
       {"apply", S::open_object("the ApplyEdits request: {apply_id, edits}")},
       {"command", S::string("the command line that applies it, runnable as printed")},
       {"refused", S::object({{"code", S::string("the error code")}, {"message", S::string("why the batch was refused")}},
                             {"code", "message"}, "why it could not be simulated")}},
      {"alternative"}, "one batch as tried");
}

Tool simulate_edit_entry() {
  using R = SimulateRequest;
  return typed_tool<R>(
      22, "SimulateEdit", "suggestion",
      "Dry-run a batch of edits: before/after metrics (draw time, fidelity, coverage findings, semantic roles), the ids "
      "that would change and, on request, the before/after view; nothing is written.",
      {with_loss_budget<R>({field("edits", &R::edits,
              S::with_default(S::array(S::open_object("an edit"), "[{\"kind\": tool or edit kind, \"payload\": {fields}}] or "
                                                             "[{\"tool\": NAME, ...fields}]"),
                              json::array())),
        field("alternatives", &R::alternatives,
              S::with_default(S::array(S::array(S::open_object("an edit, as in edits"), "one batch, as edits"),
                                       "several batches (instead of edits), each tried from the same revision; those "
                                       "within the max_* bounds ranked by draw time saved per fidelity lost"),
                              json::array())),
        field("metrics_to_report", &R::metrics_to_report,
              S::with_default(S::array(S::enumeration({"draw_time", "primitive_count", "pen_up_count", "pixel_fidelity",
                                                       "coverage_findings", "semantic_aspects"}, "a metric"),
                                       "what before and after report"),
                              json::array({"draw_time", "pixel_fidelity"}))),
        field("return_render", &R::return_render,
              S::with_default(S::boolean("also return the view: before, after and what changed, side by side"), false))})},
      S::object({{"before", S::open_object("the metrics asked for, before")},
                 {"after", S::open_object("the metrics asked for, after; with alternatives the first ranked one's")},
                 {"new_primitive_ids", ids_schema("primitives the batch would add")},
                 {"removed_primitive_ids", ids_schema("primitives it would remove")},
                 {"changed_primitive_ids", ids_schema("primitives it would reshape or re-route")},
                 {"edits", S::array(S::open_object("an edit's own result fields"), "each edit's result, in order")},
                 {"alternatives", S::array(alternative_schema(), "with alternatives: the ranked rows best first, then those over "
                                                                 "budget, then those refused")},
                 {"over_budget", over_budget_schema()},
                 {"apply_id", S::string("the id that applies exactly this batch to this revision (ApplyEdits)")},
                 {"apply", S::open_object("the ApplyEdits request that applies it: {apply_id, edits}")},
                 {"command", S::string("the command line that applies it, runnable as printed")}},
                {"before", "after"}),
      simulate_edit, ToolKind::read, "sv-edit");
}

// ---------------------------------------------------------------- ApplyEdits

struct ApplyRequest {
  json edits;
  std::optional<std::string> apply_id;
};

// A batch applied as one edit: each step settled as it runs, exactly as SimulateEdit and
// SuggestOptimizations measured it, so the revision has the predicted metrics.
ToolResult apply_edits_tool(const ToolContext& ctx, const ApplyRequest& req) {
  const std::vector<EditStep> steps = parse_batch(req.edits);
  const std::string id = apply_id(ctx.revision_id, steps);
  for (const auto& step : steps)
    if (step.request.value("dry_run", false))
      throw Error(Code::invalid_selection, "ApplyEdits: dry_run goes on ApplyEdits itself, not on an edit of its batch");
  if (req.apply_id && *req.apply_id != id) {
    const std::string& given = *req.apply_id;
    static const std::regex form("[0-9a-f]{12}\\.[0-9a-f]{12}");
    if (!std::regex_match(given, form))
      throw Error(Code::invalid_selection,
                  fmt::format("'{}' is not an apply id (12 hex digits of the revision, a dot, 12 of the batch's hash, as "
                              "SimulateEdit and SuggestOptimizations give it)", given),
                  {{"apply_id", given}});
    const std::string on = given.substr(0, 12);
    if (on != ctx.revision_id.substr(0, 12))
      throw Error(Code::conflict,
                  fmt::format("apply id {} was computed on revision {}, and this is revision {} (HEAD has moved): "
                              "simulate or suggest again on it",
                              given, on, ctx.revision_id.substr(0, 12)),
                  {{"apply_id", given}, {"computed_on", on}, {"revision_id", ctx.revision_id}});
    throw Error(Code::invalid_selection,
                fmt::format("apply id {} was not computed for these edits (they give {}): state the batch as simulated",
                            given, id),
                {{"apply_id", given}, {"expected", id}});
  }
  EditSession s = apply_edits(ctx, steps);
  ToolResult r;
  r.scene = std::move(s.scene);
  r.settled = true;
  r.warnings = s.warnings;
  r.fields = {{"apply_id", id}, {"edits", s.results}};
  r.llm_text = fmt::format("applied {} edit(s) as one (apply id {}):\n{}", steps.size(), id, s.llm_text);
  return r;
}

Tool apply_edits_entry() {
  using R = ApplyRequest;
  return typed_tool<R>(
      47, "ApplyEdits", "mutation",
      "Apply a batch as one revision, exactly as SimulateEdit or SuggestOptimizations measured it: pass their apply "
      "({apply_id, edits}); a conflict once HEAD has left apply_id's revision. \"$N.added[K]\": an id edit N added.",
      {{field("edits", &R::edits,
              S::array(S::open_object("an edit"), "[{\"tool\": NAME, ...fields}], as SimulateEdit's edits")),
        field("apply_id", &R::apply_id,
              S::nullable(S::string("the id SimulateEdit or SuggestOptimizations gave; checked against the revision and the edits")))},
       {"edits"}},
      S::object({{"apply_id", S::string("the batch's id on this revision")},
                 {"edits", S::array(S::open_object("an edit's own result fields"), "each edit's own result fields, in order")}},
                {"apply_id"}),
      apply_edits_tool, ToolKind::edit);
}

}  // namespace

// The entries defined above, each after its handler (the catalog number, not this list, orders them).
void add_stage_edit_tools(std::vector<Tool>& out) {
  for (auto entry : {reorder_tour_entry, rerun_stage_entry, simulate_edit_entry, apply_edits_entry})
    out.push_back(entry());
}

}  // namespace sv
