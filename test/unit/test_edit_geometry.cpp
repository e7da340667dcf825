// The geometric edit tools: merge, split, replace, refit, snap, enforce a relation, smooth —
// each on a small hand-built scene, settled as sv-edit settles it.
#include <catch2/catch.hpp>

#include "core/error.hpp"
#include "edit/edit.hpp"
#include "eval/drawing.hpp"
#include "fit/fit.hpp"
#include "tools/edit_session.hpp"
#include "tools_fixture.hpp"

using namespace svtest;

namespace {

const Primitive& prim(const Scene& s, const std::string& id) {
  const Primitive* p = s.primitive(id);
  REQUIRE(p != nullptr);
  return *p;
}

double dir_deg(const Shape& s) { return rad2deg(angle_of(s.p1 - s.p0)); }

}  // namespace

TEST_CASE("MergePrimitives: two collinear halves become one line between the outer ends", "[edit]") {
  SceneBuilder b(160, 100, 4);
  Polyline src = join(Shape::line({10, 50}, {60, 50}).sample(1.0), Shape::line({60, 50}, {110, 50}).sample(1.0));
  src = join(src, Shape::line({110, 50}, {110, 90}).sample(1.0));
  auto ids = b.add_chain({Shape::line({10, 50}, {60, 50}), Shape::line({60, 50}, {110, 50}),
                          Shape::line({110, 50}, {110, 90})},
                         src, {{0, 50}, {50, 100}, {100, 140}});
  EditSession out = edit(b.scene(), "MergePrimitives", {{"primitive_ids", {ids[1], ids[0]}}});
  const std::string id = out.results[0]["new_primitive_id"];
  CHECK(id == "p_0004");
  CHECK(out.removed == std::vector<std::string>{"p_0001", "p_0002"});
  const Primitive& m = prim(out.scene, id);
  CHECK(m.shape.type == PrimType::line);
  CHECK(dist(m.shape.p0, {10, 50}) < 0.01);
  CHECK(dist(m.shape.p1, {110, 50}) < 0.01);
  CHECK(out.results[0]["fit_rms_px"].get<double>() < 0.01);
  CHECK(m.edge == "e_0001");
  CHECK(m.span0 == 0);
  CHECK(m.span1 == 100);
  // The neighbour still starts where the merged line ends.
  CHECK(prim(out.scene, ids[2]).shape.p0 == m.shape.p1);
}

TEST_CASE("MergePrimitives: an L is refused, naming the tolerance", "[edit]") {
  SceneBuilder b(120, 120, 4);
  Polyline src = join(Shape::line({10, 10}, {60, 10}).sample(1.0), Shape::line({60, 10}, {60, 60}).sample(1.0));
  auto ids = b.add_chain({Shape::line({10, 10}, {60, 10}), Shape::line({60, 10}, {60, 60})}, src, {{0, 50}, {50, 100}});
  Error e = refusal(b.scene(), "MergePrimitives", {{"primitive_ids", ids}});
  CHECK(e.code() == Code::no_result);
  CHECK(std::string(e.what()).find("tolerance") != std::string::npos);
  CHECK(e.details()["reason"].get<std::string>().find("tolerance") != std::string::npos);
  CHECK(e.details()["fit_max_px"].get<double>() > 1.0);
  CHECK(e.details()["tolerance_px"].get<double>() == Approx(1.0));
  CHECK(e.details().contains("fit_rms_px"));
  // Primitives that do not meet are not a chain.
  SceneBuilder apart(120, 120, 4);
  apart.add(Shape::line({10, 10}, {50, 10}));
  apart.add(Shape::line({70, 10}, {110, 10}));
  CHECK(refusal(apart.scene(), "MergePrimitives", {{"primitive_ids", {"p_0001", "p_0002"}}}).code() == Code::no_result);
}

TEST_CASE("MergePrimitives: two half circles close a loop and become a circle", "[edit]") {
  SceneBuilder b(120, 120, 4);
  b.add(Shape::arc({30, 60}, {90, 60}, 1.0));
  b.add(Shape::arc({90, 60}, {30, 60}, 1.0));
  EditSession out = edit(b.scene(), "MergePrimitives", {{"primitive_ids", {"p_0001", "p_0002"}}});
  const Primitive& c = prim(out.scene, out.results[0]["new_primitive_id"]);
  CHECK(out.results[0]["kind"] == "circle");
  CHECK(dist(c.shape.center, {60, 60}) < 0.05);
  CHECK(c.shape.radius == Approx(30).margin(0.05));
}

