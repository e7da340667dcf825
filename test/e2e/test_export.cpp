// The exports of sv-simulate carry the tour the robot draws: the Doodlebot stream, G-code read
// back by a small parser, and SVG rendered by rsvg-convert; every backend of the export table is
// an option of sv-simulate.
#include <catch2/catch.hpp>

#include <fmt/format.h>

#include <map>
#include <optional>
#include <opencv2/imgproc.hpp>
#include <sstream>

#include "core/file.hpp"
#include "core/scene.hpp"
#include "export/export.hpp"
#include "process.hpp"
#include "raster/png.hpp"
#include "robot/replay.hpp"

using namespace svtest;
using sv::Polyline;
using sv::Vec2;

namespace {

std::string routed(const std::string& name) {
  return fmt::format("{} --no-store {} | {} --no-store | {} --no-store", bin("sv-skeleton"),
                     data(name + ".png"), bin("sv-fit"), bin("sv-route"));
}

// Segments in buckets of a uniform grid: nearest distance from a point to a set of polylines.
class SegmentIndex {
 public:
  explicit SegmentIndex(const std::vector<Polyline>& lines, double cell = 2.0) : cell_(cell) {
    for (const auto& l : lines) {
      if (l.size() == 1) add(l[0], l[0]);
      for (size_t i = 1; i < l.size(); ++i) add(l[i - 1], l[i]);
    }
  }
  double distance(Vec2 q, double cap) const {
    double best = INFINITY;
    int r = static_cast<int>(std::ceil(cap / cell_));
    long cx = std::lround(std::floor(q.x / cell_)), cy = std::lround(std::floor(q.y / cell_));
    for (long dy = -r; dy <= r; ++dy)
      for (long dx = -r; dx <= r; ++dx) {
        auto it = grid_.find({cx + dx, cy + dy});
        if (it == grid_.end()) continue;
        for (size_t k : it->second) best = std::min(best, sv::point_segment_distance(q, segs_[k].first, segs_[k].second));
      }
    return best;
  }

