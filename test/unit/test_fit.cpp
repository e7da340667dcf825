#include <catch2/catch.hpp>
#include <fmt/format.h>
#include <cstdint>
#include <functional>
#include <set>

#include "core/error.hpp"
#include "core/scene.hpp"
#include "core/schema.hpp"
#include "fit/beautify.hpp"
#include "fit/chain.hpp"
#include "fit/fit.hpp"
#include "fit/moments.hpp"
#include "fit/primitive_fit.hpp"
#include "fit/robot_merge.hpp"
#include "fit/segment.hpp"
#include "graph/skeletonize.hpp"
#include "robot/simulate.hpp"
#include "route/route.hpp"
#include "skeleton_drawing.hpp"
#include "undrawn.hpp"

using namespace sv;

namespace {

// Deterministic noise in [-1, 1] (a hash, so results do not depend on the standard library).
double noise(uint64_t i) {
  uint64_t z = i * 0x9E3779B97F4A7C15ull + 0x632BE59BD9B4E019ull;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  z ^= z >> 31;
  return (z >> 11) * 0x1.0p-53 * 2 - 1;
}

// Points along a curve given by arc length s in [0, L], about 1 px apart, jittered by up to
// `amp` px in each coordinate.
Polyline trace(double L, const std::function<Vec2(double)>& at, double amp = 0.0,
               uint64_t seed = 1) {
  int n = std::max(1, static_cast<int>(std::ceil(L)));
  Polyline out;
  for (int i = 0; i <= n; ++i) {
    Vec2 p = at(L * i / n);
    out.push_back(
        {p.x + amp * noise(seed * 7919 + 2 * i), p.y + amp * noise(seed * 7919 + 2 * i + 1)});
  }
  return out;
}

Polyline segment(Vec2 a, Vec2 b, double amp = 0.0, uint64_t seed = 1) {
  return trace(
      dist(a, b), [&](double s) { return a + unit(b - a) * s; }, amp, seed);
}

// Concatenates polylines that share their joining point.
Polyline join(std::initializer_list<Polyline> parts) {
  Polyline out;
  for (const auto& p : parts)
    out.insert(out.end(), out.empty() ? p.begin() : p.begin() + 1, p.end());
  return out;
}

// The tests jitter points uniformly by up to 0.3 px: a trace noise of 0.3 / sqrt(3) px.
FitParams params(double stroke_width = 4, double noise = 0.3 / std::sqrt(3.0)) {
  return resolve_fit_params(stroke_width, noise, {});
}

double max_dist(const Shape& s, const Polyline& pts, int i0, int i1) {
  double worst = 0;
  int n = static_cast<int>(pts.size());
  for (int k = i0;; k = (k + 1) % n) {
    worst = std::max(worst, s.distance_to(pts[k]));
    if (k == i1) break;
  }
  return worst;
}

void require_continuous(const std::vector<FittedPiece>& pieces, bool closed) {
  for (size_t k = 1; k < pieces.size(); ++k) REQUIRE(pieces[k - 1].shape.p1 == pieces[k].shape.p0);
  if (closed) REQUIRE(pieces.back().shape.p1 == pieces.front().shape.p0);
}

}  // namespace

TEST_CASE("a straight noisy line becomes one line", "[fit]") {
  Polyline pts = segment({10, 20}, {210, 70}, 0.3);
  auto out = fit_polyline(pts, false, params());
  REQUIRE(out.size() == 1);
  CHECK(out[0].shape.type == PrimType::line);
  CHECK(dist(out[0].shape.p0, {10, 20}) < 0.5);
  CHECK(dist(out[0].shape.p1, {210, 70}) < 0.5);
  CHECK(out[0].max_px <= params().tolerance_px);
}

TEST_CASE("a sampled closed circle becomes one circle", "[fit]") {
  Vec2 c{150.3, 120.7};
  double r = 55.2;
  Polyline pts = trace(
      2 * kPi * r, [&](double s) { return c + from_angle(s / r) * r; }, 0.3);
  pts.back() = pts.front();
  auto out = fit_polyline(pts, true, params());
  REQUIRE(out.size() == 1);
  REQUIRE(out[0].shape.type == PrimType::circle);
  CHECK(dist(out[0].shape.center, c) < 0.3);
  CHECK(std::abs(out[0].shape.radius - r) < 0.3);
  CHECK(out[0].span0 == 0);
  CHECK(out[0].span1 == static_cast<int>(pts.size()) - 1);
}

TEST_CASE("an L-shaped polyline becomes two lines meeting at a sharp corner", "[fit]") {
  Vec2 a{10, 10}, corner{110, 10}, b{110, 80};
  Polyline pts = join({segment(a, corner, 0.3, 1), segment(corner, b, 0.3, 2)});
  auto out = fit_polyline(pts, false, params());
  REQUIRE(out.size() == 2);
  CHECK(out[0].shape.type == PrimType::line);
  CHECK(out[1].shape.type == PrimType::line);
  require_continuous(out, false);
  CHECK(dist(out[0].shape.p1, corner) < 0.5);
}

// A pencil stroke's corner as thinning traces it: the two legs joined by a short cut across
// the corner, `cut` px back from it along each leg.
Polyline cut_corner(Vec2 a, Vec2 corner, Vec2 b, double cut, uint64_t seed) {
  const Vec2 in = corner - unit(corner - a) * cut, out = corner + unit(b - corner) * cut;
  return join({segment(a, in, 0.3, seed), segment(in, out, 0.3, seed + 1), segment(out, b, 0.3, seed + 2)});
}

TEST_CASE("a corner the trace cuts across within half a stroke width is one sharp corner", "[fit]") {
  Vec2 a{10, 10}, corner{110, 10}, b{110, 80};
  // Stroke width 5: a cut 3 px back along each leg passes 2.1 px inside the corner.
  auto out = fit_polyline(cut_corner(a, corner, b, 3, 1), false, params(5));
  REQUIRE(out.size() == 2);
  require_continuous(out, false);
  CHECK(dist(out[0].shape.p1, corner) < 0.5);
  // Every piece's residual is still the truth about its points: the cut's points are off the
  // corner's legs, and say so.
  CHECK(out[0].max_px > params(5).tolerance_px);

  // A bevel 6 px back passes 4.2 px inside: drawn, not traced, so it stays.
  auto bevel = fit_polyline(cut_corner(a, corner, b, 6, 1), false, params(5));
  REQUIRE(bevel.size() == 3);
  CHECK(dist(bevel[1].shape.p0, corner - Vec2{6, 0}) < 0.5);

  // A square whose four corners are cut: four lines, the corners at the square's.
  Vec2 c[4] = {{20, 20}, {120, 20}, {120, 120}, {20, 120}};
  Polyline loop;
  for (int k = 0; k < 4; ++k) {
    const Vec2 from = (c[k] + c[(k + 3) % 4]) * 0.5, to = (c[k] + c[(k + 1) % 4]) * 0.5;
    Polyline part = cut_corner(from, c[k], to, 3, 10 * k + 1);
    loop.insert(loop.end(), loop.empty() ? part.begin() : part.begin() + 1, part.end());
  }
  loop.push_back(loop.front());
  auto square = fit_polyline(loop, true, params(5));
  REQUIRE(square.size() == 4);
  require_continuous(square, true);
  for (const auto& pc : square) {
    double nearest = INFINITY;
    for (Vec2 q : c) nearest = std::min(nearest, dist(pc.shape.p0, q));
    CHECK(nearest < 0.5);
  }
}

