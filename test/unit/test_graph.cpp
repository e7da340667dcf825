#include <fmt/format.h>

#include <catch2/catch.hpp>
#include <algorithm>
#include <fstream>
#include <functional>
#include <map>
#include <random>
#include <sstream>

#include "core/error.hpp"
#include "core/schema.hpp"
#include "fit/fit.hpp"
#include "graph/centreline.hpp"
#include "graph/doubled.hpp"
#include "graph/gaps.hpp"
#include "graph/junctions.hpp"
#include "graph/skeletonize.hpp"
#include "raster/png.hpp"
#include "raster/threads.hpp"
#include "skeleton_drawing.hpp"

using namespace sv;
using test::Sketch;
using test::skeleton_of;

namespace {

int count_kind(const Graph& g, const std::string& kind, int degree = -1) {
  int n = 0;
  for (const auto& v : g.vertices) n += v.kind == kind && (degree < 0 || v.degree == degree);
  return n;
}

double max_distance_to_segment(const Polyline& pts, Vec2 a, Vec2 b) {
  double d = 0;
  for (Vec2 p : pts) d = std::max(d, point_segment_distance(p, a, b));
  return d;
}

double max_distance_to_circle(const Polyline& pts, Vec2 c, double r) {
  double d = 0;
  for (Vec2 p : pts) d = std::max(d, std::abs(dist(p, c) - r));
  return d;
}

double max_spacing(const Polyline& pts) {
  double d = 0;
  for (size_t i = 1; i < pts.size(); ++i) d = std::max(d, dist(pts[i - 1], pts[i]));
  return d;
}

std::vector<const Edge*> filled_edges(const Graph& g) {
  std::vector<const Edge*> out;
  for (const auto& e : g.edges)
    if (e.filled) out.push_back(&e);
  return out;
}

// Whether vertex v is the meeting point of a filled mark's edge and another edge.
bool joins_filled(const Graph& g, const std::string& v) {
  bool filled = false, other = false;
  for (const auto& e : g.edges)
    if (e.v0 == v || e.v1 == v) (e.filled ? filled : other) = true;
  return filled && other;
}

bool has_warning(const Scene& s, const std::string& part) {
  for (const auto& w : s.warnings)
    if (w.find(part) != std::string::npos) return true;
  return false;
}

// Connected components of the graph (dots included).
int components(const Graph& g) {
  std::map<std::string, std::string> parent;
  for (const auto& v : g.vertices) parent[v.id] = v.id;
  auto root = [&](std::string v) {
    while (parent[v] != v) v = parent[v];
    return v;
  };
  for (const auto& e : g.edges) parent[root(e.v0)] = root(e.v1);
  int n = 0;
  for (const auto& v : g.vertices) n += root(v.id) == v.id;
  return n;
}

// Paints a band of paper `width` px wide across the stroke through c along direction d.
cv::Mat cut_across(cv::Mat img, Vec2 c, Vec2 d, int width) {
  Vec2 a = c + perp(d) * 20, b = c - perp(d) * 20;
  cv::line(img, {int(std::lround(a.x)), int(std::lround(a.y))}, {int(std::lround(b.x)), int(std::lround(b.y))},
           cv::Scalar(255), width);
  return img;
}

}  // namespace

TEST_CASE("a T junction is one vertex of degree 3 where the strokes meet", "[graph]") {
  for (double w : {3.0, 6.0, 10.0}) {
    INFO("stroke width " << w);
    Scene s = skeleton_of(Sketch(200, 200).line({40, 60}, {160, 60}, w).line({100, 60}, {100, 160}, w).image());
    const Graph& g = *s.graph;
    REQUIRE(g.edges.size() == 3);
    REQUIRE(count_kind(g, "junction", 3) == 1);
    CHECK(count_kind(g, "end", 1) == 3);
    const Vertex* j = nullptr;
    for (const auto& v : g.vertices)
      if (v.kind == "junction") j = &v;
    CHECK(dist(j->p, {100, 60}) < 1.0);
    for (const auto& e : g.edges) {
      double bar = max_distance_to_segment(e.points, {40, 60}, {160, 60});
      double stem = max_distance_to_segment(e.points, {100, 60}, {100, 160});
      CHECK(std::min(bar, stem) < 1.0);
      CHECK((e.v0 == j->id || e.v1 == j->id));
      CHECK(max_spacing(e.points) <= 1.5 + 1e-9);
    }
  }
}

TEST_CASE("two crossing lines become two straight edges through the crossing", "[graph]") {
  for (double angle : {90.0, 40.0, 25.0}) {
    for (double w : {3.0, 8.0}) {
      INFO("angle " << angle << " width " << w);
      Vec2 c{100, 100}, d1 = from_angle(deg2rad(angle / 2)) * 70, d2 = from_angle(deg2rad(-angle / 2)) * 70;
      Scene s = skeleton_of(Sketch(200, 200).line(c - d1, c + d1, w).line(c - d2, c + d2, w).image());
      const Graph& g = *s.graph;
      REQUIRE(g.edges.size() == 2);
      CHECK(count_kind(g, "end", 1) == 4);
      CHECK(g.vertices.size() == 4);
      for (const auto& e : g.edges) {
        double first = max_distance_to_segment(e.points, c - d1, c + d1);
        double second = max_distance_to_segment(e.points, c - d2, c + d2);
        CHECK(std::min(first, second) < 1.0);
      }
    }
  }
}

TEST_CASE("a circle crossed by a line stays one closed circle and one line", "[graph]") {
  for (double w : {3.0, 5.0, 9.0}) {
    INFO("stroke width " << w);
    Vec2 c{100, 100};
    double r = 50;
    Scene s = skeleton_of(Sketch(200, 200).circle(c, r, w).line({20, 90}, {180, 110}, w).image());
    const Graph& g = *s.graph;
    REQUIRE(g.edges.size() == 2);
    const Edge* circle = g.edges[0].closed ? &g.edges[0] : &g.edges[1];
    const Edge* line = g.edges[0].closed ? &g.edges[1] : &g.edges[0];
    REQUIRE(circle->closed);
    CHECK_FALSE(line->closed);
    CHECK(circle->v0 == circle->v1);
    CHECK(g.vertex(circle->v0)->kind == "loop");
    CHECK(max_distance_to_circle(circle->points, c, r) < 1.0);
    CHECK(polyline_length(circle->points) == Approx(2 * kPi * r).epsilon(0.01));
    CHECK(max_distance_to_segment(line->points, {20, 90}, {180, 110}) < 1.0);
    CHECK(dist(line->points.front(), {20, 90}) < 1.5);
    CHECK(dist(line->points.back(), {180, 110}) < 1.5);
    // Fitted, the circle keeps its centre and radius: the crossing line does not drag it off.
    fit(s, FitOptions{});
    int circles = 0;
    for (const auto& p : *s.primitives)
      if (p.shape.type == PrimType::circle) {
        ++circles;
        CHECK(dist(p.shape.center, c) < 0.5);
        CHECK(std::abs(p.shape.radius - r) < 0.5);
      }
    CHECK(circles == 1);
    CHECK(s.primitives->size() == 2);
  }
}

