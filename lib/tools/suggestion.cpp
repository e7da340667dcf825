// Suggestion: ready-to-run candidate edits, each applied in a dry run with the same settle as
// the edit itself, so what is predicted is what applying the printed request gives; and the
// groups of similar elements whose merges belong together.
// Each tool's registry entry (catalog number, name, group, schemas) stands right after its handler.
#include <fmt/format.h>

#include <algorithm>
#include <climits>
#include <cmath>

#include "core/cancel.hpp"
#include "core/error.hpp"
#include "edit/edit.hpp"
#include "suggest/candidates.hpp"
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

// The request as printed: the tool and its fields, the ApplyEdits request that applies exactly
// it to this revision, and the command line that makes that request.
json request_json(const ToolContext& ctx, const suggest::Candidate& c) {
  json edit = c.request;
  edit["tool"] = c.tool;
  const json apply = apply_request(ctx, parse_batch(json::array({edit})));
  return {{"tool", c.tool}, {"request", c.request}, {"apply", apply}, {"command", apply_command(ctx, apply)}};
}

struct Measured {
  suggest::Candidate candidate;
  suggest::Effect effect;
  EditSession session;
  double merit = 0;
};

// Applies a candidate to the context's scene in a dry run, settled as the edit itself is.
EditSession dry_run(const ToolContext& ctx, const suggest::Candidate& c, const EditBaseline& base) {
  const Tool* t = find_tool(c.tool);
  return apply_edits(ctx, {EditStep{t, normalize_request(*t, c.request)}}, &base);
}

// Applies each candidate to the context's scene in a dry run; refused ones are left out.
std::vector<Measured> measure(const ToolContext& ctx, std::vector<suggest::Candidate> cands,
                              const std::vector<std::string>& objectives, int& refused) {
  const EditBaseline base = edit_baseline(ctx);
  std::vector<Measured> out;
  refused = 0;
  for (auto& c : cands) {
    report_progress(double(out.size() + refused), double(cands.size()), "edits measured in dry runs");
    try {
      EditSession s = dry_run(ctx, c, base);
      suggest::Effect e{s.before, s.after, suggest::role_weight(ctx.scene, c.targets)};
      const double m = suggest::merit(e, objectives);
      out.push_back({std::move(c), e, std::move(s), m});
    } catch (const Error&) {
      ++refused;  // the geometry does not allow it (a merge beyond tolerance, a relation that cannot hold)
    }
  }
  return out;
}

// The primitives a candidate's dry run removed or changed: what it touches, whatever it names.
std::vector<std::string> affected_ids(const EditSession& s) {
  std::vector<std::string> ids = s.removed;
  ids.insert(ids.end(), s.changed.begin(), s.changed.end());
  std::sort(ids.begin(), ids.end());
  return ids;
}

json fidelity_delta(const suggest::Effect& e) {
  json d = json::object();
  for (const char* k : {"f1", "f1_1px", "precision", "recall", "chamfer_px"})
    if (e.before.contains(k) && e.after.contains(k)) d[k] = round3(e.delta(k));
  return d;
}

json roles_of(const Scene& s, const std::vector<std::string>& ids) {
  std::map<std::string, int> roles;
  for (const auto& id : ids)
    if (const Primitive* p = s.primitive(id)) roles[p->semantic_role]++;
  return roles;
}

// A request scoped by the common `region` and the catalog's own `in_region`: both narrow it.
struct InRegionRequest : RegionRequest {
  json in_region;  // null: not given
};

Scope scope_of(const Scene& s, const InRegionRequest& req) { return scope_of_regions(s, {req.region, req.in_region}); }

// ---------------------------------------------------------------- SuggestOptimizations

struct SuggestRequest : InRegionRequest, LossBudgetRequest {
  std::vector<std::string> optimize_for;
  int max_candidates;
};

// Measured candidates that predict the same: the same scoreboard after, the same primitives
// added, removed and changed. Only the first (the best ranked) is worth listing.
bool same_prediction(const Measured& a, const Measured& b) {
  return a.effect.after == b.effect.after && a.session.added == b.session.added &&
         a.session.removed == b.session.removed && a.session.changed == b.session.changed;
}