TEST_CASE("absorbing a corner's cut leaves a reversal and a wide bevel alone", "[fit]") {
  FitParams p = params(25);  // corner_cut_px 12.5
  auto line_piece = [](Vec2 a, Vec2 b, int i0, int i1) { return fitting::Piece{Shape::line(a, b), i0, i1}; };
  auto run = [&](std::vector<Vec2> corners, std::vector<int> at) {
    Polyline pts;
    std::vector<fitting::Piece> pieces;
    for (size_t k = 0; k + 1 < corners.size(); ++k) {
      Polyline part = segment(corners[k], corners[k + 1]);
      pts.insert(pts.end(), pts.empty() ? part.begin() : part.begin() + 1, part.end());
      pieces.push_back(line_piece(corners[k], corners[k + 1], at[k], static_cast<int>(pts.size()) - 1));
      at.push_back(static_cast<int>(pts.size()) - 1);
    }
    fitting::absorb_corner_cuts(pieces, pts, false, false, p);
    return pieces;
  };
  // A right-angle corner cut 4 px back: one corner at the legs' intersection.
  auto corner = run({{10, 10}, {106, 10}, {110, 14}, {110, 90}}, {0});
  REQUIRE(corner.size() == 2);
  CHECK(dist(corner[0].shape.p1, {110, 10}) < 1e-9);
  CHECK(corner[0].i1 == corner[1].i0);
  // A pencil's rounded tip: the corner traced across by a short quarter circle of 4 px.
  {
    const Vec2 centre{106, 14};
    Polyline pts = segment({10, 10}, {106, 10});
    const int leg = static_cast<int>(pts.size()) - 1;
    for (double t = 0.1; t < 1; t += 0.1) pts.push_back(centre + from_angle(kPi * (t / 2 - 0.5)) * 4.0);
    const int tip = static_cast<int>(pts.size());
    Polyline down = segment({110, 14}, {110, 90});
    pts.insert(pts.end(), down.begin(), down.end());
    std::vector<fitting::Piece> pieces{line_piece({10, 10}, {106, 10}, 0, leg),
                                       {Shape::arc({106, 10}, {110, 14}, std::tan(kPi / 8)), leg, tip},
                                       line_piece({110, 14}, {110, 90}, tip, static_cast<int>(pts.size()) - 1)};
    REQUIRE(pieces[1].shape.at(0.5).x > 108);  // bulging towards the corner
    fitting::absorb_corner_cuts(pieces, pts, false, false, p);
    REQUIRE(pieces.size() == 2);
    CHECK(dist(pieces[0].shape.p1, {110, 10}) < 1e-9);
  }
  // A brush hook: the trace runs on and comes back at a slant. The legs meet 4 px beyond
  // the tip, within half a stroke width, but a turn of 166 degrees is a reversal: its tip is
  // where the trace ends.
  auto hook = run({{10, 50}, {150, 50}, {156, 51}, {146, 53.5}, {120, 60}}, {0});
  CHECK(hook.size() == 4);
  // A bevel whose points pass farther from the corner than half a stroke width stays.
  auto bevel = run({{10, 10}, {90, 10}, {110, 30}, {110, 120}}, {0});
  CHECK(bevel.size() == 3);
}

TEST_CASE("a square loop becomes four lines in a closed continuous chain", "[fit]") {
  Vec2 c[4] = {{20, 20}, {120, 20}, {120, 120}, {20, 120}};
  Polyline pts = join({segment(c[0], c[1], 0.3, 1), segment(c[1], c[2], 0.3, 2),
                       segment(c[2], c[3], 0.3, 3), segment(c[3], c[0], 0.3, 4)});
  pts.back() = pts.front();
  auto out = fit_polyline(pts, true, params());
  REQUIRE(out.size() == 4);
  require_continuous(out, true);
  for (const auto& pc : out) {
    CHECK(pc.shape.type == PrimType::line);
    double nearest = INFINITY;
    for (Vec2 q : c) nearest = std::min(nearest, dist(pc.shape.p0, q));
    CHECK(nearest < 0.5);
  }
}

TEST_CASE("a half circle becomes one arc turning the right way", "[fit]") {
  Vec2 c{100, 100};
  double r = 40;
  // Angle increasing from 0 to pi: counter-clockwise in the y-down frame, through (100, 140).
  Polyline pts = trace(
      kPi * r, [&](double s) { return c + from_angle(s / r) * r; }, 0.3);
  auto out = fit_polyline(pts, false, params());
  REQUIRE(out.size() == 1);
  const Shape& arc = out[0].shape;
  REQUIRE(arc.type == PrimType::arc);
  CHECK(arc.bulge > 0);
  CHECK(dist(arc.at(0.5), {100, 140}) < 0.3);
  // The scorer's midpoint formula: m - bulge * L/2 * n, n the chord's left normal.
  Vec2 v = arc.p1 - arc.p0;
  Vec2 mid = (arc.p0 + arc.p1) * 0.5 - perp(v) / norm(v) * (arc.bulge * 0.5 * norm(v));
  CHECK(dist(mid, {100, 140}) < 0.3);
}

TEST_CASE("a three-turn Archimedean spiral stays a spiral of arcs", "[fit]") {
  Vec2 c{256, 256};
  double a = 12, b = 14 / (2 * kPi);  // r = a + b theta: 14 px between turns
  Polyline pts;
  for (double t = 0; t <= 6 * kPi; t += 1.0 / (a + b * t))
    pts.push_back(c + from_angle(t) * (a + b * t));
  FitParams p = params();
  auto out = fit_polyline(pts, false, p);
  CHECK(out.size() >= 6);
  require_continuous(out, false);
  double worst = 0;
  for (const auto& pc : out) {
    CHECK(pc.shape.type == PrimType::arc);
    CHECK(std::abs(pc.shape.sweep_rad()) <= deg2rad(p.max_sweep_deg));
    worst = std::max(worst, max_dist(pc.shape, pts, pc.span0, pc.span1));
  }
  CHECK(worst <= p.tolerance_px);
  CHECK(dist(out.front().shape.p0, pts.front()) <= p.tolerance_px);
  CHECK(dist(out.back().shape.p1, pts.back()) <= p.tolerance_px);
}

TEST_CASE("a gentle wobble on a line stays one line", "[fit]") {
  FitParams p = params();
  double amp = 0.6 * p.tolerance_px;
  Polyline pts = trace(300, [&](double s) { return Vec2{20 + s, 100 + amp * std::sin(s / 15)}; });
  auto out = fit_polyline(pts, false, p);
  REQUIRE(out.size() == 1);
  CHECK(out[0].shape.type == PrimType::line);
}

TEST_CASE("an S-curve becomes two arcs bending opposite ways", "[fit]") {
  double r = 30;
  // Over the top of a circle about (30, 0), then under a circle about (90, 0).
  Polyline first = trace(
      kPi * r,
      [&](double s) {
        return Vec2{30, 0} + from_angle(kPi + s / r) * r;
      },
      0.3, 1);
  Polyline second = trace(
      kPi * r,
      [&](double s) {
        return Vec2{90, 0} + from_angle(kPi - s / r) * r;
      },
      0.3, 2);
  auto out = fit_polyline(join({first, second}), false, params());
  REQUIRE(out.size() == 2);
  REQUIRE(out[0].shape.type == PrimType::arc);
  REQUIRE(out[1].shape.type == PrimType::arc);
  CHECK(out[0].shape.bulge * out[1].shape.bulge < 0);
  CHECK(dist(out[0].shape.p1, {60, 0}) < 1.0);
}

TEST_CASE("a rounded rectangle is a closed chain of lines and arcs, not a circle", "[fit]") {
  // 160 x 100 with corners of radius 20, starting mid-way along the top side.
  auto at = [](double s) -> Vec2 {
    const double w = 120, h = 60, r = 20, q = kPi * r / 2;
    const double lengths[9] = {w / 2, q, h, q, w, q, h, q, w / 2};
    const Vec2 starts[9] = {{100, 20}, {}, {180, 40}, {}, {160, 120}, {}, {20, 100}, {}, {40, 20}};
    const Vec2 dirs[9] = {{1, 0}, {}, {0, 1}, {}, {-1, 0}, {}, {0, -1}, {}, {1, 0}};
    const Vec2 centres[9] = {{}, {160, 40}, {}, {160, 100}, {}, {40, 100}, {}, {40, 40}, {}};
    const double a0[9] = {0, -kPi / 2, 0, 0, 0, kPi / 2, 0, kPi, 0};
    for (int k = 0; k < 9; ++k) {
      if (s <= lengths[k] || k == 8) {
        if (k % 2 == 0) return starts[k] + dirs[k] * s;
        return centres[k] + from_angle(a0[k] + s / r) * r;
      }
      s -= lengths[k];
    }
    return {};
  };
  double perimeter = 2 * 120 + 2 * 60 + 2 * kPi * 20;
  Polyline pts = trace(perimeter, at, 0.3);
  pts.back() = pts.front();
  auto out = fit_polyline(pts, true, params());
  REQUIRE(out.size() == 8);
  require_continuous(out, true);
  int arcs = 0;
  for (const auto& pc : out) arcs += pc.shape.type == PrimType::arc;
  CHECK(arcs == 4);
}

