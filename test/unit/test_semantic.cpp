// The semantic tools on drawings with planted semantics: a face, a framed house, a word, a patch
// of hatching, a ring of dots; and semantic fidelity responding to the defect planted in a face.
#include <catch2/catch.hpp>

#include <algorithm>

#include "semantic/fidelity.hpp"
#include "tools_fixture.hpp"

using namespace svtest;

namespace {

// Head (p_0001) r 90 about (120, 120); eyes p_0002 (85, 80) and p_0003 (155, 80), r 9; a smile
// p_0004 from (100, 160) to (140, 160) sweeping 120 degrees, its middle lowest. 240 px, stroke 3.
Shape smile(double y) {
  Shape s = Shape::arc({100, y}, {140, y}, std::tan(deg2rad(120) / 4));
  if (s.at(0.5).y < y) s = Shape::arc({100, y}, {140, y}, -std::tan(deg2rad(120) / 4));
  return s;
}

SceneBuilder face() {
  SceneBuilder b(240, 240, 3);
  b.add(Shape::circle({120, 120}, 90));
  b.add(Shape::circle({85, 80}, 9));
  b.add(Shape::circle({155, 80}, 9));
  b.add(smile(160));
  return b;
}

const json* form_of(const json& env, const std::string& id) {
  for (const auto& f : env["forms"])
    for (const auto& p : f["primitive_ids"])
      if (p == id) return &f;
  return nullptr;
}

std::vector<json> of_kind(const json& env, const std::string& kind) {
  std::vector<json> out;
  for (const auto& r : env["relationships"])
    if (r["kind"] == kind) out.push_back(r);
  return out;
}

json fidelity(const Scene& s) {
  return run("EvaluateSemanticFidelity", s,
             {{"aspects", {"closure", "negative_space", "proportions", "symmetry", "expressive_lines", "recognizability"}}});
}

double aspect(const json& env, const std::string& name) {
  for (const auto& a : env["aspects"])
    if (a["aspect"] == name) return a["score"].get<double>();
  FAIL("no aspect " << name);
  return -1;
}

bool names_region_near(const json& env, const std::string& name, Vec2 q) {
  for (const auto& a : env["aspects"])
    if (a["aspect"] == name)
      for (const auto& r : a["affected_regions"]) {
        const auto& b = r["rect"];
        if (q.x >= b[0].get<double>() - 3 && q.x <= b[2].get<double>() + 3 && q.y >= b[1].get<double>() - 3 &&
            q.y <= b[3].get<double>() + 3)
          return true;
      }
  return false;
}

void replace(SceneBuilder& b, const std::string& id, const Shape& s) {
  for (auto& p : *b.scene().primitives)
    if (p.id == id) p.shape = s;
}

void erase(SceneBuilder& b, const std::string& id) {
  auto& ps = *b.scene().primitives;
  ps.erase(std::remove_if(ps.begin(), ps.end(), [&](const Primitive& p) { return p.id == id; }), ps.end());
}

}  // namespace

TEST_CASE("semantic: a face is a head holding two eyes and a mouth, the eyes a mirror pair about its axis", "[semantic]") {
  const Scene s = face().routed();
  const json forms = run("IdentifyVisualForms", s);
  CHECK(forms["labelled_by"] == "geometry");
  REQUIRE(forms["forms"].size() == 4);
  const json& head = *form_of(forms, "p_0001");
  CHECK(head["semantic_role"] == "silhouette");
  CHECK(head["child_forms"].size() == 3);
  CHECK(head["label"] == "form 1: closed, contains 3 forms");
  for (const char* id : {"p_0002", "p_0003", "p_0004"}) {
    CAPTURE(id);
    REQUIRE(form_of(forms, id));
    CHECK((*form_of(forms, id))["parent_form"] == head["form"]);
    CHECK((*form_of(forms, id))["semantic_role"] == "interior_feature");
  }
  const json rels = run("IdentifyImpliedRelationships", s);
  const auto contains = of_kind(rels, "containment");
  REQUIRE(contains.size() == 1);
  CHECK(contains[0]["forms"].size() == 4);
  const auto mirrors = of_kind(rels, "mirror");
  REQUIRE(mirrors.size() == 1);
  CHECK(mirrors[0]["primitive_ids"] == json({"p_0002", "p_0003"}));
  // The axis is the face's: the vertical through the head's centre.
  const json& axis = mirrors[0]["axis_or_anchor"];
  CHECK(axis[0][0].get<double>() == Approx(120).margin(0.5));
  CHECK(axis[1][0].get<double>() == Approx(120).margin(0.5));
  CHECK(mirrors[0]["rationale"].get<std::string>().find("form 1, their container") != std::string::npos);
  for (const auto& e : mirrors[0]["evidence"]) CHECK(e["passed"] == true);
  // EnforceRelation mirror takes the pair and its axis as reported.
  EditSession done = edit(s, "EnforceRelation", {{"relation", "mirror"}, {"primitive_ids", mirrors[0]["primitive_ids"]},
                                                  {"axis", axis}});
  CHECK(done.results[0]["residual_after"].get<double>() < 0.01);
}

