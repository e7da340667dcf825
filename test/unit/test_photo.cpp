// Drawings on paper, photographed: the conditions of a phone photo (warm paper, light
// falling off across the page, vignetting, a dark corner, the soft shadow of a hand, pencil
// pressure that changes along a stroke, sensor noise, a little blur) applied to synthetic
// drawings whose strokes are known exactly.
#include <catch2/catch.hpp>
#include <cmath>
#include <map>

#include "fit/fit.hpp"
#include "graph/skeletonize.hpp"
#include "raster/ink.hpp"
#include "raster/sheet.hpp"
#include "skeleton_drawing.hpp"

using namespace sv;
using test::Sketch;
using test::skeleton_of;

namespace {

struct Light {
  double paper = 225;          // gray of the lit paper
  double falloff = 0.2;        // fraction lost from the left edge to the right
  double vignette = 0.15;      // fraction lost at the corners
  double corner = 0;           // extra fraction lost towards the top-left corner
  double shadow = 0;           // depth of a soft round shadow at (shadow_x, shadow_y)
  double shadow_x = 0, shadow_y = 0, shadow_r = 100;
  double noise = 3;            // gray levels, per pixel
};

// The drawing (gray, 255 paper, 0 ink) photographed: the ink's darkness (0..1, a fraction of
// the lit paper) times `strength(x, y)` darkens the paper under the light.
template <class Strength>
cv::Mat photograph(const cv::Mat& drawing, const Light& l, double ink, Strength strength) {
  const double cx = drawing.cols / 2.0, cy = drawing.rows / 2.0, half_diag = std::hypot(cx, cy);
  cv::Mat img(drawing.size(), CV_32F);
  for (int y = 0; y < img.rows; ++y)
    for (int x = 0; x < img.cols; ++x) {
      double light = l.paper * (1 - l.falloff * x / img.cols);
      light *= 1 - l.vignette * std::pow(std::hypot(x - cx, y - cy) / half_diag, 2);
      light *= 1 - l.corner * std::pow(std::max(0.0, 1 - std::hypot(x, y) / (0.6 * img.cols)), 2);
      double s = std::hypot(x - l.shadow_x, y - l.shadow_y) / l.shadow_r;
      light *= 1 - l.shadow * std::exp(-s * s);
      double coverage = (255 - drawing.at<uchar>(y, x)) / 255.0;
      img.at<float>(y, x) = static_cast<float>(light * (1 - ink * coverage * strength(x, y)));
    }
  cv::GaussianBlur(img, img, {}, 0.6);
  cv::Mat noise(img.size(), CV_32F);
  cv::RNG rng(12345);
  rng.fill(noise, cv::RNG::NORMAL, 0, l.noise);
  cv::Mat out;
  cv::Mat(img + noise).convertTo(out, CV_8U);
  return out;
}

cv::Mat photograph(const cv::Mat& drawing, const Light& l, double ink = 0.75) {
  return photograph(drawing, l, ink, [](int, int) { return 1.0; });
}

// The drawing in grainy pencil: the ink's strength varies per pixel around 1 by `spread`
// (normal, seeded), clamped to 0.1..2.
cv::Mat pencil_photograph(const cv::Mat& drawing, double ink, int seed, double spread) {
  cv::Mat grain(drawing.size(), CV_32F);
  cv::RNG rng(seed);
  rng.fill(grain, cv::RNG::NORMAL, 1, spread);
  return photograph(drawing, Light{}, ink, [&](int x, int y) { return std::clamp(grain.at<float>(y, x), 0.1f, 2.0f); });
}

int free_ends(const Graph& g) {
  int n = 0;
  for (const auto& v : g.vertices) n += v.degree == 1;
  return n;
}

// Twelve grainy pencil photographs of a drawing of three lines: the mean distance from `at` of
// the 3-way junction nearest it, and in how many the fit gives exactly three lines.
struct JunctionTrials {
  double mean_off = 0;
  int three_lines = 0;
};
JunctionTrials three_line_trials(const Sketch& d, Vec2 at) {
  JunctionTrials out;
  for (int seed = 1; seed <= 12; ++seed) {
    Scene s = skeleton_of(pencil_photograph(d.image(), 0.7, seed, 0.5));
    const Vertex* junction = nullptr;
    for (const Vertex& v : s.graph->vertices)
      if (v.degree == 3 && (!junction || dist(v.p, at) < dist(junction->p, at))) junction = &v;
    INFO("grain " << seed);
    REQUIRE(junction != nullptr);
    out.mean_off += dist(junction->p, at) / 12;
    fit(s, FitOptions{});
    bool lines = s.primitives->size() == 3;
    for (const Primitive& p : *s.primitives) lines = lines && p.shape.type == PrimType::line;
    out.three_lines += lines;
  }
  return out;
}

}  // namespace

