#include "edit/joints.hpp"

#include <algorithm>
#include <cmath>

#include "core/error.hpp"
#include "edit/edit.hpp"
#include "fit/fit.hpp"

namespace sv::edit {

using fitting::deviation;

double join_px(const Scene& s) { return std::max(1.0, 0.5 * stroke_width_of(s)); }
double tolerance_of(const Scene& s) { return fit_params_of(s).tolerance_px; }

Shape through(Vec2 a, Vec2 m, Vec2 b) {
  Vec2 ab = b - a, am = m - a;
  double c = cross(ab, am);
  if (std::abs(c) < 1e-9 * std::max(1.0, dot(ab, ab))) return Shape::line(a, b);
  // Circumcentre of a, m, b.
  double d = 2 * c;
  double ab2 = dot(ab, ab), am2 = dot(am, am);
  Vec2 centre = a + Vec2{(am.y * ab2 - ab.y * am2) / d, (ab.x * am2 - am.x * ab2) / d};
  auto ang = [&](Vec2 q) { return angle_of(q - centre); };
  auto ccw = [](double from, double to) {
    double v = std::fmod(to - from, 2 * kPi);
    return v < 0 ? v + 2 * kPi : v;
  };
  double to_b = ccw(ang(a), ang(b)), to_m = ccw(ang(a), ang(m));
  double sweep = to_m < to_b ? to_b : to_b - 2 * kPi;
  return Shape::arc(a, b, std::tan(sweep / 4));
}

Shape with_ends(const Shape& s, Vec2 a, Vec2 b) {
  if (s.type == PrimType::line) return Shape::line(a, b);
  if (s.type == PrimType::arc) return through(a, s.at(0.5), b);
  return s;
}

double param_of(const Shape& s, Vec2 q) {
  switch (s.type) {
    case PrimType::line: {
      Vec2 v = s.p1 - s.p0;
      double L2 = dot(v, v);
      return L2 > 0 ? std::clamp(dot(q - s.p0, v) / L2, 0.0, 1.0) : 0.0;
    }
    case PrimType::circle: {
      double a = angle_of(q - s.center);
      return (a < 0 ? a + 2 * kPi : a) / (2 * kPi);
    }
    case PrimType::arc: {
      if (!std::isfinite(s.radius)) return param_of(Shape::line(s.p0, s.p1), q);
      double sw = s.sweep_rad();
      double a = angle_of(q - s.center) - angle_of(s.p0 - s.center);
      if (sw < 0) a = -a;
      a = std::fmod(a + 4 * kPi, 2 * kPi);
      if (a <= std::abs(sw)) return a / std::abs(sw);
      return dist(q, s.p0) <= dist(q, s.p1) ? 0.0 : 1.0;
    }
  }
  return 0;
}

Vec2 nearest_on(const Shape& s, Vec2 q) { return s.at(param_of(s, q)); }

Polyline oriented(Polyline pts, const Shape& s) {
  if (pts.size() >= 2 && s.type != PrimType::circle &&
      dist(s.p0, pts.front()) + dist(s.p1, pts.back()) > dist(s.p0, pts.back()) + dist(s.p1, pts.front()))
    std::reverse(pts.begin(), pts.end());
  return pts;
}

Polyline points_of(const Scene& s, const Primitive& p) {
  Polyline pts = source_points(s, p);
  if (pts.empty()) return p.shape.sample(0.5);
  return oriented(pts, p.shape);
}

bool shared_with_others(const Scene& s, Vec2 q, const std::set<std::string>& skip) {
  for (const auto& p : *s.primitives) {
    if (skip.count(p.id) || p.shape.type == PrimType::circle) continue;
    if (dist(p.shape.p0, q) <= kJointEps || dist(p.shape.p1, q) <= kJointEps) return true;
  }
  return false;
}

void carry_joints(Scene& s, const std::vector<std::pair<Vec2, Vec2>>& moves, const std::set<std::string>& skip,
                  std::set<std::string>& touched) {
  for (auto& p : *s.primitives) {
    if (skip.count(p.id) || p.shape.type == PrimType::circle) continue;
    Vec2 a = p.shape.p0, b = p.shape.p1;
    for (auto [from, to] : moves) {
      if (dist(p.shape.p0, from) <= kJointEps) a = to;
      if (dist(p.shape.p1, from) <= kJointEps) b = to;
    }
    if (a == p.shape.p0 && b == p.shape.p1) continue;
    p.shape = with_ends(p.shape, a, b);
    check_shape(p.shape, p.id + " (moved along with its neighbour)");
    touched.insert(p.id);
  }
}

void refresh_fit(const Scene& s, Primitive& p) {
  Polyline pts = source_points(s, p);
  if (pts.empty()) return;
  auto d = deviation(p.shape, pts);
  p.fit_rms_px = d.rms;
  p.fit_max_px = d.max;
}

void splice_primitives(Scene& s, const std::set<std::string>& old, const std::vector<Primitive>& fresh) {
  // Drop the old, put the fresh where the first old one was (else at the end).
  auto& list = *s.primitives;
  auto is_old = [&](const Primitive& p) { return old.count(p.id) > 0; };
  size_t pos = static_cast<size_t>(std::find_if(list.begin(), list.end(), is_old) - list.begin());
  std::erase_if(list, is_old);
  pos = std::min(pos, list.size());
  list.insert(list.begin() + static_cast<long>(pos), fresh.begin(), fresh.end());
}

std::optional<fitting::Circle> circle_of(const Polyline& pts) {
  auto c = fitting::kasa_circle(pts);
  if (!c) return std::nullopt;
  auto r = fitting::refine_circle(pts, *c);
  if (!std::isfinite(r.radius) || r.radius <= 0) return c;
  return r;
}

std::optional<Shape> arc_between(Vec2 a, Vec2 b, const Polyline& pts) {
  auto c = circle_of(pts);
  if (!c) return std::nullopt;
  double h0 = fitting::chord_offset(a, b, c->center);
  std::optional<Shape> best;
  double best_max = INFINITY;
  for (double sign : {1.0, -1.0}) {
    auto arc = fitting::fit_arc_between(a, b, sign, h0, pts);
    if (!arc || !std::isfinite(arc->radius)) continue;
    double m = fitting::max_distance(*arc, pts);
    if (m < best_max) best = arc, best_max = m;
  }
  return best;
}

std::vector<const Primitive*> selection(const Scene& s, const std::vector<std::string>& ids) {
  std::set<std::string> seen;
  for (const auto& id : ids)
    if (!seen.insert(id).second) throw Error(Code::invalid_selection, "primitive " + id + " is listed twice");
  std::vector<const Primitive*> sel;
  for (const auto& id : ids) sel.push_back(&primitive_or_throw(s, id));
  return sel;
}

}  // namespace sv::edit
