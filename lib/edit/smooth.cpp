// SmoothPrimitive's geometry: one primitive refitted to its source points as a single shape,
// the worst points trimmed.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "core/error.hpp"
#include "edit/edit.hpp"
#include "edit/geometry.hpp"
#include "edit/joints.hpp"
#include "fit/fit.hpp"

namespace sv::edit {

using fitting::deviation;

Smoothed smooth_primitive(const Scene& in, const std::string& id, double trim, std::optional<std::string> target) {
  Smoothed r;
  r.scene = editable(in);
  Scene& out = r.scene;
  const Primitive& old = primitive_or_throw(in, id);
  Polyline src = source_points(in, old);
  if (src.size() < 3)
    throw Error(Code::no_result, old.id + " has no source points to refit from (it was not fitted to a graph edge)",
                {{"reason", "no source points"}});
  Polyline pts = oriented(src, old.shape);
  const std::string kind = target ? *target : prim_type_name(old.shape.type);
  if ((old.shape.type == PrimType::circle) != (kind == "circle"))
    throw Error(Code::invalid_selection,
                fmt::format("{} is a {}: it cannot be smoothed into a {}", old.id, prim_type_name(old.shape.type), kind),
                {{"reason", "circles stay circles; lines and arcs stay open"}});
  const std::set<std::string> self{old.id};
  const bool pin0 = kind != "circle" && shared_with_others(in, old.shape.p0, self);
  const bool pin1 = kind != "circle" && shared_with_others(in, old.shape.p1, self);
  auto fit_to = [&](const Polyline& use) -> std::optional<Shape> {
    if (kind == "circle") {
      auto c = circle_of(use);
      if (!c) return std::nullopt;
      return Shape::circle(c->center, c->radius);
    }
    if (kind == "line") {
      auto f = fitting::fit_line(use);
      auto proj = [&](Vec2 q) { return f.centroid + f.dir * dot(q - f.centroid, f.dir); };
      if (pin0 && pin1) return Shape::line(old.shape.p0, old.shape.p1);
      if (pin0 || pin1) {
        // The best line through the pinned end: the principal axis of the points about it.
        Vec2 o = pin0 ? old.shape.p0 : old.shape.p1;
        double sxx = 0, sxy = 0, syy = 0;
        for (Vec2 q : use) {
          Vec2 d = q - o;
          sxx += d.x * d.x, sxy += d.x * d.y, syy += d.y * d.y;
        }
        Vec2 dir = from_angle(0.5 * std::atan2(2 * sxy, sxx - syy));
        Vec2 other = pin0 ? old.shape.p1 : old.shape.p0;
        Vec2 moved = o + dir * dot(other - o, dir);
        return pin0 ? Shape::line(o, moved) : Shape::line(moved, o);
      }
      return Shape::line(proj(old.shape.p0), proj(old.shape.p1));
    }
    auto c = circle_of(use);
    if (!c) return std::nullopt;
    auto on = [&](Vec2 q) { return c->center + unit(q - c->center) * c->radius; };
    Vec2 a = pin0 ? old.shape.p0 : on(old.shape.p0), b = pin1 ? old.shape.p1 : on(old.shape.p1);
    return arc_between(a, b, use);
  };
  std::optional<Shape> shape = fit_to(pts);
  if (shape && trim > 0 && pts.size() >= 10) {
    std::vector<std::pair<double, size_t>> d;
    for (size_t k = 0; k < pts.size(); ++k) d.push_back({shape->distance_to(pts[k]), k});
    std::sort(d.begin(), d.end());
    size_t keep = pts.size() - static_cast<size_t>(trim * pts.size());
    std::vector<size_t> kept;
    for (size_t k = 0; k < keep; ++k) kept.push_back(d[k].second);
    std::sort(kept.begin(), kept.end());
    Polyline use;
    for (size_t k : kept) use.push_back(pts[k]);
    if (auto s = fit_to(use)) shape = s;
  }
  if (!shape || (shape->type == PrimType::arc && !std::isfinite(shape->radius)))
    throw Error(Code::no_result, fmt::format("no {} fits the source points of {}", kind, old.id),
                {{"reason", "the points are degenerate for a " + kind}});
  check_shape(*shape, "the smoothed " + old.id);
  auto before = deviation(old.shape, pts), after = deviation(*shape, pts);
  Primitive& p = (*out.primitives)[primitive_index(out, old.id)];
  p.shape = *shape;
  p.fit_rms_px = after.rms;
  p.fit_max_px = after.max;
  p.route_deviation_px = 0;  // drawn as smoothed, not redrawn straight within the route's deviation
  r.touched = {p.id};
  if (shape->type != PrimType::circle) {
    carry_joints(out, {{old.shape.p0, shape->p0}, {old.shape.p1, shape->p1}}, self, r.touched);
  }
  const double tol = tolerance_of(in);
  if (after.max > tol)
    r.warnings.push_back(fmt::format("{} is now {:.2f} px from its farthest source point (tolerance {:.2f} px)", p.id,
                                     after.max, tol));
  r.id = p.id;
  r.type = shape->type;
  r.rms_before = before.rms;
  r.rms_after = after.rms;
  r.max_after_px = after.max;
  r.tolerance_px = tol;
  return r;
}

}  // namespace sv::edit
