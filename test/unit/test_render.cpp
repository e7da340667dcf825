#include <catch2/catch.hpp>

#include <opencv2/imgproc.hpp>
#include <regex>

#include <fmt/format.h>

#include "export/export.hpp"
#include "raster/png.hpp"
#include "render/figure.hpp"
#include "render/view.hpp"
#include "robot/replay.hpp"
#include "robot/simulate.hpp"
#include "route/route.hpp"
#include "shape_scene.hpp"

using namespace sv;

namespace {

Scene routed_scene(const std::vector<Shape>& shapes) {
  Scene s = scene_of_shapes(shapes, 512, 6);
  route(s, {});
  return s;
}

bool white(const cv::Mat& img, int x, int y) { return img.at<cv::Vec3b>(y, x) == cv::Vec3b(255, 255, 255); }

bool dark_in(const cv::Mat& img, cv::Rect r) {
  for (int y = r.y; y < r.y + r.height; ++y)
    for (int x = r.x; x < r.x + r.width; ++x) {
      cv::Vec3b c = img.at<cv::Vec3b>(y, x);
      if (c[0] < 128 && c[1] < 128 && c[2] < 128) return true;
    }
  return false;
}

}  // namespace

TEST_CASE("grid steps are round and about 100 view pixels apart", "[render]") {
  CHECK(grid_step_for(1000.0 / 512) == 50);
  CHECK(grid_step_for(1.0) == 100);
  CHECK(grid_step_for(0.1) == 1000);
  CHECK(grid_step_for(10) == 10);
  CHECK(grid_step_for(25) == 5);
  CHECK(grid_step_for(0.45) == 200);
}

TEST_CASE("grid labels sit at the image coordinates they name", "[render]") {
  // A vertical line along x = 100 from y = 50 to 450.
  Scene s = routed_scene({Shape::line({100, 50}, {100, 450})});
  ViewOptions o;
  ViewTransform t = view_transform(s, o);
  REQUIRE(t.grid_step == 50);
  cv::Mat img = render_view(s, o);
  REQUIRE(img.size() == t.canvas);

  int col = static_cast<int>(std::lround(t.to_view({100, 0}).x));
  CHECK(t.to_image(cv::Point2d(col, 0)).x == Approx(100).margin(0.5 / t.scale));
  // The grid line for x = 150 is at its column, light gray, between white columns.
  int col150 = static_cast<int>(std::lround(t.to_view({150, 0}).x));
  int row = static_cast<int>(std::lround(t.to_view({0, 25}).y));
  CHECK(img.at<cv::Vec3b>(row, col150)[0] < 255);
  CHECK(white(img, col150 - 3, row));
  CHECK(white(img, col150 + 3, row));
  CHECK(t.to_image(cv::Point2d(col150, row)).x == Approx(150).margin(0.5 / t.scale));
  // The drawn line is on the column of the grid line labelled 100, coloured (a line: blue).
  cv::Vec3b ink = img.at<cv::Vec3b>(static_cast<int>(t.to_view({0, 250}).y), col);
  CHECK(ink[0] > ink[2] + 80);
  // "100" is written above and below that column and nowhere between it and the next label.
  int m = t.margin;
  CHECK(dark_in(img, cv::Rect(col - 12, m - 22, 24, 16)));
  CHECK(dark_in(img, cv::Rect(col - 12, m + t.area.height + 6, 24, 16)));
  CHECK_FALSE(dark_in(img, cv::Rect(col + 20, 0, 50, m - 2)));
  // y labels on both sides at the row of y = 100.
  int row100 = static_cast<int>(std::lround(t.to_view({0, 100}).y));
  CHECK(dark_in(img, cv::Rect(2, row100 - 6, m - 6, 12)));
  CHECK(dark_in(img, cv::Rect(m + t.area.width + 4, row100 - 6, m - 6, 12)));
}