ToolResult suggest_optimizations(const ToolContext& ctx, const SuggestRequest& req) {
  const Scope scope = scope_of(ctx.scene, req);
  const std::vector<std::string>& objectives = req.optimize_for;
  if (objectives.empty()) throw Error(Code::invalid_selection, "optimize_for names no objective");
  std::vector<std::string> warnings;
  const FidelityReference ref = fidelity_reference(ctx, ctx.scene, warnings);
  std::vector<suggest::Candidate> cands = suggest::propose(ctx.scene, ref.paths, scope);
  for (auto& c : cands)
    if (c.tool == "RerunStage" && !c.request.contains("region") && !scope.everything()) c.request["region"] = !req.in_region.is_null() ? req.in_region : req.region;
  const size_t proposed = cands.size();
  int refused = 0;
  std::vector<Measured> m = measure(ctx, std::move(cands), objectives, refused);
  const suggest::Budget budget = req.budget();
  const size_t measured = m.size();
  m.erase(std::remove_if(m.begin(), m.end(), [&](const Measured& x) { return !(x.merit > 0) || !suggest::fits(x.effect, budget); }),
          m.end());
  const size_t over_budget_or_no_gain = measured - m.size();
  std::stable_sort(m.begin(), m.end(), [](const Measured& a, const Measured& b) { return a.merit > b.merit; });
  std::vector<Measured> distinct;
  for (Measured& x : m)
    if (std::none_of(distinct.begin(), distinct.end(), [&](const Measured& d) { return same_prediction(d, x); }))
      distinct.push_back(std::move(x));
  const size_t duplicates = m.size() - distinct.size();
  m = std::move(distinct);
  const size_t keep = std::min(m.size(), static_cast<size_t>(req.max_candidates));
  json list = json::array();
  std::string text;
  for (size_t i = 0; i < keep; ++i) {
    const Measured& x = m[i];
    const suggest::Effect& e = x.effect;
    const json request = request_json(ctx, x.candidate);
    json c = {{"candidate_id", fmt::format("c{}", i + 1)},
              {"description", x.candidate.description},
              {"edit_kind", x.candidate.edit_kind},
              {"target_primitive_ids", x.candidate.targets},
              {"affected_primitive_ids", affected_ids(x.session)},
              {"predicted_draw_time_delta_ms", std::round(e.delta("draw_time_s") * 1000)},
              {"predicted_fidelity_delta", fidelity_delta(e)},
              {"predicted_semantic_delta", {{"roles", roles_of(ctx.scene, x.candidate.targets)}, {"fidelity_weight", e.role_weight}}},
              {"predicted_primitive_delta", static_cast<int>(std::lround(e.delta("primitive_count")))},
              {"predicted_pen_up_delta", static_cast<int>(std::lround(e.delta("pen_up_count")))},
              {"predicted_after", e.after},
              {"risk", suggest::risk(e)},
              {"rationale", x.candidate.rationale},
              {"merit", round_to(x.merit, 1e-4)},
              {"apply_id", request["apply"]["apply_id"]},
              {"request", request}};
    if (!x.candidate.merge_kind.empty()) c["merge_kind"] = x.candidate.merge_kind;
    list.push_back(c);
    text += fmt::format("\nc{}: {} ({}): {:+.0f} ms, f1 {:+.3f}, f1@1px {:+.3f}, pen-ups {:+d}, primitives {:+d}, {} risk", i + 1,
                        x.candidate.description, x.candidate.edit_kind, e.delta("draw_time_s") * 1000, e.delta("f1"),
                        e.delta("f1_1px"), static_cast<int>(std::lround(e.delta("pen_up_count"))),
                        static_cast<int>(std::lround(e.delta("primitive_count"))), suggest::risk(e));
  }
  ToolResult r;
  r.warnings = warnings;
  r.fields = {{"candidates", list}, {"considered", proposed}, {"refused", refused}, {"objectives", objectives},
              {"left_out", over_budget_or_no_gain}, {"duplicates", duplicates}};
  r.llm_text = fmt::format("{} candidates (of {} tried, {} refused by the geometry, {} gaining nothing{}, {} predicting "
                           "what a better one does), ranked by {} per fidelity lost{}",
                           keep, proposed, refused, over_budget_or_no_gain,
                           budget.bounded() ? " or over the budget" : "", duplicates,
                           fmt::join(objectives, " + "), scope.everything() ? "" : " in " + scope.describe()) +
               text;
  r.human_text = r.llm_text;
  for (size_t i = 0; i < keep; ++i)
    r.human_text += fmt::format("\nc{} rationale: {}\n   apply: {}", i + 1, m[i].candidate.rationale,
                                list[i]["request"]["command"].get<std::string>());
  if (keep > 0)
    r.images["suggestions"] = change_sheet(ctx.scene, m[0].session.scene, "now", "after c1 (" + m[0].candidate.description + ")",
                                           m[0].session.added, m[0].session.removed, m[0].session.changed);
  else
    r.images["suggestions"] = scene_view(ctx, ctx.scene, scope, "no candidate improves " + fmt::format("{}", fmt::join(objectives, " + "))).finish();
  return r;
}