TEST_CASE("pieces cover their edge with shared breakpoints and honest residuals", "[fit]") {
  Polyline pts = join({segment({10, 10}, {110, 10}, 0.3, 1),
                       trace(
                           kPi * 30,
                           [](double s) {
                             return Vec2{110, 40} + from_angle(-kPi / 2 + s / 30) * 30;
                           },
                           0.3, 2),
                       segment({110, 70}, {10, 90}, 0.3, 3)});
  auto out = fit_polyline(pts, false, params());
  REQUIRE(out.size() >= 3);
  CHECK(out.front().span0 == 0);
  CHECK(out.back().span1 == static_cast<int>(pts.size()) - 1);
  for (size_t k = 1; k < out.size(); ++k) CHECK(out[k].span0 == out[k - 1].span1);
  for (const auto& pc : out) {
    double sum = 0, worst = 0;
    for (int i = pc.span0; i <= pc.span1; ++i) {
      double d = pc.shape.distance_to(pts[i]);
      sum += d * d;
      worst = std::max(worst, d);
    }
    CHECK(pc.max_px == Approx(worst).margin(1e-9));
    CHECK(pc.rms_px == Approx(std::sqrt(sum / (pc.span1 - pc.span0 + 1))).margin(1e-9));
    CHECK(pc.max_px <= params().tolerance_px);
  }
}

TEST_CASE("a closed chain's spans cover every point once around", "[fit]") {
  Vec2 c[3] = {{50, 50}, {150, 60}, {90, 140}};
  Polyline pts =
      join({segment(c[0], c[1], 0.3, 1), segment(c[1], c[2], 0.3, 2), segment(c[2], c[0], 0.3, 3)});
  // With the start repeated at the end (index `last` is index 0 again), and without.
  bool repeated = GENERATE(true, false);
  if (repeated)
    pts.back() = pts.front();
  else
    pts.pop_back();
  const int cycle = static_cast<int>(pts.size()) - (repeated ? 1 : 0);
  auto out = fit_polyline(pts, true, params());
  REQUIRE(out.size() == 3);
  require_continuous(out, true);
  int covered = 0;
  for (size_t k = 0; k < out.size(); ++k) {
    const auto& next = out[(k + 1) % out.size()];
    CHECK((out[k].span1 % cycle) == (next.span0 % cycle));
    covered += ((out[k].span1 - out[k].span0) % cycle + cycle) % cycle;
    double worst = 0;
    for (int i = out[k].span0; i != out[k].span1; i = (i + 1) % cycle)
      worst = std::max(worst, out[k].shape.distance_to(pts[i]));
    CHECK(out[k].max_px >= worst - 1e-9);
  }
  CHECK(covered == cycle);
}

TEST_CASE("trace noise is measured about the neighbours' chords", "[fit]") {
  Polyline clean = trace(200, [](double s) { return Vec2{10 + s, 20 + 0.3 * s}; });
  Polyline arc = trace(100, [](double s) { return Vec2{100, 100} + from_angle(s / 40) * 40; });
  CHECK(trace_noise_px({&clean, &arc}) < 0.02);
  Polyline jittered = segment({10, 20}, {400, 140}, 0.3);
  CHECK(trace_noise_px({&jittered}) == Approx(0.3 / std::sqrt(3.0)).epsilon(0.25));
  CHECK(trace_noise_px({}) == 0);
}

TEST_CASE("span residuals do not depend on the spacing the points are stored at", "[fit]") {
  // A jittered diagonal pixel chain: steps of about 1.41 px, as the graph stores them at 1.5 px;
  // at 1 px each step is split in two.
  Polyline sparse;
  for (int i = 0; i <= 60; ++i) sparse.push_back(Vec2{10.0 + i, 20.0 + i + 0.3 * noise(i)});
  const Polyline dense = densify(sparse, 1.0);
  REQUIRE(dense.size() == 2 * sparse.size() - 1);
  const fitting::SpanMoments ms(sparse), md(dense);
  for (auto [i, j] : {std::pair{0, 60}, {3, 17}, {20, 22}, {59, 60}}) {
    INFO(i << ".." << j);
    CHECK(ms.samples(i, j) == md.samples(2 * i, 2 * j));
    CHECK(ms.samples(i, j) == 2 * (j - i) + 1);
    CHECK(ms.line_sse(i, j) == md.line_sse(2 * i, 2 * j));
    CHECK(ms.circle_sse(i, j) == md.circle_sse(2 * i, 2 * j));
  }
}

TEST_CASE("the tolerance follows the stroke width: a quarter of it up to 1 px, a tenth of a thick one",
          "[fit]") {
  CHECK(resolve_fit_params(2.0, 0, {}).tolerance_px == Approx(0.5));
  CHECK(resolve_fit_params(8.0, 0, {}).tolerance_px == Approx(1.0));
  CHECK(resolve_fit_params(12.0, 0, {}).tolerance_px == Approx(1.2));
  CHECK(resolve_fit_params(30.0, 0, {}).tolerance_px == Approx(3.0));
  // Trace noise adds its allowance, capped.
  CHECK(resolve_fit_params(8.0, 0.1, {}).tolerance_px == Approx(1.15));
  CHECK(resolve_fit_params(8.0, 5.0, {}).tolerance_px == Approx(1.5));
  // --fast merges within half the stroke width, never below the fit's own tolerance.
  for (double sw : {1.0, 8.0, 30.0}) {
    FitParams fast = resolve_fit_params(sw, 0, {fast_overrides()});
    CHECK(fast.tolerance_px == resolve_fit_params(sw, 0, {}).tolerance_px);
    CHECK(fast.merge_tolerance_px == Approx(std::max(sw / 2, fast.tolerance_px)));
  }
  CHECK(resolve_fit_params(8.0, 0, {}).merge_tolerance_px == resolve_fit_params(8.0, 0, {}).tolerance_px);
  CHECK(resolve_fit_params(0, 0, {{{"fit.tolerance_px", 0.6}}}).merge_tolerance_px == 0.6);
}

TEST_CASE("max_distance stops at the first distance beyond its stop", "[fit]") {
  const Shape line = Shape::line({0, 0}, {10, 0});
  const std::vector<Vec2> pts{{1, 0.5}, {2, 3}, {3, 1}, {4, 5}};
  CHECK(fitting::max_distance(line, pts) == Approx(5));
  CHECK(fitting::max_distance(line, pts, 2) == Approx(3));  // the first beyond 2, not the largest
  CHECK(fitting::max_distance(line, pts, 5) == Approx(5));  // none beyond: the largest
  const std::vector<Vec2> around{{0, -1.2}, {0, -2}, {0, -4}};
  CHECK(fitting::max_distance(Shape::circle({0, 0}, 1), around, 0.5) == Approx(1));
  CHECK(fitting::max_distance(Shape::circle({0, 0}, 1), around) == Approx(3));
}

TEST_CASE("a dot becomes a short line centred on it", "[fit]") {
  FitParams p = params();
  auto out = fit_polyline({{40.2, 30.1}}, false, p);
  REQUIRE(out.size() == 1);
  CHECK(out[0].shape.type == PrimType::line);
  CHECK(out[0].shape.length() == Approx(p.dot_length_px));
  CHECK(dist((out[0].shape.p0 + out[0].shape.p1) * 0.5, {40.2, 30.1}) < 1e-9);
}