TEST_CASE("a closed square is one loop", "[graph]") {
  std::vector<Vec2> corners = {{50, 50}, {150, 50}, {150, 150}, {50, 150}};
  Scene s = skeleton_of(Sketch(200, 200).polyline(corners, true, 6).image());
  const Graph& g = *s.graph;
  REQUIRE(g.edges.size() == 1);
  REQUIRE(g.vertices.size() == 1);
  CHECK(g.edges[0].closed);
  CHECK(g.edges[0].v0 == g.edges[0].v1);
  CHECK(g.vertices[0].kind == "loop");
  CHECK(g.vertices[0].degree == 2);
  double worst = 0;
  for (Vec2 p : g.edges[0].points) {
    double d = 1e9;
    for (int k = 0; k < 4; ++k) d = std::min(d, point_segment_distance(p, corners[k], corners[(k + 1) % 4]));
    worst = std::max(worst, d);
  }
  CHECK(worst < 1.0);
  CHECK(polyline_length(g.edges[0].points) == Approx(400).epsilon(0.02));
}

TEST_CASE("a spur shorter than a stroke width is pruned, a stroke is not", "[graph]") {
  const double w = 8;
  // A bump: a stub reaching 3 px beyond the bar's edge.
  Scene bump = skeleton_of(Sketch(200, 200).line({40, 100}, {160, 100}, w).line({100, 100}, {100, 103}, w).image());
  CHECK(bump.graph->edges.size() == 1);
  CHECK(count_kind(*bump.graph, "junction") == 0);
  CHECK(max_distance_to_segment(bump.graph->edges[0].points, {40, 100}, {160, 100}) < 2.0);
  // A short stroke: reaching 1.5 stroke widths beyond the bar's edge.
  Scene stub = skeleton_of(Sketch(200, 200).line({40, 100}, {160, 100}, w).line({100, 100}, {100, 116}, w).image());
  CHECK(stub.graph->edges.size() == 3);
  CHECK(count_kind(*stub.graph, "junction", 3) == 1);
}

TEST_CASE("a star of tangent arcs keeps its cusps", "[graph]") {
  // Four quarter circles meeting tangentially at the tips: thinning erases the spikes.
  const Vec2 c{100, 100};
  const double r = 50;
  for (double w : {4.0, 10.0}) {
    INFO("stroke width " << w);
    Sketch d(200, 200);
    d.arc({c.x + r, c.y - r}, r, 90, 180, w).arc({c.x - r, c.y - r}, r, 0, 90, w);
    d.arc({c.x - r, c.y + r}, r, 270, 360, w).arc({c.x + r, c.y + r}, r, 180, 270, w);
    Scene s = skeleton_of(d.image());
    REQUIRE(s.graph->edges.size() == 1);
    CHECK(s.graph->edges[0].closed);
    for (Vec2 tip : {Vec2{c.x, c.y - r}, Vec2{c.x + r, c.y}, Vec2{c.x, c.y + r}, Vec2{c.x - r, c.y}}) {
      double nearest = 1e9;
      for (Vec2 p : s.graph->edges[0].points) nearest = std::min(nearest, dist(p, tip));
      CHECK(nearest < 2.0);
    }
  }
}

TEST_CASE("a pencil skip across a stroke is rejoined into one stroke", "[graph]") {
  for (double w : {4.0, 5.0, 6.0}) {
    for (double angle : {0.0, 30.0}) {
      INFO("stroke width " << w << " angle " << angle);
      Vec2 c{100, 100}, d = from_angle(deg2rad(angle)) * 80;
      Scene s = skeleton_of(cut_across(Sketch(200, 200).line(c - d, c + d, w).image(), c, unit(d), 2));
      const Graph& g = *s.graph;
      REQUIRE(g.edges.size() == 1);
      CHECK(count_kind(g, "end", 1) == 2);
      CHECK(g.vertices.size() == 2);
      CHECK(max_distance_to_segment(g.edges[0].points, c - d, c + d) < 1.5);
      // Across the gap the stroke runs on straight.
      for (Vec2 p : g.edges[0].points)
        if (dist(p, c) < 10) CHECK(max_distance_to_segment({p}, c - d, c + d) < 1.0);
      CHECK(polyline_length(g.edges[0].points) == Approx(160).margin(2.5));
    }
  }
}

TEST_CASE("a circle with a pencil skip closes into one loop", "[graph]") {
  for (double w : {4.0, 6.0}) {
    INFO("stroke width " << w);
    const Vec2 c{100, 100};
    const double r = 50;
    Scene s = skeleton_of(cut_across(Sketch(200, 200).circle(c, r, w).image(), {c.x + r, c.y}, {0, 1}, 2));
    const Graph& g = *s.graph;
    REQUIRE(g.edges.size() == 1);
    CHECK(g.edges[0].closed);
    CHECK(max_distance_to_circle(g.edges[0].points, c, r) < 1.0);
  }
}