// request_json's: what applies a suggestion, exactly as measured.
json printed_request_schema() {
  return S::object({{"tool", S::string("the edit tool")},
                    {"request", S::open_object("its request fields")},
                    {"apply", S::open_object("the ApplyEdits request: {apply_id, edits}")},
                    {"command", S::string("the command line that makes it, runnable as printed")}},
                   {"tool", "request", "apply", "command"}, "what applies it, exactly as measured");
}

json candidate_schema() {
  return S::object(
      {{"candidate_id", S::string("c1, c2, ... in rank order")},
       {"description", S::string("what the edit does, in a line")},
       {"edit_kind", S::string("the catalog's edit kind")},
       {"merge_kind", S::string("for a merge group: fuse_collinear_lines, fuse_co_arc, rebuild_circle_from_arcs, deduplicate_overlap")},
       {"target_primitive_ids", S::array(S::id("primitive id"), "the primitives the edit names")},
       {"affected_primitive_ids", S::array(S::id("primitive id"), "the primitives its dry run removed or changed")},
       {"predicted_draw_time_delta_ms", S::number("negative = faster")},
       {"predicted_fidelity_delta", S::open_object("f1, f1_1px, precision, recall, chamfer_px: after - before, against the ink")},
       {"predicted_semantic_delta", S::open_object("the semantic roles it touches and how much fidelity they ask for")},
       {"predicted_primitive_delta", S::integer("primitives after - before", INT_MIN)},
       {"predicted_pen_up_delta", S::integer("pen-ups after - before", INT_MIN)},
       {"predicted_after", S::open_object("the scoreboard after applying it")},
       {"risk", S::enumeration({"low", "medium", "high"}, "how much fidelity it puts at stake")},
       {"rationale", S::string("why it is proposed")},
       {"merit", S::number("gain on the objectives per fidelity lost: the rank")},
       {"apply_id", S::string("the id that applies exactly this candidate to this revision (ApplyEdits)")},
       {"request", printed_request_schema()}},
      {"candidate_id", "apply_id", "edit_kind", "target_primitive_ids", "predicted_draw_time_delta_ms", "predicted_fidelity_delta", "risk",
       "rationale", "request"},
      "one candidate edit, measured in a dry run");
}