TEST_CASE("SplitPrimitive: t = 0.5 halves a line; bad positions are refused", "[edit]") {
  SceneBuilder b(120, 80, 4);
  b.add(Shape::line({10, 40}, {110, 40}));
  EditSession out = edit(b.scene(), "SplitPrimitive", {{"primitive_id", "p_0001"}, {"at", 0.5}});
  auto ids = out.results[0]["new_primitive_ids"].get<std::vector<std::string>>();
  REQUIRE(ids.size() == 2);
  CHECK(ids == std::vector<std::string>{"p_0002", "p_0003"});
  CHECK(out.scene.primitive("p_0001") == nullptr);
  const Shape &a = prim(out.scene, ids[0]).shape, &c = prim(out.scene, ids[1]).shape;
  CHECK(dist(a.p1, {60, 40}) < 1e-9);
  CHECK(a.p1 == c.p0);
  CHECK(a.p0 == Vec2{10, 40});
  CHECK(c.p1 == Vec2{110, 40});
  // Provenance splits with the geometry.
  CHECK(prim(out.scene, ids[0]).span1 == prim(out.scene, ids[1]).span0);
  Error bad = refusal(b.scene(), "SplitPrimitive", {{"primitive_id", "p_0001"}, {"at", 1.5}});
  CHECK(bad.code() == Code::invalid_selection);
  CHECK(std::string(bad.what()).find("between 0 and 1") != std::string::npos);
  CHECK(refusal(b.scene(), "SplitPrimitive", {{"primitive_id", "p_0001"}, {"at", {10.2, 41}}}).code() ==
        Code::invalid_selection);
  // A point is snapped onto the line.
  EditSession at_pt = edit(b.scene(), "SplitPrimitive", {{"primitive_id", "p_0001"}, {"at", {35, 43}}});
  CHECK(dist(prim(at_pt.scene, "p_0002").shape.p1, {35, 40}) < 1e-9);
}

TEST_CASE("SplitPrimitive: arcs keep their circle, circles become two halves, corners are found", "[edit]") {
  SceneBuilder b(200, 200, 4);
  b.add(Shape::arc({20, 100}, {100, 100}, 0.5));
  b.add(Shape::circle({150, 60}, 20));
  // A line fitted (badly) over an L: its source points turn sharply at (60, 160).
  Polyline l = join(Shape::line({20, 160}, {60, 160}).sample(1.0), Shape::line({60, 160}, {60, 190}).sample(1.0));
  b.add(Shape::line({20, 160}, {60, 190}), l);
  Scene s = b.scene();
  EditSession arc = edit(s, "SplitPrimitive", {{"primitive_id", "p_0001"}, {"at", 0.25}});
  const Shape &a0 = prim(arc.scene, "p_0004").shape, &a1 = prim(arc.scene, "p_0005").shape;
  const Shape& old = prim(s, "p_0001").shape;
  CHECK(dist(a0.center, old.center) < 1e-6);
  CHECK(dist(a1.center, old.center) < 1e-6);
  CHECK(a0.sweep_rad() + a1.sweep_rad() == Approx(old.sweep_rad()));
  CHECK(dist(a0.p1, old.at(0.25)) < 1e-6);

  EditSession circ = edit(s, "SplitPrimitive", {{"primitive_id", "p_0002"}, {"at", {150, 90}}});
  const Shape &c0 = prim(circ.scene, "p_0004").shape, &c1 = prim(circ.scene, "p_0005").shape;
  CHECK(c0.type == PrimType::arc);
  CHECK(dist(c0.p0, {150, 80}) < 1e-9);
  CHECK(c0.p1 == c1.p0);
  CHECK(c1.p1 == c0.p0);
  CHECK(c0.radius == Approx(20));

  EditSession corner = edit(s, "SplitPrimitive", {{"primitive_id", "p_0003"}, {"at", "auto_corner"}});
  CHECK(dist(prim(corner.scene, "p_0004").shape.p1, {60, 160}) < 25);  // snapped onto the (bad) line
  const Primitive& head = prim(corner.scene, "p_0004");
  CHECK(dist(source_points(corner.scene, head).back(), {60, 160}) < 1.5);
  // A straight line has no corner and no inflection.
  SceneBuilder straight(120, 80, 4);
  straight.add(Shape::line({10, 40}, {110, 40}));
  CHECK(refusal(straight.scene(), "SplitPrimitive", {{"primitive_id", "p_0001"}, {"at", "auto_corner"}}).code() ==
        Code::no_result);
  CHECK(refusal(straight.scene(), "SplitPrimitive", {{"primitive_id", "p_0001"}, {"at", "auto_inflection"}}).code() ==
        Code::no_result);
}