TEST_CASE("the source is drawn faintly underneath, aligned with the grid", "[render]") {
  Scene s = routed_scene({Shape::line({100, 50}, {100, 450})});
  ViewOptions o;
  o.source = cv::Mat(512, 512, CV_8UC1, cv::Scalar(255));
  o.source(cv::Rect(300, 300, 11, 11)).setTo(0);  // ink over pixels 300..310
  ViewTransform t = view_transform(s, o);
  cv::Mat img = render_view(s, o);
  auto at = [&](double x, double y) {
    cv::Point2d v = t.to_view({x, y});
    return img.at<cv::Vec3b>(static_cast<int>(std::lround(v.y)), static_cast<int>(std::lround(v.x)));
  };
  cv::Vec3b ink = at(305, 305);
  CHECK(ink[0] > 100);  // faint, not black
  CHECK(ink[0] < 230);
  CHECK(at(305, 312) == cv::Vec3b(255, 255, 255));
  CHECK(at(298, 305) == cv::Vec3b(255, 255, 255));
}

TEST_CASE("a crop shows its region at its own scale", "[render]") {
  Scene s = routed_scene({Shape::line({100, 50}, {100, 450}), Shape::circle({300, 300}, 60)});
  ViewOptions o;
  o.crop = cv::Rect2d(80, 80, 40, 40);
  o.size_px = 400;
  o.color_by = ColorBy::draw_order;
  o.pen_up = true;
  ViewTransform t = view_transform(s, o);
  CHECK(t.scale == Approx(10));
  CHECK(t.grid_step == 10);
  cv::Point2d v = t.to_view({80, 80});
  CHECK(v.x == Approx(t.margin));
  CHECK(v.y == Approx(t.margin));
  cv::Mat img = render_view(s, o);
  CHECK(img.cols >= 400 + 2 * t.margin);
  // The line at x = 100 crosses the crop's middle.
  cv::Point2d mid = t.to_view({100, 100});
  CHECK_FALSE(white(img, static_cast<int>(std::lround(mid.x)), static_cast<int>(std::lround(mid.y))));
  std::string png = encode_png_rgb(img);
  REQUIRE(png.size() > 8);
  CHECK(png.substr(1, 3) == "PNG");
}

TEST_CASE("SVG has one path per stroke and true arcs with valid flags", "[render]") {
  Scene s;
  s.source = Source{"v.png", std::string(64, '0'), 200, 100, 5};
  Robot r;
  r.ppi = 50;
  s.robot = r;
  auto arc = [](double radius, double deg) {
    Command c;
    c.kind = Command::Kind::arc;
    c.radius = radius;
    c.degrees = deg;
    return c;
  };
  Command up;
  up.distance = 60;
  up.pen_down = false;
  Command line;
  line.distance = 20;
  s.commands = std::vector<Command>{arc(10, 90), line, up, arc(10, -270), arc(15, 360)};
  std::string svg = render_svg(s);
  // The page is the drawing at the robot's scale (25.4 / 50 mm per px): the strokes' extent.
  const BBox box = drawing_bounds(s);
  CHECK(svg.find(fmt::format("viewBox=\"{:g} {:g} {:g} {:g}\"", round_to(box.x0, 1e-3), round_to(box.y0, 1e-3),
                             round_to(box.width(), 1e-3), round_to(box.height(), 1e-3))) != std::string::npos);
  CHECK(svg.find(fmt::format("width=\"{:g}mm\"", round_to(box.width() * 25.4 / 50, 1e-3))) != std::string::npos);
  CHECK(svg.find("stroke-width=\"5\"") != std::string::npos);
  Replay rep = replay(*s.commands, s.robot->start);
  std::regex path_re("<path [^>]*d=\"([^\"]*)\"");
  std::vector<std::string> paths;
  for (auto it = std::sregex_iterator(svg.begin(), svg.end(), path_re); it != std::sregex_iterator(); ++it)
    paths.push_back((*it)[1]);
  REQUIRE(paths.size() == rep.strokes.size());
  REQUIRE(paths.size() == 2);
  CHECK(paths[0].rfind("M 0 0 A 10 10 0 0 1 10 10 L", 0) == 0);
  std::regex a_re("A ([-0-9.e]+) ([-0-9.e]+) 0 ([-0-9]+) ([-0-9]+) ([-0-9.e]+) ([-0-9.e]+)");
  std::vector<std::smatch> arcs;
  for (auto it = std::sregex_iterator(paths[1].begin(), paths[1].end(), a_re); it != std::sregex_iterator(); ++it)
    arcs.push_back(*it);
  // Quarter turns at most, whose centres the ends pin down: the 270 degree arc in three, the
  // circle in four.
  REQUIRE(arcs.size() == 7);
  for (size_t i = 0; i < arcs.size(); ++i) {
    CHECK(arcs[i][3] == "0");                    // never the large arc
    CHECK(arcs[i][4] == (i < 3 ? "0" : "1"));  // negative degrees: counter-clockwise on screen
  }
  // The 270 degree arc ends where the robot does after it, each piece a quarter turn of radius
  // 10 (its chord 10 sqrt 2).
  Pose end = apply_command(apply_command(apply_command({0, 0, 0}, (*s.commands)[0]), line), up);
  Vec2 from{end.x, end.y};
  end = apply_command(end, (*s.commands)[3]);
  CHECK(std::stod(arcs[2][5]) == Approx(end.x).margin(1e-3));
  CHECK(std::stod(arcs[2][6]) == Approx(end.y).margin(1e-3));
  for (size_t i = 0; i < 3; ++i) {
    const Vec2 to{std::stod(arcs[i][5]), std::stod(arcs[i][6])};
    CHECK(dist(from, to) == Approx(10 * std::sqrt(2.0)).margin(2e-3));
    from = to;
  }
  CHECK(svg.find("id=\"pen-up\" inkscape:groupmode=\"layer\" inkscape:label=\"pen-up travel\" style=\"display:none\"") !=
        std::string::npos);
}