namespace {

Scene two_stroke_scene() {
  Scene s;
  s.source = Source{"t.png", std::string(64, '0'), 200, 200, 4};
  Graph g;
  // Two strokes meeting at a junction v_0002 (a corner); a third stroke is a loop.
  g.vertices = {{"v_0001", {10, 10}, 1, "end"},
                {"v_0002", {100, 10}, 2, "junction"},
                {"v_0003", {100, 90}, 1, "end"},
                {"v_0004", {150, 150}, 2, "loop"}};
  Polyline a = segment({10, 10}, {100, 10}, 0.3, 1), b = segment({100, 10}, {100, 90}, 0.3, 2);
  Polyline loop = trace(
      2 * kPi * 20,
      [](double t) {
        return Vec2{130, 150} + from_angle(t / 20) * 20;
      },
      0.3, 3);
  loop.back() = loop.front();
  g.edges = {{"e_0001", "v_0001", "v_0002", a, false, 4},
             {"e_0002", "v_0002", "v_0003", b, false, 4},
             {"e_0003", "v_0004", "v_0004", loop, true, 4}};
  s.graph = g;
  return s;
}

}  // namespace

TEST_CASE("fit fills the scene's primitives and records its thresholds", "[fit]") {
  Scene s = two_stroke_scene();
  fit(s, {});
  REQUIRE(s.primitives);
  const auto& prims = *s.primitives;
  REQUIRE(prims.size() == 3);
  CHECK(prims[0].id == "p_0001");
  CHECK(prims[2].id == "p_0003");
  CHECK(prims[0].edge == "e_0001");
  CHECK(prims[2].edge == "e_0003");
  CHECK(prims[2].shape.type == PrimType::circle);
  // Strokes meeting at a junction end exactly at the vertex.
  CHECK(prims[0].shape.p1 == Vec2{100, 10});
  CHECK(prims[1].shape.p0 == Vec2{100, 10});
  CHECK(s.relations.is_array());
  double noise = s.config["fit.trace_noise_px"]["value"].get<double>();
  CHECK(noise == Approx(0.3 / std::sqrt(3.0)).epsilon(0.25));
  CHECK(s.config["fit.trace_noise_px"]["from"] == "image");
  CHECK(s.config["fit.tolerance_px"]["value"].get<double>() ==
        Approx(1.0 + 1.5 * noise).margin(1e-4));
  CHECK(s.config["fit.tolerance_px"]["from"] == "stroke_width");
  CHECK(s.config["fit.max_sweep_deg"]["from"] == "default");
  for (const auto& [key, entry] : s.config.items()) {
    CHECK(!entry["doc"].get<std::string>().empty());
    CHECK(key.rfind("fit.", 0) == 0);
  }
}

TEST_CASE("fit options override thresholds and unknown ones are refused", "[fit]") {
  Scene s = two_stroke_scene();
  FitOptions opt;
  opt.overrides["fit.tolerance_px"] = 0.8;
  fit(s, opt);
  CHECK(s.config["fit.tolerance_px"]["value"].get<double>() == Approx(0.8));
  CHECK(s.config["fit.tolerance_px"]["from"] == "user");
  FitOptions bad;
  bad.overrides["fit.no_such_thing"] = 1;
  try {
    fit(s, bad);
    FAIL("an unknown option was accepted");
  } catch (const Error& e) {
    CHECK(e.code() == Code::invalid_selection);
  }
  Scene empty;
  CHECK_THROWS_AS(fit(empty, {}), Error);
}

TEST_CASE("fit is deterministic", "[fit]") {
  Scene a = two_stroke_scene(), b = two_stroke_scene();
  fit(a, {});
  fit(b, {});
  CHECK(canonical_bytes(a) == canonical_bytes(b));
  CHECK(scene_schema().first_error(to_json(a)).empty());
}

TEST_CASE("degenerate and random polylines give finite continuous chains", "[fit]") {
  FitParams p = params(3);
  std::vector<std::pair<Polyline, bool>> cases = {
      {{{5, 5}, {5, 5}, {5, 5}}, false},            // one point, repeated
      {{{5, 5}, {5, 5}, {5, 5}, {5, 5}}, true},     // a closed "loop" of one point
      {{{0, 0}, {30, 0}, {0, 0}}, false},           // out and back
      {{{0, 0}, {30, 0}, {0, 0}}, true},            // the same, closed
      {{{0, 0}, {10, 0}, {10, 10}, {0, 0}}, true},  // a sparse triangle
      {{{0, 0}, {0.4, 0.1}}, false},                // shorter than a dot
      {{{0, 0}, {1, 0}, {1, 0}, {1, 0}, {2, 0}, {3, 0}, {3, 0}}, false},  // repeated points
  };
  // Random walks with turns of every size, open and closed.
  for (uint64_t seed = 1; seed <= 40; ++seed) {
    Polyline w{{100, 100}};
    double heading = 0;
    int n = 2 + static_cast<int>((noise(seed) + 1) * 150);
    for (int i = 0; i < n; ++i) {
      heading += noise(seed * 1000 + i) * (i % 17 == 0 ? 2.5 : 0.15);
      w.push_back(w.back() + from_angle(heading) +
                  Vec2{noise(seed * 3000 + i), noise(seed * 5000 + i)} * 0.3);
    }
    bool closed = seed % 2 == 0;
    if (closed) w.push_back(w.front());
    cases.push_back({w, closed});
  }
  for (const auto& [pts, closed] : cases) {
    auto out = fit_polyline(pts, closed, p);
    REQUIRE(!out.empty());
    const int last = static_cast<int>(pts.size()) - 1;
    for (const auto& pc : out) {
      for (double v : {pc.shape.p0.x, pc.shape.p0.y, pc.shape.p1.x, pc.shape.p1.y, pc.shape.bulge,
                       pc.rms_px, pc.max_px})
        REQUIRE(std::isfinite(v));
      REQUIRE(pc.span0 >= 0);
      REQUIRE(pc.span1 <= last);
      if (pc.shape.type == PrimType::arc)
        REQUIRE(std::abs(pc.shape.sweep_rad()) <= deg2rad(p.max_sweep_deg) + 1e-9);
      CHECK(pc.max_px <= p.tolerance_px + 1e-9);
    }
    if (out.size() > 1) require_continuous(out, closed);
  }
}

TEST_CASE("a loop hanging from a junction starts and ends at the junction", "[fit]") {
  Vec2 c[4] = {{20, 20}, {120, 20}, {120, 120}, {20, 120}};
  Vec2 junction{70, 20};  // mid-way along the top side
  Polyline pts = join({segment(junction, c[1], 0.3, 1), segment(c[1], c[2], 0.3, 2),
                       segment(c[2], c[3], 0.3, 3), segment(c[3], c[0], 0.3, 4),
                       segment(c[0], junction, 0.3, 5)});
  pts.back() = pts.front();
  ChainEnds ends;
  ends.start = junction;
  ends.pin_closed_start = true;
  auto out = fit_polyline(pts, true, params(), ends);
  REQUIRE(out.size() == 5);
  require_continuous(out, true);
  CHECK(out.front().shape.p0 == junction);
  CHECK(out.front().span0 == 0);
  CHECK(out.back().span1 == static_cast<int>(pts.size()) - 1);
}

namespace {

Scene scene_of(std::vector<std::pair<Polyline, bool>> strokes, double stroke_width = 4) {
  Scene s;
  s.source = Source{"t.png", std::string(64, '0'), 400, 400, stroke_width};
  Graph g;
  for (auto& [pts, closed] : strokes) {
    std::string id = std::to_string(g.edges.size() + 1);
    g.vertices.push_back({"v_a" + id, pts.front(), closed ? 2 : 1, closed ? "loop" : "end"});
    g.vertices.push_back({"v_b" + id, pts.back(), 1, "end"});
    g.edges.push_back(
        {"e_" + id, "v_a" + id, closed ? "v_a" + id : "v_b" + id, pts, closed, stroke_width});
  }
  s.graph = g;
  return s;
}

std::vector<std::string> relation_ids(const Scene& s, const std::string& kind) {
  for (const auto& r : s.relations)
    if (r["kind"] == kind) return r["primitives"].get<std::vector<std::string>>();
  return {};
}

}  // namespace