TEST_CASE("a corner drawn in two strokes with a gap at the corner is one stroke", "[graph]") {
  for (double w : {4.0, 6.0}) {
    for (double gap : {2.0, 3.0}) {
      INFO("stroke width " << w << " gap " << gap);
      // Both strokes stop short of the corner (60, 140), their caps `gap` apart.
      const double a = (w + gap) / std::sqrt(2.0);
      Scene both = skeleton_of(Sketch(200, 200).line({60, 40}, {60, 140 - a}, w).line({60 + a, 140}, {160, 140}, w).image());
      // One stroke reaches the corner, the other starts `gap` beyond its cap.
      Scene one = skeleton_of(Sketch(200, 200).line({60, 40}, {60, 140}, w).line({60 + w + gap, 140}, {160, 140}, w).image());
      for (const Scene* s : {&both, &one}) {
        const Graph& g = *s->graph;
        REQUIRE(g.edges.size() == 1);
        CHECK(count_kind(g, "end", 1) == 2);
        CHECK_FALSE(g.edges[0].closed);
        double worst = 0;
        for (Vec2 p : g.edges[0].points)
          worst = std::max(worst, std::min(point_segment_distance(p, {60, 40}, {60, 140}),
                                           point_segment_distance(p, {60, 140}, {160, 140})));
        CHECK(worst < 1.5);
      }
    }
  }
}

TEST_CASE("an end that stops short of a stroke is joined to it as a T", "[graph]") {
  const double w = 5;
  cv::Mat img = Sketch(200, 200).line({40, 60}, {160, 60}, w).line({100, 60 + w + 2}, {100, 160}, w).image();
  // Off by default (it saves no pen lift); the gap is 2 px of paper.
  CHECK(skeleton_of(img).graph->edges.size() == 2);
  SkeletonOptions opt;
  opt.overrides = {{"graph.gap_t_join_px", w + 2.5}};
  Scene s = skeleton_of(img, opt);
  const Graph& g = *s.graph;
  REQUIRE(g.edges.size() == 3);
  REQUIRE(count_kind(g, "junction", 3) == 1);
  for (const auto& v : g.vertices)
    if (v.kind == "junction") CHECK(dist(v.p, {100, 60}) < 1.0);
}

TEST_CASE("letters a stroke and a half apart stay separate", "[graph]") {
  for (double w : {3.0, 4.0, 6.0}) {
    INFO("stroke width " << w);
    const double apart = 2.5 * w;  // centre to centre: 1.5 w of paper between the inks
    // Two bars, end to end (a broken "l" would be joined at a closer gap) and side by side.
    Scene bars = skeleton_of(Sketch(200, 200).line({60, 20}, {60, 90}, w).line({60, 90 + apart}, {60, 180}, w).image());
    CHECK(components(*bars.graph) == 2);
    Scene side = skeleton_of(Sketch(200, 200).line({60, 40}, {60, 160}, w).line({60 + apart, 40}, {60 + apart, 160}, w).image());
    CHECK(components(*side.graph) == 2);
    // An "l" next to an "o", and a "c" whose ends point at the "l".
    const double r = 4 * w;
    Scene lo = skeleton_of(Sketch(200, 200).line({60, 40}, {60, 140}, w).circle({60 + apart + r, 120}, r, w).image());
    CHECK(components(*lo.graph) == 2);
    CHECK(lo.graph->edges.size() == 2);
    Scene cl = skeleton_of(Sketch(200, 200).arc({100, 100}, r, 40, 320, w).line({100 + r * std::cos(deg2rad(40)) + apart, 40},
                                                                                {100 + r * std::cos(deg2rad(40)) + apart, 160}, w).image());
    CHECK(components(*cl.graph) == 2);
    CHECK(count_kind(*cl.graph, "junction") == 0);
  }
}

TEST_CASE("a stroke drawn twice is one stroke", "[graph]") {
  // Two passes of one stroke, the second a little shorter at both ends: 1 px apart (fused),
  // 0.9 w apart (fused, anti-aliased), 1.3 w apart (a thin line of paper between them).
  for (double w : {4.0, 6.0}) {
    for (double offset : {1.0, 0.9 * w, 1.3 * w}) {
      for (double angle : {0.0, 20.0}) {
        INFO("stroke width " << w << " offset " << offset << " angle " << angle);
        Vec2 d = from_angle(deg2rad(angle)), n = perp(d), a = Vec2{100, 100} - d * 70, b = Vec2{100, 100} + d * 70;
        Scene s = skeleton_of(Sketch(200, 200).line(a, b, w).line(a + d * 2 + n * offset, b - d * 3 + n * offset, w).image());
        const Graph& g = *s.graph;
        REQUIRE(g.edges.size() == 1);
        CHECK_FALSE(g.edges[0].closed);
        CHECK(count_kind(g, "end", 1) == 2);
        CHECK(max_distance_to_segment(g.edges[0].points, a + n * (offset / 2), b + n * (offset / 2)) < 0.5 * offset + 1);
        CHECK(polyline_length(g.edges[0].points) > 130);
      }
    }
  }
}

TEST_CASE("fill_slivers fills enclosed thin paper only, wherever the ink lies", "[graph]") {
  // Two passes 8 px wide with a 2 px line of paper between them (rows 10-11), closed at both
  // ends: a sliver 60 px long. Placed at (ox, oy) on a 100 x 40 page; where ox or oy is 0 the
  // ink touches the page's edge and the sliver stays enclosed.
  auto passes = [](int ox, int oy, bool closed, int gap = 2) {
    cv::Mat b = cv::Mat::zeros(40, 100, CV_8U);
    b(cv::Rect(ox, oy, 70, 20)).setTo(1);
    b(cv::Rect(ox + (closed ? 5 : 0), oy + 10, closed ? 60 : 65, gap)).setTo(0);
    return b;
  };
  for (auto [ox, oy] : {std::pair{15, 10}, {0, 10}, {30, 0}, {0, 0}, {30, 20}}) {
    INFO("ink at " << ox << "," << oy);
    cv::Mat b = passes(ox, oy, true), expect = b.clone();
    expect(cv::Rect(ox, oy, 70, 20)).setTo(1);
    CHECK(graph::fill_slivers(b, 3, 8) == 1);
    CHECK(cv::countNonZero(b != expect) == 0);
  }
  // Open at one end: paper, not a sliver; too wide for max_width: stays.
  cv::Mat open = passes(15, 10, false), before = open.clone();
  CHECK(graph::fill_slivers(open, 3, 8) == 0);
  CHECK(cv::countNonZero(open != before) == 0);
  cv::Mat wide = passes(15, 10, true);
  CHECK(graph::fill_slivers(wide, 0.5, 8) == 0);
  // A gap of 6 rows is 5 px wide (its middle rows 3 px from ink): filled up to max_width 5, not
  // at 4.9, where a 5 x 5 square of paper fits in it.
  for (auto [max_width, filled] : {std::pair{5.0, 1}, {4.9, 0}}) {
    INFO("max_width " << max_width);
    cv::Mat six = passes(15, 10, true, 6);
    CHECK(graph::fill_slivers(six, max_width, 8) == filled);
  }
  // A round hole is not elongated; a page without ink has nothing to fill.
  cv::Mat ring = cv::Mat::zeros(60, 60, CV_8U);
  cv::circle(ring, {30, 30}, 12, 1, 6);
  CHECK(graph::fill_slivers(ring, 20, 1) == 0);
  cv::Mat empty = cv::Mat::zeros(30, 30, CV_8U);
  CHECK(graph::fill_slivers(empty, 3, 8) == 0);
}

