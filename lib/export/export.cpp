#include "export/export.hpp"

#include <fmt/format.h>

#include <cmath>

#include "core/error.hpp"
#include "robot/replay.hpp"

namespace sv {

namespace {

constexpr double kQuantum = 1e-4;  // the scene's rounding

void require_commands(const Scene& scene, const char* what) {
  if (!scene.commands || !scene.robot)
    throw Error(Code::invalid_scene, fmt::format("{}: the scene has no command stream; run sv-route first", what));
}

}  // namespace

json doodlebot_stream(const Scene& scene) {
  require_commands(scene, "export");
  const Robot& r = *scene.robot;
  json cs = json::array();
  for (const Command& c : *scene.commands) {
    switch (c.kind) {
      case Command::Kind::line:
        cs.push_back({{"kind", "line"}, {"distance", round_to(c.distance, kQuantum)}, {"penDown", c.pen_down}});
        break;
      case Command::Kind::spin:
        cs.push_back({{"kind", "spin"}, {"degrees", round_to(c.degrees, kQuantum)}});
        break;
      case Command::Kind::arc:
        cs.push_back({{"kind", "arc"}, {"radius", round_to(c.radius, kQuantum)}, {"degrees", round_to(c.degrees, kQuantum)}});
        if (!c.pen_down) cs.back()["penDown"] = false;
        break;
    }
  }
  return {{"start",
           {{"x", round_to(r.start.x, kQuantum)},
            {"y", round_to(r.start.y, kQuantum)},
            {"heading_deg", round_to(r.start.heading_deg, kQuantum)}}},
          {"commands", std::move(cs)},
          {"ppi", round_to(r.ppi, kQuantum)},
          {"footprint_mm", r.footprint_mm},
          {"pen_time_s", r.pen_time_s}};
}

std::string doodlebot_stream_text(const Scene& scene) {
  json j = doodlebot_stream(scene);
  std::string out = "{\"start\": " + j["start"].dump() + ",\n \"ppi\": " + j["ppi"].dump() +
                    ", \"footprint_mm\": " + j["footprint_mm"].dump() + ", \"pen_time_s\": " +
                    j["pen_time_s"].dump() + ",\n \"commands\": [";
  const json& cs = j["commands"];
  for (size_t i = 0; i < cs.size(); ++i) out += (i ? ",\n  " : "\n  ") + cs[i].dump();
  out += cs.empty() ? "]}\n" : "\n ]}\n";
  return out;
}

namespace {

class GcodeWriter {
 public:
  // (x0, y0): the scene point at the origin's corner (y0: its top when flip_y is off, its
  // bottom otherwise); margin in output units.
  GcodeWriter(const GcodeOptions& o, double scale, double x0, double y0, double margin)
      : o_(o), scale_(scale), x0_(x0), y0_(y0), margin_(margin) {}

  std::string num(double v) const {
    if (!std::isfinite(v)) throw Error(Code::invalid_scene, "gcode: a coordinate is not finite");
    std::string s = fmt::format("{:.{}f}", v, o_.decimals);
    // Trim trailing zeros, and never write "-0".
    if (s.find('.') != std::string::npos) {
      while (s.back() == '0') s.pop_back();
      if (s.back() == '.') s.pop_back();
    }
    if (s == "-0") s = "0";
    return s;
  }
  double X(Vec2 p) const { return (p.x - x0_) * scale_ + margin_; }
  double Y(Vec2 p) const { return (o_.flip_y ? y0_ - p.y : p.y - y0_) * scale_ + margin_; }
  std::string xy(Vec2 p) const { return fmt::format("X{} Y{}", num(X(p)), num(Y(p))); }

  void line(const std::string& s) { out += s + "\n"; }
  void pen(bool down) {
    if (pen_known_ && pen_down_ == down) return;
    line(down ? o_.pen_down : o_.pen_up);
    if (o_.dwell_s > 0) line("G4 P" + num(o_.dwell_s));
    pen_down_ = down;
    pen_known_ = true;
    feed_written_ = false;  // a pen line may set the modal feed ("G1 Z0 F500"): write ours again
  }
  // Feed is modal: written on the first drawing move after each pen command.
  std::string feed() {
    if (feed_written_) return "";
    feed_written_ = true;
    return " F" + num(o_.feed);
  }
  void travel(Vec2 to) {
    pen(false);
    line("G0 " + xy(to));
  }
  void draw_line(Vec2 to) {
    pen(true);
    line("G1 " + xy(to) + feed());
  }
  // An arc about `center` from `from`, sweeping `sweep_deg` (scene convention: positive is
  // clockwise on screen).
  void draw_arc(Vec2 from, Vec2 center, double radius, double sweep_deg, Vec2 end) {
    double sw = deg2rad(sweep_deg);
    double sagitta = radius * (1 - std::cos(std::min(std::abs(sw), kPi) / 2));
    if (!std::isfinite(radius) || !std::isfinite(sw) || radius <= 0 || sagitta < o_.arc_min_sagitta_px) {
      draw_line(end);
      return;
    }
    pen(true);
    // Pieces of at most 120 degrees: far from the half turn, where rounded coordinates make
    // the centre and the direction of an arc ambiguous to a controller.
    int k = std::max(1, static_cast<int>(std::ceil(std::abs(sweep_deg) / 120 - 1e-9)));
    double a0 = angle_of(from - center);
    bool cw_on_screen = sweep_deg > 0;
    const char* g = (cw_on_screen == o_.flip_y) ? "G2" : "G3";
    Vec2 a = from;
    for (int i = 1; i <= k; ++i) {
      Vec2 b = i == k ? end : center + from_angle(a0 + sw * i / k) * radius;
      double ci = (center.x - a.x) * scale_;
      double cj = (o_.flip_y ? -(center.y - a.y) : center.y - a.y) * scale_;
      line(fmt::format("{} {} I{} J{}{}", g, xy(b), num(ci), num(cj), feed()));
      a = b;
    }
  }

