// Through strokes: a line that passes through a T junction is one primitive, and routing
// still draws the T with the stem joined to it. Strokes that share their ink (a tangent branch,
// an acute Y) come back as their own primitives, meeting where the strokes do.
#include <catch2/catch.hpp>

#include <set>

#include "core/schema.hpp"
#include "fit/fit.hpp"
#include "graph/skeletonize.hpp"
#include "robot/simulate.hpp"
#include "route/route.hpp"
#include "shape_scene.hpp"
#include "skeleton_drawing.hpp"
#include "undrawn.hpp"

using namespace sv;
using test::Sketch;

namespace {

Scene fitted(const cv::Mat& gray, double through_angle_deg = -1) {
  Scene s;
  skeletonize(s, gray, {});
  s.source->path = "t.png";
  s.source->sha256 = std::string(64, '0');
  FitOptions opt;
  if (through_angle_deg >= 0) opt.overrides["fit.through_angle_deg"] = through_angle_deg;
  fit(s, opt);
  return s;
}

int pen_ups_of(Scene& s, const RouteOptions& opt = {}) {
  route(s, opt);
  simulate(s, {});
  return s.metrics["pen_up_moves"].get<int>();
}


const Primitive* longest(const Scene& s) {
  const Primitive* best = nullptr;
  for (const Primitive& p : *s.primitives)
    if (!best || p.shape.length() > best->shape.length()) best = &p;
  return best;
}

}  // namespace

TEST_CASE("a T of two strokes is fitted as one through line and a stem meeting it", "[fit]") {
  Scene s = fitted(Sketch(200, 200).line({20, 60}, {180, 60}, 4).line({100, 60}, {100, 170}, 4).image());
  REQUIRE(s.graph->edges.size() == 3);  // the graph splits the bar at the junction
  REQUIRE(s.primitives->size() == 2);
  const Primitive& bar = *longest(s);
  const Primitive& stem = (*s.primitives)[&bar == &(*s.primitives)[0] ? 1 : 0];
  CHECK(bar.shape.type == PrimType::line);
  CHECK(stem.shape.type == PrimType::line);
  CHECK(bar.shape.length() == Approx(160).margin(3));
  CHECK(std::abs(bar.shape.p0.y - 60) < 1.0);
  CHECK(std::abs(bar.shape.p1.y - 60) < 1.0);
  // Provenance: both halves of the bar, the first one also as edge/span.
  REQUIRE(bar.more_sources.size() == 1);
  CHECK(bar.more_sources[0].edge != bar.edge);
  CHECK(bar.fit_max_px <= s.config["fit.tolerance_px"]["value"].get<double>() + 1e-9);
  // The stem ends on the bar, at one point.
  Vec2 foot = dist(stem.shape.p0, {100, 60}) < dist(stem.shape.p1, {100, 60}) ? stem.shape.p0 : stem.shape.p1;
  CHECK(dist(foot, {100, 60}) < 1.5);
  CHECK(bar.shape.distance_to(foot) < 1e-3);
  CHECK(scene_schema().first_error(to_json(s)).empty());
  // The scene round-trips with its sources.
  Scene back = scene_from_json(to_json(s));
  CHECK(canonical_bytes(back) == canonical_bytes(s));
}

TEST_CASE("an X stays two lines and a merge can be switched off", "[fit]") {
  Scene x = fitted(Sketch(200, 200).line({20, 20}, {180, 180}, 4).line({20, 180}, {180, 20}, 4).image());
  CHECK(x.primitives->size() == 2);
  for (const Primitive& p : *x.primitives) {
    CHECK(p.shape.type == PrimType::line);
    CHECK(p.shape.length() == Approx(160 * std::sqrt(2.0)).margin(4));
  }
  Scene t = fitted(Sketch(200, 200).line({20, 60}, {180, 60}, 4).line({100, 60}, {100, 170}, 4).image(), 0);
  CHECK(t.primitives->size() == 3);
}