TEST_CASE("beautify makes near-parallel and near-perpendicular lines exact", "[fit][beautify]") {
  // Two strokes 0.4 degrees off parallel, a third 0.5 degrees off perpendicular.
  Scene s = scene_of({{segment({20, 50}, {220, 51.4}, 0.2, 1), false},
                      {segment({20, 150}, {220, 150}, 0.2, 2), false},
                      {segment({300, 20}, {301.5, 200}, 0.2, 3), false}});
  fit(s, {});
  const auto& prims = *s.primitives;
  REQUIRE(prims.size() == 3);
  auto dir = [&](int i) { return unit(prims[i].shape.p1 - prims[i].shape.p0); };
  CHECK(std::abs(cross(dir(0), dir(1))) < 1e-4);
  CHECK(std::abs(dot(dir(0), dir(2))) < 1e-4);
  CHECK(relation_ids(s, "parallel") == std::vector<std::string>{"p_0001", "p_0002"});
  CHECK(relation_ids(s, "perpendicular").size() == 2);
  for (const auto& pr : prims) CHECK(pr.fit_max_px <= config_value(s, "fit.tolerance_px", 0));
  for (const auto& r : s.relations) CHECK(r.contains("residual_deg"));
}

TEST_CASE("beautify equalizes near radii, joins near centres and near free ends",
          "[fit][beautify]") {
  auto circle = [](Vec2 c, double r, uint64_t seed) {
    Polyline pts = trace(
        2 * kPi * r, [&](double t) { return c + from_angle(t / r) * r; }, 0.2, seed);
    pts.back() = pts.front();
    return pts;
  };
  Scene s = scene_of({{circle({100, 100}, 30, 1), true},
                      {circle({100.4, 100.2}, 20, 2), true},
                      {circle({250, 100}, 30.6, 3), true},
                      {segment({50, 250}, {150, 250}, 0.2, 4), false},
                      {segment({150.5, 250.4}, {150.5, 350}, 0.2, 5), false}});
  fit(s, {});
  const auto& prims = *s.primitives;
  REQUIRE(prims.size() == 5);
  CHECK(prims[0].shape.radius == Approx(prims[2].shape.radius).margin(1e-3));
  CHECK(dist(prims[0].shape.center, prims[1].shape.center) < 1e-3);
  CHECK(dist(prims[3].shape.p1, prims[4].shape.p0) < 1e-9);
  CHECK(relation_ids(s, "equal_radius") == std::vector<std::string>{"p_0003", "p_0001"});
  CHECK(relation_ids(s, "concentric").size() == 2);
  CHECK(relation_ids(s, "coincident") == std::vector<std::string>{"p_0004", "p_0005"});
  for (const auto& pr : prims) CHECK(pr.fit_max_px <= config_value(s, "fit.tolerance_px", 0));
  FitOptions off;
  off.overrides["fit.beautify"] = 0;
  fit(s, off);
  CHECK(s.relations.empty());
}

TEST_CASE("beautify refuses a relation that would leave a primitive's tolerance",
          "[fit][beautify]") {
  // 2.5 degrees apart over 200 px: parallel would move an end by ~8 px.
  Scene s = scene_of({{segment({20, 50}, {220, 58.7}, 0.2, 1), false},
                      {segment({20, 150}, {220, 150}, 0.2, 2), false}});
  fit(s, {});
  for (const auto& r : s.relations)
    if (r["kind"] == "parallel" || r["kind"] == "horizontal") {
      bool both = r["primitives"].size() == 2 || r["primitives"][0] == "p_0001";
      if (both) CHECK(r["status"] == "dropped");
    }
  for (const auto& pr : *s.primitives)
    CHECK(pr.fit_max_px <= config_value(s, "fit.tolerance_px", 0));
  CHECK(s.warnings.empty());
}

namespace {

const json* relation_record(const Scene& s, const std::string& kind, const std::string& status = "enforced") {
  for (const auto& r : s.relations)
    if (r["kind"] == kind && r.value("status", "") == status) return &r;
  return nullptr;
}

Vec2 rotate(Vec2 v, double a) {
  return {v.x * std::cos(a) - v.y * std::sin(a), v.x * std::sin(a) + v.y * std::cos(a)};
}

double direction_deg(const Shape& s) { return rad2deg(angle_of(s.p1 - s.p0)); }

// Degrees a direction lies from the nearest multiple of `step` degrees.
double off_grid_deg(double a, double step) {
  double r = std::fmod(std::abs(a), step);
  return std::min(r, step - r);
}

}  // namespace

TEST_CASE("beautify turns a slightly tilted square onto the axes", "[fit][beautify]") {
  const double tilt = deg2rad(1.5);
  Vec2 c{100, 100};
  auto corner = [&](double x, double y) { return c + rotate(Vec2{x, y}, tilt); };
  Vec2 q[4] = {corner(-25, -25), corner(25, -25), corner(25, 25), corner(-25, 25)};
  Polyline pts = join({segment(q[0], q[1], 0.2, 1), segment(q[1], q[2], 0.2, 2),
                       segment(q[2], q[3], 0.2, 3), segment(q[3], q[0], 0.2, 4)});
  pts.back() = pts.front();
  Scene s = scene_of({{pts, true}});
  fit(s, {});
  const auto& prims = *s.primitives;
  REQUIRE(prims.size() == 4);
  for (const auto& pr : prims) {
    CHECK(off_grid_deg(direction_deg(pr.shape), 90) < 1e-4);
    CHECK(pr.fit_max_px <= config_value(s, "fit.tolerance_px", 0));
  }
  for (const char* kind : {"horizontal", "vertical", "parallel", "perpendicular"}) {
    const json* r = relation_record(s, kind);
    REQUIRE(r);
    CHECK((*r)["residual_deg"].get<double>() < 0.1);
  }
  CHECK(relation_record(s, "horizontal")->at("primitives").size() == 2);
  CHECK(relation_record(s, "vertical")->at("primitives").size() == 2);
  for (const auto& r : s.relations) CHECK(r["status"] == "enforced");
  CHECK(s.warnings.empty());
  CHECK(config_value(s, "fit.axis_angle_deg", 0) == 3);
}

TEST_CASE("beautify puts two pieces of a line interrupted by a gap on one line", "[fit][beautify]") {
  Vec2 u = from_angle(deg2rad(30)), n = perp(u), o{40, 40};
  Vec2 b0 = o + u * 100 + n * 0.5, b1 = b0 + rotate(u, deg2rad(0.4)) * 80;
  Scene s = scene_of({{segment(o, o + u * 80, 0.2, 1), false}, {segment(b0, b1, 0.2, 2), false}});
  fit(s, {});
  const auto& prims = *s.primitives;
  REQUIRE(prims.size() == 2);
  const json* r = relation_record(s, "collinear");
  REQUIRE(r);
  CHECK(r->at("primitives").size() == 2);
  CHECK((*r)["residual_px"].get<double>() < 0.01);
  const Shape &a = prims[0].shape, &b = prims[1].shape;
  Vec2 d = unit(a.p1 - a.p0);
  CHECK(std::abs(cross(d, b.p0 - a.p0)) < 0.01);
  CHECK(std::abs(cross(d, b.p1 - a.p0)) < 0.01);
  for (const auto& pr : prims) CHECK(pr.fit_max_px <= config_value(s, "fit.tolerance_px", 0));
}

namespace {

// A line of length L heading east from `start`, then an arc of radius r and sweep `sweep`
// (turning towards +y) whose initial heading is `kink` off the line's.
Polyline line_into_arc(Vec2 start, double L, double kink, double r, double sweep) {
  Vec2 j = start + Vec2{L, 0};
  Vec2 centre = j + from_angle(kink + kPi / 2) * r;
  Polyline arc = trace(r * sweep, [&](double s) { return centre + from_angle(kink - kPi / 2 + s / r) * r; }, 0.1, 7);
  return join({segment(start, j, 0.1, 5), arc});
}

double joint_turn_deg(const Shape& a, const Shape& b) {
  Vec2 ta = a.end_tangent(), tb = b.start_tangent();
  return rad2deg(std::atan2(std::abs(cross(ta, tb)), dot(ta, tb)));
}

}  // namespace