  std::string out;

 private:
  const GcodeOptions& o_;
  double scale_, x0_, y0_, margin_;
  bool pen_known_ = false, pen_down_ = false, feed_written_ = false;
};

}  // namespace

std::string gcode(const Scene& scene, const GcodeOptions& options) {
  require_commands(scene, "gcode");
  const Robot& r = *scene.robot;
  const bool mm = options.units == GcodeOptions::Units::mm;
  if ((mm || options.margin_mm > 0) && !(r.ppi > 0))
    throw Error(Code::invalid_scene, "gcode: robot.ppi must be positive for millimetre output or a margin");
  if (!(options.feed > 0) || !std::isfinite(options.feed))
    throw Error(Code::invalid_selection, "gcode: the feed must be positive");
  if (!(options.dwell_s >= 0) || !std::isfinite(options.dwell_s))
    throw Error(Code::invalid_selection, "gcode: the dwell must be a non-negative number of seconds");
  if (!(options.margin_mm >= 0) || !std::isfinite(options.margin_mm))
    throw Error(Code::invalid_selection, "gcode: the margin must be a non-negative number of mm");
  const double scale = mm ? 25.4 / r.ppi : 1.0;
  const double margin = mm ? options.margin_mm : options.margin_mm > 0 ? options.margin_mm * r.ppi / 25.4 : 0;
  std::vector<Move> moves = replay_moves(*scene.commands, r.start, 1.0);
  double x0 = 0, y0 = 0;
  std::string origin;
  if (options.origin == GcodeOptions::Origin::drawing) {
    const BBox b = drawing_bounds(scene);
    if (!b.empty()) {
      x0 = b.x0;
      y0 = options.flip_y ? b.y1 : b.y0;
    }
    origin = "the drawing's bounding box";
  } else {
    if (options.flip_y) {
      if (scene.source && scene.source->height > 0) {
        y0 = scene.source->height - 1;
      } else {
        for (const Move& m : moves)
          for (Vec2 p : m.path) y0 = std::max(y0, p.y);
      }
    }
    origin = "the image";
  }
  GcodeWriter w(options, scale, x0, y0, margin);
  w.line(fmt::format("; sv {}: {} commands, {}", scene.source ? scene.source->path : "drawing",
                     scene.commands->size(),
                     mm ? fmt::format("mm at {} mm per px", w.num(scale))
                        : std::string("units are image pixels (1 unit = 1 px; no G20/G21: the machine's own units)")));
  const std::string m = margin > 0 ? " + " + w.num(margin) : "";
  auto less = [&w](const char* v, double o) {
    return w.num(o) == "0" ? std::string(v) : fmt::format("({} - {})", v, w.num(o));
  };
  w.line(options.flip_y ? fmt::format("; frame: origin at {}, X = {} * s{}, Y = ({} - y) * s{}", origin, less("x", x0), m,
                                      w.num(y0), m)
                        : fmt::format("; frame: origin at {}, X = {} * s{}, Y = {} * s{} (not flipped: mirrored on paper)",
                                      origin, less("x", x0), m, less("y", y0), m));
  w.line(mm ? "G21 G90 G17" : "G90 G17");
  w.pen(false);
  Vec2 at{r.start.x, r.start.y};
  bool placed = false;
  for (const Move& m : moves) {
    if (m.kind == Command::Kind::spin) continue;
    const Command& c = (*scene.commands)[m.command];
    Vec2 a{m.start.x, m.start.y}, b{m.end.x, m.end.y};
    if (!m.pen_down) {
      at = b;
      placed = false;  // the travel's end is reached by the next G0
      continue;
    }
    if (!placed || dist(at, a) > 1e-9) {
      w.travel(a);
      placed = true;
    }
    if (m.kind == Command::Kind::line) {
      w.draw_line(b);  // a dot (zero length) still lowers the pen there
    } else {
      double h = deg2rad(m.start.heading_deg) + (c.degrees > 0 ? kPi / 2 : -kPi / 2);
      Vec2 center = a + from_angle(h) * c.radius;
      w.draw_arc(a, center, std::abs(c.radius), c.degrees, b);
    }
    at = b;
  }
  w.pen(false);
  w.line("M2");
  return w.out;
}

}  // namespace sv