TEST_CASE("SplitPrimitive: auto_inflection splits an S where it changes its bend", "[edit]") {
  SceneBuilder b(200, 120, 4);
  Polyline s_curve = join(Shape::arc({20, 60}, {80, 60}, 0.4).sample(1.0), Shape::arc({80, 60}, {140, 60}, -0.4).sample(1.0));
  b.add(Shape::line({20, 60}, {140, 60}), s_curve);
  EditSession out = edit(b.scene(), "SplitPrimitive", {{"primitive_id", "p_0001"}, {"at", "auto_inflection"}});
  CHECK(dist(prim(out.scene, "p_0002").shape.p1, {80, 60}) < 3);
}

TEST_CASE("ReplacePrimitive: the new shape's ends snap onto existing endpoints", "[edit]") {
  SceneBuilder b(160, 100, 4);
  b.add(Shape::line({10, 50}, {60, 50}));
  b.add(Shape::line({60, 50}, {110, 50}));
  b.add(Shape::line({110, 50}, {150, 90}));
  EditSession out = edit(b.scene(), "ReplacePrimitive",
                         {{"primitive_ids", {"p_0002"}},
                          {"replacement", {{"type", "arc"}, {"p0", {61, 51}}, {"p1", {109, 49.5}}, {"bulge", 0.2}}}});
  const Primitive& n = prim(out.scene, out.results[0]["new_primitive_id"]);
  CHECK(n.shape.type == PrimType::arc);
  CHECK(n.shape.p0 == Vec2{60, 50});
  CHECK(n.shape.p1 == Vec2{110, 50});
  CHECK(out.results[0]["snapped_end_count"] == 2);
  CHECK(out.scene.primitive("p_0002") == nullptr);
  EditSession raw = edit(b.scene(), "ReplacePrimitive",
                         {{"primitive_ids", {"p_0002"}},
                          {"replacement", {{"type", "line"}, {"p0", {61, 51}}, {"p1", {109, 49.5}}}},
                          {"snap_to_existing_endpoints", false}});
  CHECK(prim(raw.scene, raw.results[0]["new_primitive_id"]).shape.p0 == Vec2{61, 51});
}

TEST_CASE("RefitPolyline: forbidding arcs refits an arc's points with lines, ends pinned", "[edit]") {
  SceneBuilder b(200, 200, 4);
  Shape arc = Shape::arc({40, 100}, {160, 100}, 0.6);
  b.add(arc);
  EditSession out = edit(b.scene(), "RefitPolyline", {{"primitive_ids", {"p_0001"}}, {"forbid_arc_shortcut", true}});
  auto ids = out.results[0]["new_primitive_ids"].get<std::vector<std::string>>();
  CHECK(ids.size() >= 3);
  for (const auto& id : ids) CHECK(prim(out.scene, id).shape.type == PrimType::line);
  CHECK(dist(prim(out.scene, ids.front()).shape.p0, arc.p0) < 1e-6);
  CHECK(dist(prim(out.scene, ids.back()).shape.p1, arc.p1) < 1e-6);
  for (const auto& f : out.results[0]["fit_summary"]) CHECK(f["fit_max_px"].get<double>() <= 1.0 + 1e-6);
  // Extra split points force breakpoints; the primitives must share one edge.
  EditSession split = edit(b.scene(), "RefitPolyline", {{"primitive_ids", {"p_0001"}}, {"extra_split_points", {{arc.at(0.5).x, arc.at(0.5).y}}}});
  auto pieces = split.results[0]["new_primitive_ids"].get<std::vector<std::string>>();
  REQUIRE(pieces.size() == 2);
  CHECK(dist(prim(split.scene, pieces[0]).shape.p1, arc.at(0.5)) < 1.0);
  CHECK(prim(split.scene, pieces[0]).shape.type == PrimType::arc);
  b.add(Shape::line({10, 10}, {50, 10}));
  CHECK(refusal(b.scene(), "RefitPolyline", {{"primitive_ids", {"p_0001", "p_0002"}}}).code() == Code::invalid_selection);
}