 private:
  void add(Vec2 a, Vec2 b) {
    size_t k = segs_.size();
    segs_.emplace_back(a, b);
    long x0 = std::lround(std::floor(std::min(a.x, b.x) / cell_)), x1 = std::lround(std::floor(std::max(a.x, b.x) / cell_));
    long y0 = std::lround(std::floor(std::min(a.y, b.y) / cell_)), y1 = std::lround(std::floor(std::max(a.y, b.y) / cell_));
    for (long y = y0; y <= y1; ++y)
      for (long x = x0; x <= x1; ++x) grid_[{x, y}].push_back(k);
  }
  double cell_;
  std::vector<std::pair<Vec2, Vec2>> segs_;
  std::map<std::pair<long, long>, std::vector<size_t>> grid_;
};

// Densifies polylines to points at most `step` apart.
std::vector<Vec2> dense(const std::vector<Polyline>& lines, double step) {
  std::vector<Vec2> out;
  for (const auto& l : lines) {
    out.push_back(l[0]);
    for (size_t i = 1; i < l.size(); ++i) {
      int n = std::max(1, static_cast<int>(std::ceil(sv::dist(l[i - 1], l[i]) / step)));
      for (int k = 1; k <= n; ++k) out.push_back(l[i - 1] + (l[i] - l[i - 1]) * (static_cast<double>(k) / n));
    }
  }
  return out;
}

// Largest distance between two sets of polylines, both ways.
double hausdorff(const std::vector<Polyline>& a, const std::vector<Polyline>& b) {
  SegmentIndex ia(a), ib(b);
  double worst = 0;
  for (Vec2 q : dense(a, 0.1)) worst = std::max(worst, ib.distance(q, 1.0));
  for (Vec2 q : dense(b, 0.1)) worst = std::max(worst, ia.distance(q, 1.0));
  return worst;
}

// A small G-code reader: G0/G1/G2/G3 with X Y I J (absolute XY, relative IJ), the pen lowered
// and lifted by the given lines. Returns the pen-down paths in G-code units; arcs sampled every
// `step` units. Fails the test on anything it does not understand or on an inconsistent arc.
struct ParsedGcode {
  std::vector<Polyline> strokes;
  int arcs = 0, lines = 0;
  std::vector<double> feeds;  // the modal feed of every drawing move (NaN before any F)
  std::vector<double> dwells;  // every G4's P
  int pen_commands = 0;
  bool g21 = false, g20 = false;
  sv::BBox drawn;  // the pen-down paths' extent (arcs sampled)
};

// The F word of a line, if it has one.
std::optional<double> feed_word(const std::string& line) {
  std::istringstream words(line);
  for (std::string w; words >> w;)
    if (w[0] == 'F') return std::stod(w.substr(1));
  return std::nullopt;
}

ParsedGcode parse_gcode(const std::string& text, const std::string& pen_up, const std::string& pen_down, double step) {
  ParsedGcode out;
  std::istringstream in(text);
  std::string line;
  bool down = false;
  double feed = NAN;
  Vec2 at{0, 0};
  Polyline cur;
  auto lift = [&] {
    for (Vec2 p : cur) out.drawn.add(p);
    if (!cur.empty()) out.strokes.push_back(cur);
    cur.clear();
  };
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == ';') continue;
    if (line == pen_down || line == pen_up) {
      ++out.pen_commands;
      if (auto f = feed_word(line)) feed = *f;  // "G1 Z0 F500" sets the modal feed
      if (line == pen_down) {
        down = true;
        cur = {at};
      } else {
        lift();
        down = false;
      }
      continue;
    }
    std::istringstream words(line);
    std::string w;
    std::string g;
    std::map<char, double> v;
    while (words >> w) {
      if (w == "G21") out.g21 = true;
      if (w == "G20") out.g20 = true;
      if (w[0] == 'G' || w[0] == 'M') {
        if (g.empty()) g = w;
        continue;
      }
      v[w[0]] = std::stod(w.substr(1));
    }
    if (v.count('F')) feed = v['F'];
    if (g == "G21" || g == "G90" || g == "M2") continue;
    if (g == "G4") {
      REQUIRE(v.count('P'));
      out.dwells.push_back(v['P']);
      continue;
    }
    REQUIRE((g == "G0" || g == "G1" || g == "G2" || g == "G3"));
    Vec2 to{v.count('X') ? v['X'] : at.x, v.count('Y') ? v['Y'] : at.y};
    if (g == "G0") {
      CHECK_FALSE(down);  // travel only with the pen up
      at = to;
      continue;
    }
    REQUIRE(down);
    out.feeds.push_back(feed);
    if (g == "G1") {
      ++out.lines;
      cur.push_back(to);
    } else {
      ++out.arcs;
      REQUIRE(v.count('I'));
      REQUIRE(v.count('J'));
      Vec2 c = at + Vec2{v['I'], v['J']};
      double r = sv::dist(at, c);
      REQUIRE(r > 0);
      CHECK(std::abs(sv::dist(to, c) - r) < 1e-3 * std::max(1.0, r));  // a controller would reject it
      double a0 = sv::angle_of(at - c), a1 = sv::angle_of(to - c);
      // G2 is clockwise in the y-up frame: the angle decreases.
      double sweep = g == "G2" ? -std::fmod(a0 - a1 + 4 * sv::kPi, 2 * sv::kPi) : std::fmod(a1 - a0 + 4 * sv::kPi, 2 * sv::kPi);
      if (std::abs(sweep) < 1e-9) sweep = g == "G2" ? -2 * sv::kPi : 2 * sv::kPi;
      CHECK(std::abs(sweep) <= sv::deg2rad(120) + 1e-4);  // the export keeps arcs well within half a turn
      int n = std::max(1, static_cast<int>(std::ceil(std::abs(sweep) * r / step)));
      for (int k = 1; k <= n; ++k) cur.push_back(c + sv::from_angle(a0 + sweep * k / n) * r);
    }
    at = to;
  }
  lift();
  return out;
}

// The values of attribute `name` of every element in `svg` that has it, in order.
std::vector<std::string> attributes(const std::string& svg, const std::string& name) {
  std::vector<std::string> out;
  const std::string key = " " + name + "=\"";
  for (size_t a = svg.find(key); a != std::string::npos; a = svg.find(key, a + 1)) {
    size_t b = a + key.size();
    out.push_back(svg.substr(b, svg.find('"', b) - b));
  }
  return out;
}

std::vector<std::string> split(const std::string& s, char sep) {
  std::vector<std::string> out;
  std::stringstream in(s);
  for (std::string item; std::getline(in, item, sep);) out.push_back(item);
  return out;
}

// The SVG's page: its viewBox (image pixels) and its width and height in mm.
struct SvgPage {
  double x = 0, y = 0, w = 0, h = 0, width_mm = 0, height_mm = 0;
};

SvgPage svg_page(const std::string& svg) {
  SvgPage p;
  const auto vb = split(attributes(svg, "viewBox").at(0), ' ');
  REQUIRE(vb.size() == 4);
  p.x = std::stod(vb[0]), p.y = std::stod(vb[1]), p.w = std::stod(vb[2]), p.h = std::stod(vb[3]);
  const std::string w = attributes(svg, "width").at(0), h = attributes(svg, "height").at(0);
  REQUIRE(w.size() > 2);
  REQUIRE(w.substr(w.size() - 2) == "mm");
  REQUIRE(h.substr(h.size() - 2) == "mm");
  p.width_mm = std::stod(w), p.height_mm = std::stod(h);
  return p;
}

}  // namespace

