#include <fmt/format.h>

#include <cmath>
#include <set>

#include "export/export.hpp"
#include "render/view.hpp"

namespace sv {

namespace {

std::string num(double v) { return fmt::format("{}", round_to(v, 1e-3)); }

// Path data of an arc from `from` about `center`; a full turn is split into half turns
// (an SVG arc cannot end where it starts).
std::string arc_data(Vec2 from, Vec2 center, double radius, double sweep_deg) {
  int k = std::abs(sweep_deg) < 359.999 ? 1 : static_cast<int>(std::ceil(std::abs(sweep_deg) / 180 - 1e-9));
  double a0 = angle_of(from - center), sw = deg2rad(sweep_deg);
  std::string d;
  for (int i = 1; i <= k; ++i) {
    Vec2 p = center + from_angle(a0 + sw * i / k) * radius;
    d += fmt::format(" A {} {} 0 {} {} {} {}", num(radius), num(radius), std::abs(sweep_deg) / k > 180 ? 1 : 0,
                     sweep_deg > 0 ? 1 : 0, num(p.x), num(p.y));
  }
  return d;
}

}  // namespace

std::string render_svg(const Scene& scene) {
  ViewOptions o;
  ViewTransform t = view_transform(scene, o);
  double sw = scene.source && scene.source->stroke_width_px > 0 ? scene.source->stroke_width_px : 1;
  std::string out = fmt::format(
      "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{}\" height=\"{}\" viewBox=\"{} {} {} {}\">\n",
      num(t.region.width), num(t.region.height), num(t.region.x), num(t.region.y), num(t.region.width),
      num(t.region.height));
  out += fmt::format(
      "<g id=\"strokes\" fill=\"none\" stroke=\"black\" stroke-width=\"{}\" stroke-linecap=\"round\" "
      "stroke-linejoin=\"round\">\n",
      num(sw));
  std::string travel;
  std::string d;
  std::set<std::string> ids;
  auto flush = [&] {
    if (d.empty()) return;
    std::string names;
    for (const auto& id : ids) names += (names.empty() ? "" : " ") + id;
    out += fmt::format("<path data-primitives=\"{}\" d=\"{}\"/>\n", names, d);
    d.clear();
    ids.clear();
  };
  auto add_ids = [&](const std::string& list) {
    for (size_t a = 0; a <= list.size();) {
      size_t b = std::min(list.find(',', a), list.size());
      if (b > a) ids.insert(list.substr(a, b - a));
      a = b + 1;
    }
  };
  for (const DrawnPiece& p : drawn_pieces(scene, 1.0)) {
    Vec2 a = p.path.front(), b = p.path.back();
    if (!p.pen_down) {
      flush();
      travel += fmt::format("<line x1=\"{}\" y1=\"{}\" x2=\"{}\" y2=\"{}\"/>\n", num(a.x), num(a.y), num(b.x), num(b.y));
      continue;
    }
    if (p.starts_stroke) flush();
    if (d.empty()) d = fmt::format("M {} {}", num(a.x), num(a.y));
    add_ids(p.primitive);
    d += p.degrees == 0 ? fmt::format(" L {} {}", num(b.x), num(b.y)) : arc_data(a, p.center, p.radius, p.degrees);
  }
  flush();
  out += "</g>\n";
  if (!travel.empty()) out += "<g id=\"pen-up\" visibility=\"hidden\" stroke=\"gray\" stroke-dasharray=\"4 3\">\n" + travel + "</g>\n";
  out += "</svg>\n";
  return out;
}

}  // namespace sv