TEST_CASE("SnapEndpoints closes a 0.8 px gap at the mean, moving joined ends along", "[edit]") {
  SceneBuilder b(160, 100, 4);
  b.add(Shape::line({10, 10}, {50, 10}));
  b.add(Shape::line({50.8, 10}, {90, 40}));
  b.add(Shape::arc({90, 40}, {130, 40}, 0.3));
  EditSession out = edit(b.scene(), "SnapEndpoints", json::object());
  const Shape &a = prim(out.scene, "p_0001").shape, &c = prim(out.scene, "p_0002").shape;
  CHECK(a.p1 == c.p0);
  CHECK(dist(a.p1, {50.4, 10}) < 1e-9);
  CHECK(out.results[0]["max_displacement_px"].get<double>() == Approx(0.4));
  CHECK(out.results[0]["affected_vertex_ids"].size() == 1);
  // Coincident ends are left alone, and a tighter tolerance leaves the gap.
  CHECK(prim(out.scene, "p_0003").shape.p0 == Vec2{90, 40});
  CHECK(refusal(b.scene(), "SnapEndpoints", {{"tolerance_px", 0.5}}).code() == Code::no_result);
  CHECK(refusal(b.scene(), "SnapEndpoints", {{"vertex_ids", {"v_0999"}}}).code() == Code::not_found);
}

TEST_CASE("SnapEndpoints keeps an arc through its middle when its end moves", "[edit]") {
  SceneBuilder b(160, 100, 4);
  b.add(Shape::arc({10, 50}, {60, 50}, 0.4));
  b.add(Shape::line({61, 50.5}, {100, 50}));
  Shape before = b.scene().primitives->at(0).shape;
  EditSession out = edit(b.scene(), "SnapEndpoints", json::object());
  const Shape& arc = prim(out.scene, "p_0001").shape;
  CHECK(dist(arc.p1, {60.5, 50.25}) < 1e-9);
  CHECK(arc.distance_to(before.at(0.5)) < 1e-6);
  CHECK(arc.p1 == prim(out.scene, "p_0002").shape.p0);
}

TEST_CASE("EnforceRelation: parallel, horizontal, perpendicular through the beautify solver", "[edit]") {
  SceneBuilder b(200, 200, 8);  // tolerance 2 px
  b.add(Shape::line({20, 20}, {60, 20}));
  b.add(Shape::line({20, 60}, {60, 60 + 40 * std::tan(deg2rad(3))}));
  b.add(Shape::line({100, 40}, {140, 40 + 40 * std::tan(deg2rad(2))}));
  Scene s = b.scene();
  EditSession par = edit(s, "EnforceRelation", {{"relation", "parallel"}, {"primitive_ids", {"p_0001", "p_0002"}}});
  CHECK(par.results[0]["residual_after"].get<double>() < 0.01);
  CHECK(std::abs(dir_deg(prim(par.scene, "p_0001").shape) - dir_deg(prim(par.scene, "p_0002").shape)) < 0.01);
  REQUIRE(par.scene.relations.size() == 1);
  CHECK(par.scene.relations[0]["kind"] == "parallel");
  CHECK(par.scene.relations[0]["enforced_by"] == "EnforceRelation");
  CHECK(par.scene.relations[0].contains("residual_deg"));

  EditSession hor = edit(s, "EnforceRelation", {{"relation", "horizontal"}, {"primitive_ids", {"p_0003"}}});
  const Shape& h = prim(hor.scene, "p_0003").shape;
  CHECK(std::abs(h.p1.y - h.p0.y) < 1e-3);
  CHECK(hor.results[0]["affected_primitive_ids"] == json::array({"p_0003"}));
}