TEST_CASE("a T with a merged bar is routed with no more pen lifts than before", "[route]") {
  cv::Mat gray = Sketch(200, 200).line({20, 60}, {180, 60}, 4).line({100, 60}, {100, 170}, 4).image();
  Scene merged = fitted(gray), split = fitted(gray, 0);
  REQUIRE(merged.primitives->size() == 2);
  REQUIRE(split.primitives->size() == 3);
  // With pen-up trips only, one lift; drawing the short part of the bar again saves it.
  RouteOptions trips_only;
  trips_only.overrides["route.redraw_lines"] = 0;
  Scene lifted = split;
  CHECK(pen_ups_of(lifted, trips_only) == 1);
  int before = pen_ups_of(split), after = pen_ups_of(merged);
  CHECK(before == 0);
  CHECK(after == before);
  CHECK(undrawn_px(merged) < 0.05);
  // The bar is drawn in two parts that meet where the stem does, one of them twice.
  int parts = 0;
  std::set<std::pair<double, double>> distinct;
  for (const TourStep& t : *merged.tour)
    if (!t.whole()) ++parts, distinct.emplace(t.t0, t.t1);
  CHECK(parts == 3);
  CHECK(distinct.size() == 2);
  CHECK(merged.tour->size() == 4);
  // Routing that again changes nothing.
  Scene rerouted = merged;
  route(rerouted, {});
  CHECK(to_json(rerouted)["tour"] == to_json(merged)["tour"]);
  CHECK(to_json(rerouted)["commands"] == to_json(merged)["commands"]);
  CHECK(scene_schema().first_error(to_json(merged)).empty());
  // Re-emitting the tour as it stands draws the same stream.
  Scene again = merged;
  emit_tour(again, {});
  CHECK(again.commands->size() == merged.commands->size());
}

TEST_CASE("a stem ending on a line's interior joins it without a pen lift", "[route]") {
  // One bar, a stem from its middle: an L-free T the router splits at the contact.
  Scene s = scene_of_shapes({Shape::line({0, 50}, {100, 50}), Shape::line({50, 50}, {50, 100})}, 200, 4);
  route(s, {});
  simulate(s, {});
  CHECK(s.metrics["pen_up_moves"] == 1);
  CHECK(s.tour->size() == 3);
  for (const Command& c : *s.commands) CHECK(c.primitive.find("p_0001,p_0001") == std::string::npos);
  CHECK(undrawn_px(s) < 0.05);
  // A plus: the bar split at a stem on each side, both stems drawn on: one lift.
  Scene plus = scene_of_shapes({Shape::line({0, 50}, {100, 50}), Shape::line({50, 50}, {50, 100}),
                                Shape::line({50, 50}, {50, 0})},
                               200, 4);
  route(plus, {});
  simulate(plus, {});
  CHECK(plus.metrics["pen_up_moves"] == 1);
}

TEST_CASE("a branch leaving a stem tangentially leaves it where the strokes meet, as one arc", "[fit][junction]") {
  // A stem and an arc of radius 40 that leaves it at (60, 110) along it, upwards, and curves away
  // (an n's arch, a git-merge icon's branch): their inks share some 20 px above the contact.
  for (double w : {3.0, 5.0, 8.0}) {
    CAPTURE(w);
    Scene s = fitted(Sketch(200, 240).line({60, 30}, {60, 210}, w).arc({100, 110}, 40, 180, 270, w).image());
    REQUIRE(s.primitives->size() == 2);  // no spur or retraced piece at the junction
    const Primitive *stem = nullptr, *branch = nullptr;
    for (const Primitive& p : *s.primitives) (p.shape.type == PrimType::line ? stem : branch) = &p;
    REQUIRE(stem);
    REQUIRE(branch);
    CHECK(branch->shape.type == PrimType::arc);
    CHECK(std::abs(stem->shape.p0.x - 60) < 1);
    CHECK(std::abs(stem->shape.p1.x - 60) < 1);
    CHECK(stem->shape.length() == Approx(180).margin(w));
    // The branch starts at the contact, not where the skeleton splits.
    const double at_contact = std::min(dist(branch->shape.p0, {60, 110}), dist(branch->shape.p1, {60, 110}));
    CHECK(at_contact < w / 2);
    CHECK(std::min(dist(branch->shape.p0, {100, 70}), dist(branch->shape.p1, {100, 70})) < w / 2);
  }
}