TEST_CASE("before routing, views draw the primitives themselves", "[render]") {
  Scene s;
  s.source = Source{"v.png", std::string(64, '0'), 100, 100, 3};
  Primitive p;
  p.id = "p_0001";
  p.shape = Shape::circle({50, 50}, 20);
  s.primitives = std::vector<Primitive>{p};
  std::string svg = render_svg(s);
  CHECK(svg.find("data-primitives=\"p_0001\"") != std::string::npos);
  // No robot, no scale: the image in pixels.
  CHECK(svg.find("width=\"100\" height=\"100\" viewBox=\"-0.5 -0.5 100 100\"") != std::string::npos);
  ViewOptions o;
  o.ids = true;
  cv::Mat img = render_view(s, o);
  ViewTransform t = view_transform(s, o);
  cv::Point2d top = t.to_view({50, 30});
  CHECK_FALSE(white(img, static_cast<int>(std::lround(top.x)), static_cast<int>(std::lround(top.y))));
}

TEST_CASE("the animated SVG of thousands of steps plays in 30 s and stays small", "[render]") {
  Scene s;
  s.source = Source{"v.png", std::string(64, '0'), 600, 600, 3};
  Robot r;
  r.ppi = 50;
  s.robot = r;
  std::vector<Command> cs;
  auto line = [](double d, bool down) {
    Command c;
    c.distance = d;
    c.pen_down = down;
    return c;
  };
  auto spin = [](double deg) {
    Command c;
    c.kind = Command::Kind::spin;
    c.degrees = deg;
    return c;
  };
  Command arc;
  arc.kind = Command::Kind::arc;
  arc.radius = 15;
  arc.degrees = 120;
  // A walk over the page: a stroke, an arc, a turn, a pen-up hop, a turn back; 1,000 times.
  for (int i = 0; i < 1000; ++i)
    for (const Command& c : {line(20, true), arc, spin(-120), line(8, false), spin(i % 2 ? 93 : -87)}) cs.push_back(c);
  s.commands = cs;
  const std::string a = render_svg_animated(s);
  CHECK(render_svg_animated(s) == a);  // deterministic
  Scene timed = s;
  simulate(timed, {});
  const size_t steps = timed.simulation->steps.size();
  REQUIRE(steps > 5000);
  const double total = timed.simulation->total_s;
  REQUIRE(total > 30 * 60);
  // The whole drawing in 30 s: every whole-drawing animation lasts 30 s.
  CHECK(a.find("dur=\"30s\"") != std::string::npos);
  CHECK(a.find(fmt::format("dur=\"{:g}s\"", round_to(total, 1e-3))) == std::string::npos);
  // An explicit speed-up is kept, and real time is the slowest.
  CHECK(render_svg_animated(s, 2).find(fmt::format("dur=\"{:g}s\"", round_to(total / 2, 1e-3))) != std::string::npos);
  CHECK(animation_speedup(10, kAutoSpeedup) == 1);
  CHECK(animation_speedup(600, kAutoSpeedup) == Approx(20));
  // The clock's digits repeat their periods (10 s, 60 s, ...) through the play: by its end they
  // are within 0.05 s of robot time of the simulation's.
  const double speedup = total / 30;
  std::regex period_re("dur=\"([0-9.]+)s\" repeatDur");
  int periods = 0;
  for (auto it = std::sregex_iterator(a.begin(), a.end(), period_re); it != std::sregex_iterator(); ++it, ++periods) {
    const double robot_period = std::stod((*it)[1]) * speedup;
    double period = 10;
    for (double p : {60.0, 600.0, 3600.0, 6000.0, 36000.0})
      if (std::abs(robot_period - p) < std::abs(robot_period - period)) period = p;
    CHECK(total / period * std::abs(robot_period - period) < 0.05);
  }
  CHECK(periods >= 16);
  WARN(fmt::format("{} steps, {:.0f} s of robot time: {} bytes, {:.0f} bytes a step", steps, total, a.size(),
                   double(a.size()) / steps));
  CHECK(a.size() < 256 * steps);
}