TEST_CASE("semantic: a near-mirror pair beyond tolerance is intentional asymmetry, not a mirror", "[semantic]") {
  SceneBuilder b = face();
  replace(b, "p_0003", Shape::circle({155, 80}, 12));  // one eye wider
  const json rels = run("IdentifyImpliedRelationships", b.routed());
  CHECK(of_kind(rels, "mirror").empty());
  const auto odd = of_kind(rels, "intentional_asymmetry");
  REQUIRE(odd.size() == 1);
  CHECK(odd[0]["forms"].size() == 2);
  CHECK(odd[0]["rationale"].get<std::string>().find("beyond tolerance") != std::string::npos);
}

TEST_CASE("semantic: a framed house is a frame holding a silhouette", "[semantic]") {
  SceneBuilder b(240, 240, 3);
  b.add(Shape::line({10, 10}, {230, 10}));
  b.add(Shape::line({230, 10}, {230, 230}));
  b.add(Shape::line({230, 230}, {10, 230}));
  b.add(Shape::line({10, 230}, {10, 10}));
  b.add(Shape::line({70, 120}, {170, 120}));
  b.add(Shape::line({170, 120}, {170, 200}));
  b.add(Shape::line({170, 200}, {70, 200}));
  b.add(Shape::line({70, 200}, {70, 120}));
  b.add(Shape::line({70, 120}, {120, 70}));
  b.add(Shape::line({120, 70}, {170, 120}));
  const Scene s = b.routed();
  const json forms = run("IdentifyVisualForms", s);
  REQUIRE(forms["forms"].size() == 2);
  CHECK((*form_of(forms, "p_0001"))["semantic_role"] == "frame");
  CHECK((*form_of(forms, "p_0005"))["semantic_role"] == "silhouette");
  CHECK((*form_of(forms, "p_0005"))["closed_regions"] == 2);  // walls and roof
  const auto contains = of_kind(run("IdentifyImpliedRelationships", s), "containment");
  REQUIRE(contains.size() == 1);
  CHECK(contains[0]["forms"] == json({(*form_of(forms, "p_0001"))["form"], (*form_of(forms, "p_0005"))["form"]}));
}

TEST_CASE("semantic: a word is one shared baseline of annotation", "[semantic]") {
  SceneBuilder b(240, 160, 2);
  b.add(Shape::circle({40, 92}, 8));                        // o
  b.add(Shape::line({60, 70}, {60, 100}));                 // l
  b.add(Shape::arc({86, 86}, {86, 98}, std::tan(deg2rad(-250) / 4)));  // c
  b.add(Shape::line({100, 84}, {106, 100}));               // v
  b.add(Shape::line({106, 100}, {112, 84}));
  b.add(Shape::circle({130, 92}, 8));                      // o
  const Scene s = b.routed();
  const json rels = run("IdentifyImpliedRelationships", s);
  const auto rows = of_kind(rels, "shared_baseline");
  REQUIRE(rows.size() == 1);
  CHECK(rows[0]["forms"].size() == 5);
  CHECK(rows[0]["axis_or_anchor"].get<double>() == Approx(100).margin(1.5));
  const json forms = run("IdentifyVisualForms", s);
  for (const auto& f : forms["forms"]) CHECK(f["semantic_role"] == "annotation");
}