Tool suggest_optimizations_entry() {
  using R = SuggestRequest;
  return typed_tool<R>(
      20, "SuggestOptimizations", "suggestion",
      "Ranked, ready-to-run candidate edits — merges, tangent joints, reversals, snaps, deletions of duplicates and of "
      "strokes with no ink, smoothing, and the looser stage threshold — each applied in a dry run with the same "
      "settle as the edit, so its predicted draw-time, fidelity (against the ink), primitive and pen-up deltas are "
      "what ApplyEdits with its request.apply gives; ranked by gain per fidelity lost, a candidate losing more than a "
      "max_* bound left out. Start a refinement here.",
      {with_loss_budget<R>({field<R, json>("in_region", &R::in_region, S::region("only candidates touching this region")),
        field("optimize_for", &R::optimize_for,
              S::with_default(S::array(S::enumeration({"draw_time", "pixel_fidelity", "semantic_fidelity", "primitive_count",
                                                       "pen_up_count"}, "an objective"),
                                       "what the rank rewards"),
                              json::array({"draw_time", "semantic_fidelity"}))),
        field("max_candidates", &R::max_candidates, S::with_default(S::integer("at most this many, best first", 1), 25))})},
      S::object({{"candidates", S::array(candidate_schema(), "best first")},
                 {"considered", S::integer("candidates tried")},
                 {"refused", S::integer("candidates the geometry refused")},
                 {"left_out", S::integer("candidates that gain nothing on the objectives or exceed a largest loss")},
                 {"duplicates", S::integer("candidates left out because a better one predicts exactly the same")},
                 {"objectives", S::array(S::string("an objective"), "what the rank rewarded")}},
                {"candidates"}),
      suggest_optimizations);
}

// ---------------------------------------------------------------- MergeSimilarElements

struct MergeSimilarRequest : InRegionRequest {
  bool aggressive;
};

ToolResult merge_similar_elements(const ToolContext& ctx, const MergeSimilarRequest& req) {
  const Scope scope = scope_of(ctx.scene, req);
  const bool aggressive = req.aggressive;
  std::vector<suggest::MergeGroup> groups = suggest::similar_groups(ctx.scene, scope, aggressive);
  ToolResult r;
  const EditBaseline base = edit_baseline(ctx);
  r.warnings = base.warnings;
  const std::vector<Polyline>& ink = base.reference.paths;
  const double before = covered_length_px(ctx.scene, ink);
  json list = json::array();
  std::string text, commands;
  std::vector<BBox> boxes;
  std::vector<std::string> titles;
  for (const auto& g : groups) {
    report_progress(double(list.size()), double(groups.size()), "merges tried in dry runs");
    // Safe: the replacement stays within the coverage tolerance of the group's points and
    // uncovers no ink the drawing covered.
    Scene after = ctx.scene;
    auto& prims = *after.primitives;
    std::set<std::string> gone(g.edit.targets.begin(), g.edit.targets.end());
    if (g.edit.merge_kind == "deduplicate_overlap") gone = {g.edit.targets[0]};
    prims.erase(std::remove_if(prims.begin(), prims.end(), [&](const Primitive& p) { return gone.count(p.id) > 0; }), prims.end());
    if (g.edit.merge_kind != "deduplicate_overlap" && g.replacement) {
      Primitive merged;
      merged.id = "merged";
      merged.shape = *g.replacement;
      prims.push_back(merged);
    }
    const double lost = before - covered_length_px(after, ink);
    json group = {{"primitive_ids", g.edit.targets},
                  {"merge_kind", g.edit.merge_kind},
                  {"predicted_replacement", g.replacement ? shape_json(*g.replacement) : json()},
                  {"fit_rms_px_after", round3(g.fit_rms_px)},
                  {"fit_max_px_after", round3(g.fit_max_px)},
                  {"tolerance_px", round3(g.tolerance_px)},
                  {"ink_uncovered_px", round3(std::max(0.0, lost))},
                  {"rationale", g.edit.rationale}};
    // The request is tried as applying it would run (a deletion that would cut the drawing in
    // two is refused): printed only when it runs, with the scoreboard it gives.
    std::string refusal;
    try {
      group["predicted_after"] = dry_run(ctx, g.edit, base).after;
      group["request"] = request_json(ctx, g.edit);
      commands += fmt::format("\n{} {} apply: {}", g.edit.merge_kind, id_list(g.edit.targets),
                              group["request"]["command"].get<std::string>());
    } catch (const Error& err) {
      refusal = err.what();
      group["refused"] = {{"code", code_name(err.code())}, {"message", refusal}};
    }
    const bool safe = refusal.empty() && g.fit_max_px <= g.tolerance_px && lost <= g.tolerance_px;
    group["safe"] = safe;
    list.push_back(group);
    text += fmt::format("\n{} {}: {}; rms {:.2f} px, max {:.2f} px (tolerance {:.2f}), {}", g.edit.merge_kind,
                        id_list(g.edit.targets), g.edit.rationale, g.fit_rms_px, g.fit_max_px, g.tolerance_px,
                        !refusal.empty() ? "refused: " + refusal : safe ? "safe" : "not safe");
    BBox b;
    for (const auto& id : g.edit.targets)
      for (Vec2 q : ctx.scene.primitive(id)->shape.sample(2.0)) b.add(q);
    boxes.push_back(b);
    titles.push_back(g.edit.merge_kind + " " + id_list(g.edit.targets));
  }
  r.fields = {{"groups", list}};
  r.llm_text = fmt::format("{} merge groups{}{}", groups.size(), aggressive ? " (aggressive)" : "",
                           scope.everything() ? "" : " in " + scope.describe()) + text;
  r.human_text = r.llm_text + commands;
  if (boxes.empty())
    r.images["groups"] = scene_view(ctx, ctx.scene, scope, "no merge groups").finish();
  else
    r.images["groups"] = findings_sheet(ctx, ctx.scene, boxes, titles, [&](View& v, size_t i) {
      for (const auto& id : groups[i].edit.targets) v.shape(ctx.scene.primitive(id)->shape, {0, 0, 220}, 2);
      if (groups[i].replacement) v.shape(*groups[i].replacement, {0, 160, 0}, 1);
    });
  return r;
}