TEST_CASE("a small round loop is not taken for a stroke drawn twice", "[graph]") {
  for (double w : {3.0, 5.0}) {
    INFO("stroke width " << w);
    Scene s = skeleton_of(Sketch(100, 100).circle({50, 50}, 1.2 * w, w).image());
    REQUIRE(s.graph->edges.size() == 1);
    CHECK(s.graph->edges[0].closed);
  }
}

TEST_CASE("a dot stays a dot", "[graph]") {
  Scene s = skeleton_of(Sketch(120, 120).dot({30.3, 40.6}, 7).line({60, 20}, {60, 100}, 5).image());
  const Graph& g = *s.graph;
  REQUIRE(count_kind(g, "dot") == 1);
  REQUIRE(g.edges.size() == 2);
  for (const auto& e : g.edges)
    if (e.points.size() == 1) {
      CHECK(dist(e.points[0], {30.3, 40.6}) < 0.5);
      CHECK(e.v0 == e.v1);
      CHECK(g.vertex(e.v0)->kind == "dot");
    }
}

TEST_CASE("an empty drawing is an empty graph with a warning", "[graph]") {
  Scene s = skeleton_of(cv::Mat(64, 48, CV_8U, cv::Scalar(255)));
  REQUIRE(s.graph);
  CHECK(s.graph->edges.empty());
  CHECK(s.graph->vertices.empty());
  CHECK(has_warning(s, "empty"));
  REQUIRE(s.source);
  CHECK(s.source->width == 48);
  CHECK(s.source->height == 64);
}

TEST_CASE("degenerate images go through", "[graph]") {
  Scene black = skeleton_of(cv::Mat(64, 64, CV_8U, cv::Scalar(0)));
  CHECK(has_warning(black, "uniformly dark"));
  CHECK_NOTHROW(skeleton_of(cv::Mat(1, 1, CV_8U, cv::Scalar(0))));
  CHECK_NOTHROW(skeleton_of(cv::Mat(1, 1, CV_8U, cv::Scalar(255))));
  CHECK_NOTHROW(skeleton_of(cv::Mat(1, 300, CV_8U, cv::Scalar(0))));
  cv::Mat noise(64, 64, CV_8U);
  cv::randu(noise, 0, 256);
  CHECK_NOTHROW(skeleton_of(noise));
  CHECK_THROWS_AS(skeleton_of(cv::Mat()), Error);
}

TEST_CASE("the same drawing gives the same scene", "[graph]") {
  cv::Mat img = Sketch(160, 160).circle({80, 80}, 40, 4).line({10, 20}, {150, 140}, 6).dot({20, 140}, 6).image();
  cv::Mat noisy = img.clone();
  std::mt19937 rng(3);
  for (int y = 0; y < noisy.rows; ++y)
    for (int x = 0; x < noisy.cols; ++x)
      noisy.at<uchar>(y, x) = cv::saturate_cast<uchar>(noisy.at<uchar>(y, x) * 0.8 + int(rng() % 20));
  for (const cv::Mat& m : {img, noisy}) {
    Scene a = skeleton_of(m), b = skeleton_of(m.clone());
    CHECK(dump_scene(a) == dump_scene(b));
  }
}

TEST_CASE("ids follow position and edges run from the lower vertex id", "[graph]") {
  Scene s = skeleton_of(Sketch(200, 200).line({150, 30}, {20, 170}, 4).line({30, 20}, {180, 20}, 4).image());
  const Graph& g = *s.graph;
  REQUIRE(g.vertices.size() == 4);
  for (size_t i = 0; i < g.vertices.size(); ++i) {
    CHECK(g.vertices[i].id == fmt::format("v_{:04d}", i + 1));
    if (i > 0) CHECK(g.vertices[i - 1].p.y <= g.vertices[i].p.y);
  }
  for (size_t i = 0; i < g.edges.size(); ++i) {
    CHECK(g.edges[i].id == fmt::format("e_{:04d}", i + 1));
    CHECK(g.edges[i].v0 < g.edges[i].v1);
    CHECK(dist(g.edges[i].points.front(), g.vertex(g.edges[i].v0)->p) < 1e-9);
    CHECK(g.edges[i].width_px == Approx(4).margin(0.5));
  }
}

TEST_CASE("every threshold is recorded with its provenance", "[graph]") {
  cv::Mat img = Sketch(100, 100).line({10, 50}, {90, 50}, 5).image();
  Scene s = skeleton_of(img);
  for (const char* key : {"skeleton.threshold", "skeleton.stroke_width_px", "skeleton.paper_level"})
    CHECK(s.config[key]["from"] == "image");
  for (const char* key : {"skeleton.min_speck_area_px", "skeleton.max_hole_area_px", "graph.spur_protrusion_px",
                          "graph.junction_merge_px", "graph.arm_window_px"})
    CHECK(s.config[key]["from"] == "stroke_width");
  CHECK(s.config["graph.crossing_max_turn_deg"]["from"] == "default");
  for (const char* key : {"graph.gap_join_px", "graph.gap_join_offset_px", "graph.double_stroke_px"})
    CHECK(s.config[key]["from"] == "stroke_width");
  CHECK(s.config["graph.gap_join_max_turn_deg"]["from"] == "default");
  for (const auto& [key, entry] : s.config.items()) CHECK_FALSE(entry["doc"].get<std::string>().empty());
  CHECK(s.source->stroke_width_px == Approx(5).margin(0.3));
  CHECK(config_value(s, "graph.spur_protrusion_px", 0) == Approx(0.5 * s.source->stroke_width_px).epsilon(1e-3));

  SkeletonOptions opt;
  opt.overrides = {{"skeleton.stroke_width_px", 10}};
  Scene u = skeleton_of(img, opt);
  CHECK(u.config["skeleton.stroke_width_px"]["from"] == "user");
  CHECK(u.source->stroke_width_px == 10);
  CHECK(config_value(u, "graph.spur_protrusion_px", 0) == Approx(5));
  // A key the stage does not declare is refused, naming it (it used to be ignored with a warning).
  opt.overrides = {{"no.such_key", 1}};
  try {
    skeleton_of(img, opt);
    FAIL("an unknown key was accepted");
  } catch (const Error& e) {
    CHECK(e.code() == Code::invalid_selection);
    CHECK(std::string(e.what()).find("no.such_key") != std::string::npos);
  }
}