TEST_CASE("a 20 degree Y of 12 px strokes has straight arms that meet the stem at the true apex", "[fit][junction]") {
  // Arms 150 px long, 10 degrees either side of the stem: their inks overlap for some 70 px
  // below the apex, where the skeleton splits.
  const Vec2 apex{120, 130};
  const double a = deg2rad(10);
  const Vec2 left = apex + Vec2{-std::sin(a), std::cos(a)} * 150, right = apex + Vec2{std::sin(a), std::cos(a)} * 150;
  Scene s = fitted(Sketch(240, 320).line({120, 20}, apex, 12).line(apex, left, 12).line(apex, right, 12).image());
  REQUIRE(s.primitives->size() == 3);
  int at_apex = 0;
  for (const Primitive& p : *s.primitives) {
    CHECK(p.shape.type == PrimType::line);
    at_apex += std::min(dist(p.shape.p0, apex), dist(p.shape.p1, apex)) < 6;
    for (Vec2 end : {left, right, Vec2{120, 20}})
      if (std::min(dist(p.shape.p0, end), dist(p.shape.p1, end)) < 6) CHECK(p.fit_max_px < 1.5);
  }
  CHECK(at_apex == 3);
}

TEST_CASE("a 20 degree Y whose one arm curves away meets the stem at the true apex", "[fit][junction]") {
  // A straight arm and an arc of radius 150 leaving the apex 10 degrees either side of the stem,
  // the arc bending away: a line through the arc's start would meet the stem below the apex, and
  // the skeleton splits above it. Followed back on its circle, it meets the straight arm where
  // both were drawn from.
  const Vec2 apex{120, 130};
  const double a = deg2rad(10), r = 150;
  for (double w : {5.0, 8.0, 12.0}) {
    CAPTURE(w);
    Scene s = fitted(Sketch(240, 320)
                         .line({120, 20}, apex, w)
                         .line(apex, apex + Vec2{-std::sin(a), std::cos(a)} * 150, w)
                         .arc(apex + Vec2{std::cos(a), -std::sin(a)} * r, r, 110, 170, w)
                         .image());
    REQUIRE(s.primitives->size() == 3);
    int arcs = 0, at_apex = 0;
    for (const Primitive& p : *s.primitives) {
      arcs += p.shape.type == PrimType::arc;
      at_apex += std::min(dist(p.shape.p0, apex), dist(p.shape.p1, apex)) < w / 2;
    }
    CHECK(arcs == 1);
    CHECK(at_apex == 3);
  }
}

TEST_CASE("two strokes ending together on a bar, as a K's arms, are three lines meeting at one point", "[fit][junction]") {
  // Thinning splits such a meeting into two 3-way junctions a few pixels apart (each arm a T on
  // the bar, or the arms' own split beside the bar's T), which bent the bar and the arms into
  // arcs and short lines there.
  const Vec2 k{130, 150};
  for (double w : {5.0, 8.0, 12.0})
    for (double spread : {20.0, 90.0}) {
      CAPTURE(w, spread);
      const double h = deg2rad(spread / 2);
      const Vec2 arm1 = k + Vec2{std::cos(h), -std::sin(h)} * 100, arm2 = k + Vec2{std::cos(h), std::sin(h)} * 100;
      Scene s = fitted(Sketch(260, 300).line({130, 30}, {130, 270}, w).line(k, arm1, w).line(k, arm2, w).image());
      REQUIRE(s.primitives->size() == 3);
      int at_k = 0;
      for (const Primitive& p : *s.primitives) {
        CHECK(p.shape.type == PrimType::line);
        if (std::min(dist(p.shape.p0, k), dist(p.shape.p1, k)) < w / 2) ++at_k;
      }
      CHECK(at_k == 2);  // the arms end at the meeting; the bar runs through it
      CHECK(longest(s)->shape.length() == Approx(240).margin(w));
    }
}