TEST_CASE("EnforceRelation refuses what cannot hold within tolerance", "[edit]") {
  SceneBuilder b(240, 200, 4);
  Polyline src = join(Shape::line({10, 50}, {60, 50}).sample(1.0), Shape::line({60, 50}, {110, 50}).sample(1.0));
  auto ids = b.add_chain({Shape::line({10, 50}, {60, 50}), Shape::line({60, 50}, {110, 50})}, src, {{0, 50}, {50, 100}});
  b.add(Shape::circle({60, 140}, 30));
  b.add(Shape::circle({110, 140}, 30));
  Scene s = b.scene();
  Error perp = refusal(s, "EnforceRelation", {{"relation", "perpendicular"}, {"primitive_ids", ids}});
  CHECK(perp.code() == Code::unsolvable_constraint);
  CHECK(perp.details().contains("primitive_id"));
  Error conc = refusal(s, "EnforceRelation", {{"relation", "concentric"}, {"primitive_ids", {"p_0003", "p_0004"}}});
  CHECK(conc.code() == Code::unsolvable_constraint);
  CHECK(conc.details()["reason"].get<std::string>().find("tolerance") != std::string::npos);
  // Wrong kinds of primitive and unknown ids.
  CHECK(refusal(s, "EnforceRelation", {{"relation", "concentric"}, {"primitive_ids", ids}}).code() == Code::invalid_selection);
  CHECK(refusal(s, "EnforceRelation", {{"relation", "parallel"}, {"primitive_ids", {"p_0001", "p_0999"}}}).code() ==
        Code::not_found);
  // Equal radii 0.5 px apart are fine.
  SceneBuilder r(240, 200, 4);
  r.add(Shape::circle({60, 60}, 30));
  r.add(Shape::circle({150, 60}, 30.5));
  EditSession eq = edit(r.scene(), "EnforceRelation", {{"relation", "equal_radius"}, {"primitive_ids", {"p_0001", "p_0002"}}});
  CHECK(std::abs(prim(eq.scene, "p_0001").shape.radius - prim(eq.scene, "p_0002").shape.radius) < 0.05);
}

TEST_CASE("EnforceRelation: mirror, collinear and tangent continuity", "[edit]") {
  SceneBuilder b(240, 200, 8);
  b.add(Shape::line({40, 20}, {80, 60}));
  b.add(Shape::line({160.5, 20}, {120, 60.5}));
  b.add(Shape::line({20, 150}, {60, 150}));
  b.add(Shape::line({80, 150.6}, {120, 150.3}));
  Scene s = b.scene();
  EditSession mir = edit(s, "EnforceRelation", {{"relation", "mirror"}, {"primitive_ids", {"p_0001", "p_0002"}}, {"axis", 100}});
  const Shape &m0 = prim(mir.scene, "p_0001").shape, &m1 = prim(mir.scene, "p_0002").shape;
  CHECK(std::abs(m0.p0.x + m1.p0.x - 200) < 0.05);
  CHECK(std::abs(m0.p0.y - m1.p0.y) < 0.05);
  CHECK(mir.results[0]["residual_after"].get<double>() < 0.05);
  EditSession col = edit(s, "EnforceRelation", {{"relation", "collinear"}, {"primitive_ids", {"p_0003", "p_0004"}}});
  const Shape &l0 = prim(col.scene, "p_0003").shape, &l1 = prim(col.scene, "p_0004").shape;
  Vec2 u = unit(l0.p1 - l0.p0);
  CHECK(std::abs(cross(u, l1.p0 - l0.p0)) < 0.05);
  CHECK(std::abs(cross(u, l1.p1 - l0.p0)) < 0.05);

  // A line running into an arc with a 33 degree kink at their joint.
  SceneBuilder t(240, 200, 8);
  Shape line = Shape::line({20, 100}, {80, 100});
  Shape arc = Shape::arc({80, 100}, {140, 100}, 0.3);
  t.add(line);
  t.add(arc);
  Scene ts = t.scene();
  double kink = rad2deg(std::acos(dot(line.end_tangent(), arc.start_tangent())));
  REQUIRE(kink > 5);
  Error far = refusal(ts, "EnforceRelation", {{"relation", "tangent_continuity"}, {"primitive_ids", {"p_0001", "p_0002"}}});
  CHECK(far.code() == Code::unsolvable_constraint);  // 33 degrees cannot be smoothed away within 2 px
  SceneBuilder t2(240, 200, 8);
  Shape flat = Shape::arc({80, 100}, {140, 100}, std::tan(deg2rad(8) / 4));  // turns 4 degrees at each end
  t2.add(line);
  t2.add(flat);
  EditSession tan = edit(t2.scene(), "EnforceRelation", {{"relation", "tangent_continuity"}, {"primitive_ids", {"p_0001", "p_0002"}}});
  const Shape &ta = prim(tan.scene, "p_0001").shape, &tb = prim(tan.scene, "p_0002").shape;
  CHECK(ta.p1 == tb.p0);
  CHECK(rad2deg(std::acos(std::min(1.0, dot(ta.end_tangent(), tb.start_tangent())))) < 0.1);
}