TEST_CASE("the skeleton scene validates against the scene schema", "[graph]") {
  Scene s = skeleton_of(Sketch(120, 120).circle({60, 60}, 30, 4).line({10, 60}, {110, 60}, 4).dot({10, 10}, 5).image());
  s.source->sha256 = std::string(64, 'a');
  s.source->path = "drawing.png";
  CHECK(scene_schema().first_error(to_json(s)) == "");
}

TEST_CASE("graph invariants hold on random drawings", "[graph]") {
  std::mt19937 rng(11);
  std::uniform_real_distribution<double> u(0, 1);
  for (int round = 0; round < 40; ++round) {
    const int w = 64 + int(rng() % 240), h = 64 + int(rng() % 240);
    Sketch d(w, h, static_cast<uchar>(200 + rng() % 56), static_cast<uchar>(rng() % 100));
    for (int k = 1 + int(rng() % 6); k > 0; --k) {
      double width = 1.5 + u(rng) * 14;
      Vec2 a{u(rng) * w, u(rng) * h}, b{u(rng) * w, u(rng) * h};
      switch (rng() % 3) {
        case 0: d.line(a, b, width); break;
        case 1: d.circle(a, 3 + u(rng) * 60, width); break;
        default: d.dot(a, width);
      }
    }
    INFO("round " << round);
    Scene s = skeleton_of(d.image());
    const Graph& g = *s.graph;
    std::map<std::string, int> ends;
    for (const auto& e : g.edges) {
      ++ends[e.v0], ++ends[e.v1];
      REQUIRE(g.vertex(e.v0));
      REQUIRE(g.vertex(e.v1));
      CHECK(max_spacing(e.points) <= 1.5 + 1e-9);
      CHECK(dist(e.points.front(), g.vertex(e.v0)->p) < 1e-9);
      CHECK(dist(e.points.back(), g.vertex(e.v1)->p) < 1e-9);
      if (e.closed) CHECK(e.v0 == e.v1);
    }
    for (const auto& v : g.vertices) {
      CHECK(v.degree == ends[v.id]);
      if (v.kind == "end") CHECK(v.degree == 1);
      if (v.kind == "junction") CHECK((v.degree >= 3 || (v.degree == 2 && joins_filled(g, v.id))));
    }
    s.source->sha256 = std::string(64, 'a');
    CHECK(scene_schema().first_error(to_json(s)) == "");
  }
}

namespace {

// The farthest any of `ink` lies from the points of the filled edges: a pen w wide along them
// covers ink up to w/2 away (their points are at most 1.5 px apart).
double farthest_from_filled(const Graph& g, const std::vector<Vec2>& ink) {
  const std::vector<const Edge*> filled = filled_edges(g);
  double worst = 0;
  for (Vec2 q : ink) {
    double nearest = 1e9;
    for (const Edge* e : filled)
      for (Vec2 p : e->points) nearest = std::min(nearest, dist(p, q));
    worst = std::max(worst, nearest);
  }
  return worst;
}

// Pixel centres at least half a pixel inside the ink (0: paper).
std::vector<Vec2> ink_where(int width, int height, const std::function<double(Vec2)>& depth) {
  std::vector<Vec2> out;
  for (int y = 0; y < height; ++y)
    for (int x = 0; x < width; ++x)
      if (depth({double(x), double(y)}) >= 0.5) out.push_back({double(x), double(y)});
  return out;
}

}  // namespace

TEST_CASE("a filled disc is covered by rings a stroke width apart, flagged filled, the strokes as they were", "[graph][filled]") {
  const double w = 4, r = 4 * w;
  const Vec2 c{70, 70};
  Sketch d(240, 200);
  d.dot(c, 2 * r).line({130, 30}, {220, 30}, w).line({130, 100}, {220, 170}, w).line({30, 160}, {110, 160}, w);
  Scene s = skeleton_of(d.image());
  const Graph& g = *s.graph;
  REQUIRE(s.source->stroke_width_px == Approx(w).margin(0.3));
  auto marks = filled_edges(g);
  // Rings at r - w/2, r - 3w/2, ... down to the middle: four for a disc 8 w across.
  REQUIRE(marks.size() >= 3);
  CHECK(marks.size() <= 5);
  const Edge* rim = marks[0];
  for (const Edge* e : marks) {
    CHECK(max_spacing(e->points) <= 1.5 + 1e-9);
    for (Vec2 p : e->points) CHECK(dist(p, c) <= r - w / 2 + 1.0);  // the pen stays inside the disc
    if (dist(e->points[0], c) > dist(rim->points[0], c)) rim = e;
  }
  // The outermost runs half a stroke width inside the disc's edge: a pen of width w fills its rim.
  CHECK(rim->closed);
  CHECK(g.vertex(rim->v0)->kind == "loop");
  CHECK(max_distance_to_circle(rim->points, c, r - w / 2) < 1.0);
  // Together they reach all of the disc.
  CHECK(farthest_from_filled(g, ink_where(240, 200, [&](Vec2 q) { return r - dist(q, c); })) <= w / 2 + 1.0);
  // No spur is left inside the disc: its only vertices are the strokes' anchors.
  for (const auto& v : g.vertices)
    if (dist(v.p, c) < r + w) CHECK(std::any_of(marks.begin(), marks.end(), [&](const Edge* e) { return e->v0 == v.id; }));
  REQUIRE(g.edges.size() == 3 + marks.size());
  for (const auto& e : g.edges) {
    if (e.filled) continue;
    double worst = std::min({max_distance_to_segment(e.points, {130, 30}, {220, 30}),
                             max_distance_to_segment(e.points, {130, 100}, {220, 170}),
                             max_distance_to_segment(e.points, {30, 160}, {110, 160})});
    CHECK(worst < 1.5);
  }
  // The flag reaches the scene document, validates, and survives a round trip.
  s.source->sha256 = std::string(64, 'a');
  json j = to_json(s);
  CHECK(scene_schema().first_error(j) == "");
  size_t flagged = 0;
  for (const auto& e : j["graph"]["edges"]) flagged += e.value("filled", false);
  CHECK(flagged == marks.size());
  CHECK(filled_edges(*scene_from_json(j).graph).size() == marks.size());
  CHECK(config_value(s, "graph.filled_min_diameter_px", 0) == Approx(3 * s.source->stroke_width_px).epsilon(1e-3));
  // What was measured of the mark goes with each of its strokes, for ExplainThreshold: a disc 2r across.
  for (const Edge* e : marks) {
    REQUIRE(e->mark);
    CHECK(!e->mark->loop);
    CHECK(e->mark->drawn_as == "cover");
    CHECK(e->mark->diameter_px == Approx(2 * r).margin(1.5));
    CHECK(scene_from_json(j).graph->edge(e->id)->mark == e->mark);
  }
  // Primitives name the mark through their source edges.
  fit(s, FitOptions{});
  int on_mark = 0;
  for (const auto& p : *s.primitives) on_mark += p.edge == rim->id;
  CHECK(on_mark >= 1);
}