TEST_CASE("a page with a dark corner and four strokes gives four strokes of the right width", "[photo]") {
  const Vec2 a[4] = {{90, 150}, {200, 60}, {120, 300}, {250, 250}}, b[4] = {{300, 150}, {200, 200}, {340, 330}, {350, 120}};
  Sketch d(400, 400);
  for (int i = 0; i < 4; ++i) d.line(a[i], b[i], 4);
  Light l;
  l.corner = 0.55;  // the top-left corner is in deep shadow, darker than the ink far from it
  l.shadow = 0.3, l.shadow_x = 260, l.shadow_y = 260, l.shadow_r = 70;
  cv::Mat photo = photograph(d.image(), l);
  Scene s = skeleton_of(photo);
  REQUIRE(s.graph->edges.size() == 4);
  CHECK(free_ends(*s.graph) == 8);
  CHECK(s.source->stroke_width_px == Approx(4).margin(0.8));
  for (const auto& e : s.graph->edges) {
    // every edge lies along one of the drawn strokes
    double best = 1e9;
    for (int i = 0; i < 4; ++i) {
      double worst = 0;
      for (Vec2 p : e.points) worst = std::max(worst, point_segment_distance(p, a[i], b[i]));
      best = std::min(best, worst);
    }
    CHECK(best < 1.5);
  }
}

TEST_CASE("a pencil stroke whose darkness fades to a third stays one stroke", "[photo]") {
  const double x0 = 40, x1 = 360;
  cv::Mat drawing = Sketch(400, 300).line({x0, 150}, {x1, 150}, 4).image();
  auto fade = [&](int x, int) { return 1 - (2.0 / 3.0) * std::clamp((x - x0) / (x1 - x0), 0.0, 1.0); };
  Light l;
  l.shadow = 0.25, l.shadow_x = 300, l.shadow_y = 120, l.shadow_r = 60;
  Scene s = skeleton_of(photograph(drawing, l, 0.6, fade));
  REQUIRE(s.graph->edges.size() == 1);
  CHECK(free_ends(*s.graph) == 2);
  CHECK(polyline_length(s.graph->edges[0].points) > 0.97 * (x1 - x0));
  // the width is read against the stroke's own darkness, so the light end is not thinner
  CHECK(s.source->stroke_width_px == Approx(4).margin(0.8));
}

TEST_CASE("a dot tapped lightly beside a full stroke stays a dot; specks as dark do not", "[photo]") {
  // Right of x = 100 the pencil presses at 40 %: the dot there reaches no strong ink, and
  // neither do the two specks of 3 px, which are grain-sized.
  cv::Mat drawing = Sketch(300, 200).line({60, 40}, {60, 160}, 4).dot({150, 60}, 6).dot({220, 60}, 3).dot({220, 140}, 3).image();
  Scene s = skeleton_of(photograph(drawing, Light{}, 0.75, [](int x, int) { return x > 100 ? 0.4 : 1.0; }));
  const Graph& g = *s.graph;
  REQUIRE(g.edges.size() == 2);
  int dots = 0;
  for (const Vertex& v : g.vertices)
    if (v.kind == "dot") {
      ++dots;
      CHECK(dist(v.p, {150, 60}) < 1);
    }
  CHECK(dots == 1);
}