namespace {

// The distance in view pixels from a label's box to its shape.
double box_to_shape(const cv::Rect& r, const Shape& s, const ViewTransform& t) {
  double best = INFINITY;
  for (Vec2 q : s.sample(0.25)) {
    const cv::Point2d v = t.to_view(q);
    const double dx = std::max({r.x - v.x, 0.0, v.x - (r.x + r.width)}), dy = std::max({r.y - v.y, 0.0, v.y - (r.y + r.height)});
    best = std::min(best, std::hypot(dx, dy));
  }
  return best;
}

BBox image_box(double w, double h) {
  BBox b;
  b.add({-0.5, -0.5});
  b.add({w - 0.5, h - 0.5});
  return b;
}

// A view of `shapes`, each labelled with its id when `labelled`.
View labelled_view(const std::vector<Shape>& shapes, BBox area, bool labelled) {
  View v(area, "labels", 720);
  for (const Shape& s : shapes) v.shape(s, color::ink, 2);
  if (labelled)
    for (size_t i = 0; i < shapes.size(); ++i) v.label_shape(shapes[i], fmt::format("p_{:04d}", i + 1), color::ink);
  return v;
}

}  // namespace

TEST_CASE("ids on a dense word never overlap, stay by their shapes and say how many were left out", "[render][labels]") {
  // 100 strokes of 14 px in a 512x160 image: far more ids than fit.
  std::vector<Shape> shapes;
  for (int i = 0; i < 100; ++i) {
    const Vec2 a{20.0 + (i % 20) * 24, 20.0 + (i / 20) * 28};
    shapes.push_back(Shape::line(a, a + from_angle(deg2rad(37.0 * i)) * 14));
  }
  View v = labelled_view(shapes, image_box(512, 160), true);
  const cv::Mat img = v.finish();
  const auto& labels = v.shape_labels();
  REQUIRE(labels.size() == 100);
  size_t drawn = 0;
  const ViewTransform& t = v.transform();
  const cv::Rect area(t.margin, t.margin, t.area.width, t.area.height);
  for (size_t i = 0; i < labels.size(); ++i) {
    if (!labels[i].drawn) continue;
    ++drawn;
    CAPTURE(labels[i].text);
    CHECK((labels[i].box & area) == labels[i].box);
    CHECK(box_to_shape(labels[i].box, labels[i].shape, t) <= 6);
    for (size_t j = 0; j < i; ++j)
      if (labels[j].drawn) CHECK((labels[i].box & labels[j].box).area() == 0);
  }
  CHECK(drawn >= 40);
  CHECK(drawn < 100);
  CHECK(v.shape_labels_left_out() == 100 - drawn);
  CHECK(v.labels_note() == fmt::format("{} of 100 ids left out where they would overlap; zoom in with a region", 100 - drawn));
  // The note is written under the picture, which grew by its line.
  CHECK(img.rows == labelled_view(shapes, image_box(512, 160), false).finish().rows + 18);
  // The longest shapes are labelled first: the longest of all always is.
  shapes[57] = Shape::line({100, 80}, {100, 150});
  View again = labelled_view(shapes, image_box(512, 160), true);
  const cv::Mat first = again.finish();
  CHECK(again.shape_labels()[57].drawn);
  // The same view twice is the same picture.
  CHECK(cv::norm(labelled_view(shapes, image_box(512, 160), true).finish(), first, cv::NORM_INF) == 0);
}

