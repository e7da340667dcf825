#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <set>

#include "core/error.hpp"
#include "export/export.hpp"
#include "render/view.hpp"
#include "robot/replay.hpp"
#include "robot/simulate.hpp"

namespace sv {

namespace {

std::string num(double v) { return fmt::format("{}", round_to(v, 1e-3)); }

// Path data of an arc from `from` about `center`, in pieces of at most a quarter turn. An SVG
// arc is given by its ends and radius, and the reader finds its centre again: near a half turn
// an error e in the ends moves that centre by up to sqrt(2 r e), 0.55 px for a radius of 150 px
// and ends written to 0.001 px (a circle's two halves were drawn about centres 1 px apart);
// within a quarter turn it moves by about e. (A full turn cannot be one arc at all.)
std::string arc_data(Vec2 from, Vec2 center, double radius, double sweep_deg) {
  const int k = std::max(1, static_cast<int>(std::ceil(std::abs(sweep_deg) / 90 - 1e-9)));
  double a0 = angle_of(from - center), sw = deg2rad(sweep_deg);
  std::string d;
  for (int i = 1; i <= k; ++i) {
    Vec2 p = center + from_angle(a0 + sw * i / k) * radius;
    d += fmt::format(" A {} {} 0 0 {} {} {}", num(radius), num(radius), sweep_deg > 0 ? 1 : 0, num(p.x), num(p.y));
  }
  return d;
}

// A pen-down stroke: its path data, the primitives it draws and its pieces (indices into
// SvgDrawing::pieces) with their total length.
struct SvgStroke {
  std::string d, ids;
  std::vector<size_t> pieces;
  double length = 0;
};

struct SvgDrawing {
  cv::Rect2d page;      // the viewBox, image pixels
  std::string unit;     // of width and height: "mm" at the robot's scale, else "" (px)
  double mm_per_px = 1; // with "mm"
  double stroke_width = 1;
  std::vector<DrawnPiece> pieces;
  std::vector<SvgStroke> strokes;
  std::string travel;  // pen-up moves as <line> elements
};

double piece_length(const DrawnPiece& p) {
  return p.degrees == 0 ? dist(p.path.front(), p.path.back()) : std::abs(p.radius * deg2rad(p.degrees));
}

// The extremes of an arc from `from` about `center` sweeping `sweep_deg`: its ends and every
// axis direction it passes.
void add_arc(BBox& b, Vec2 from, Vec2 to, Vec2 center, double radius, double sweep_deg) {
  b.add(from);
  b.add(to);
  const double sw = std::abs(deg2rad(sweep_deg)), a0 = angle_of(from - center);
  for (int k = 0; k < 4; ++k) {
    const double q = k * kPi / 2;
    double d = std::fmod(sweep_deg > 0 ? q - a0 : a0 - q, 2 * kPi);
    if (d < 0) d += 2 * kPi;
    if (d <= sw) b.add(center + from_angle(q) * radius);
  }
}

BBox bounds_of(const std::vector<DrawnPiece>& pieces) {
  BBox b;
  for (const DrawnPiece& p : pieces) {
    if (!p.pen_down || p.path.empty()) continue;
    if (p.degrees != 0 && std::isfinite(p.radius) && p.radius > 0) {
      add_arc(b, p.path.front(), p.path.back(), p.center, p.radius, p.degrees);
    } else {
      for (Vec2 q : p.path) b.add(q);
    }
  }
  return b;
}

SvgDrawing svg_drawing(const Scene& scene) {
  SvgDrawing g;
  g.stroke_width = stroke_width_of(scene);
  g.pieces = drawn_pieces(scene, 1.0);
  const BBox b = bounds_of(g.pieces);
  if (scene.commands && scene.robot && scene.robot->ppi > 0 && !b.empty()) {
    // The drawing at its size on paper; a side with no extent (one straight stroke) gets the
    // stroke's width, so the page is never empty.
    const double w = b.width() < 1e-3 ? g.stroke_width : b.width();
    const double h = b.height() < 1e-3 ? g.stroke_width : b.height();
    g.page = {(b.x0 + b.x1 - w) / 2, (b.y0 + b.y1 - h) / 2, w, h};
    g.unit = "mm";
    g.mm_per_px = 25.4 / scene.robot->ppi;
  } else {
    g.page = view_transform(scene, ViewOptions{}).region;
  }
  SvgStroke cur;
  std::set<std::string> ids;
  auto flush = [&] {
    if (cur.d.empty()) return;
    for (const auto& id : ids) cur.ids += (cur.ids.empty() ? "" : " ") + id;
    g.strokes.push_back(std::move(cur));
    cur = {};
    ids.clear();
  };
  for (size_t i = 0; i < g.pieces.size(); ++i) {
    const DrawnPiece& p = g.pieces[i];
    Vec2 a = p.path.front(), b = p.path.back();
    if (!p.pen_down) {
      flush();
      g.travel += p.degrees == 0
          ? fmt::format("<line x1=\"{}\" y1=\"{}\" x2=\"{}\" y2=\"{}\"/>\n", num(a.x), num(a.y), num(b.x), num(b.y))
          : fmt::format("<path d=\"M {} {}{}\"/>\n", num(a.x), num(a.y), arc_data(a, p.center, p.radius, p.degrees));
      continue;
    }
    if (p.starts_stroke) flush();
    if (cur.d.empty()) cur.d = fmt::format("M {} {}", num(a.x), num(a.y));
    for (std::string& id : primitive_ids(p.primitive)) ids.insert(std::move(id));
    cur.d += p.degrees == 0 ? fmt::format(" L {} {}", num(b.x), num(b.y)) : arc_data(a, p.center, p.radius, p.degrees);
    cur.pieces.push_back(i);
    cur.length += piece_length(p);
  }
  flush();
  return g;
}

std::string svg_open(const SvgDrawing& g) {
  const cv::Rect2d& r = g.page;
  const double k = g.unit.empty() ? 1 : g.mm_per_px;
  return fmt::format("<svg xmlns=\"http://www.w3.org/2000/svg\" "
                     "xmlns:inkscape=\"http://www.inkscape.org/namespaces/inkscape\" width=\"{}{}\" height=\"{}{}\" "
                     "viewBox=\"{} {} {} {}\">\n"
                     "<g id=\"strokes\" inkscape:groupmode=\"layer\" inkscape:label=\"drawing\" fill=\"none\" "
                     "stroke=\"black\" stroke-width=\"{}\" stroke-linecap=\"round\" stroke-linejoin=\"round\">\n",
                     num(r.width * k), g.unit, num(r.height * k), g.unit, num(r.x), num(r.y), num(r.width), num(r.height),
                     num(g.stroke_width));
}

// The travel layer's opening tag: hidden by display:none (a style, as Inkscape writes a hidden
// layer) in the static SVG; by the display attribute in the animation, whose <set> shows it
// while it plays (an animated attribute does not override a style).
std::string travel_open(bool animated) {
  return fmt::format("<g id=\"pen-up\" inkscape:groupmode=\"layer\" inkscape:label=\"pen-up travel\" {} fill=\"none\" "
                     "stroke=\"gray\" stroke-dasharray=\"4 3\">\n",
                     animated ? "display=\"none\"" : "style=\"display:none\"");
}

// The strokes' group closed, then the pen-up travel hidden.
std::string svg_travel(const SvgDrawing& g) {
  std::string out = "</g>\n";
  if (!g.travel.empty()) out += travel_open(false) + g.travel + "</g>\n";
  return out;
}

std::string path_open(const SvgStroke& s) { return fmt::format("<path data-primitives=\"{}\" d=\"{}\"", s.ids, s.d); }

// Keys (time s, value) as SMIL's values and keyTimes: times non-decreasing from 0 to `total_s`,
// as fractions of it; a key that repeats the one before adds nothing.
std::pair<std::string, std::string> key_lists(const std::vector<std::pair<double, std::string>>& keys, double total_s) {
  std::string values, times, last;
  for (const auto& [t, v] : keys) {
    const std::string time = fmt::format("{}", round_to(t / total_s, 1e-6));
    if (time + ";" + v == last) continue;
    last = time + ";" + v;
    values += (values.empty() ? "" : ";") + v;
    times += (times.empty() ? "" : ";") + time;
  }
  return {values, times};
}

std::string seconds(double s, double quantum = 1e-3) { return fmt::format("{}s", round_to(s, quantum)); }

// A piecewise linear animation of one attribute over the whole drawing: it plays in
// total_s / speedup seconds from the document's start.
std::string keyed_animation(const char* attribute, const std::vector<std::pair<double, std::string>>& keys,
                            double total_s, double speedup, bool freeze) {
  const auto [values, times] = key_lists(keys, total_s);
  return fmt::format("<animate attributeName=\"{}\" begin=\"0s\" dur=\"{}\" calcMode=\"linear\" values=\"{}\" "
                     "keyTimes=\"{}\"{}/>\n",
                     attribute, seconds(total_s / speedup), values, times, freeze ? " fill=\"freeze\"" : "");
}

// The same for a transform (translate or rotate) of a group.
std::string keyed_transform(const char* type, const std::vector<std::pair<double, std::string>>& keys, double total_s,
                            double speedup) {
  const auto [values, times] = key_lists(keys, total_s);
  return fmt::format("<animateTransform attributeName=\"transform\" type=\"{}\" begin=\"0s\" dur=\"{}\" "
                     "calcMode=\"linear\" values=\"{}\" keyTimes=\"{}\"/>\n",
                     type, seconds(total_s / speedup), values, times);
}

// Shown only while the animation plays (`play_s` seconds from the start): hidden in the still
// image and in the last frame.
std::string while_playing(double play_s) {
  return fmt::format("<set attributeName=\"display\" to=\"inline\" begin=\"0s\" dur=\"{}\"/>\n", seconds(play_s));
}

// Robot time as m:ss, h:mm:ss past an hour.
std::string clock_text(double s) {
  const long t = static_cast<long>(std::floor(s + 1e-9));
  return t >= 3600 ? fmt::format("{}:{:02}:{:02}", t / 3600, t / 60 % 60, t % 60) : fmt::format("{}:{:02}", t / 60, t % 60);
}

// The clock: the robot's elapsed time, one digit position at a time. A position shows one of its
// glyphs (a <text> each) for `unit` seconds of robot time out of every `period`; a discrete
// animation of its display, repeated through the play, picks it. Constant size whatever the
// drawing's length (a text per second would be 480 elements for an 8-minute sketch).
std::string clock_svg(const cv::Rect2d& page, double total_s, double speedup) {
  const double play_s = total_s / speedup;
  const double fs = std::max(page.width, page.height) * 0.045, cw = fs * 0.62, pad = fs * 0.4;
  // Positions from the left: (unit s, period s, glyph count); ':' between minutes and seconds
  // (and hours and minutes).
  struct Position {
    double unit, period;
    int glyphs;
  };
  std::vector<Position> pos;
  if (total_s >= 3600) {
    for (double u = 3600 * std::pow(10.0, std::floor(std::log10(total_s / 3600))); u >= 3600; u /= 10)
      pos.push_back({u, u * 10, 10});
    pos.push_back({-1, 0, 0});  // ':'
    pos.push_back({600, 3600, 6});
    pos.push_back({60, 600, 10});
  } else {
    for (double u = 60 * std::pow(10.0, std::floor(std::log10(std::max(total_s, 60.0) / 60))); u >= 60; u /= 10)
      pos.push_back({u, u * 10, 10});
  }
  pos.push_back({-1, 0, 0});
  pos.push_back({10, 60, 6});
  pos.push_back({1, 10, 10});
  const std::string total_text = fmt::format("/ {} at {:g}\u00d7", clock_text(total_s), round_to(speedup, 0.1));
  const double width = cw * (pos.size() + total_text.size()) + 2 * pad;
  const double x0 = page.x + pad, y0 = page.y + pad;
  std::string out = fmt::format(
      "<g id=\"clock\" display=\"none\" font-family=\"monospace\" font-size=\"{}\" fill=\"black\">\n{}"
      "<rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" rx=\"{}\" fill=\"white\" fill-opacity=\"0.85\" stroke=\"none\"/>\n",
      num(fs), while_playing(play_s), num(x0), num(y0), num(width), num(fs * 1.4), num(pad));
  const double baseline = y0 + fs * 1.05;
  double x = x0 + pad;
  for (const Position& p : pos) {
    if (p.unit < 0) {
      out += fmt::format("<text x=\"{}\" y=\"{}\">:</text>\n", num(x), num(baseline));
      x += cw;
      continue;
    }
    for (int v = 0; v < p.glyphs; ++v) {
      const double a = v * p.unit / p.period, b = (v + 1) * p.unit / p.period;
      if (p.period > total_s && v * p.unit > total_s) break;  // never shown
      std::string values = "none;inline;none", times = fmt::format("0;{};{}", round_to(a, 1e-6), round_to(b, 1e-6));
      if (v == 0) values = "inline;none", times = fmt::format("0;{}", round_to(b, 1e-6));
      if (v == p.glyphs - 1) values = "none;inline", times = fmt::format("0;{}", round_to(a, 1e-6));
      out += fmt::format(
          "<text x=\"{}\" y=\"{}\" display=\"none\">{}<animate attributeName=\"display\" calcMode=\"discrete\" "
          "values=\"{}\" keyTimes=\"{}\" begin=\"0s\" dur=\"{}\" repeatDur=\"{}\"/></text>\n",
          // (the period to the microsecond: repeated a thousand times, it must not drift)
          num(x), num(baseline), v, values, times, seconds(p.period / speedup, 1e-6), seconds(play_s));
    }
    x += cw;
  }
  out += fmt::format("<text x=\"{}\" y=\"{}\">{}</text>\n</g>\n", num(x + cw), num(baseline), total_text);
  return out;
}

}  // namespace

double animation_speedup(double total_s, double speedup) {
  if (speedup > 0) return speedup;
  return std::max(1.0, total_s / kAnimationTargetS);
}

BBox drawing_bounds(const Scene& scene) { return bounds_of(drawn_pieces(scene, 1.0)); }

std::string render_svg(const Scene& scene) {
  SvgDrawing g = svg_drawing(scene);
  std::string out = svg_open(g);
  for (const SvgStroke& s : g.strokes) out += path_open(s) + "/>\n";
  return out + svg_travel(g) + "</svg>\n";
}

std::string render_svg_animated(const Scene& scene, double speedup) {
  if (!scene.commands || !scene.robot)
    throw Error(Code::invalid_scene, "animated SVG: the scene has no command stream; run sv-route first");
  if (!(speedup >= 0) || !std::isfinite(speedup))
    throw Error(Code::internal, "animated SVG: the speed-up must be positive (or 0: automatic)");
  // Every step's time from the simulation (made here when the scene has none yet).
  Scene timed;
  if (!scene.simulation) {
    timed = scene;
    simulate(timed, {});
  }
  const Simulation& sim = scene.simulation ? *scene.simulation : *timed.simulation;
  const auto when = command_times(sim);
  double total = 0;
  for (const SimStep& st : sim.steps) total += st.duration_s;
  if (!(total > 0)) return render_svg(scene);  // nothing takes time: the still drawing is all there is
  speedup = animation_speedup(total, speedup);
  const SvgDrawing g = svg_drawing(scene);
  const double play_s = total / speedup;
  // Each stroke is revealed by its dash offset as its pieces are drawn; before its first piece
  // it is hidden, after its last it stays frozen whole. Without animation (the file's still
  // image) every stroke is whole, so the still image is the last frame.
  std::string out = svg_open(g) + fmt::format("<!-- the robot drawing it: {} of robot time at {:g}x: plays in {} -->\n",
                                              seconds(total), speedup, seconds(play_s));
  for (const SvgStroke& s : g.strokes) {
    const double dash = s.length + 1;  // longer than the stroke, so offset 0 shows all of it
    std::vector<std::pair<double, std::string>> keys = {{0, num(dash)}};
    double drawn = 0;
    for (size_t i : s.pieces) {
      const auto [b, e] = when.at(g.pieces[i].command);
      keys.emplace_back(b, num(dash - drawn));
      drawn += piece_length(g.pieces[i]);
      keys.emplace_back(e, i == s.pieces.back() ? "0" : num(dash - drawn));
    }
    keys.emplace_back(total, "0");
    out += path_open(s) + ">\n" +
           fmt::format("<set attributeName=\"stroke-dasharray\" to=\"{} {}\" begin=\"0s\"/>\n", num(dash), num(dash)) +
           keyed_animation("stroke-dashoffset", keys, total, speedup, true) + "</path>\n";
  }
  out += "</g>\n";
  // The pen-up travel, dashed, each move growing from its start as the robot travels it; the
  // layer is shown only while the animation plays.
  std::string travel;
  for (const DrawnPiece& p : g.pieces) {
    if (p.pen_down) continue;
    const auto [b, e] = when.at(p.command);
    const Vec2 a = p.path.front(), z = p.path.back();
    if (p.degrees != 0) {  // travel along an arc shows while the robot drives it
      travel += fmt::format("<path d=\"M {} {}{}\" opacity=\"0\">\n", num(a.x), num(a.y),
                            arc_data(a, p.center, p.radius, p.degrees)) +
                keyed_animation("opacity", {{0, "0"}, {b, "0"}, {e, "1"}, {total, "1"}}, total, speedup, false) + "</path>\n";
      continue;
    }
    travel += fmt::format("<line x1=\"{}\" y1=\"{}\" x2=\"{}\" y2=\"{}\">\n", num(a.x), num(a.y), num(a.x), num(a.y)) +
              keyed_animation("x2", {{0, num(a.x)}, {b, num(a.x)}, {e, num(z.x)}, {total, num(z.x)}}, total, speedup, false) +
              keyed_animation("y2", {{0, num(a.y)}, {b, num(a.y)}, {e, num(z.y)}, {total, num(z.y)}}, total, speedup, false) +
              "</line>\n";
  }
  if (!travel.empty()) out += travel_open(true) + while_playing(play_s) + travel + "</g>\n";
  // The robot: a triangle along its heading, moved and turned through every step at the
  // simulation's times (resting through pen changes, turning in place through spins), shown
  // only while the animation plays.
  const Pose& p0 = scene.robot->start;
  std::vector<std::pair<double, std::string>> at = {{0, num(p0.x) + " " + num(p0.y)}},
                                              heading = {{0, num(p0.heading_deg)}};
  for (const Move& m : replay_moves(*scene.commands, p0, 1.0)) {
    const auto [b, e] = when.at(m.command);
    if (m.kind == Command::Kind::spin || m.path.size() < 2) {
      at.emplace_back(b, num(m.start.x) + " " + num(m.start.y));
      at.emplace_back(e, num(m.end.x) + " " + num(m.end.y));
      heading.emplace_back(b, num(m.start.heading_deg));
      heading.emplace_back(e, num(m.end.heading_deg));
      continue;
    }
    // Lines are their two ends; arcs, sampled every pixel, a key every 10 degrees of turn (the
    // chord strays 0.4% of the radius from the arc).
    const size_t n = m.path.size() - 1;
    const size_t pieces = std::clamp<size_t>(
        static_cast<size_t>(std::ceil(std::abs(m.end.heading_deg - m.start.heading_deg) / 10 - 1e-9)), 1, n);
    for (size_t i = 0; i <= pieces; ++i) {
      const size_t k = i * n / pieces;
      const double t = b + (e - b) * k / n;
      at.emplace_back(t, num(m.path[k].x) + " " + num(m.path[k].y));
      heading.emplace_back(t, num(m.start.heading_deg + (m.end.heading_deg - m.start.heading_deg) * k / n));
    }
  }
  at.emplace_back(total, at.back().second);
  heading.emplace_back(total, heading.back().second);
  const double size = std::max(3 * g.stroke_width, 0.035 * std::max(g.page.width, g.page.height));
  out += fmt::format("<g id=\"robot\" display=\"none\">\n{}<g>\n{}<g>\n{}"
                     "<path d=\"M {} 0 L {} {} L {} 0 L {} {} Z\" fill=\"red\" fill-opacity=\"0.85\" stroke=\"darkred\" "
                     "stroke-width=\"{}\" stroke-linejoin=\"round\"/>\n</g>\n</g>\n</g>\n",
                     while_playing(play_s), keyed_transform("translate", at, total, speedup),
                     keyed_transform("rotate", heading, total, speedup), num(0.6 * size), num(-0.4 * size),
                     num(-0.4 * size), num(-0.2 * size), num(-0.4 * size), num(0.4 * size), num(size * 0.06));
  out += clock_svg(g.page, total, speedup);
  return out + "</svg>\n";
}

}  // namespace sv