Tool merge_similar_elements_entry() {
  using R = MergeSimilarRequest;
  return typed_tool<R>(
      21, "MergeSimilarElements", "suggestion",
      "Groups whose merges belong together — collinear lines end to end, arcs of one circle, arcs that make a whole "
      "circle, a stroke doubled along another — with the predicted replacement, its rms against the source points, "
      "and whether it is safe (within the coverage tolerance, no ink uncovered); each with the request that merges it, "
      "tried in a dry run: its scoreboard after, or why it is refused.",
      {{field<R, json>("in_region", &R::in_region, S::region("only groups touching this region")),
        field("aggressive", &R::aggressive,
              S::with_default(S::boolean("twice the angle and offset allowances, merged at half the coverage tolerance"),
                              false))}},
      S::object(
          {{"groups",
            S::array(S::object({{"primitive_ids", S::array(S::id("primitive id"), "the group: for a duplicate, the copy then the stroke kept")},
                                {"merge_kind", S::enumeration({"fuse_collinear_lines", "fuse_co_arc", "rebuild_circle_from_arcs",
                                                               "deduplicate_overlap"}, "what kind of merge")},
                                {"predicted_replacement", S::any("the shape the group becomes (PrimitiveDetail geometry)")},
                                {"fit_rms_px_after", S::number("rms distance of the group's source points from the replacement, px")},
                                {"fit_max_px_after", S::number("largest such distance, px")},
                                {"tolerance_px", S::number("the coverage tolerance the merge is held to, px")},
                                {"ink_uncovered_px", S::number("length of ink the drawing covers now and would not, px")},
                                {"safe", S::boolean("its request runs, within the tolerance, uncovering no ink")},
                                {"rationale", S::string("why the group belongs together")},
                                {"predicted_after", S::open_object("the scoreboard after applying its request")},
                                {"request", printed_request_schema()},
                                {"refused", S::object({{"code", S::string("the error code")},
                                                       {"message", S::string("why the edit refused it")}},
                                                      {"code", "message"}, "why its request does not run (no request then)")}},
                               {"primitive_ids", "merge_kind", "fit_rms_px_after", "safe"}, "one group"),
                     "the groups found")}},
          {"groups"}),
      merge_similar_elements);
}

}  // namespace

void add_suggestion_tools(std::vector<Tool>& out) {
  for (auto entry : {suggest_optimizations_entry, merge_similar_elements_entry}) out.push_back(entry());
}

}  // namespace sv
