#include "core/geometry.hpp"

#include <algorithm>

#include "core/error.hpp"

namespace sv {

double wrap_deg(double d) {
  d = std::fmod(d, 360.0);
  if (d <= -180.0) d += 360.0;
  if (d > 180.0) d -= 360.0;
  return d;
}

std::vector<Vec2> line_circle(Vec2 a, Vec2 dir, Vec2 centre, double radius) {
  const Vec2 f = a - centre;
  const double b = dot(f, dir), disc = b * b - (dot(f, f) - radius * radius);
  if (disc < 0) return {};
  const double s = std::sqrt(disc);
  return {a + dir * (-b - s), a + dir * (-b + s)};
}

double polyline_length(const Polyline& p) {
  double s = 0;
  for (size_t i = 1; i < p.size(); ++i) s += dist(p[i - 1], p[i]);
  return s;
}

void append_between(Vec2 a, Vec2 b, double spacing, Polyline& out) {
  const int steps = static_cast<int>(std::ceil(dist(a, b) / spacing - 1e-9));
  for (int k = 1; k < steps; ++k) out.push_back(a + (b - a) * (double(k) / steps));
}

Polyline densify(const Polyline& pts, double spacing) {
  Polyline out;
  for (size_t i = 0; i < pts.size(); ++i) {
    if (i > 0) {
      if (dist(pts[i - 1], pts[i]) < 1e-6) continue;
      append_between(pts[i - 1], pts[i], spacing, out);
    }
    out.push_back(pts[i]);
  }
  return out;
}

const char* prim_type_name(PrimType t) {
  switch (t) {
    case PrimType::line: return "line";
    case PrimType::arc: return "arc";
    case PrimType::circle: return "circle";
  }
  return "line";
}

PrimType prim_type_from(const std::string& s) {
  if (s == "line") return PrimType::line;
  if (s == "arc") return PrimType::arc;
  if (s == "circle") return PrimType::circle;
  throw Error(Code::invalid_scene, "unknown primitive type '" + s + "'");
}

Shape Shape::arc(Vec2 a, Vec2 b, double bulge) {
  Shape s{PrimType::arc, a, b, bulge, {}, 0};
  s.derive_arc();
  return s;
}

void Shape::derive_arc() {
  if (type != PrimType::arc) return;
  Vec2 v = p1 - p0;
  double L = norm(v);
  if (L < 1e-12 || std::abs(bulge) < 1e-12) {
    center = (p0 + p1) * 0.5;
    radius = INFINITY;
    return;
  }
  // Centre on the chord's normal; sign conventions match score.py's bulge_center.
  Vec2 n = perp(v) / L;
  center = (p0 + p1) * 0.5 + n * (L * (1 - bulge * bulge) / (4 * bulge));
  radius = L * (1 + bulge * bulge) / (4 * std::abs(bulge));
}

double Shape::sweep_rad() const {
  switch (type) {
    case PrimType::line: return 0;
    case PrimType::arc: return 4 * std::atan(bulge);
    case PrimType::circle: return 2 * kPi;
  }
  return 0;
}

double Shape::length() const {
  switch (type) {
    case PrimType::line: return dist(p0, p1);
    case PrimType::arc:
      if (!std::isfinite(radius)) return dist(p0, p1);
      return std::abs(sweep_rad()) * radius;
    case PrimType::circle: return 2 * kPi * radius;
  }
  return 0;
}

namespace {
// The point at parameter t of the arc about `center` from angle a0 through `sweep`.
Vec2 on_arc(Vec2 center, double radius, double a0, double sweep, double t) {
  return center + from_angle(a0 + sweep * t) * radius;
}
}  // namespace

Vec2 Shape::at(double t, double entry_rad) const {
  switch (type) {
    case PrimType::line: return p0 + (p1 - p0) * t;
    case PrimType::arc:
      if (!std::isfinite(radius)) return p0 + (p1 - p0) * t;
      return on_arc(center, radius, angle_of(p0 - center), sweep_rad(), t);
    case PrimType::circle: return center + from_angle(entry_rad + 2 * kPi * t) * radius;
  }
  return p0;
}

Vec2 Shape::start(double entry_rad) const { return type == PrimType::circle ? at(0, entry_rad) : p0; }
Vec2 Shape::end(double entry_rad) const { return type == PrimType::circle ? at(0, entry_rad) : p1; }

Vec2 Shape::start_tangent(double entry_rad) const {
  switch (type) {
    case PrimType::line: return unit(p1 - p0);
    case PrimType::arc: {
      if (!std::isfinite(radius)) return unit(p1 - p0);
      Vec2 r = unit(p0 - center);
      return bulge > 0 ? perp(r) : -perp(r);
    }
    case PrimType::circle: return perp(from_angle(entry_rad));
  }
  return {1, 0};
}

Vec2 Shape::end_tangent(double entry_rad) const {
  switch (type) {
    case PrimType::line: return unit(p1 - p0);
    case PrimType::arc: {
      if (!std::isfinite(radius)) return unit(p1 - p0);
      Vec2 r = unit(p1 - center);
      return bulge > 0 ? perp(r) : -perp(r);
    }
    case PrimType::circle: return perp(from_angle(entry_rad));
  }
  return {1, 0};
}

Polyline Shape::sample(double step, double entry_rad) const {
  double L = length();
  int n = std::max(1, static_cast<int>(std::ceil(L / std::max(step, 1e-6))));
  Polyline out;
  out.reserve(n + 1);
  if (type == PrimType::arc && std::isfinite(radius)) {
    // at(t), its start angle and sweep (two arc tangents) computed once.
    const double a0 = angle_of(p0 - center), sweep = sweep_rad();
    for (int i = 0; i <= n; ++i) out.push_back(on_arc(center, radius, a0, sweep, static_cast<double>(i) / n));
  } else {
    for (int i = 0; i <= n; ++i) out.push_back(at(static_cast<double>(i) / n, entry_rad));
  }
  if (type != PrimType::circle) {
    out.front() = p0;
    out.back() = p1;
  }
  return out;
}

Shape Shape::reversed() const {
  Shape s = *this;
  if (type == PrimType::line || type == PrimType::arc) {
    std::swap(s.p0, s.p1);
    s.bulge = -bulge;
  }
  return s;
}

double Shape::distance_to(Vec2 q) const { return ShapeDistance(*this)(q); }

ShapeDistance::ShapeDistance(const Shape& s) : kind_(Kind::segment), a_(s.p0), b_(s.p1) {
  if (s.type == PrimType::circle) {
    kind_ = Kind::circle;
    c_ = s.center;
    r_ = s.radius;
  } else if (s.type == PrimType::arc && std::isfinite(s.radius) && s.bulge != 0) {
    kind_ = Kind::arc;
    c_ = s.center;
    r_ = s.radius;
    u0_ = s.p0 - c_;
    u1_ = s.p1 - c_;
    sense_ = s.bulge > 0 ? 1 : -1;
    major_ = std::abs(s.bulge) > 1;
  }
}

void BBox::add(Vec2 p) {
  x0 = std::min(x0, p.x);
  y0 = std::min(y0, p.y);
  x1 = std::max(x1, p.x);
  y1 = std::max(y1, p.y);
}

bool same_shape(const Shape& a, const Shape& b, double tol_px, double tol_bulge) {
  if (a.type != b.type) return false;
  auto near = [&](Vec2 p, Vec2 q) { return dist(p, q) <= tol_px; };
  if (a.type == PrimType::circle) return near(a.center, b.center) && std::abs(a.radius - b.radius) <= tol_px;
  return near(a.p0, b.p0) && near(a.p1, b.p1) && std::abs(a.bulge - b.bulge) <= tol_bulge;
}

}  // namespace sv