TEST_CASE("semantic: a patch of hatching is texture", "[semantic]") {
  SceneBuilder b(200, 200, 3);
  for (int k = 0; k < 8; ++k) b.add(Shape::line({40.0 + 12 * k, 140}, {60.0 + 12 * k, 120}));
  b.add(Shape::circle({100, 60}, 30));
  const json forms = run("IdentifyVisualForms", b.routed());
  int texture = 0;
  for (const auto& f : forms["forms"]) texture += f["semantic_role"] == "texture";
  CHECK(texture == 8);
  CHECK((*form_of(forms, "p_0009"))["semantic_role"] == "silhouette");
}

TEST_CASE("semantic: a ring of 12 dots is one repetition about the ring's centre", "[semantic]") {
  SceneBuilder b(240, 240, 2);
  for (int k = 0; k < 12; ++k) b.add(Shape::circle(Vec2{120, 120} + from_angle(deg2rad(30 * k)) * 70, 4));
  const json rels = run("IdentifyImpliedRelationships", b.routed());
  const auto reps = of_kind(rels, "repetition");
  REQUIRE(reps.size() == 1);
  CHECK(reps[0]["forms"].size() == 12);
  CHECK(reps[0]["axis_or_anchor"][0].get<double>() == Approx(120).margin(0.5));
  CHECK(reps[0]["axis_or_anchor"][1].get<double>() == Approx(120).margin(0.5));
  CHECK(reps[0]["rationale"].get<std::string>().find("rotated about") != std::string::npos);
  CHECK(of_kind(rels, "mirror").empty());
}

TEST_CASE("semantic: tangency of a line touching a circle", "[semantic]") {
  SceneBuilder b(200, 200, 3);
  b.add(Shape::circle({100, 100}, 40));
  b.add(Shape::line({40, 140}, {160, 140}));
  const auto t = of_kind(run("IdentifyImpliedRelationships", b.routed()), "tangency");
  REQUIRE(t.size() == 1);
  CHECK(t[0]["primitive_ids"] == json({"p_0001", "p_0002"}));
  CHECK(t[0]["axis_or_anchor"][1].get<double>() == Approx(140).margin(0.5));
}

TEST_CASE("semantic fidelity: a faithful face keeps every aspect; recognizability needs an oracle", "[semantic]") {
  const json env = fidelity(face().routed());
  for (const auto& a : env["aspects"]) {
    CAPTURE(a.dump());
    if (a["aspect"] == "recognizability") {
      CHECK(a["scored"] == false);
      CHECK(a["score"].is_null());
      CHECK(a["rationale"].get<std::string>().find("oracle") != std::string::npos);
    } else {
      CHECK(a["score"].get<double>() >= 0.95);
    }
  }
  CHECK(env["overall_score"].get<double>() >= 0.95);
}

TEST_CASE("semantic fidelity: deleting an eye lowers symmetry and closure and names the eye's region", "[semantic]") {
  const json before = fidelity(face().routed());
  SceneBuilder b = face();
  erase(b, "p_0003");
  const json after = fidelity(b.routed());
  CHECK(aspect(after, "symmetry") < aspect(before, "symmetry") - 0.05);
  CHECK(aspect(after, "closure") < aspect(before, "closure") - 0.03);
  CHECK(names_region_near(after, "symmetry", {155, 80}));
  CHECK(names_region_near(after, "closure", {155, 80}));
}

TEST_CASE("semantic fidelity: breaking the head's loop lowers closure", "[semantic]") {
  SceneBuilder b = face();
  const Vec2 c{120, 120};
  replace(b, "p_0001", Shape::arc(c + from_angle(deg2rad(20)) * 90, c + from_angle(deg2rad(340)) * 90, std::tan(deg2rad(320) / 4)));
  const json env = fidelity(b.routed());
  CHECK(aspect(env, "closure") < 0.5);
  CHECK(names_region_near(env, "closure", {120, 120}));
}

TEST_CASE("semantic fidelity: straightening the mouth lowers expressive lines", "[semantic]") {
  const double before = aspect(fidelity(face().routed()), "expressive_lines");
  SceneBuilder b = face();
  replace(b, "p_0004", Shape::line({100, 160}, {140, 160}));
  const json env = fidelity(b.routed());
  CHECK(aspect(env, "expressive_lines") < before - 0.05);
  for (const auto& a : env["aspects"])
    if (a["aspect"] == "expressive_lines") CHECK(a["offending_primitive_ids"] == json({"p_0004"}));
}

