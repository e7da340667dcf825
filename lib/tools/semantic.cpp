// The semantic tools (sv-diagnose): the forms a person would name, how faithfully the drawing
// keeps what made the source read as it does, and the relationships the forms imply. The logic
// is lib/semantic's; these handlers adapt requests and results and draw the views.
// Each tool's registry entry (catalog number, name, group, schemas) stands right after its handler.
#include <fmt/format.h>

#include <algorithm>
#include <functional>

#include "oracle/oracle.hpp"
#include "semantic/fidelity.hpp"
#include "semantic/relationships.hpp"
#include "tools/common.hpp"
#include "tools/request.hpp"
#include "tools/schema_parts.hpp"

namespace sv {

namespace {

namespace S = schema;
using namespace semantic;

json evidence_json(const std::vector<Evidence>& ev) {
  json out = json::array();
  for (const Evidence& e : ev) out.push_back(e.to_json());
  return out;
}

json evidence_schema() {
  return S::array(S::object({{"measure", S::string("what was measured")},
                             {"value", S::number("the measured value")},
                             {"op", S::enumeration({">=", "<=", "<", ">"}, "how it is compared")},
                             {"threshold", S::number("the threshold it is compared with")},
                             {"unit", S::enumeration({"sw", "ratio", "count", "deg"}, "sw: stroke widths")},
                             {"passed", S::boolean("the value passed the threshold")}},
                            {"measure", "value", "op", "threshold", "unit", "passed"}, "one measure against its threshold"),
                  "the measured values behind the decision, each against its threshold");
}

bool form_in_scope(const Analysis& a, const Form& f, const Scope& scope) {
  if (scope.everything()) return true;
  for (int s : f.strokes)
    if (scope.touches(a.strokes[s].points)) return true;
  return false;
}

// The forms on the labelled grid, each in its role's colour, boxed and numbered.
cv::Mat forms_view(const ToolContext& ctx, const Analysis& a, const Scope& scope, const std::string& title) {
  View v = scene_view(ctx, ctx.scene, scope, title);
  std::vector<LegendEntry> legend;
  for (const Form& f : a.forms) {
    if (!form_in_scope(a, f, scope)) continue;
    const cv::Scalar c = color::of_role(f.role);
    for (int s : f.strokes) v.polyline(a.strokes[s].points, c, 2);
    v.box(f.box, c, 1);
    v.text({f.box.x0, f.box.y0}, fmt::format("{} {}", f.number, f.role), c);
    if (std::none_of(legend.begin(), legend.end(), [&](const LegendEntry& e) { return e.label == f.role; }))
      legend.push_back({f.role, c});
  }
  v.legend(legend);
  return v.finish();
}

// ---------------------------------------------------------------- IdentifyVisualForms

std::string tree_text(const Analysis& a, const Scope& scope) {
  std::string out;
  std::function<void(int, int)> visit = [&](int i, int depth) {
    const Form& f = a.forms[i];
    if (form_in_scope(a, f, scope))
      out += fmt::format("{}{} [{}, conf {:.2f}] {} prims, box [{:.0f},{:.0f},{:.0f},{:.0f}]\n", std::string(2 * depth, ' '),
                         f.label, f.role, f.confidence, f.primitive_ids.size(), f.box.x0, f.box.y0, f.box.x1, f.box.y1);
    for (int c : f.children) visit(c, depth + 1);
  };
  for (size_t i = 0; i < a.forms.size(); ++i)
    if (a.forms[i].parent < 0) visit(int(i), 0);
  return out;
}

json form_json(const Analysis& a, const Form& f) {
  json children = json::array();
  for (int c : f.children) children.push_back(a.forms[c].number);
  return {{"form", f.number},
          {"region", rect_json(f.box)},
          {"label", f.label},
          {"labelled_by", f.labelled_by},
          {"confidence", f.confidence},
          {"primitive_ids", f.primitive_ids},
          {"semantic_role", f.role},
          {"closed", f.closed},
          {"closed_regions", f.holes.size()},
          {"parent_form", f.parent >= 0 ? json(a.forms[f.parent].number) : json(nullptr)},
          {"child_forms", children},
          {"evidence", evidence_json(f.evidence)}};
}

// How long the oracle may take over one question of a semantic tool.
constexpr double kOracleQuestionS = 120;

// Names the forms through the oracle, each asked with a crop of its form; a form it does not
// name keeps its geometric label, and a warning says why. Returns how many it named.
int oracle_labels(const ToolContext& ctx, const Scene& s, Analysis& a, const Scope& scope, std::vector<std::string>& warnings) {
  int named = 0;
  for (Form& f : a.forms) {
    if (!form_in_scope(a, f, scope) || f.box.empty()) continue;
    OracleQuestion q;
    q.question = "What does the part of this line drawing shown in form.png depict? Answer with a short name (a few words).";
    q.region = rect_json(f.box);
    q.artifacts.push_back({"form", fmt::format("form {}, cropped: {}", f.number, f.label),
                           crop_view(ctx, s, f.box, 2 * a.sw, f.label).finish()});
    q.timeout_seconds = kOracleQuestionS;
    const OracleAnswer ans = ask_oracle(ctx.oracle, q);
    if (ans.status == OracleStatus::answered && !ans.answer.empty()) {
      f.label = ans.answer;
      f.labelled_by = "oracle";
      ++named;
    } else {
      warnings.push_back(fmt::format("the oracle did not name form {} ({}{}{})", f.number, oracle_status_name(ans.status),
                                     ans.detail.empty() ? "" : ": ", ans.detail));
    }
  }
  return named;
}

// Recognizability from the oracle: is the drawing the same subject as the source? A yes scores
// the oracle's confidence (1 without one), a no one less it; unanswered, the aspect stays unscored.
void oracle_recognizability(const ToolContext& ctx, const Scene& s, const Scope& scope, AspectScore& x) {
  std::string why;
  const cv::Mat src = source_raster(ctx, s, &why);
  if (src.empty()) {
    x.rationale = "the oracle needs the source image: " + why;
    return;
  }
  OracleQuestion q;
  q.question = "Does the robot's drawing (drawing.png) show the same subject as the source image (source.png), "
               "recognizably? Answer yes or no.";
  q.expected_answer = "yes_no";
  q.artifacts = {{"source", "the source image", scene_view(ctx, s, scope, "source", true).finish()},
                 {"drawing", "what the robot draws", scene_view(ctx, s, scope, "drawing", false).finish()}};
  q.timeout_seconds = kOracleQuestionS;
  const OracleAnswer ans = ask_oracle(ctx.oracle, q);
  if (ans.status != OracleStatus::answered) {
    x.rationale = fmt::format("the oracle gave no answer ({}{}{})", oracle_status_name(ans.status), ans.detail.empty() ? "" : ": ",
                              ans.detail);
    return;
  }
  std::string answer = ans.answer;
  std::transform(answer.begin(), answer.end(), answer.begin(), [](unsigned char ch) { return std::tolower(ch); });
  const bool yes = answer == "yes";
  const double conf = ans.confidence.value_or(1.0);
  x.scored = true;
  x.score = round3(yes ? conf : 1 - conf);
  x.rationale = fmt::format("the oracle answered {}{}{}", ans.answer, ans.confidence ? fmt::format(" (confidence {:.2f})", conf) : "",
                            ans.rationale.empty() ? "" : ": " + ans.rationale);
}

struct FormsRequest : RegionRequest {
  std::string granularity;
};

ToolResult identify_visual_forms(const ToolContext& ctx, const FormsRequest& req) {
  ToolResult r;
  const Scene& s = ctx.scene;
  const Scope scope = scope_of_regions(s, {req.region});
  Analysis a = scene_forms(s);
  const int named = ctx.oracle.empty() ? 0 : oracle_labels(ctx, s, a, scope, r.warnings);
  const std::string by = named > 0 ? "oracle" : "geometry";
  const std::string& gran = req.granularity;
  json forms = json::array();
  int shown = 0;
  for (const Form& f : a.forms)
    if (form_in_scope(a, f, scope)) forms.push_back(form_json(a, f)), ++shown;
  if (gran == "whole_image" && shown > 0) {  // an empty drawing has no whole to name
    Form whole;
    whole.number = 0;
    whole.box = a.ink_box;
    std::vector<int> tops;
    for (const json& f : forms) {
      for (const auto& id : f["primitive_ids"]) whole.primitive_ids.push_back(id);
      if (f["parent_form"].is_null()) tops.push_back(f["form"]);
    }
    std::sort(whole.primitive_ids.begin(), whole.primitive_ids.end());
    whole.role = "silhouette";
    whole.evidence.push_back(measured("forms", double(shown), ">=", 1, "count"));
    whole.confidence = confidence_of(whole.evidence);
    whole.label = fmt::format("the whole drawing: {} form{}, {} at the top level, {} closed region{}", shown,
                              shown == 1 ? "" : "s", tops.size(), a.holes.size(), a.holes.size() == 1 ? "" : "s");
    whole.labelled_by = "geometry";
    json w = form_json(a, whole);
    w["child_forms"] = tops;
    forms = json::array({w});
  } else if (gran == "per_primitive") {
    forms = json::array();
    for (const PrimitiveRole& pr : primitive_roles(a)) {
      const Primitive* p = s.primitive(pr.id);
      if (!p || !scope.touches(*p)) continue;
      BBox b;
      for (Vec2 q : p->shape.sample(1.0)) b.add(q);
      forms.push_back({{"form", pr.form},
                       {"region", rect_json(b)},
                       {"label", fmt::format("{} of {}", pr.id, a.forms[pr.form - 1].label)},
                       {"labelled_by", "geometry"},
                       {"confidence", pr.confidence},
                       {"primitive_ids", {pr.id}},
                       {"semantic_role", pr.role},
                       {"closed", a.forms[pr.form - 1].closed},
                       {"closed_regions", a.forms[pr.form - 1].holes.size()},
                       {"parent_form", a.forms[pr.form - 1].parent >= 0 ? json(a.forms[a.forms[pr.form - 1].parent].number) : json(nullptr)},
                       {"child_forms", json::array()},
                       {"evidence", evidence_json(pr.evidence)}});
    }
  }
  r.fields = {{"forms", forms}, {"granularity", gran}, {"labelled_by", by}, {"stroke_width_px", round3(a.sw)},
              {"join_px", round3(a.join_px)}};
  r.llm_text = fmt::format("{} forms{} (strokes within {:.1f} px = {:.1f} sw join; {})\n", shown,
                           scope.everything() ? "" : " in " + scope.describe(), a.join_px, a.join_px / a.sw,
                           named > 0 ? fmt::format("{} named by the oracle, the rest from geometry", named)
                                     : std::string(ctx.oracle.empty() ? "labels from geometry, no oracle configured"
                                                                      : "labels from geometry, the oracle named none")) +
               tree_text(a, scope);
  r.human_text = r.llm_text;
  for (const json& f : forms) {
    std::string ev;
    for (const auto& e : f["evidence"])
      ev += fmt::format("{}{} {} {} {}", ev.empty() ? "" : "; ", e["measure"].get<std::string>(), e["value"].dump(),
                        e["op"].get<std::string>(), e["threshold"].dump());
    r.human_text += fmt::format("  {}: {} because {}\n", f["label"].get<std::string>(), f["semantic_role"].get<std::string>(), ev);
  }
  r.images["forms"] = forms_view(ctx, a, scope, fmt::format("{} forms by role (labels from {})", shown, by));
  return r;
}

Tool identify_visual_forms_entry() {
  using R = FormsRequest;
  const json form = S::object(
      {{"form", S::integer("the form's number (0: the whole drawing)")},
       {"region", S::rect_region()},
       {"label", S::string("the oracle's name for it; without one, what geometry knows (\"form 3: closed, contains 2 forms\")")},
       {"labelled_by", S::enumeration({"geometry", "oracle"}, "who named it")},
       {"confidence", S::number("how far its deciding measures are past their thresholds, 0.5 to 1", 0)},
       {"primitive_ids", S::array(S::id("primitive id"), "its primitives")},
       {"semantic_role", S::semantic_role()},
       {"closed", S::boolean("bounds a closed region")},
       {"closed_regions", S::integer("regions it encloses")},
       {"parent_form", S::nullable(S::integer("the form whose closed region holds it"))},
       {"child_forms", S::array(S::integer("a form's number"), "forms inside its closed regions")},
       {"evidence", evidence_schema()}},
      {"form", "region", "label", "labelled_by", "confidence", "primitive_ids", "semantic_role"}, "one form");
  Tool t = typed_tool<R>(
      15, "IdentifyVisualForms", "semantic",
      "The forms a person would name — strokes joined within about a stroke width, the regions they close, what "
      "holds what — each with a role inferred from geometry (frame, silhouette, interior_feature, texture, "
      "annotation, connector, decoration), its confidence and evidence in stroke widths.",
      {{field("granularity", &R::granularity,
              S::with_default(S::enumeration({"whole_image", "components", "per_primitive"},
                                             "one form, the forms, or a role per primitive"),
                              "components"))}},
      S::object({{"forms", S::array(form, "largest first (per_primitive: by id)")},
                 {"granularity", S::string("the granularity used")},
                 {"labelled_by", S::enumeration({"geometry", "oracle"}, "geometry: no oracle named the forms")},
                 {"stroke_width_px", S::number("the unit of the thresholds", 0)},
                 {"join_px", S::number("strokes this close are one form", 0)}},
                {"forms", "labelled_by"}),
      identify_visual_forms);
  t.asks_oracle = true;  // names the forms from their crops
  return t;
}

// ---------------------------------------------------------------- EvaluateSemanticFidelity

// The aspects asked for, each once, in the order first asked.
std::vector<std::string> distinct_aspects(const std::vector<std::string>& asked) {
  std::vector<std::string> out;
  for (const auto& a : asked)
    if (std::find(out.begin(), out.end(), a) == out.end()) out.push_back(a);
  return out;
}

struct SemanticFidelityRequest : RegionRequest {
  std::optional<std::string> revision;  // none: the input scene
  std::vector<std::string> aspects;
};

ToolResult evaluate_semantic_fidelity(const ToolContext& ctx, const SemanticFidelityRequest& req) {
  ToolResult r;
  Scene holder;
  std::string rid;
  const Scene& s = revision_scene(ctx, req.revision.value_or(""), holder, &rid);
  r.revision_id = rid;
  const Scope scope = scope_of_regions(s, {req.region});
  const FidelityReference ref = fidelity_reference(ctx, s, r.warnings);
  FidelityReport rep = scene_fidelity(s, ref.paths, scope, distinct_aspects(req.aspects));
  if (!ctx.oracle.empty()) {
    double sum = 0;
    int n = 0;
    for (AspectScore& x : rep.aspects) {
      if (x.aspect == "recognizability") oracle_recognizability(ctx, s, scope, x);
      if (x.scored) sum += x.score, ++n;
    }
    if (n > 0) rep.overall = round3(sum / n);
  }
  json aspects = json::array();
  std::string text;
  for (const AspectScore& a : rep.aspects) {
    json regions = json::array();
    for (const BBox& b : a.affected_regions) regions.push_back(rect_json(b));
    aspects.push_back({{"aspect", a.aspect},
                       {"score", a.scored ? json(a.score) : json(nullptr)},
                       {"scored", a.scored},
                       {"rationale", a.rationale},
                       {"offending_primitive_ids", a.offending_primitive_ids},
                       {"affected_regions", regions},
                       {"evidence", evidence_json(a.evidence)}});
    text += a.scored ? fmt::format("{} {:.3f}: {}\n", a.aspect, a.score, a.rationale)
                     : fmt::format("{} not scored: {}\n", a.aspect, a.rationale);
  }
  r.fields = {{"overall_score", rep.overall ? json(*rep.overall) : json(nullptr)},
              {"aspects", aspects},
              {"reference", ref.describe()},
              {"tolerance_px", round3(default_tolerance(stroke_width_of(s)))}};
  r.llm_text = fmt::format("{}{}: semantic overall {} over the measured aspects (against {})\n", rid.substr(0, 12),
                           scope.everything() ? "" : " in " + scope.describe(),
                           rep.overall ? fmt::format("{:.3f}", *rep.overall) : std::string("not scored"), ref.describe()) +
               text;
  r.human_text = r.llm_text;
  // Source and drawing side by side, what each aspect found boxed in the drawing's panel.
  View src = scene_view(ctx, s, scope, "source ink (centrelines)");
  for (const Stroke& st : rep.source.strokes) src.polyline(st.points, color::ink, 1);
  View drawn = scene_view(ctx, s, scope, fmt::format("drawn, semantic overall {}", rep.overall ? fmt::format("{:.3f}", *rep.overall) : "-"), false);
  for (const Stroke& st : rep.drawn.strokes) drawn.polyline(st.points, color::ink, 2);
  const cv::Scalar colors[] = {color::missed, color::highlight, color::circle, color::line, color::spurious};
  std::vector<LegendEntry> legend;
  size_t k = 0;
  for (const AspectScore& a : rep.aspects) {
    if (!a.scored) continue;
    const cv::Scalar c = colors[k++ % 5];
    for (const BBox& b : a.affected_regions) drawn.box(b, c, 2), src.box(b, c, 1);
    legend.push_back({fmt::format("{} {:.3f}", a.aspect, a.score), c});
  }
  drawn.legend(legend);
  r.images["semantic_fidelity"] = sheet({src.finish(), drawn.finish()});
  return r;
}

Tool evaluate_semantic_fidelity_entry() {
  using R = SemanticFidelityRequest;
  const json aspect = S::enumeration({"recognizability", "proportions", "expressive_lines", "closure", "symmetry",
                                      "negative_space"},
                                     "an aspect");
  Tool t = typed_tool<R>(
      16, "EvaluateSemanticFidelity", "semantic",
      "Whether the drawing keeps what made the source read as it does: closure, negative space, proportions, "
      "symmetry and expressive lines, each a score in [0, 1] against the source's ink with why, the primitives at "
      "fault and where; recognizability needs an oracle and is not scored.",
      {{field("revision", &R::revision, S::nullable(S::string("the revision to evaluate (default: the one in use)"))),
        field("aspects", &R::aspects,
              S::with_default(S::array(aspect, "aspects to measure"),
                              json::array({"recognizability", "proportions", "expressive_lines", "closure"})))}},
      S::object({{"overall_score", S::nullable(S::number("mean over the scored aspects", 0))},
                 {"aspects", S::array(S::object({{"aspect", S::string("the aspect")},
                                                 {"score", S::nullable(S::number("0..1; null when not scored", 0))},
                                                 {"scored", S::boolean("false: what it needs is missing (an oracle)")},
                                                 {"rationale", S::string("why it scored so")},
                                                 {"offending_primitive_ids", S::array(S::id("primitive id"), "the primitives at fault")},
                                                 {"affected_regions", S::array(S::rect_region(), "where it is at fault")},
                                                 {"evidence", evidence_schema()}},
                                                {"aspect", "score", "scored", "rationale", "offending_primitive_ids",
                                                 "affected_regions"}, "one aspect"),
                                      "in the order asked")},
                 {"reference", S::string("what the drawing was measured against")},
                 {"tolerance_px", S::number("distance that counts as covered", 0)}},
                {"overall_score", "aspects"}),
      evaluate_semantic_fidelity);
  t.asks_oracle = true;  // scores recognizability
  return t;
}

// ---------------------------------------------------------------- IdentifyImpliedRelationships

struct RelationshipsRequest : RegionRequest {
  json in_region;  // null: the whole drawing
};

ToolResult identify_implied_relationships(const ToolContext& ctx, const RelationshipsRequest& req) {
  ToolResult r;
  const Scene& s = ctx.scene;
  const Scope scope = scope_of_regions(s, {req.region, req.in_region});
  const Analysis a = scene_forms(s);
  const std::vector<Relationship> rels = implied_relationships(a, &s);
  json list = json::array();
  std::string text;
  View v = scene_view(ctx, s, scope, "implied relationships");
  for (const Stroke& st : a.strokes) v.polyline(st.points, color::faded, 2);
  const std::map<std::string, cv::Scalar> colors = {
      {"mirror", color::missed},        {"intentional_asymmetry", color::highlight}, {"repetition", color::circle},
      {"alignment", color::line},       {"shared_baseline", color::spurious},        {"containment", color::ink},
      {"tangency", color::arc}};
  std::map<std::string, int> counts;
  for (const Relationship& rel : rels) {
    bool in = scope.everything();
    for (int f : rel.forms) in = in || form_in_scope(a, a.forms[f - 1], scope);
    if (!in) continue;
    ++counts[rel.kind];
    list.push_back({{"kind", rel.kind},
                    {"primitive_ids", rel.primitive_ids},
                    {"forms", rel.forms},
                    {"axis_or_anchor", rel.axis_or_anchor},
                    {"confidence", rel.confidence},
                    {"rationale", rel.rationale},
                    {"evidence", evidence_json(rel.evidence)},
                    {"region", rect_json(rel.box)}});
    text += fmt::format("{} ({:.2f}): {}\n", rel.kind, rel.confidence, rel.rationale);
    const cv::Scalar c = colors.at(rel.kind);
    v.box(rel.box, c, 1);
    if (rel.axis_or_anchor.is_array() && rel.axis_or_anchor.size() == 2 && rel.axis_or_anchor[0].is_array()) {
      const json& ax = rel.axis_or_anchor;
      v.polyline({{ax[0][0].get<double>(), ax[0][1].get<double>()}, {ax[1][0].get<double>(), ax[1][1].get<double>()}}, c, 1, true);
    } else if (rel.axis_or_anchor.is_array()) {
      v.dot({rel.axis_or_anchor[0].get<double>(), rel.axis_or_anchor[1].get<double>()}, c, 4);
    }
    v.text({rel.box.x0, rel.box.y1}, rel.kind, c, 3, 12);
  }
  std::vector<LegendEntry> legend;
  for (const auto& [kind, n] : counts) legend.push_back({fmt::format("{} ({})", kind, n), colors.at(kind)});
  v.legend(legend);
  r.images["relationships"] = v.finish();
  std::string summary;
  for (const auto& [kind, n] : counts) summary += fmt::format("{}{} {}", summary.empty() ? "" : ", ", n, kind);
  r.fields = {{"relationships", list}, {"stroke_width_px", round3(a.sw)}};
  r.llm_text = fmt::format("{} relationships{} among {} forms{}\n", list.size(),
                           scope.everything() ? "" : " in " + scope.describe(), a.forms.size(),
                           summary.empty() ? "" : ": " + summary) + text;
  r.human_text = r.llm_text;
  return r;
}

Tool identify_implied_relationships_entry() {
  using R = RelationshipsRequest;
  return typed_tool<R>(
      18, "IdentifyImpliedRelationships", "semantic",
      "Relationships the forms imply: mirror pairs and their axis (as EnforceRelation mirror takes them), "
      "repetition of one shape, alignment, a shared baseline, containment, tangency, and near-mirror pairs that "
      "differ beyond tolerance (intentional asymmetry); each threshold in stroke widths with the value that passed it.",
      {{field("in_region", &R::in_region, S::nullable(S::region("only relationships of forms touching this region")))}},
      S::object({{"relationships",
                  S::array(S::object({{"kind", S::enumeration({"mirror", "repetition", "alignment", "shared_baseline",
                                                               "containment", "tangency", "intentional_asymmetry"}, "the relationship")},
                                      {"primitive_ids", S::array(S::id("primitive id"), "mirror: pairs a0, b0, a1, b1, ...")},
                                      {"forms", S::array(S::integer("a form's number"), "IdentifyVisualForms' form numbers")},
                                      {"axis_or_anchor",
                                       {{"description", "a mirror's axis line [[x0, y0], [x1, y1]], a centre or anchor "
                                                        "point [x, y], or an aligned coordinate"},
                                        {"anyOf", json::array({{{"type", "number"}}, S::point(), S::array(S::point(), "a line: two points")})}}},
                                      {"confidence", S::number("0.5 to 1", 0)},
                                      {"rationale", S::string("why it is implied")},
                                      {"evidence", evidence_schema()},
                                      {"region", S::rect_region()}},
                                     {"kind", "primitive_ids", "axis_or_anchor", "confidence", "rationale"}, "one relationship"),
                          "the relationships found")},
                 {"stroke_width_px", S::number("the unit of the thresholds", 0)}},
                {"relationships"}),
      identify_implied_relationships);
}

}  // namespace

// The entries defined above, each after its handler (the catalog number, not this list, orders them).
void add_semantic_tools(std::vector<Tool>& out) {
  for (auto entry : {identify_visual_forms_entry, evaluate_semantic_fidelity_entry, identify_implied_relationships_entry})
    out.push_back(entry());
}

}  // namespace sv