TEST_CASE("G-code of five drawings reads back onto the drawn paths within 0.1 px", "[e2e][export]") {
  struct Case {
    const char* name;
    bool mm;
    const char *up, *down;
  };
  const Case cases[] = {
      {"feather_umbrella_w8", true, "M5", "M3 S1000"},
      {"lucide_circle-check_w8", true, "M5", "M3 S1000"},
      {"tabler_hexagons_w5", false, "G0 Z5", "G1 Z0 F300"},
      {"hand_circle-pause_w10", true, "G0 Z5", "G1 Z0 F300"},
      {"hershey_futural_02_w4", false, "M5", "M3 S1000"},
  };
  int arcs = 0;
  for (const Case& c : cases) {
    INFO(c.name);
    auto nc = scratch() / (std::string(c.name) + ".nc");
    Run r = run(routed(c.name) + " | " +
                fmt::format("{} --no-store --gcode {} --gcode-units {} --gcode-pen-up '{}' --gcode-pen-down '{}'",
                            bin("sv-simulate"), nc.string(), c.mm ? "mm" : "px", c.up, c.down));
    REQUIRE(r.status == 0);
    sv::Scene s = sv::parse_scene(r.out);
    std::string text = slurp(nc);
    CHECK(text.find("nan") == std::string::npos);
    CHECK(text.find("inf") == std::string::npos);
    double scale = c.mm ? 25.4 / s.robot->ppi : 1.0, height = s.source->height - 1;
    ParsedGcode g = parse_gcode(text, c.up, c.down, 0.05 * scale);
    arcs += g.arcs;
    // Every drawing move at the drawing feed, even after a pen line that sets its own F.
    REQUIRE(!g.feeds.empty());
    long off_feed = std::count_if(g.feeds.begin(), g.feeds.end(), [](double f) { return f != 1500; });
    CHECK(off_feed == 0);
    // Millimetres say so (G21); pixels write no unit word and say why in a comment.
    CHECK(g.g21 == c.mm);
    CHECK_FALSE(g.g20);
    if (!c.mm) CHECK(text.find("units are image pixels") != std::string::npos);
    CHECK(g.dwells.empty());  // no dwell unless asked for
    // Undo the units and the y flip.
    for (auto& st : g.strokes)
      for (Vec2& p : st) p = {p.x / scale, height - p.y / scale};
    sv::Replay rp = sv::replay(*s.commands, s.robot->start, 0.05);
    CHECK(g.strokes.size() == rp.strokes.size());
    double h = hausdorff(g.strokes, rp.strokes);
    INFO(fmt::format("{} strokes, {} G1, {} G2/G3, deviation {:.4f} px", g.strokes.size(), g.lines, g.arcs, h));
    CHECK(h <= 0.1);
  }
  CHECK(arcs > 0);  // the drawings have arcs, and they stay arcs
}

TEST_CASE("the Doodlebot stream is the scene's commands from its start pose", "[e2e][export]") {
  auto file = scratch() / "stream.json";
  Run r = run(routed("feather_umbrella_w8") + " | " + bin("sv-simulate") + " --no-store --commands " + file.string());
  REQUIRE(r.status == 0);
  sv::Scene s = sv::parse_scene(r.out);
  auto j = nlohmann::json::parse(slurp(file));
  REQUIRE(j["commands"].size() == s.commands->size());
  CHECK(j["start"]["x"].get<double>() == Approx(s.robot->start.x));
  CHECK(j["start"]["heading_deg"].get<double>() == Approx(s.robot->start.heading_deg));
  for (size_t i = 0; i < s.commands->size(); ++i) {
    const auto& c = (*s.commands)[i];
    const auto& o = j["commands"][i];
    CHECK(o["kind"] == (c.kind == sv::Command::Kind::line ? "line" : c.kind == sv::Command::Kind::spin ? "spin" : "arc"));
    if (c.kind == sv::Command::Kind::line) {
      CHECK(o["distance"].get<double>() == Approx(c.distance));
      CHECK(o["penDown"].get<bool>() == c.pen_down);
    } else {
      CHECK(o["degrees"].get<double>() == Approx(c.degrees));
    }
  }
}