TEST_CASE("shadows, vignetting and paper grain on an empty page are not ink", "[photo]") {
  Light l;
  l.corner = 0.5, l.vignette = 0.25, l.noise = 4;
  l.shadow = 0.32, l.shadow_x = 200, l.shadow_y = 150, l.shadow_r = 60;
  Scene s = skeleton_of(photograph(Sketch(400, 300).image(), l));
  CHECK(s.graph->edges.empty());
}

TEST_CASE("separate_ink divides out the light: strokes in and out of a shadow read alike", "[photo][raster]") {
  // Two equal strokes, one under a 30 % shadow: equal widths at half their darkness.
  cv::Mat drawing = Sketch(300, 200).line({40, 60}, {260, 60}, 5).line({40, 140}, {260, 140}, 5).image();
  Light l;
  l.falloff = 0, l.vignette = 0, l.shadow = 0.3, l.shadow_x = 150, l.shadow_y = 150, l.shadow_r = 45;
  Ink ink = separate_ink(photograph(drawing, l));
  auto column_width = [&](int y0, int y1) {
    int n = 0;
    for (int y = y0; y < y1; ++y) n += ink.binary.at<uchar>(y, 150);
    return n;
  };
  CHECK(column_width(40, 80) == Approx(5).margin(1));
  CHECK(column_width(120, 160) == Approx(5).margin(1));
  CHECK(ink.noise == Approx(3).margin(1.5));  // in normalised gray levels, like the photo's noise
  int stray = 0;  // no ink away from the strokes
  for (int y = 0; y < ink.binary.rows; ++y)
    for (int x = 0; x < ink.binary.cols; ++x) stray += ink.binary.at<uchar>(y, x) && std::abs(y - 60) > 5 && std::abs(y - 140) > 5;
  CHECK(stray == 0);
}

TEST_CASE("grainy pencil stays one stroke of its width", "[photo]") {
  // Graphite leaves paper showing through a wide stroke: its darkness varies by half from
  // pixel to pixel.
  const Vec2 a{40, 100}, b{360, 220};
  cv::Mat drawing = Sketch(400, 300).line(a, b, 10).image();
  Scene s = skeleton_of(pencil_photograph(drawing, 0.65, 7, 0.5));
  REQUIRE(s.graph->edges.size() == 1);
  CHECK(free_ends(*s.graph) == 2);
  CHECK(s.source->stroke_width_px == Approx(10).epsilon(0.25));
  INFO("holes " << s.config["skeleton.ink_holes"]["value"]);
  CHECK(s.config["skeleton.grain_sigma_px"]["value"].get<double>() > 0);
  double worst = 0;
  for (Vec2 p : s.graph->edges[0].points) worst = std::max(worst, point_segment_distance(p, a, b));
  CHECK(worst < 2.0);
}

TEST_CASE("lightly grainy pencil: a circle and a check fit as one circle and two lines", "[photo][fit]") {
  // Graphite that leaves only a few pinholes (under 5 % of the stroke's inside) still makes
  // the traced centreline wander and fork around them; unsmoothed, the fit took the wander
  // for detail: 10 primitives.
  Sketch d(400, 400);
  d.circle({200, 200}, 140, 7).polyline({{145, 195}, {180, 230}, {255, 155}}, false, 7);
  Scene s = skeleton_of(pencil_photograph(d.image(), 0.7, 3, 0.4));
  INFO("holes " << s.config["skeleton.ink_holes"]["value"]);
  CHECK(s.config["skeleton.ink_holes"]["value"].get<double>() < 0.05);
  CHECK(s.config["skeleton.grain_sigma_px"]["value"].get<double>() > 0);
  fit(s, FitOptions{});
  std::map<PrimType, int> kinds;
  for (const Primitive& p : *s.primitives) ++kinds[p.shape.type];
  CHECK(s.primitives->size() == 3);
  CHECK(kinds[PrimType::circle] == 1);
  CHECK(kinds[PrimType::line] == 2);
}

