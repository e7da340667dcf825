#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <set>

#include "core/error.hpp"
#include "export/export.hpp"
#include "render/view.hpp"
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
      g.travel += fmt::format("<line x1=\"{}\" y1=\"{}\" x2=\"{}\" y2=\"{}\"/>\n", num(a.x), num(a.y), num(b.x), num(b.y));
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

// A piecewise linear animation of one attribute: `keys` are (time s, value), times non-decreasing
// from 0 to `total_s`; it plays in total_s / speedup seconds from the document's start.
std::string keyed_animation(const char* attribute, const std::vector<std::pair<double, std::string>>& keys,
                            double total_s, double speedup, bool freeze) {
  std::string values, times, last;
  for (const auto& [t, v] : keys) {
    const std::string time = fmt::format("{}", round_to(t / total_s, 1e-6));
    if (time + ";" + v == last) continue;  // a repeated key adds nothing
    last = time + ";" + v;
    values += (values.empty() ? "" : ";") + v;
    times += (times.empty() ? "" : ";") + time;
  }
  return fmt::format("<animate attributeName=\"{}\" begin=\"0s\" dur=\"{}s\" calcMode=\"linear\" values=\"{}\" "
                     "keyTimes=\"{}\"{}/>\n",
                     attribute, round_to(total_s / speedup, 1e-3), values, times, freeze ? " fill=\"freeze\"" : "");
}

}  // namespace

double animation_speedup(double total_s, double speedup) {
  if (speedup > 0) return speedup;
  return std::max(1.0, round_to(total_s / kAnimationTargetS, 1e-3));
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
  // Each stroke is revealed by its dash offset as its pieces are drawn; before its first piece
  // it is hidden, after its last it stays frozen whole. Without animation (the file's still
  // image) every stroke is whole, so the still image is the last frame.
  std::string out = svg_open(g) + fmt::format("<!-- the robot drawing it: {:.3f} s at {:g}x speed -->\n", total, speedup);
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
  out += svg_travel(g);
  // The robot: a dot along the pieces (resting through spins and pen changes), shown only while
  // the animation plays.
  const Pose& p = scene.robot->start;
  std::vector<std::pair<double, std::string>> xs = {{0, num(p.x)}}, ys = {{0, num(p.y)}};
  for (const DrawnPiece& piece : g.pieces) {
    const auto [b, e] = when.at(piece.command);
    // Lines are two points; arcs, sampled every pixel, keep about 24 of their samples.
    const size_t n = piece.path.size() - 1, stride = std::max<size_t>(1, n / 24);
    auto at = [&, b = b, e = e](size_t k) {
      const double t = b + (e - b) * k / n;
      xs.emplace_back(t, num(piece.path[k].x));
      ys.emplace_back(t, num(piece.path[k].y));
    };
    for (size_t k = 0; k < n; k += stride) at(k);
    at(n);
  }
  xs.emplace_back(total, xs.back().second);
  ys.emplace_back(total, ys.back().second);
  out += fmt::format("<circle id=\"robot\" cx=\"{}\" cy=\"{}\" r=\"{}\" fill=\"red\" visibility=\"hidden\">\n", num(p.x),
                     num(p.y), num(std::max(2.0, g.stroke_width)));
  out += fmt::format("<set attributeName=\"visibility\" to=\"visible\" begin=\"0s\" dur=\"{}s\"/>\n",
                     round_to(total / speedup, 1e-3));
  out += keyed_animation("cx", xs, total, speedup, false) + keyed_animation("cy", ys, total, speedup, false);
  return out + "</circle>\n</svg>\n";
}

}  // namespace sv