TEST_CASE("on a sparse drawing every id is drawn, clear of the ink, and nothing else changes", "[render][labels]") {
  std::vector<Shape> shapes = {Shape::line({40, 40}, {200, 40}), Shape::line({300, 20}, {300, 140}),
                               Shape::arc({60, 120}, {200, 130}, 0.3), Shape::circle({420, 80}, 30),
                               Shape::line({380, 150}, {500, 150})};
  View v = labelled_view(shapes, image_box(512, 160), true);
  const cv::Mat with = v.finish();
  const cv::Mat without = labelled_view(shapes, image_box(512, 160), false).finish();
  REQUIRE(with.size() == without.size());
  CHECK(v.shape_labels_left_out() == 0);
  CHECK(v.labels_note().empty());
  cv::Mat changed;
  cv::cvtColor(cv::abs(with - without) + cv::abs(without - with), changed, cv::COLOR_BGR2GRAY);
  for (const ShapeLabel& l : v.shape_labels()) {
    CAPTURE(l.text);
    REQUIRE(l.drawn);
    CHECK(box_to_shape(l.box, l.shape, v.transform()) <= 6);
    CHECK_FALSE(dark_in(without, l.box));  // no ink under the text
    CHECK(cv::countNonZero(changed(l.box)) > 20);
    changed(l.box).setTo(0);
  }
  // Labels draw only inside their boxes.
  CHECK(cv::countNonZero(changed) == 0);
}

TEST_CASE("the exported view places ids the same way and says under the legend how many it left out", "[render][labels]") {
  std::vector<Shape> dense, sparse = {Shape::line({60, 60}, {400, 60}), Shape::line({100, 300}, {450, 420})};
  for (int i = 0; i < 200; ++i) {
    const Vec2 a{30.0 + (i % 20) * 20, 200.0 + (i / 20) * 8};
    dense.push_back(Shape::line(a, a + Vec2{12, 4}));
  }
  ViewOptions o;
  o.ids = true;
  const Scene few = routed_scene(sparse), many = routed_scene(dense);
  const ViewTransform t = view_transform(few, o);
  const cv::Mat clear = render_view(few, o);
  CHECK(clear.size() == t.canvas);
  // Both ids drawn: dark text beside each line's middle, within a label's height of it.
  for (const Shape& s : sparse) {
    const cv::Point2d mid = t.to_view(s.at(0.5));
    CHECK(dark_in(clear, cv::Rect(static_cast<int>(mid.x) - 40, static_cast<int>(mid.y) - 24, 80, 48)));
  }
  const cv::Mat crowded = render_view(many, o);
  const ViewTransform tm = view_transform(many, o);
  REQUIRE(crowded.rows == tm.canvas.height + 20);
  CHECK(dark_in(crowded, cv::Rect(10, tm.canvas.height, 200, 20)));
  CHECK(cv::norm(crowded, render_view(many, o), cv::NORM_INF) == 0);
}