TEST_CASE("the SVG export renders (rsvg-convert) to the ink of the drawn strokes", "[e2e][export]") {
  if (run("command -v rsvg-convert").status != 0) {
    WARN("rsvg-convert is not installed; SVG rendering not checked");
    return;
  }
  for (const char* name : {"feather_umbrella_w8", "tabler_circle-letter-x_w8", "hershey_scripts_09_w6"}) {
    INFO(name);
    auto svg = scratch() / (std::string(name) + ".svg");
    auto png = scratch() / (std::string(name) + ".svg.png");
    Run r = run(routed(name) + " | " + bin("sv-simulate") + " --no-store --svg " + svg.string());
    REQUIRE(r.status == 0);
    sv::Scene s = sv::parse_scene(r.out);
    // The page is the drawing at its size on paper: the strokes' extent in pixels, in mm at the
    // robot's scale.
    const SvgPage page = svg_page(slurp(svg));
    const auto replayed = sv::replay(*s.commands, s.robot->start, 0.05).strokes;
    sv::BBox box;
    for (const auto& l : replayed)
      for (Vec2 q : l) box.add(q);
    CHECK(page.x == Approx(box.x0).margin(0.01));
    CHECK(page.y == Approx(box.y0).margin(0.01));
    CHECK(page.w == Approx(box.width()).margin(0.01));
    CHECK(page.h == Approx(box.height()).margin(0.01));
    const double mm_per_px = 25.4 / s.robot->ppi;
    CHECK(page.width_mm == Approx(page.w * mm_per_px).margin(2e-3));
    CHECK(page.height_mm == Approx(page.h * mm_per_px).margin(2e-3));
    CHECK(std::max(page.width_mm, page.height_mm) == Approx(s.robot->footprint_mm).margin(0.1));
    // Rendered at the robot's own pixels per inch, one user unit is one pixel.
    REQUIRE(run(fmt::format("rsvg-convert -b white -d {0} -p {0} {1} -o {2}", s.robot->ppi, svg.string(), png.string()))
                .status == 0);
    cv::Mat rendered = sv::decode_png(slurp(png)) < 128;
    const int w = rendered.cols, h = rendered.rows;
    CHECK(std::abs(w - page.w) <= 1);
    CHECK(std::abs(h - page.h) <= 1);
    // The replayed strokes as ink: pixel centres within half a stroke width.
    cv::Mat expect(h, w, CV_8UC1, cv::Scalar(0));
    double half = s.source->stroke_width_px / 2;
    SegmentIndex strokes(sv::replay(*s.commands, s.robot->start, 0.25).strokes, 4.0);
    // rsvg-convert rounds the canvas up and draws the page from its top left corner at the
    // page's own size.
    const double zoom = page.width_mm / 25.4 * s.robot->ppi / page.w, ox = 0, oy = 0;
    for (int y = 0; y < h; ++y)
      for (int x = 0; x < w; ++x) {
        const Vec2 q{page.x + (x + 0.5 - ox) / zoom, page.y + (y + 0.5 - oy) / zoom};
        if (strokes.distance(q, half) <= half) expect.at<uchar>(y, x) = 255;
      }
    cv::Mat k = cv::getStructuringElement(cv::MORPH_ELLIPSE, {3, 3}), grown_r, grown_e;
    cv::dilate(rendered, grown_r, k);
    cv::dilate(expect, grown_e, k);
    double ink_r = cv::countNonZero(rendered), ink_e = cv::countNonZero(expect);
    double both = cv::countNonZero(rendered & expect), either = cv::countNonZero(rendered | expect);
    double r_near_e = cv::countNonZero(rendered & grown_e) / ink_r;  // rendered ink within 1 px of expected
    double e_near_r = cv::countNonZero(expect & grown_r) / ink_e;
    INFO(fmt::format("ink {} vs {} px, IoU {:.3f}, within 1 px: {:.4f} / {:.4f}", ink_r, ink_e, both / either,
                     r_near_e, e_near_r));
    CHECK(both / either >= 0.98);
    CHECK(r_near_e >= 0.99);
    CHECK(e_near_r >= 0.99);
  }
}

// One SMIL animation element read back: its attribute, duration and keys.
struct Smil {
  std::string attribute, type, calc;
  double dur = 0, repeat_dur = 0;
  std::vector<double> times;
  std::vector<std::string> values;
  // The value at play time `t` (seconds from the start): linear between keys (numbers, or
  // "x y" pairs), discrete holds each key; repeated every dur up to repeat_dur.
  std::vector<double> at(double t) const {
    double f = t / dur;
    if (repeat_dur > 0) f = std::fmod(t, dur) / dur;
    f = std::clamp(f, 0.0, 1.0);
    size_t j = 0;
    while (j + 1 < times.size() && times[j + 1] <= f) ++j;
    auto nums = [](const std::string& v) {
      std::vector<double> out;
      std::istringstream in(v);
      for (double x; in >> x;) out.push_back(x);
      return out;
    };
    std::vector<double> a = nums(values[j]);
    if (calc == "discrete" || j + 1 == times.size() || times[j + 1] == times[j]) return a;
    const std::vector<double> b = nums(values[j + 1]);
    const double u = (f - times[j]) / (times[j + 1] - times[j]);
    for (size_t k = 0; k < a.size(); ++k) a[k] += (b[k] - a[k]) * u;
    return a;
  }
};