TEST_CASE("a small filled blob is covered, and a line touching it connects to its rim", "[graph][filled]") {
  const double w = 4, r = 1.75 * w;
  const Vec2 eye{80, 60};
  Scene s = skeleton_of(Sketch(200, 200).dot(eye, 2 * r).line({80, 60 + 1.5 * w}, {80, 170}, w)
                            .line({120, 40}, {180, 140}, w).image());
  const Graph& g = *s.graph;
  auto marks = filled_edges(g);
  REQUIRE(!marks.empty());
  CHECK(marks.size() <= 3);
  for (const Edge* e : marks) {
    REQUIRE(e->mark);
    CHECK(e->mark->drawn_as == "cover");
    CHECK(e->mark->diameter_px == Approx(2 * r).margin(1.5));
  }
  CHECK(farthest_from_filled(g, ink_where(200, 200, [&](Vec2 q) { return r - dist(q, eye); })) <= w / 2 + 1.0);
  // The line runs up to the blob's rim, half a width inside its edge, and ends at a vertex of it.
  const Edge* line = nullptr;
  for (const auto& e : g.edges)
    if (!e.filled && max_distance_to_segment(e.points, eye, {80, 170}) < 1.0) line = &e;
  REQUIRE(line);
  const Vertex* top = g.vertex(line->points.front().y < line->points.back().y ? line->v0 : line->v1);
  CHECK(dist(top->p, eye) == Approx(r - w / 2).margin(1.5));
  CHECK(top->degree == 3);
  for (const auto& v : g.vertices)
    if (dist(v.p, eye) < r + w && v.id != top->id) CHECK(v.kind != "end");  // no spur

  // Alone, the blob is one or more strokes of its own, flagged filled.
  Scene alone = skeleton_of(Sketch(200, 200).dot(eye, 2 * r).line({120, 40}, {180, 140}, w).image());
  auto m = filled_edges(*alone.graph);
  REQUIRE(!m.empty());
  for (const Edge* e : m) CHECK((alone.graph->vertex(e->v0)->kind == "loop" || alone.graph->vertex(e->v0)->kind == "dot"));
}

TEST_CASE("an elongated filled mark is covered along its length, a line meeting it joins it", "[graph][filled]") {
  const double w = 3, half = 1.75 * w;
  // An eyebrow gone over until it filled in: a bar 3.5 w wide, and a stroke meeting its middle from below.
  Scene s = skeleton_of(Sketch(200, 160).line({50, 50}, {150, 50}, 2 * half).line({100, 50}, {100, 140}, w)
                            .line({20, 120}, {80, 150}, w).line({120, 150}, {190, 100}, w).image());
  const Graph& g = *s.graph;
  REQUIRE(s.source->stroke_width_px == Approx(w).margin(0.3));
  auto marks = filled_edges(g);
  REQUIRE(!marks.empty());
  for (const Edge* e : marks) {
    REQUIRE(e->mark);
    CHECK(e->mark->drawn_as == "cover");
    CHECK(e->mark->diameter_px == Approx(2 * half).margin(1.5));
    for (Vec2 p : e->points) CHECK(std::abs(p.y - 50) <= half - w / 2 + 1.0);  // inside the bar by half the pen
  }
  // The bar's ink, round ends included, is within reach of its strokes.
  auto bar = [&](Vec2 q) { return half - dist(q, Vec2{std::clamp(q.x, 50.0, 150.0), 50}); };
  CHECK(farthest_from_filled(g, ink_where(200, 160, bar)) <= w / 2 + 1.0);
  // The stroke from below ends on the bar's outermost stroke, half a width inside its edge.
  const Edge* stem = nullptr;
  for (const auto& e : g.edges)
    if (!e.filled && max_distance_to_segment(e.points, {100, 50}, {100, 140}) < 1.0) stem = &e;
  REQUIRE(stem);
  const Vertex* top = g.vertex(stem->points.front().y < stem->points.back().y ? stem->v0 : stem->v1);
  CHECK(top->p.y == Approx(50 + half - w / 2).margin(1.0));
  CHECK(top->degree == 3);
  int ends_on_bar = 0;
  for (const auto& v : g.vertices)
    if (std::abs(v.p.y - 50) < 2 * w) ends_on_bar += v.kind == "end";
  CHECK(ends_on_bar == 0);  // no spurs
}

TEST_CASE("drawings without filled marks keep exactly the graph they had", "[graph][filled]") {
  SkeletonOptions off;
  off.overrides = {{"graph.filled_min_diameter_px", 1e9}, {"graph.filled_loop_diameter_px", 0}};
  for (const char* name : {"hanzi_u5165", "hanzi_u5f51", "hand_circle-pause_w10", "hershey_scripts_09_w6",
                           "feather_umbrella_w8", "lucide_milestone_w3"}) {
    INFO(name);
    std::ifstream in(std::string(SV_TEST_DATA) + "/" + name + ".png", std::ios::binary);
    std::stringstream bytes;
    bytes << in.rdbuf();
    cv::Mat gray = decode_png(bytes.str());
    REQUIRE_FALSE(gray.empty());
    Scene with = skeleton_of(gray), without = skeleton_of(gray, off);
    CHECK(filled_edges(*with.graph).empty());
    CHECK(with.graph->edges.size() == without.graph->edges.size());
    CHECK(to_json(with)["graph"].dump() == to_json(without)["graph"].dump());
  }
}