TEST_CASE("beautify makes a near-smooth joint tangent and leaves a corner", "[fit][beautify]") {
  // Fitted pieces as a fit leaves them at a joint that is not quite smooth: a line running
  // into an arc whose start turns 2 degrees off it, and one that turns 40 degrees (a corner).
  auto chain = [](double kink_deg, Polyline& pts, std::vector<Primitive>& prims) {
    const double L = 40, r = 40, sweep = deg2rad(60), kink = deg2rad(kink_deg);
    Vec2 start{20, 50 + 200.0 * static_cast<double>(prims.size())};
    pts = line_into_arc(start, L, kink, r, sweep);
    Vec2 j = start + Vec2{L, 0}, centre = j + from_angle(kink + kPi / 2) * r;
    Vec2 end = centre + from_angle(kink - kPi / 2 + sweep) * r;
    Shape arc = Shape::arc(j, end, std::tan(sweep / 4));
    if (dist(arc.center, centre) > 1) arc = Shape::arc(j, end, -std::tan(sweep / 4));
    int n = static_cast<int>(pts.size()), base = static_cast<int>(prims.size());
    Primitive a, b;
    a.id = fmt::format("p_{:04d}", base + 1);
    a.shape = Shape::line(start, j);
    a.span0 = 0;
    a.span1 = static_cast<int>(L);
    b.id = fmt::format("p_{:04d}", base + 2);
    b.shape = arc;
    b.span0 = a.span1;
    b.span1 = n - 1;
    prims.push_back(a);
    prims.push_back(b);
    return fitting::ChainRef{{base, base + 1}, &pts};
  };
  std::vector<Primitive> prims;
  Polyline smooth_pts, corner_pts;
  std::vector<fitting::ChainRef> chains{chain(2, smooth_pts, prims)};
  chains.push_back(chain(40, corner_pts, prims));
  // The default threshold (1 degree) is tight for brush strokes; a few degrees here.
  FitParams p = params();
  p.tangent_angle_deg = 3;
  REQUIRE(joint_turn_deg(prims[0].shape, prims[1].shape) == Approx(2).margin(0.01));
  json rel = fitting::beautify(prims, chains, p);
  CHECK(joint_turn_deg(prims[0].shape, prims[1].shape) < 0.1);
  CHECK(joint_turn_deg(prims[2].shape, prims[3].shape) > 35);  // still a corner
  const json* r = nullptr;
  for (const auto& rec : rel)
    if (rec["kind"] == "tangent_continuity") r = &rec;
  REQUIRE(r);
  CHECK(r->at("primitives") == json::array({"p_0001", "p_0002"}));
  CHECK(r->at("status") == "enforced");
  CHECK((*r)["residual_deg"].get<double>() < 0.1);
  for (const auto& rec : rel) CHECK(rec["primitives"] != json::array({"p_0003", "p_0004"}));
  for (size_t i = 0; i < prims.size(); ++i) {
    const Polyline& pts = i < 2 ? smooth_pts : corner_pts;
    CHECK(max_dist(prims[i].shape, pts, prims[i].span0, prims[i].span1) <= p.tolerance_px + 1e-9);
  }
}

TEST_CASE("beautify reports relations that cannot hold together and enforces the rest",
          "[fit][beautify]") {
  // A short line 2 degrees off horizontal, parallel within 2.5 degrees to a long line 4.5
  // degrees off: horizontal and parallel together would turn the long one off its ink.
  auto heading = [](Vec2 a, double deg, double L) { return a + from_angle(deg2rad(deg)) * L; };
  Scene s = scene_of({{segment({20, 50}, heading({20, 50}, 4.5, 160), 0.2, 1), false},
                      {segment({40, 150}, heading({40, 150}, 2, 25), 0.2, 2), false},
                      {segment({300, 20}, heading({300, 20}, 89.6, 120), 0.2, 3), false},
                      {segment({340, 20}, heading({340, 20}, 90.5, 100), 0.2, 4), false}});
  fit(s, {});
  const auto& prims = *s.primitives;
  REQUIRE(prims.size() == 4);
  const json* dropped = relation_record(s, "parallel", "dropped");
  REQUIRE(dropped);
  CHECK(dropped->at("primitives") == json::array({"p_0002", "p_0001"}));
  CHECK(dropped->at("reason").get<std::string>().find("would move p_0001") != std::string::npos);
  CHECK(dropped->at("residual_deg").get<double>() > 2);
  // A candidate that did not hold is a normal outcome, kept in the records: not a warning.
  CHECK(s.warnings.empty());
  // The rest holds: the short line is horizontal, the two near-vertical ones vertical.
  CHECK(off_grid_deg(direction_deg(prims[1].shape), 180) < 1e-4);
  CHECK(off_grid_deg(direction_deg(prims[2].shape) - 90, 180) < 1e-4);
  CHECK(off_grid_deg(direction_deg(prims[3].shape) - 90, 180) < 1e-4);
  CHECK(std::abs(direction_deg(prims[0].shape) - 4.5) < 0.5);
  const json* h = relation_record(s, "horizontal");
  REQUIRE(h);
  CHECK(h->at("primitives") == json::array({"p_0002"}));
  const json* v = relation_record(s, "vertical");
  REQUIRE(v);
  CHECK(v->at("primitives").size() == 2);
  for (const auto& r : s.relations)
    if (r["status"] == "enforced") CHECK(r.value("residual_deg", 0.0) < 0.1);
  for (const auto& pr : prims) CHECK(pr.fit_max_px <= config_value(s, "fit.tolerance_px", 0));
}

TEST_CASE("merging for the robot: one move where the merge tolerance allows it and it is faster",
          "[fit][merge]") {
  FitParams p = params();
  const double ppi = 50;
  // Three arcs of one circle, meeting smoothly: one arc.
  Polyline round = trace(120, [](double s) { return Vec2{200 + 300 * std::cos(s / 300), 200 + 300 * std::sin(s / 300)}; });
  auto on_circle = [&](int k) { return round[k]; };
  std::vector<fitting::Piece> arcs;
  for (int k : {0, 40, 80}) {
    auto a = fitting::fit_arc_between(on_circle(k), on_circle(k + 40), 1, 300, fitting::Points(round).subspan(k, 41));
    REQUIRE(a);
    arcs.push_back({*a, k, k + 40});
  }
  fitting::merge_for_robot(arcs, round, false, 1.0, ppi, p);
  REQUIRE(arcs.size() == 1);
  CHECK(arcs[0].shape.radius == Approx(300).epsilon(0.01));
  CHECK(arcs[0].i0 == 0);
  CHECK(arcs[0].i1 == 120);
  // A straight stroke with a 1.2 px bump, drawn as three lines: one line within 2 px, nothing within 0.3 px.
  Polyline bumpy = trace(90, [](double s) { return Vec2{s, s > 30 && s < 60 ? 1.2 : 0.0}; });
  auto lines = [&] {
    return std::vector<fitting::Piece>{{Shape::line({0, 0}, {30, 1.2}), 0, 30},
                                       {Shape::line({30, 1.2}, {60, 1.2}), 30, 60},
                                       {Shape::line({60, 1.2}, {90, 0}), 60, 90}};
  };
  auto tight = lines();
  fitting::merge_for_robot(tight, bumpy, false, 0.3, ppi, p);
  CHECK(tight.size() == 3);
  auto loose = lines();
  fitting::merge_for_robot(loose, bumpy, false, 2.0, ppi, p);
  REQUIRE(loose.size() == 1);
  CHECK(loose[0].shape.type == PrimType::line);
  // A right-angle corner stays two lines: nothing one move can draw is within tolerance.
  Polyline corner = trace(100, [](double s) { return s < 50 ? Vec2{s, 0} : Vec2{50, s - 50}; });
  std::vector<fitting::Piece> legs{{Shape::line({0, 0}, {50, 0}), 0, 50}, {Shape::line({50, 0}, {50, 50}), 50, 100}};
  fitting::merge_for_robot(legs, corner, false, 2.0, ppi, p);
  CHECK(legs.size() == 2);
}