TEST_CASE("a grainy pencil arrow's tip is where its three lines meet, each line one primitive", "[photo][fit]") {
  // Thinning puts the tip's junction a few pixels inside the ink and bends the arms into it;
  // measured over a few wobbly pixels, the heads' directions were off by up to 13 degrees, the
  // junction stayed 1.4 px from the tip on average and 9 of these 12 grains fitted with the
  // bends as extra short lines.
  const Vec2 tip{200, 80}, left{115, 165}, right{285, 165}, foot{200, 330};
  Sketch d(400, 400);
  d.line(tip, left, 5).line(tip, right, 5).line(tip, foot, 5);
  const JunctionTrials t = three_line_trials(d, tip);
  CHECK(t.mean_off < 1.0);  // 0.80
  CHECK(t.three_lines >= 10);
}

TEST_CASE("a pencil stroke leaving a line at 22 degrees joins it where they part, the line one primitive", "[photo][fit]") {
  // The two strokes share their ink for some 13 px past where they part, and thinning runs the
  // line's other arm out along their bisector: measured there, it made a bar with the branch,
  // the junction stayed up to 12 px inside the shared ink and the line broke into pieces.
  const Vec2 part{150, 150}, start{60, 60}, end{340, 340};
  const Vec2 branch = part + Vec2{std::cos(deg2rad(67)), std::sin(deg2rad(67))} * 200;
  Sketch d(400, 400);
  // The line ends on a crossbar: its free end would make the pair a cusp drawn out and back.
  d.line(start, end, 5).line(part, branch, 5).line({20, 100}, {100, 20}, 5);
  const JunctionTrials t = three_line_trials(d, part);
  CHECK(t.mean_off < 3.0);    // 2.28 (4.98 when the line's arm was measured within the shared ink)
  CHECK(t.three_lines >= 8);  // 9 (5)
}

namespace {

// The photo of a page (the drawing photographed, `page` px square) lying on a desk turned by
// `degrees` about the centre of a larger frame, as a phone sees it: a desk of gray `desk` with
// a wood grain of 10 levels, the page's own soft shadow on it, the page's edge blurred. `on`:
// the frame's pixels on the page.
cv::Mat on_a_desk(const cv::Mat& page, cv::Size frame, double degrees, double desk, cv::Mat& on) {
  const cv::Point2f centre(frame.width / 2.0f, frame.height / 2.0f);
  cv::Mat turn = cv::getRotationMatrix2D({page.cols / 2.0f, page.rows / 2.0f}, degrees, 1.0);
  turn.at<double>(0, 2) += centre.x - page.cols / 2.0;
  turn.at<double>(1, 2) += centre.y - page.rows / 2.0;
  cv::Mat placed, cover;
  cv::warpAffine(page, placed, turn, frame, cv::INTER_LINEAR);
  cv::warpAffine(cv::Mat(page.size(), CV_32F, cv::Scalar(1)), cover, turn, frame, cv::INTER_LINEAR);
  cv::Mat img(frame, CV_32F), shadow;
  cv::GaussianBlur(cover, shadow, {}, 6);
  for (int y = 0; y < frame.height; ++y)
    for (int x = 0; x < frame.width; ++x) {
      const double grain = 10 * std::sin(x / 9.0 + 2 * std::sin(y / 40.0));
      const double below = (desk + grain) * (1 - 0.35 * shadow.at<float>(std::max(0, y - 6), std::max(0, x - 6)));
      const float c = cover.at<float>(y, x);
      img.at<float>(y, x) = static_cast<float>(c * placed.at<uchar>(y, x) + (1 - c) * below);
    }
  on = cover > 0.5f;
  cv::Mat out;
  img.convertTo(out, CV_8U);
  return out;
}

}  // namespace