// Every <animate> and <animateTransform> in `text`, in order.
std::vector<Smil> smil(const std::string& text) {
  std::vector<Smil> out;
  for (size_t at = text.find("<animate"); at != std::string::npos; at = text.find("<animate", at + 1)) {
    const std::string e = text.substr(at, text.find("/>", at) - at);
    Smil a;
    a.attribute = attributes(e, "attributeName").at(0);
    const auto type = attributes(e, "type"), calc = attributes(e, "calcMode"), rd = attributes(e, "repeatDur");
    a.type = type.empty() ? "" : type[0];
    a.calc = calc.empty() ? "linear" : calc[0];
    a.dur = std::stod(attributes(e, "dur").at(0));
    a.repeat_dur = rd.empty() ? 0 : std::stod(rd[0]);
    CHECK(attributes(e, "begin").at(0) == "0s");
    for (const std::string& k : split(attributes(e, "keyTimes").at(0), ';')) a.times.push_back(std::stod(k));
    a.values = split(attributes(e, "values").at(0), ';');
    REQUIRE(a.times.size() == a.values.size());
    CHECK(a.times.front() == 0);
    for (size_t j = 1; j < a.times.size(); ++j) CHECK(a.times[j] >= a.times[j - 1]);
    out.push_back(a);
  }
  return out;
}

// The part of `text` from the element with id `id` to the next element with an id (or the end).
std::string element(const std::string& text, const std::string& id) {
  const size_t a = text.find("id=\"" + id + "\"");
  REQUIRE(a != std::string::npos);
  const size_t b = text.find(" id=\"", a + 4);
  return text.substr(a, b == std::string::npos ? std::string::npos : b - a);
}