TEST_CASE("SmoothPrimitive refits a noisy line in place; rms does not grow", "[edit]") {
  SceneBuilder b(160, 100, 4);
  Polyline noisy;
  for (int k = 0; k <= 100; ++k) noisy.push_back({10.0 + k, 50 + 0.4 * std::sin(k * 1.7)});
  b.add(Shape::line({10, 50.6}, {110, 49.4}), noisy);
  for (const char* strength : {"mild", "moderate", "strong"}) {
    EditSession out = edit(b.scene(), "SmoothPrimitive", {{"primitive_id", "p_0001"}, {"strength", strength}});
    CAPTURE(strength);
    CHECK(out.results[0]["new_primitive_id"] == "p_0001");
    CHECK(out.results[0]["rms_after"].get<double>() <= out.results[0]["rms_before"].get<double>());
    const Shape& sh = prim(out.scene, "p_0001").shape;
    CHECK(std::abs(sh.p0.y - 50) < 0.2);
    CHECK(std::abs(sh.p1.y - 50) < 0.2);
    CHECK(out.changed == std::vector<std::string>{"p_0001"});
  }
  // A wavy line smoothed into an arc.
  SceneBuilder a(200, 200, 4);
  Shape arc = Shape::arc({40, 100}, {160, 100}, 0.3);
  a.add(Shape::line(arc.p0, arc.p1), arc.sample(1.0));
  EditSession to_arc = edit(a.scene(), "SmoothPrimitive", {{"primitive_id", "p_0001"}, {"target_kind", "arc"}});
  const Shape& sa = prim(to_arc.scene, "p_0001").shape;
  CHECK(sa.type == PrimType::arc);
  CHECK(to_arc.results[0]["rms_after"].get<double>() < 0.05);
}

TEST_CASE("Geometry edits refuse unknown ids with not_found", "[edit]") {
  Scene s = dev_drawing().scene();
  const std::vector<std::pair<std::string, json>> calls = {
      {"MergePrimitives", {{"primitive_ids", {"p_0001", "p_0999"}}}},
      {"SplitPrimitive", {{"primitive_id", "p_0999"}, {"at", 0.5}}},
      {"ReplacePrimitive", {{"primitive_ids", {"p_0999"}}, {"replacement", {{"type", "line"}, {"p0", {0, 0}}, {"p1", {5, 5}}}}}},
      {"RefitPolyline", {{"primitive_ids", {"p_0999"}}}},
      {"EnforceRelation", {{"relation", "parallel"}, {"primitive_ids", {"p_0999", "p_0001"}}}},
      {"SmoothPrimitive", {{"primitive_id", "p_0999"}}}};
  for (const auto& [tool, req] : calls) {
    CAPTURE(tool);
    CHECK(refusal(s, tool, req).code() == Code::not_found);
  }
}

TEST_CASE("Recorded relations are re-solved after an edit touches them, dropped when they cannot hold", "[edit]") {
  SceneBuilder b(200, 200, 8);
  b.add(Shape::line({20, 20}, {60, 20}));
  b.add(Shape::line({20, 60}, {60, 61.5}));
  Scene s = edit(b.scene(), "EnforceRelation", {{"relation", "parallel"}, {"primitive_ids", {"p_0001", "p_0002"}}}).scene;
  REQUIRE(s.relations.size() == 1);
  // Moving one line by hand: the relation pulls the other along.
  EditSession moved = edit(s, "ReplacePrimitive",
                           {{"primitive_ids", {"p_0001"}},
                            {"replacement", {{"type", "line"}, {"p0", {20, 20}}, {"p1", {60, 21}}}},
                            {"snap_to_existing_endpoints", false}});
  // The replaced id is gone: the relation goes with a warning.
  CHECK(moved.scene.relations.empty());
  CHECK(!moved.warnings.empty());
  // Smoothing keeps the id: the relation is re-solved and still holds.
  EditSession smooth = edit(s, "SmoothPrimitive", {{"primitive_id", "p_0002"}, {"strength", "mild"}});
  REQUIRE(smooth.scene.relations.size() == 1);
  CHECK(smooth.scene.relations[0]["residual_deg"].get<double>() < 0.1);
  CHECK(std::abs(dir_deg(prim(smooth.scene, "p_0001").shape) - dir_deg(prim(smooth.scene, "p_0002").shape)) < 0.1);
}