TEST_CASE("wide strokes on a large image are traced at reduced resolution, in the drawing's pixels", "[graph][scale]") {
  // 2400 x 2000 (4.8 megapixels), strokes 64 px wide: traced at 1/4 of the resolution.
  const double width = 64;
  cv::Mat img(2000, 2400, CV_8U, cv::Scalar(250));
  const int sh = 4, one = 1 << sh;
  auto at = [&](double x, double y) { return cv::Point(static_cast<int>(std::lround(x * one)), static_cast<int>(std::lround(y * one))); };
  cv::line(img, at(300, 400), at(2100, 400), cv::Scalar(20), static_cast<int>(width), cv::LINE_AA, sh);
  cv::circle(img, at(1200, 1250), static_cast<int>(500 * one), cv::Scalar(20), static_cast<int>(width), cv::LINE_AA, sh);

  Scene s = skeleton_of(img);
  CHECK(s.config["skeleton.trace_scale"]["value"] == 4);
  CHECK(s.config["skeleton.trace_scale"]["from"] == "image");
  CHECK(s.source->width == 2400);
  CHECK(s.source->height == 2000);
  // Values in px are the drawing's, derived by their rules from its stroke width.
  const double sw = s.source->stroke_width_px;
  CHECK(sw == Approx(width).epsilon(0.04));
  CHECK(config_value(s, "skeleton.stroke_width_px", 0) == sw);
  CHECK(config_value(s, "graph.gap_join_px", 0) == Approx(1.5 * sw + 2).epsilon(1e-4));
  CHECK(config_value(s, "skeleton.min_speck_area_px", 0) == Approx(0.3 * sw * sw).epsilon(1e-4));
  CHECK(config_value(s, "graph.point_spacing_px", 0) == 1.5);

  // The line and the circle, their centrelines within 1 px, their points at most 1.5 px apart.
  REQUIRE(s.graph->edges.size() == 2);
  for (const Edge& e : s.graph->edges) {
    CHECK(e.width_px == Approx(width).epsilon(0.05));
    for (size_t i = 1; i < e.points.size(); ++i) CHECK(norm(e.points[i] - e.points[i - 1]) <= 1.5 + 1e-9);
    if (e.closed) CHECK(max_distance_to_circle(e.points, {1200, 1250}, 500) < 1.0);
    else CHECK(max_distance_to_segment(e.points, {300, 400}, {2100, 400}) < 1.0);
  }

  // At full resolution (the user's trace_scale) the same graph, within a pixel.
  SkeletonOptions full;
  full.overrides = {{"skeleton.trace_scale", 1}, {"graph.dot_length_px", 10}};
  Scene f = skeleton_of(img, full);
  CHECK(f.config["skeleton.trace_scale"]["from"] == "user");
  CHECK(config_value(f, "graph.dot_length_px", 0) == 10);
  REQUIRE(f.graph->edges.size() == 2);
  CHECK(f.source->stroke_width_px == Approx(sw).epsilon(0.03));
  REQUIRE(f.graph->vertices.size() == s.graph->vertices.size());
  for (const Vertex& v : f.graph->vertices) {  // the line's ends (a loop's anchor may lie anywhere on it)
    if (v.kind == "loop") continue;
    double nearest = 1e9;
    for (const Vertex& u : s.graph->vertices) nearest = std::min(nearest, norm(v.p - u.p));
    CHECK(nearest < 1.5);
  }

  // A user's px value is the drawing's at any trace scale.
  SkeletonOptions dot;
  dot.overrides = {{"graph.dot_length_px", 10}};
  CHECK(config_value(skeleton_of(img, dot), "graph.dot_length_px", 0) == 10);
}

TEST_CASE("thin strokes and small images are traced at full resolution", "[graph][scale]") {
  cv::Mat img(2000, 2400, CV_8U, cv::Scalar(250));
  cv::line(img, {300, 400}, {2100, 400}, cv::Scalar(20), 6, cv::LINE_AA);
  CHECK(skeleton_of(img).config["skeleton.trace_scale"]["value"] == 1);
  Scene small = skeleton_of(Sketch(100, 100).line({10, 50}, {90, 50}, 5).image());
  CHECK(small.config["skeleton.trace_scale"]["value"] == 1);
}

// Threads of this process, from /proc (Linux).
static int thread_count() {
  std::ifstream status("/proc/self/status");
  for (std::string line; std::getline(status, line);)
    if (line.rfind("Threads:", 0) == 0) return std::stoi(line.substr(8));
  return -1;
}

TEST_CASE("tracing a drawing-sized image starts no thread", "[graph][threads]") {
  // Read by libpng, so no OpenCV loop has run before skeletonize in a process of this test alone
  // (CTest runs each test case in its own); where other tests ran first the count stays too.
  std::ifstream in(std::string(SV_TEST_DATA) + "/hanzi_u5efe.png", std::ios::binary);
  std::stringstream bytes;
  bytes << in.rdbuf();
  const cv::Mat gray = decode_png(bytes.str());
  REQUIRE(gray.total() <= kParallelPixels);
  const int before = thread_count();
  REQUIRE(before >= 1);
  Scene s = skeleton_of(gray);
  CHECK_FALSE(s.graph->edges.empty());
  CHECK(thread_count() == before);
}

TEST_CASE("a skeleton zigzagging around a pinhole is mended to the stroke's centreline", "[graph]") {
  // A stroke 5 px wide centred between two pixel rows; the skeleton left by a pruned loop
  // steps 1.5 px off it and back twice, with one centred point between the steps.
  cv::Mat coverage = 255 - Sketch(200, 60).line({10, 30.5}, {190, 30.5}, 5).image();
  graph::Trace t;
  for (int x = 20; x <= 180; ++x) t.push({static_cast<double>(x), x == 100 || x == 102 ? 32.0 : 31.0});
  graph::StrokeGraph g;
  const int a = g.add_node(t.pts.front()), b = g.add_node(t.pts.back());
  g.add_edge(graph::Edge{t, a, b});
  graph::centre_on_ink(g, coverage, 5, graph::CentreOptions{});
  // Every point away from the ends lies where the straight stretches were centred.
  const Polyline& pts = g.edges[0].trace.pts;
  const double centre = pts[40].y;
  CHECK(centre == Approx(30.5).margin(0.15));
  double worst = 0;
  for (Vec2 p : pts)
    if (p.x > 30 && p.x < 170) worst = std::max(worst, std::abs(p.y - centre));
  CHECK(worst < 0.05);
}