TEST_CASE("the animated SVG plays the simulation's times and its still image is the static SVG's drawing",
          "[e2e][export]") {
  struct Case {
    const char* name;
    const char* speed;  // "" for the default
  };
  for (const Case c : {Case{"feather_umbrella_w8", "4"}, Case{"hershey_scripts_09_w6", ""},
                       Case{"hershey_scripts_09_w6", "4"}}) {
    const char* name = c.name;
    INFO(name << " speed " << c.speed);
    const auto svg = scratch() / (std::string(name) + ".still.svg"), anim = scratch() / (std::string(name) + ".anim.svg");
    const std::string command = routed(name) + " | " + bin("sv-simulate") + " --no-store --svg " + svg.string() +
                                " --animate " + anim.string() + (*c.speed ? std::string(" --animate-speed ") + c.speed : "");
    Run r = run(command);
    REQUIRE(r.status == 0);
    const sv::Scene s = sv::parse_scene(r.out);
    const std::string a = slurp(anim);
    REQUIRE(run(command + " > /dev/null").status == 0);
    CHECK(slurp(anim) == a);  // the same scene, the same bytes
    const double total = s.simulation->total_s;
    // The default plays the whole drawing in 30 s, never slower than real time.
    const double speedup = *c.speed ? std::stod(c.speed) : std::max(1.0, total / 30);
    const double play = total / speedup;

    // One dash-offset animation per stroke of the static SVG, all playing the whole drawing.
    long strokes = 0;
    for (const Smil& e : smil(element(a, "strokes"))) {
      if (e.attribute != "stroke-dashoffset") continue;
      ++strokes;
      CHECK(e.dur == Approx(play).margin(1e-3));
      CHECK(e.times.back() == 1);
      CHECK(e.values.back() == "0");  // frozen whole
    }
    CHECK(strokes == static_cast<long>(attributes(element(slurp(svg), "strokes"), "d").size()));
    CHECK(strokes == s.metrics["strokes"].get<long>());

    // The pen-up travel: a straight move is a line from where the robot lifts the pen to where
    // it lowers it, growing from its start while the robot travels it; an arc of travel is its
    // path, shown once the robot has driven it.
    const sv::Replay rp = sv::replay(*s.commands, s.robot->start);
    CHECK(static_cast<long>(rp.pen_up.size()) == s.metrics["pen_up_moves"].get<long>());
    if (rp.pen_up.empty()) CHECK(a.find("id=\"pen-up\"") == std::string::npos);
    if (!rp.pen_up.empty()) {
    const std::string travel = element(a, "pen-up");
    CHECK(travel.find("display=\"none\"") != std::string::npos);
    std::vector<std::pair<sv::Vec2, sv::Vec2>> straight;
    size_t k = 0;
    for (const sv::Command& c : *s.commands)
      if (c.kind != sv::Command::Kind::spin && !c.pen_down) {
        if (c.kind == sv::Command::Kind::line) straight.push_back(rp.pen_up[k]);
        ++k;
      }
    REQUIRE(k == rp.pen_up.size());
    CHECK(attributes(travel, "d").size() == rp.pen_up.size() - straight.size());
    const auto x1 = attributes(travel, "x1"), y1 = attributes(travel, "y1");
    REQUIRE(x1.size() == straight.size());
    const std::vector<Smil> grow = smil(travel);
    REQUIRE(grow.size() == 2 * straight.size() + (rp.pen_up.size() - straight.size()));  // x2 and y2 of each line, opacity of each arc
    size_t line = 0;
    for (const Smil& g : grow) {
      if (g.attribute != "x2") continue;
      const auto [from, to] = straight[line];
      CHECK(std::stod(x1[line]) == Approx(from.x).margin(2e-3));
      CHECK(std::stod(y1[line]) == Approx(from.y).margin(2e-3));
      const Smil& gy = (&g)[1];
      CHECK(gy.attribute == "y2");
      CHECK(g.at(0)[0] == Approx(from.x).margin(2e-3));
      CHECK(g.at(g.dur)[0] == Approx(to.x).margin(2e-3));
      CHECK(gy.at(gy.dur)[0] == Approx(to.y).margin(2e-3));
      ++line;
    }
    CHECK(line == straight.size());
    }

    // The robot: where the simulation says it is, heading where it heads, at the end of every
    // step, and turning through every spin (half way through at half its time).
    const std::vector<Smil> robot = smil(element(a, "robot"));
    REQUIRE(robot.size() == 2);
    const Smil &move = robot[0], &turn = robot[1];
    CHECK(move.type == "translate");
    CHECK(turn.type == "rotate");
    CHECK(move.dur == Approx(play).margin(1e-3));
    double t = 0, worst_pos = 0, worst_deg = 0;
    int spins = 0;
    sv::Pose before = s.robot->start;
    for (const sv::SimStep& st : s.simulation->steps) {
      if (st.op == sv::SimStep::Op::spin && st.duration_s > 0) {
        const double mid = sv::wrap_deg(turn.at((t + st.duration_s / 2) / total * turn.dur)[0]);
        const double expect = before.heading_deg + (*s.commands)[st.command].degrees / 2;
        CHECK(std::abs(sv::wrap_deg(mid - expect)) < 0.1);
        ++spins;
      }
      t += st.duration_s;
      // (At the fraction of the whole: the play's duration is written to the millisecond.)
      const auto p = move.at(t / total * move.dur);
      worst_pos = std::max(worst_pos, std::hypot(p[0] - st.end.x, p[1] - st.end.y));
      worst_deg = std::max(worst_deg, std::abs(sv::wrap_deg(turn.at(t / total * turn.dur)[0] - st.end.heading_deg)));
      before = st.end;
    }
    INFO(fmt::format("{} steps, {} spins: robot within {:.4f} px and {:.4f} degrees of the simulation's poses",
                     s.simulation->steps.size(), spins, worst_pos, worst_deg));
    CHECK(spins > 0);
    CHECK(worst_pos < 0.05);
    CHECK(worst_deg < 0.1);

    // The clock: the glyphs shown at a play time spell the robot's elapsed time, m:ss.
    const std::string clock = element(a, "clock");
    std::vector<std::pair<double, std::string>> glyphs;  // x, text
    std::vector<Smil> shows;
    for (size_t at = clock.find("<text"); at != std::string::npos; at = clock.find("<text", at + 1)) {
      const std::string e = clock.substr(at, clock.find("</text>", at) - at);
      const size_t body = e.find('>') + 1;
      const std::string label = e.substr(body, e.find('<', body) - body);
      glyphs.emplace_back(std::stod(attributes(e, "x").at(0)), label);
      const auto anims = smil(e);
      shows.push_back(anims.empty() ? Smil{} : anims[0]);
    }
    for (double robot_s : {0.5, 9.5, 10.2, 59.9, 61.3, total - 0.3}) {
      if (robot_s > total) continue;
      std::map<double, std::string> shown;  // by x
      for (size_t i = 0; i < glyphs.size(); ++i) {
        if (shows[i].values.empty()) {
          if (glyphs[i].second == ":") shown[glyphs[i].first] += ":";
          continue;
        }
        const Smil& d = shows[i];
        const double play_t = robot_s / speedup;
        std::string v = d.values[0];
        const double f = std::fmod(play_t, d.dur) / d.dur;
        for (size_t j = 0; j < d.times.size(); ++j)
          if (d.times[j] <= f) v = d.values[j];
        if (v == "inline") shown[glyphs[i].first] += glyphs[i].second;
      }
      std::string text;
      for (const auto& [x, g] : shown) text += g;
      const long whole = static_cast<long>(robot_s);
      INFO(robot_s);
      CHECK(text == fmt::format("{}:{:02}", whole / 60, whole % 60));
    }
    CHECK(clock.find(fmt::format(" at {:g}", sv::round_to(speedup, 0.1))) != std::string::npos);

    if (run("command -v rsvg-convert").status != 0) {
      WARN("rsvg-convert is not installed; the animated SVG's still image is not rendered");
      continue;
    }
    // rsvg-convert draws the still image, which is the last frame: the static SVG's pixels.
    const int w = s.source->width, h = s.source->height;
    const auto still_png = scratch() / (std::string(name) + ".still.png"), anim_png = scratch() / (std::string(name) + ".anim.png");
    REQUIRE(run(fmt::format("rsvg-convert -b white -w {} -h {} {} -o {}", w, h, svg.string(), still_png.string())).status == 0);
    REQUIRE(run(fmt::format("rsvg-convert -b white -w {} -h {} {} -o {}", w, h, anim.string(), anim_png.string())).status == 0);
    cv::Mat still = sv::decode_png(slurp(still_png)), frame = sv::decode_png(slurp(anim_png)), diff;
    REQUIRE(still.size() == frame.size());
    cv::absdiff(still, frame, diff);
    cv::Mat gray = diff.reshape(1);
    const double differing = cv::countNonZero(gray > 8) / double(gray.total());
    INFO(fmt::format("{:.4f} of the channels differ by more than 8", differing));
    CHECK(differing <= 0.001);
    CHECK(cv::countNonZero(still.reshape(1) < 128) > 0);  // there is a drawing to compare
  }
}