TEST_CASE("a page photographed on a desk: the desk and the page's edges are not ink", "[photo][raster]") {
  // Traced as ink, the desk and the page's edges gave 27 primitives (the darker desk) and 58
  // (the lighter, whose grain reads as ink too) where the drawing has two.
  const Vec2 a{80, 90}, b{260, 110};
  Sketch d(340, 320);
  d.line(a, b, 4).circle({170, 215}, 60, 4);
  Light l;
  l.shadow = 0.25, l.shadow_x = 60, l.shadow_y = 280, l.shadow_r = 80;
  const cv::Mat page = photograph(d.image(), l);
  for (double desk : {60.0, 120.0}) {
    INFO("desk " << desk);
    cv::Mat on;
    const cv::Mat photo = on_a_desk(page, {440, 400}, 6, desk, on);
    Scene s = skeleton_of(photo);
    const double off = s.config["skeleton.off_sheet"]["value"].get<double>();
    CHECK(off > 0.35);  // 0.45 of the frame is desk
    CHECK(off < 0.55);
    fit(s, FitOptions{});
    std::map<PrimType, int> kinds;
    for (const Primitive& p : *s.primitives) ++kinds[p.shape.type];
    CHECK(s.primitives->size() == 2);
    CHECK(kinds[PrimType::line] == 1);
    CHECK(kinds[PrimType::circle] == 1);
    // The ink the tools measure fidelity against sees no desk either.
    const Ink ink = separate_ink(photo);
    CHECK(ink.off_sheet == Approx(off).margin(1e-4));
    CHECK(cv::countNonZero(ink.binary & ~on) == 0);
  }
}

TEST_CASE("off_sheet: shadows and dark corners stay on the sheet, and so does ink cut by the image's border",
          "[photo][raster]") {
  Light l;
  l.corner = 0.55, l.vignette = 0.25, l.shadow = 0.32, l.shadow_x = 0, l.shadow_y = 300, l.shadow_r = 90;
  CHECK(off_sheet(photograph(Sketch(400, 300).line({40, 150}, {360, 150}, 4).image(), l)).empty());
  // A filled shape of the drawing running off the image along a third of one side.
  Sketch filled(400, 300);
  filled.line({0, 150}, {60, 150}, 100);
  CHECK(off_sheet(filled.image()).empty());
  // A page on a desk, and the same step read as an edge only when it is steep enough.
  cv::Mat on;
  const cv::Mat photo = on_a_desk(photograph(Sketch(300, 300).image(), Light{}), {400, 400}, 4, 100, on);
  CHECK_FALSE(off_sheet(photo).empty());
  CHECK(off_sheet(photo, {1.0 / 32, 0.8}).empty());
  CHECK(off_sheet(photo, {1.0 / 32, 0}).empty());  // 0: no sheet is looked for
}

TEST_CASE("off_sheet: a light desk with a grain, a strip of desk narrower than a stroke, and the page's end in "
          "a shadow as dark as the desk",
          "[photo][raster]") {
  // The right end of the page lies in a shadow as dark as the desk, a line drawn in it; the desk
  // shows as strips 7-17 px wide left and right.
  Sketch d(300, 300);
  d.line({50, 60}, {250, 60}, 4).line({262, 90}, {262, 240}, 4);
  Light l;
  l.falloff = 0.05, l.shadow = 0.35, l.shadow_x = 300, l.shadow_y = 160, l.shadow_r = 90;
  cv::Mat on;
  const cv::Mat photo = on_a_desk(photograph(d.image(), l), {324, 380}, 2, 150, on);
  const cv::Mat off = off_sheet(photo);
  REQUIRE_FALSE(off.empty());
  const Ink ink = separate_ink(photo);
  CHECK(cv::countNonZero(ink.binary & ~on) == 0);
  Scene s = skeleton_of(photo);
  fit(s, FitOptions{});
  CHECK(s.primitives->size() == 2);
  for (const Primitive& p : *s.primitives) CHECK(p.shape.type == PrimType::line);
}