TEST_CASE("Relations beautify dropped are kept as records and never re-solved", "[edit]") {
  SceneBuilder b(200, 200, 8);
  b.add(Shape::line({20, 20}, {60, 20}));
  b.add(Shape::line({20, 60}, {60, 61.5}));
  Scene s = b.scene();
  s.relations.push_back({{"kind", "horizontal"}, {"primitives", {"p_0002"}}, {"status", "dropped"},
                         {"reason", "would move p_0002 2.00 px off its ink (tolerance 2.00)"},
                         {"residual_deg", 2.1}});
  EditSession smooth = edit(s, "SmoothPrimitive", {{"primitive_id", "p_0002"}, {"strength", "mild"}});
  REQUIRE(smooth.scene.relations.size() == 1);
  CHECK(smooth.scene.relations[0] == s.relations[0]);
  CHECK(std::abs(dir_deg(prim(smooth.scene, "p_0002").shape)) > 1);
  // Once its primitive is gone the record goes too, without a warning of a relation dropped.
  EditSession gone = edit(s, "ReplacePrimitive",
                          {{"primitive_ids", {"p_0002"}},
                           {"replacement", {{"type", "line"}, {"p0", {20, 60}}, {"p1", {60, 62}}}},
                           {"snap_to_existing_endpoints", false}});
  CHECK(gone.scene.relations.empty());
  for (const auto& w : gone.warnings) CHECK(w.find("relation horizontal") == std::string::npos);
}

TEST_CASE("Geometry edits settle a routed scene", "[edit]") {
  Scene s = dev_drawing().routed();
  EditSession out = edit(s, "SplitPrimitive", {{"primitive_id", "p_0001"}, {"at", 0.5}});
  REQUIRE(out.scene.tour);
  std::set<std::string> toured;
  for (const auto& t : *out.scene.tour) toured.insert(t.primitive);
  CHECK(toured.count("p_0009"));
  CHECK(toured.count("p_0010"));
  CHECK(!toured.count("p_0001"));
  CHECK(out.after["primitive_count"] == 9);
  // The square's corners are junctions: making its top and right sides perpendicular moves
  // nothing that breaks them apart.
  EditSession perp = edit(s, "EnforceRelation", {{"relation", "perpendicular"}, {"primitive_ids", {"p_0001", "p_0002"}}});
  CHECK(prim(perp.scene, "p_0001").shape.p1 == prim(perp.scene, "p_0002").shape.p0);
}

TEST_CASE("RefitPolyline: a run on a loop may pass the loop's first point", "[edit]") {
  // A square traced from the middle of its top side: the fit starts the loop at a corner, so the
  // run of the top side's two halves of the trace crosses the edge's first point.
  Scene s;
  s.source = Source{"t.png", std::string(64, '0'), 200, 200, 4};
  Polyline sq;
  const Vec2 corners[] = {{120, 20}, {120, 120}, {20, 120}, {20, 20}, {70, 20}};
  Vec2 at{70, 20};
  for (Vec2 c : corners) {
    const int steps = static_cast<int>(std::lround(dist(at, c)));
    for (int k = 0; k < steps; ++k) sq.push_back(at + (c - at) * (static_cast<double>(k) / steps));
    at = c;
  }
  sq.push_back(sq.front());
  Graph g;
  g.vertices = {{"v_0001", sq.front(), 2, "loop"}};
  g.edges = {{"e_0001", "v_0001", "v_0001", sq, true, 4}};
  s.graph = g;
  fit(s, {});
  REQUIRE(s.primitives->size() == 4);
  // The side through the edge's first point, and the side after it along the loop.
  const Primitive *top = nullptr, *next = nullptr;
  for (const auto& p : *s.primitives)
    if (p.span0 > p.span1) top = &p;
  REQUIRE(top != nullptr);
  for (const auto& p : *s.primitives)
    if (dist(p.shape.p0, top->shape.p1) < 1e-6 || dist(p.shape.p1, top->shape.p1) < 1e-6)
      if (&p != top) next = &p;
  REQUIRE(next != nullptr);
  EditSession out = edit(s, "RefitPolyline", {{"primitive_ids", {next->id, top->id}}});
  auto ids = out.results[0]["new_primitive_ids"].get<std::vector<std::string>>();
  CHECK(ids.size() == 2);
  for (const auto& id : ids) CHECK(prim(out.scene, id).fit_max_px < 0.5);
}