TEST_CASE("with --fast a loop within the merge tolerance of a circle is one circle", "[fit][merge]") {
  // An ellipse 2.5 px out of round: too far from a circle for the fit, within half an 8 px stroke.
  Polyline loop = trace(2 * kPi * 41, [](double s) { double t = s / 41; return Vec2{100 + 42.5 * std::cos(t), 100 + 40 * std::sin(t)}; });
  loop.back() = loop.front();
  FitParams faithful = resolve_fit_params(8, 0, {});
  FitParams fast = resolve_fit_params(8, 0, {fast_overrides()});
  faithful.robot_ppi = fast.robot_ppi = 50;
  CHECK(fit_polyline(loop, true, faithful).size() > 1);
  auto one = fit_polyline(loop, true, fast);
  REQUIRE(one.size() == 1);
  CHECK(one[0].shape.type == PrimType::circle);
  CHECK(one[0].max_px <= fast.merge_tolerance_px);
}

TEST_CASE("merging for the robot: a flat arc after a cusp becomes a line driven backwards", "[fit][merge]") {
  // The pen comes in along an arc and leaves back the way it came: an arc there needs a spin of
  // about half a turn, a line can be driven backwards without one.
  const Shape in = Shape::arc({0, 0}, {60, 0}, 0.25), out = Shape::arc({60, 0}, {20, 8}, -0.02);
  Polyline pts;
  for (int k = 0; k <= 60; ++k) pts.push_back(in.at(k / 60.0));
  for (int k = 1; k <= 40; ++k) pts.push_back(out.at(k / 40.0));
  auto pieces = [&] { return std::vector<fitting::Piece>{{in, 0, 60}, {out, 60, 100}}; };
  auto tight = pieces();
  fitting::merge_for_robot(tight, pts, false, 0.1, 50, params());
  CHECK(tight[1].shape.type == PrimType::arc);
  auto loose = pieces();
  fitting::merge_for_robot(loose, pts, false, 1.0, 50, params());
  REQUIRE(loose.size() == 2);
  CHECK(loose[0].shape.type == PrimType::arc);
  CHECK(loose[1].shape.type == PrimType::line);
}

namespace {

// Skeleton and fit of a test drawing, as the pipeline runs them.
Scene fitted_drawing(const cv::Mat& gray, const FitOptions& opt = {}) {
  Scene s;
  skeletonize(s, gray, {});
  s.source->path = "t.png";
  s.source->sha256 = std::string(64, '0');
  fit(s, opt);
  return s;
}

std::vector<const Primitive*> of_type(const Scene& s, PrimType t) {
  std::vector<const Primitive*> out;
  for (const Primitive& p : *s.primitives)
    if (p.shape.type == t) out.push_back(&p);
  return out;
}

// The end of a line nearer q.
Vec2 near_end(const Shape& s, Vec2 q) { return dist(s.p0, q) < dist(s.p1, q) ? s.p0 : s.p1; }


}  // namespace

TEST_CASE("a circle a line ends on is one circle, and the line ends on it", "[fit][cycles]") {
  const Vec2 c{120, 120};
  Scene s = fitted_drawing(test::Sketch(240, 240).circle(c, 60, 4).line({120, 180}, {120, 230}, 4).image());
  auto circles = of_type(s, PrimType::circle);
  REQUIRE(circles.size() == 1);
  REQUIRE(s.primitives->size() == 2);
  const Shape& circle = circles[0]->shape;
  CHECK(dist(circle.center, c) < 1.0);
  CHECK(std::abs(circle.radius - 60) < 1.0);
  CHECK(circles[0]->fit_max_px <= s.config["fit.tolerance_px"]["value"].get<double>() + 1e-9);
  auto lines = of_type(s, PrimType::line);
  REQUIRE(lines.size() == 1);
  Vec2 foot = near_end(lines[0]->shape, {120, 180});
  CHECK(dist(foot, {120, 180}) < 1.5);
  CHECK(circle.distance_to(foot) < 0.05);
  CHECK(s.config.contains("fit.circle_cycle_edges"));
  CHECK(scene_schema().first_error(to_json(s)).empty());
  // Routing draws both in one stroke: the line runs onto the circle.
  route(s, {});
  simulate(s, {});
  CHECK(s.metrics["pen_up_moves"] == 0);
  CHECK(undrawn_px(s) < 0.05);
}

TEST_CASE("a circle two lines cross is one circle, and the lines run straight through it", "[fit][cycles]") {
  const Vec2 c{130, 130};
  Scene s = fitted_drawing(
      test::Sketch(260, 260).circle(c, 70, 4).line({20, 110}, {240, 110}, 4).line({150, 20}, {150, 240}, 4).image());
  auto circles = of_type(s, PrimType::circle);
  REQUIRE(circles.size() == 1);
  CHECK(dist(circles[0]->shape.center, c) < 1.0);
  CHECK(std::abs(circles[0]->shape.radius - 70) < 1.0);
  auto lines = of_type(s, PrimType::line);
  REQUIRE(lines.size() == 2);
  for (const Primitive* l : lines) CHECK(l->shape.length() > 210);  // each crosses whole, not cut at the circle
  CHECK(s.primitives->size() == 3);
}

TEST_CASE("a circle crossed by a line and met by two is one circle, and the lines end on it", "[fit][cycles]") {
  const Vec2 c{130, 130};
  // A line through it from outside to outside, off the centre, and two stems ending on it, which
  // cut it into two edges between their junctions.
  auto draw = [&] {
    return test::Sketch(260, 260)
        .circle(c, 70, 4)
        .line({30, 110}, {230, 110}, 4)
        .line({200, 250}, c + from_angle(deg2rad(60)) * 70, 4)
        .line({20, 245}, c + from_angle(deg2rad(135)) * 70, 4)
        .image();
  };
  Scene s = fitted_drawing(draw());
  auto circles = of_type(s, PrimType::circle);
  REQUIRE(circles.size() == 1);
  const Primitive& circle = *circles[0];
  CHECK(dist(circle.shape.center, c) < 1.0);
  CHECK(std::abs(circle.shape.radius - 70) < 1.0);
  // Its provenance lists every edge of the cycle once, in full.
  REQUIRE(circle.more_sources.size() >= 1);
  std::set<std::string> sources{circle.edge};
  for (const SourceSpan& src : circle.more_sources) {
    sources.insert(src.edge);
    CHECK(src.span0 == 0);
    CHECK(src.span1 + 1 == static_cast<int>(s.graph->edge(src.edge)->points.size()));
  }
  CHECK(sources.size() == circle.more_sources.size() + 1);
  // The rest are three lines, none from the circle's edges; the stems end on the circle.
  CHECK(of_type(s, PrimType::arc).empty());
  auto lines = of_type(s, PrimType::line);
  CHECK(lines.size() == 3);
  int on_circle = 0;
  for (const Primitive* l : lines) {
    CHECK(!sources.count(l->edge));
    double on = std::min(circle.shape.distance_to(l->shape.p0), circle.shape.distance_to(l->shape.p1));
    if (on < 2) CHECK(on < 0.05);
    on_circle += on < 0.05;
  }
  CHECK(on_circle == 2);
  CHECK(scene_schema().first_error(to_json(s)).empty());
  Scene back = scene_from_json(to_json(s));
  CHECK(canonical_bytes(back) == canonical_bytes(s));
  // Routing draws everything, with no more pen lifts than the arcs it replaces.
  Scene arcs = fitted_drawing(draw(), {{{"fit.circle_cycle_edges", 0}}});
  CHECK(of_type(arcs, PrimType::circle).empty());
  route(s, {});
  simulate(s, {});
  route(arcs, {});
  simulate(arcs, {});
  CHECK(s.metrics["pen_up_moves"].get<int>() <= arcs.metrics["pen_up_moves"].get<int>());
  CHECK(undrawn_px(s) < 0.05);
}