TEST_CASE("every export backend is an sv-simulate option that writes a non-empty file, under any path the same revision",
          "[e2e][export]") {
  const auto dir = scratch() / "backends";
  std::filesystem::create_directories(dir);
  const auto routed_scene = dir / "routed.json";
  REQUIRE(run(routed("feather_umbrella_w8") + " > " + routed_scene.string()).status == 0);
  Run help = run(bin("sv-simulate") + " --help");
  REQUIRE(help.status == 0);
  std::string base_revision;
  for (const sv::ExportBackend& b : sv::export_backends()) {
    INFO(b.name);
    CHECK(help.out.find(b.option) != std::string::npos);
    for (const sv::ExportOption& o : b.options) CHECK(help.out.find(o.flag) != std::string::npos);
    std::string revision;
    for (const char* stem : {"one", "two"}) {
      const auto file = dir / (std::string(stem) + "_" + b.name + b.extension);
      Run r = run(bin("sv-simulate") + " --no-store " + b.option + " " + file.string() + " " + routed_scene.string());
      REQUIRE(r.status == 0);
      REQUIRE(std::filesystem::exists(file));
      CHECK(std::filesystem::file_size(file) > 0);
      sv::Scene s = sv::parse_scene(r.out);
      // Where a file goes is not what was computed: neither its option nor its path is recorded.
      CHECK(s.revision.args.dump().find(b.option) == std::string::npos);
      CHECK(s.revision.args.dump().find(file.string()) == std::string::npos);
      if (revision.empty()) revision = s.revision.id;
      CHECK(s.revision.id == revision);
    }
    if (base_revision.empty()) base_revision = revision;
    CHECK(revision == base_revision);  // and the same revision as any other export of the drawing
  }
  // Nothing but the files asked for: no temporaries left.
  for (const auto& e : std::filesystem::directory_iterator(dir))
    CHECK(e.path().filename().string().rfind(sv::kTempFilePrefix, 0) != 0);
}