TEST_CASE("semantic fidelity: moving the mouth by a third of the face lowers proportions", "[semantic]") {
  const double before = aspect(fidelity(face().routed()), "proportions");
  SceneBuilder b = face();
  replace(b, "p_0004", smile(100));  // 60 px up: a third of the head's 180
  const json env = fidelity(b.routed());
  CHECK(aspect(env, "proportions") < before - 0.03);
  CHECK(names_region_near(env, "proportions", {120, 165}));
}

TEST_CASE("semantic: EvaluateRevision's semantic_overall is the mean of the measured aspects", "[semantic]") {
  const Scene s = face().routed();
  const json rev = run("EvaluateRevision", s, {{"metrics", {"f1", "semantic_overall"}}});
  const json sem = run("EvaluateSemanticFidelity", s,
                       {{"aspects", {"proportions", "expressive_lines", "closure", "symmetry", "negative_space"}}});
  CHECK(rev["metrics"]["semantic_overall"] == sem["overall_score"]);
  for (const auto& w : rev["warnings"]) CHECK(w.get<std::string>().find("oracle") == std::string::npos);
}

TEST_CASE("semantic: LabelSemanticRoles applies the forms' roles in one call", "[semantic]") {
  const Scene s = face().routed();
  EditSession done = edit(s, "LabelSemanticRoles", {{"from_forms", true}});
  CHECK(done.results[0]["updated_count"] == 4);
  const Scene& out = done.scene;
  CHECK(out.primitive("p_0001")->semantic_role == "silhouette");
  CHECK(out.primitive("p_0003")->semantic_role == "interior_feature");
  const json list = run("ListPrimitives", out, {{"filter", {{"semantic_roles", {"interior_feature"}}}}});
  CHECK(list["primitives"].size() == 3);
  ToolResult r;
  run("GetCurrentRender", out, {{"color_by", "semantic_role"}}, &r);
  CHECK(!r.images.empty());
  // Explicit assignments win over the forms' roles.
  EditSession both = edit(s, "LabelSemanticRoles", {{"from_forms", true}, {"assignments", json::array({json::array({"p_0004", "decoration"})})}});
  CHECK(both.scene.primitive("p_0004")->semantic_role == "decoration");
}

TEST_CASE("semantic: comparing two drawings' forms and aspects", "[semantic]") {
  using namespace sv::semantic;
  const Scene s = face().routed();
  const std::vector<Stroke> ref = scene_strokes(s);
  const SemanticComparison same = compare_semantics(ref, ref, 3, {240, 240}, 2);
  CHECK(same.reference_forms == 4);
  CHECK(same.candidate_forms == 4);
  for (const AspectScore& a : same.fidelity.aspects) CHECK(a.score == 1);
  CHECK(same.summary.find("roles unchanged") != std::string::npos);
  std::vector<Stroke> one_eye;
  for (const Stroke& st : ref)
    if (st.id != "p_0003") one_eye.push_back(st);
  const SemanticComparison less = compare_semantics(ref, one_eye, 3, {240, 240}, 2);
  CHECK(less.candidate_forms == 3);
  CHECK(less.candidate_closed_regions == less.reference_closed_regions - 1);
  CHECK(less.summary.find("interior_feature 3 -> 2") != std::string::npos);
}

TEST_CASE("semantic fidelity: closing a C into an O encloses negative space", "[semantic]") {
  SceneBuilder b(200, 200, 3);
  const Vec2 c{100, 100};
  b.add(Shape::arc(c + from_angle(deg2rad(30)) * 50, c + from_angle(deg2rad(330)) * 50, std::tan(deg2rad(300) / 4)));
  CHECK(aspect(fidelity(b.routed()), "negative_space") == 1);
  replace(b, "p_0001", Shape::circle(c, 50));
  const json env = fidelity(b.routed());
  CHECK(aspect(env, "negative_space") < 0.5);
  CHECK(names_region_near(env, "negative_space", c));
  for (const auto& a : env["aspects"])
    if (a["aspect"] == "negative_space") CHECK(a["offending_primitive_ids"] == json({"p_0001"}));
}