TEST_CASE("a line ending along an arc's tangent meets it at the contact, the arc whole", "[fit][junction]") {
  // An outline with a rounded end (a half circle of radius 34, as on a newspaper icon) and a
  // line run into the bottom of that end from the side, 8 px: the two share their ink some 20 px
  // either side of the contact, where the skeleton split them; the arc came back as two arcs of
  // the wrong radii and the line short of the contact. A tab on the top side makes the outline
  // two strokes between junctions.
  const Vec2 c{170, 140};
  const double r = 34, w = 8;
  const Vec2 contact = c + Vec2{0, r}, top_left = c + Vec2{-r, -90}, top_right = c + Vec2{r, -90};
  Scene s = fitted(Sketch(260, 220).line(top_left, c + Vec2{-r, 0}, w).arc(c, r, 0, 180, w)
                       .line(c + Vec2{r, 0}, top_right, w).line(top_left, top_right, w)
                       .line(c + Vec2{0, -90}, c + Vec2{0, -120}, w).line({30, contact.y}, contact, w).image());
  const Primitive *arc = nullptr, *stem = nullptr;
  int arcs = 0;
  for (const Primitive& p : *s.primitives) {
    if (p.shape.type == PrimType::arc) arc = &p, ++arcs;
    if (p.shape.type == PrimType::line && std::abs(p.shape.p0.y - contact.y) < 2 && std::abs(p.shape.p1.y - contact.y) < 2)
      stem = &p;
  }
  REQUIRE(arcs == 1);
  REQUIRE(stem);
  CHECK(dist(arc->shape.center, c) < 1.5);
  CHECK(arc->shape.radius == Approx(r).margin(1.5));
  CHECK(std::abs(rad2deg(arc->shape.sweep_rad())) == Approx(180).margin(5));
  CHECK(std::max(stem->shape.p0.x, stem->shape.p1.x) == Approx(contact.x).margin(w / 2));
}

TEST_CASE("a stem ending on a circle at a steep angle leaves one circle and one line", "[fit][junction]") {
  // A circle of radius 40 and a 12 px stem meeting it at 90 and at 45 degrees (the angle between
  // the stem and the circle), ending on it. Thinning bends the circle towards the stem, which
  // cut it into arcs and short lines.
  const Vec2 c{120, 150};
  const double r = 40, w = 12;
  for (double meet : {90.0, 45.0}) {
    CAPTURE(meet);
    const Vec2 at = c + Vec2{0, -r};  // the top of the circle; the stem goes up and to the side
    const double a = deg2rad(90 - meet);
    const Vec2 far = at + Vec2{std::sin(a), -std::cos(a)} * 100;
    Scene s = fitted(Sketch(260, 240).circle(c, r, w).line(at, far, w).image());
    REQUIRE(s.primitives->size() == 2);
    const Primitive *circle = nullptr, *stem = nullptr;
    for (const Primitive& p : *s.primitives) (p.shape.type == PrimType::circle ? circle : stem) = &p;
    REQUIRE(circle);
    REQUIRE(stem);
    CHECK(dist(circle->shape.center, c) < 1.5);
    CHECK(circle->shape.radius == Approx(r).margin(1.5));
    CHECK(std::min(dist(stem->shape.p0, at), dist(stem->shape.p1, at)) < w / 2);
  }
}

TEST_CASE("two circles that touch stay two circles, side by side or one inside the other", "[fit][junction]") {
  // They share their ink about the contact: thinning joins them by a ribbon between two 3-way
  // nodes, which cut each into arcs and short lines.
  struct Pair {
    Vec2 c0, c1;
    double r0, r1, w;
  };
  const Vec2 c{130, 130};
  const Pair pairs[] = {
      {c, c + Vec2{0.6, 0.8} * 90, 50, 40, 8},   // side by side (an 8)
      {c, c + Vec2{1, 0} * 85, 50, 35, 12},      // side by side, thick
      {c, c + Vec2{0, 1} * 35, 70, 35, 5},       // one inside the other, touching at its rim
  };
  for (const Pair& p : pairs) {
    CAPTURE(p.r0, p.r1, p.w);
    Scene s = fitted(Sketch(300, 300).circle(p.c0, p.r0, p.w).circle(p.c1, p.r1, p.w).image());
    REQUIRE(s.primitives->size() == 2);
    for (const Primitive& q : *s.primitives) {
      REQUIRE(q.shape.type == PrimType::circle);
      const bool first = std::abs(q.shape.radius - p.r0) < std::abs(q.shape.radius - p.r1);
      CHECK(dist(q.shape.center, first ? p.c0 : p.c1) < 1.5);
      CHECK(q.shape.radius == Approx(first ? p.r0 : p.r1).margin(1.5));
    }
    // One stroke: the pen goes round one circle and on round the other from the contact.
    CHECK(pen_ups_of(s) == 0);
  }
}