TEST_CASE("a T's junction lies on its bar, the stem upright or slanted", "[graph]") {
  // A stem meeting a straight bar, the ink softened as a photo's is: the bar's two arms,
  // measured where thinning has bent them towards the stem, would tilt the least-squares
  // point off the bar.
  for (double stem_deg : {90.0, 60.0, 45.0}) {
    const Vec2 at{150, 100};
    const Vec2 stem_end = at + Vec2{std::cos(deg2rad(stem_deg)), std::sin(deg2rad(stem_deg))} * 120;
    cv::Mat img = Sketch(300, 240).line({30, 100}, {270, 100}, 6).line(at, stem_end, 6).image();
    cv::GaussianBlur(img, img, {}, 1.2);
    Scene s = skeleton_of(img);
    INFO("stem at " << stem_deg << " degrees");
    double bar_y = 0;  // the bar's traced centreline, away from the junction
    for (const Edge& e : s.graph->edges)
      for (Vec2 q : e.points)
        if (std::abs(q.x - 60) < 0.8) bar_y = q.y;
    CHECK(bar_y == Approx(100).margin(0.2));
    int junctions = 0;
    for (const Vertex& v : s.graph->vertices) {
      if (v.degree != 3) continue;
      ++junctions;
      CHECK(std::abs(v.p.y - bar_y) < 0.35);  // 0.6-0.9 px off with the arms' own directions
      CHECK(std::abs(v.p.x - at.x) < 2.0);
    }
    CHECK(junctions == 1);
  }
}

TEST_CASE("an arc leaving a junction tangentially keeps its curve", "[graph]") {
  // A cylinder's outline: a line leaving an ellipse at its end, along its tangent. The ellipse's
  // upper arm shares its ink with the line for 75 px (its sections wider than the stroke, as a
  // pencil pressed harder or a blurred photo leave them): its own stroke is measured only from
  // there, and running it straight into the junction over all of that cut the curve's chord.
  const Vec2 c{200, 110}, at{70, 110};
  const double a = 130, b = 45, w = 5;
  std::vector<Vec2> outline;  // from the junction round and back, every half degree
  for (int i = 0; i <= 720; ++i)
    outline.push_back(c + Vec2{a * std::cos(deg2rad(180 + i / 2.0)), b * std::sin(deg2rad(180 + i / 2.0))});
  outline.front() = outline.back() = at;
  graph::StrokeGraph g;
  const int j = g.add_node(at), end = g.add_node({70, 260});
  graph::Edge ellipse;
  for (Vec2 q : outline) ellipse.trace.push(q, dist(at, q) < 75 && q.y < at.y ? 1.6 * w : w);
  ellipse.n0 = ellipse.n1 = j;
  g.add_edge(ellipse);
  graph::Edge line;
  for (int y = 110; y <= 260; ++y) line.trace.push({70, static_cast<double>(y)}, w);
  line.n0 = j, line.n1 = end;
  g.add_edge(line);
  graph::JunctionOptions opt;
  opt.clean_run = opt.arm_window = w;
  cv::Mat ink = Sketch(360, 300, 0, 255).line({70, 110}, {70, 260}, w).image();
  cv::ellipse(ink, cv::Point(200, 110), cv::Size(130, 45), 0, 0, 360, cv::Scalar(255), static_cast<int>(w));
  graph::resolve_junctions(g, ink, opt);
  double worst = 0;  // the ellipse edge's farthest point from the ellipse
  for (const graph::Edge& e : g.edges) {
    if (!e.alive || e.trace.pts.size() < 200) continue;
    for (double along = 0; along < e.trace.length(); along += 1) {
      const Vec2 q = graph::point_at_length(e.trace.pts, along);
      double d = 1e9;
      for (size_t i = 1; i < outline.size(); ++i) d = std::min(d, point_segment_distance(q, outline[i - 1], outline[i]));
      worst = std::max(worst, d);
    }
  }
  CHECK(worst < w / 2);
}

TEST_CASE("a thin ring's pencil skip closes though the last pixels of an end waver", "[graph]") {
  // A 3 px ring of radius 126 with a 5 px skip, its end on one side turning 20 degrees off over
  // its last 3 px: the ends lie 1.3 and 1.6 px to the side of each other's lines (on a
  // photographed pencil ring, 0.3 and 1.6 px).
  const Vec2 c{255.5, 255.5};
  const double r = 126, gap = 5.1 / r;
  graph::Trace t;
  for (double a = gap / 2; a <= 2 * kPi - gap / 2; a += 1 / r) t.push(c + from_angle(a) * r, 3);
  const Vec2 end = t.pts.back(), along = unit(end - t.pts[t.pts.size() - 2]);
  const Vec2 turned = from_angle(std::atan2(along.y, along.x) + deg2rad(20));
  for (int k = 1; k <= 3; ++k) t.pts[t.pts.size() - 1 - (3 - k)] = end - along * 3 + turned * k;
  auto ring = [&] {
    graph::StrokeGraph g;
    g.add_edge(graph::Edge{t, g.add_node(t.pts.front()), g.add_node(t.pts.back())});
    return g;
  };
  // The thin stroke's allowance, as the skeleton resolves it at 3 px.
  const Scene thin = skeleton_of(Sketch(200, 200).line({40, 100}, {160, 100}, 3).image());
  graph::GapOptions opt;
  opt.max_gap = config_value(thin, "graph.gap_join_px", 0);
  opt.max_offset = config_value(thin, "graph.gap_join_offset_px", 0);
  graph::StrokeGraph g = ring();
  graph::join_gaps(g, 3, opt);
  int loops = 0;
  for (const graph::Edge& e : g.edges) loops += e.alive && e.closed;
  CHECK(loops == 1);
  opt.max_offset = 1.5;  // the former allowance left it open
  graph::StrokeGraph open = ring();
  graph::join_gaps(open, 3, opt);
  for (const graph::Edge& e : open.edges) CHECK_FALSE((e.alive && e.closed));
}