TEST_CASE("a loop through a junction that is no circle stays arcs and lines", "[fit][cycles]") {
  // An ellipse, 60 by 48, with a line ending on it.
  std::vector<Vec2> ellipse;
  for (int k = 0; k < 180; ++k) ellipse.push_back({120 + 60 * std::cos(k * kPi / 90), 120 + 48 * std::sin(k * kPi / 90)});
  Scene e = fitted_drawing(test::Sketch(240, 240).polyline(ellipse, true, 4).line({120, 168}, {120, 225}, 4).image());
  CHECK(of_type(e, PrimType::circle).empty());
  CHECK(!of_type(e, PrimType::arc).empty());
  // A rounded square with a line ending on one side.
  test::Sketch d(240, 240);
  const double r = 25, a = 50, b = 190;
  d.line({a + r, a}, {b - r, a}, 4).line({b, a + r}, {b, b - r}, 4).line({b - r, b}, {a + r, b}, 4)
      .line({a, b - r}, {a, a + r}, 4);
  d.arc({b - r, a + r}, r, -90, 0, 4).arc({b - r, b - r}, r, 0, 90, 4).arc({a + r, b - r}, r, 90, 180, 4)
      .arc({a + r, a + r}, r, 180, 270, 4);
  d.line({120, b}, {120, 230}, 4);
  Scene rr = fitted_drawing(d.image());
  CHECK(of_type(rr, PrimType::circle).empty());
  CHECK(of_type(rr, PrimType::arc).size() >= 4);
}

namespace {

// The turn at the joint where a ends and b starts (radians).
double kink(const Shape& a, const Shape& b) {
  Vec2 ta = a.end_tangent(), tb = b.start_tangent();
  return std::atan2(std::abs(cross(ta, tb)), dot(ta, tb));
}

int spins(const Scene& s, double min_deg = 0) {
  int n = 0;
  for (const Command& c : *s.commands) n += c.kind == Command::Kind::spin && std::abs(c.degrees) > min_deg;
  return n;
}

}  // namespace

TEST_CASE("an S-curve's two arcs meet with one tangent, and the robot draws through", "[fit][tangent]") {
  // Two half circles of radius 40 bending opposite ways, drawn 5 px wide.
  Scene s = fitted_drawing(test::Sketch(240, 140).arc({60, 70}, 40, 180, 360, 5).arc({140, 70}, 40, 0, 180, 5).image());
  REQUIRE(s.primitives->size() == 2);
  const Primitive &a = (*s.primitives)[0], &b = (*s.primitives)[1];
  REQUIRE(a.shape.type == PrimType::arc);
  REQUIRE(b.shape.type == PrimType::arc);
  CHECK(a.shape.bulge * b.shape.bulge < 0);
  CHECK(kink(a.shape, b.shape) < 1e-6);
  CHECK(a.joint_end == Primitive::Joint::smooth);
  CHECK(b.joint_start == Primitive::Joint::smooth);
  CHECK(a.joint_start == Primitive::Joint::none);
  const double tol = s.config["fit.tolerance_px"]["value"].get<double>();
  for (const Primitive& p : *s.primitives) CHECK(p.fit_max_px <= tol + 1e-9);
  CHECK(scene_schema().first_error(to_json(s)).empty());
  route(s, {});
  simulate(s, {});
  // One stroke from end to end: two arcs and no turn between them (nor anywhere).
  CHECK(s.commands->size() == 2);
  CHECK(spins(s) == 0);
}

TEST_CASE("a square keeps four sharp corners, and the robot turns at each", "[fit][tangent]") {
  Scene s = fitted_drawing(test::Sketch(160, 160).polyline({{30, 30}, {130, 30}, {130, 130}, {30, 130}}, true, 4).image());
  REQUIRE(s.primitives->size() == 4);
  for (const Primitive& p : *s.primitives) {
    CHECK(p.shape.type == PrimType::line);
    CHECK(p.joint_start == Primitive::Joint::corner);
    CHECK(p.joint_end == Primitive::Joint::corner);
  }
  route(s, {});
  simulate(s, {});
  CHECK(spins(s, 80) == 3);
}

TEST_CASE("a rounded rectangle's lines and arcs meet tangent-continuously all round", "[fit][tangent]") {
  // 120 x 80 with corners of radius 16.
  const double r = 16;
  test::Sketch sk(200, 160);
  sk.line({56, 40}, {144, 40}, 4).line({160, 56}, {160, 104}, 4).line({144, 120}, {56, 120}, 4).line({40, 104}, {40, 56}, 4);
  sk.arc({144, 56}, r, 270, 360, 4).arc({144, 104}, r, 0, 90, 4).arc({56, 104}, r, 90, 180, 4).arc({56, 56}, r, 180, 270, 4);
  Scene s = fitted_drawing(sk.image());
  REQUIRE(s.primitives->size() == 8);
  int arcs = 0;
  for (const Primitive& p : *s.primitives) {
    arcs += p.shape.type == PrimType::arc;
    CHECK(p.joint_start == Primitive::Joint::smooth);
    CHECK(p.joint_end == Primitive::Joint::smooth);
  }
  CHECK(arcs == 4);
  route(s, {});
  simulate(s, {});
  CHECK(spins(s) == 0);
}

TEST_CASE("the ink's turn at a joint is its corner, not its curvature", "[fit][tangent]") {
  // A circle of radius 30: its chords turn, but as much over twice the window as twice that.
  Polyline circle = trace(2 * kPi * 30, [](double s) { return Vec2{50, 50} + from_angle(s / 30) * 30; });
  circle.pop_back();
  auto on_circle = fitting::ink_corner_turns(circle, true, {0, 40, 100}, 4);
  for (double t : on_circle) CHECK(rad2deg(t) < 1);
  // A 60 degree corner between two straight runs.
  Polyline corner = join({segment({0, 0}, {40, 0}), segment({40, 0}, Vec2{40, 0} + from_angle(deg2rad(60)) * 40)});
  auto at_corner = fitting::ink_corner_turns(corner, false, {40}, 4);
  CHECK(rad2deg(at_corner[0]) == Approx(60).margin(2));
}

TEST_CASE("a thick rounded rectangle with sides shorter than its corners keeps every line", "[fit][tangent]") {
  // 12 px strokes, corners of radius 24, straight sides of 30 and 90 px, turned: within the
  // tolerance of such a stroke, arcs of larger radii could swallow a short side and its corners.
  const double r = 24, w = 12;
  for (double turn : {0.0, 14.0, 33.0}) {
    CAPTURE(turn);
    const Vec2 mid{110, 110};
    const Vec2 u = from_angle(deg2rad(turn));
    auto at = [&](double x, double y) { return mid + u * x + perp(u) * y; };
    test::Sketch sk(220, 220);
    const double a = 15, b = 45;  // half the straight sides
    sk.line(at(-a, -b - r), at(a, -b - r), w).line(at(a + r, -b), at(a + r, b), w);
    sk.line(at(a, b + r), at(-a, b + r), w).line(at(-a - r, b), at(-a - r, -b), w);
    sk.arc(at(a, -b), r, 270 + turn, 360 + turn, w).arc(at(a, b), r, turn, 90 + turn, w);
    sk.arc(at(-a, b), r, 90 + turn, 180 + turn, w).arc(at(-a, -b), r, 180 + turn, 270 + turn, w);
    Scene s = fitted_drawing(sk.image());
    REQUIRE(s.primitives->size() == 8);
    int lines = 0;
    for (const Primitive& p : *s.primitives) {
      if (p.shape.type == PrimType::line) {
        ++lines;
        CHECK((p.shape.length() == Approx(2 * a).margin(3) || p.shape.length() == Approx(2 * b).margin(3)));
      } else {
        REQUIRE(p.shape.type == PrimType::arc);
        CHECK(p.shape.radius == Approx(r).margin(1.5));
      }
    }
    CHECK(lines == 4);
  }
}

TEST_CASE("a free end that curls inside the stroke's cap is not a piece of its own", "[fit]") {
  // A 12 px stroke whose trace turns off by 45 and by 120 degrees over its last 2.5 px at one
  // free end (a photographed end's shadow); a curl of a whole stroke width stays.
  const Vec2 end{220, 60};
  for (double turn : {45.0, 120.0}) {
    CAPTURE(turn);
    const Vec2 curl = end + from_angle(deg2rad(turn)) * 2.5;
    auto out = fit_polyline(join({segment({20, 60}, end), segment(end, curl)}), false, params(12, 0));
    REQUIRE(out.size() == 1);
    CHECK(out[0].shape.type == PrimType::line);
    CHECK(dist(out[0].shape.p1, end) < 0.5);
  }
  const Vec2 hook = end + from_angle(deg2rad(120)) * 12;
  CHECK(fit_polyline(join({segment({20, 60}, end), segment(end, hook)}), false, params(12, 0)).size() == 2);
}