TEST_CASE("G-code's extents are the SVG page's size under every origin, margin and unit; dwells follow pen commands",
          "[e2e][export]") {
  struct Config {
    const char* args;
    bool mm, drawing_origin;
    double margin_mm, dwell_s;
  };
  const Config configs[] = {
      {"", true, false, 0, 0},
      {"--gcode-origin drawing --gcode-margin-mm 10 --gcode-dwell-s 0.25 --gcode-pen-up 'G0 Z5' "
       "--gcode-pen-down 'G1 Z0 F500'",
       true, true, 10, 0.25},
      {"--gcode-units px --gcode-origin drawing --gcode-margin-mm 5", false, true, 5, 0},
      {"--gcode-units px --gcode-no-flip --gcode-dwell-s 1", false, false, 0, 1},
  };
  double worst = 0;
  int files = 0;
  for (const char* name : {"feather_umbrella_w8", "lucide_circle-check_w8", "hershey_scripts_09_w6"}) {
    const auto scene_file = scratch() / (std::string(name) + ".routed.json");
    REQUIRE(run(routed(name) + " > " + scene_file.string()).status == 0);
    for (const Config& c : configs) {
      INFO(name << " " << c.args);
      const auto svg = scratch() / (std::string(name) + ".page.svg"), nc = scratch() / (std::string(name) + ".page.nc");
      Run r = run(fmt::format("{} --no-store --svg {} --gcode {} {} {}", bin("sv-simulate"), svg.string(), nc.string(),
                              c.args, scene_file.string()));
      REQUIRE(r.status == 0);
      const sv::Scene s = sv::parse_scene(r.out);
      const double scale = c.mm ? 25.4 / s.robot->ppi : 1.0;
      const std::string up = c.dwell_s == 0.25 ? "G0 Z5" : "M5", down = c.dwell_s == 0.25 ? "G1 Z0 F500" : "M3 S1000";
      const ParsedGcode g = parse_gcode(slurp(nc), up, down, 0.02 * scale);
      ++files;
      const SvgPage page = svg_page(slurp(svg));
      // The toolpath's extent in mm is the page's size in mm.
      const double to_mm = c.mm ? 1.0 : 25.4 / s.robot->ppi;
      const double dw = std::abs(g.drawn.width() * to_mm - page.width_mm),
                   dh = std::abs(g.drawn.height() * to_mm - page.height_mm);
      INFO(fmt::format("toolpath {:.4f} x {:.4f} mm, page {} x {} mm", g.drawn.width() * to_mm,
                       g.drawn.height() * to_mm, page.width_mm, page.height_mm));
      CHECK(dw <= 0.1);
      CHECK(dh <= 0.1);
      worst = std::max({worst, dw, dh});
      // With the drawing's corner as origin, the plot starts at the margin.
      if (c.drawing_origin) {
        CHECK(g.drawn.x0 * to_mm == Approx(c.margin_mm).margin(0.01));
        CHECK(g.drawn.y0 * to_mm == Approx(c.margin_mm).margin(0.01));
      } else {
        CHECK(g.drawn.x0 > 0);  // the image's frame: where the drawing lies in its image
      }
      // Every drawing move at the drawing feed; a dwell after every pen command, or none.
      CHECK(std::count_if(g.feeds.begin(), g.feeds.end(), [](double f) { return f != 1500; }) == 0);
      if (c.dwell_s > 0) {
        CHECK(g.dwells.size() == static_cast<size_t>(g.pen_commands));
        for (double d : g.dwells) CHECK(d == c.dwell_s);
      } else {
        CHECK(g.dwells.empty());
      }
    }
  }
  WARN(fmt::format("{} G-code files: toolpath extent vs SVG page, largest difference {:.4f} mm", files, worst));
}

TEST_CASE("the SVG's pen-up travel is a hidden Inkscape layer that no renderer draws", "[e2e][export]") {
  const auto svg = scratch() / "layers.svg";
  Run r = run(routed("hershey_scripts_09_w6") + " | " + bin("sv-simulate") + " --no-store --svg " + svg.string());
  REQUIRE(r.status == 0);
  const std::string text = slurp(svg);
  CHECK(text.find("xmlns:inkscape=\"http://www.inkscape.org/namespaces/inkscape\"") != std::string::npos);
  const size_t open = text.find("<g id=\"pen-up\"");
  REQUIRE(open != std::string::npos);
  const std::string tag = text.substr(open, text.find('>', open) - open);
  CHECK(tag.find("inkscape:groupmode=\"layer\"") != std::string::npos);
  CHECK(tag.find("inkscape:label=\"pen-up travel\"") != std::string::npos);
  CHECK(tag.find("style=\"display:none\"") != std::string::npos);
  CHECK(tag.find("visibility") == std::string::npos);
  CHECK(text.find("<g id=\"strokes\" inkscape:groupmode=\"layer\"") != std::string::npos);
  if (run("command -v rsvg-convert").status != 0) {
    WARN("rsvg-convert is not installed; the travel layer is not rendered");
    return;
  }
  // Rendered as written, without the travel layer, and with the layer shown: the first two are
  // the same pixels, the third is not (the check can see travel).
  const size_t close = text.find("</g>", open) + 5;
  std::string without = text, shown = text;
  without.erase(open, close - open);
  shown.replace(shown.find("style=\"display:none\"", open), 20, "style=\"display:inline\"");
  auto render = [&](const std::string& body, const char* stem) {
    const auto file = scratch() / (std::string(stem) + ".svg"), png = scratch() / (std::string(stem) + ".png");
    sv::write_output_file(file.string(), body);
    REQUIRE(run(fmt::format("rsvg-convert -b white {} -o {}", file.string(), png.string())).status == 0);
    return sv::decode_png(slurp(png));
  };
  const cv::Mat as_written = render(text, "layers_written"), no_travel = render(without, "layers_removed"),
                travel = render(shown, "layers_shown");
  REQUIRE(as_written.size() == no_travel.size());
  cv::Mat diff;
  cv::absdiff(as_written, no_travel, diff);
  const int differing = cv::countNonZero(diff.reshape(1));
  cv::absdiff(as_written, travel, diff);
  const int with_travel = cv::countNonZero(diff.reshape(1));
  WARN(fmt::format("travel layer as written vs removed: {} channel values differ; shown: {}", differing, with_travel));
  CHECK(differing == 0);
  CHECK(with_travel > 0);
}
