#include "fit/primitive_fit.hpp"

#include <Eigen/Dense>
#include <algorithm>
#include <vector>

namespace sv::fitting {

double max_distance(const Shape& s, Points pts, double stop) {
  ShapeDistance d(s);
  double worst = 0;
  for (Vec2 q : pts) {
    worst = std::max(worst, d(q));
    if (worst > stop) break;
  }
  return worst;
}

Deviation deviation(const Shape& s, Points pts) {
  Deviation d;
  if (pts.empty()) return d;
  ShapeDistance distance(s);
  double sum = 0;
  for (Vec2 p : pts) {
    double e = distance(p);
    sum += e * e;
    d.max = std::max(d.max, e);
  }
  d.rms = std::sqrt(sum / pts.size());
  return d;
}

LineFit fit_line(Points pts) {
  LineFit f;
  if (pts.empty()) return f;
  Vec2 c;
  for (Vec2 p : pts) c = c + p;
  c = c / static_cast<double>(pts.size());
  double sxx = 0, sxy = 0, syy = 0;
  for (Vec2 p : pts) {
    Vec2 d = p - c;
    sxx += d.x * d.x;
    sxy += d.x * d.y;
    syy += d.y * d.y;
  }
  f.centroid = c;
  // Principal axis of the 2x2 scatter matrix in closed form.
  f.dir = (sxx == 0 && syy == 0) ? Vec2{1, 0} : from_angle(0.5 * std::atan2(2 * sxy, sxx - syy));
  if (dot(pts.back() - pts.front(), f.dir) < 0) f.dir = -f.dir;
  return f;
}

Shape line_segment(const LineFit& f, Points pts) {
  auto project = [&](Vec2 p) { return f.centroid + f.dir * dot(p - f.centroid, f.dir); };
  return Shape::line(project(pts.front()), project(pts.back()));
}

std::optional<Circle> kasa_circle(Points pts) {
  const double n = static_cast<double>(pts.size());
  if (pts.size() < 3) return std::nullopt;
  Vec2 m;
  for (Vec2 p : pts) m = m + p;
  m = m / n;
  double suu = 0, suv = 0, svv = 0, suuu = 0, suvv = 0, svvv = 0, suuv = 0;
  for (Vec2 p : pts) {
    double u = p.x - m.x, v = p.y - m.y;
    suu += u * u;
    suv += u * v;
    svv += v * v;
    suuu += u * u * u;
    suvv += u * v * v;
    svvv += v * v * v;
    suuv += u * u * v;
  }
  double det = suu * svv - suv * suv;
  double scale = suu + svv;
  if (scale <= 0 || det <= 1e-12 * scale * scale) return std::nullopt;
  // Normal equations of the centred algebraic fit: [suu suv; suv svv] [a b]^T = rhs / 2.
  double ru = 0.5 * (suuu + suvv), rv = 0.5 * (svvv + suuv);
  double a = (ru * svv - rv * suv) / det;
  double b = (rv * suu - ru * suv) / det;
  return Circle{{m.x + a, m.y + b}, std::sqrt(a * a + b * b + scale / n)};
}

Circle refine_circle(Points pts, Circle c, int max_iterations) {
  // One pass per iteration gives the cost, J^T J and J^T e at the current circle; a step that
  // raised the cost is undone and retried with more damping (Levenberg).
  Circle kept = c;
  double kept_cost = INFINITY, lambda = 1e-3;
  Eigen::Matrix3d jtj = Eigen::Matrix3d::Zero();
  Eigen::Vector3d jte = Eigen::Vector3d::Zero();
  const size_t n = pts.size();
  std::vector<double> rs(n), jxs(n), jys(n);
  for (int it = 0; it < max_iterations; ++it) {
    // The Jacobian row of a point is (-dx/r, -dy/r, -1). Its square root and reciprocal come
    // first, in a loop with no sum in it, which the compiler runs two points at a time.
    for (size_t k = 0; k < n; ++k) {
      const double dx = pts[k].x - c.center.x, dy = pts[k].y - c.center.y;
      const double r = std::sqrt(dx * dx + dy * dy);
      const double inv = -1 / r;
      rs[k] = r;
      jxs[k] = dx * inv;
      jys[k] = dy * inv;
    }
    // J^T J is symmetric, so its six distinct sums are kept as scalars.
    double xx = 0, xy = 0, xz = 0, yy = 0, yz = 0, zz = 0, gx = 0, gy = 0, gz = 0, cost = 0;
    for (size_t k = 0; k < n; ++k) {
      if (rs[k] < 1e-12) continue;
      const double e = rs[k] - c.radius, jx = jxs[k], jy = jys[k];
      xx += jx * jx, xy += jx * jy, xz -= jx;
      yy += jy * jy, yz -= jy, zz += 1;
      gx += jx * e, gy += jy * e, gz -= e;
      cost += e * e;
    }
    Eigen::Matrix3d a;
    a << xx, xy, xz, xy, yy, yz, xz, yz, zz;
    const Eigen::Vector3d g(gx, gy, gz);
    if (cost <= kept_cost) {
      kept = c;
      kept_cost = cost;
      jtj = a;
      jte = g;
      lambda = std::max(lambda * 0.1, 1e-9);
    } else {
      lambda *= 10;
      if (lambda > 1e8) break;
    }
    Eigen::Matrix3d damped = jtj;
    damped.diagonal() *= 1 + lambda;
    Eigen::Vector3d step = damped.ldlt().solve(-jte);
    if (!step.allFinite() || step.norm() < 1e-4) break;  // pixels: far below any tolerance
    c = {{kept.center.x + step(0), kept.center.y + step(1)}, std::abs(kept.radius + step(2))};
  }
  return kept;
}

std::optional<Shape> arc_on_circle(const Circle& c, Points pts) {
  if (pts.size() < 2 || !(c.radius > 0) || !std::isfinite(c.radius)) return std::nullopt;
  // The unwrapped angle the points cover, summed over steps short enough (about r/2 apart
  // for ~1 px spacing) that no step turns by half a circle.
  const size_t stride = std::clamp<size_t>(static_cast<size_t>(c.radius / 2), 1, 16);
  double sweep = 0;
  Vec2 prev = pts.front() - c.center;
  for (size_t k = 0; k + 1 < pts.size();) {
    k = std::min(k + stride, pts.size() - 1);
    Vec2 cur = pts[k] - c.center;
    sweep += std::atan2(cross(prev, cur), dot(prev, cur));
    prev = cur;
  }
  // tan(sweep/4) represents sweeps strictly inside (-2 pi, 2 pi).
  if (std::abs(sweep) < 1e-9 || std::abs(sweep) >= 2 * kPi - 1e-9) return std::nullopt;
  Vec2 p0 = c.center + unit(pts.front() - c.center) * c.radius;
  Vec2 p1 = c.center + unit(pts.back() - c.center) * c.radius;
  return Shape::arc(p0, p1, std::tan(sweep / 4));
}

double chord_offset(Vec2 a, Vec2 b, Vec2 center) {
  return dot(center - (a + b) * 0.5, perp(unit(b - a)));
}

std::optional<Shape> fit_arc_between(Vec2 a, Vec2 b, double sweep_sign, double h0, Points pts) {
  double L = dist(a, b);
  if (L < 1e-9 || sweep_sign == 0) return std::nullopt;
  Vec2 m = (a + b) * 0.5, n = perp((b - a) / L);
  double half2 = L * L / 4;
  auto cost_of = [&](double h) {
    Vec2 c = m + n * h;
    double r = std::sqrt(half2 + h * h), s = 0;
    for (Vec2 p : pts) {
      double e = norm(p - c) - r;
      s += e * e;
    }
    return s;
  };
  // Gauss-Newton on the single unknown h (every circle through a and b), with step halving.
  double h = h0, cost = cost_of(h);
  for (int it = 0; it < 30; ++it) {
    Vec2 c = m + n * h;
    double r = std::sqrt(half2 + h * h), jj = 0, je = 0;
    for (Vec2 p : pts) {
      Vec2 d = p - c;
      double dn = norm(d);
      if (dn < 1e-12) continue;
      double j = -dot(d, n) / dn - h / r;
      jj += j * j;
      je += j * (dn - r);
    }
    if (jj <= 0) break;
    double step = -je / jj, next = h + step, next_cost = cost_of(next);
    while (next_cost > cost && std::abs(step) > 1e-12) {
      step *= 0.5;
      next = h + step;
      next_cost = cost_of(next);
    }
    if (next_cost > cost) break;
    h = next;
    cost = next_cost;
    if (std::abs(step) < 1e-9 * std::max(1.0, std::abs(h))) break;
  }
  double r = std::sqrt(half2 + h * h);
  // The arc from a to b about m + n h that turns the requested way (see Shape::derive_arc).
  double bulge = sweep_sign > 0 ? 2 * (r - h) / L : -2 * (r + h) / L;
  return Shape::arc(a, b, bulge);
}

double sagitta(const Shape& arc) { return std::abs(arc.bulge) * dist(arc.p0, arc.p1) / 2; }

}  // namespace sv::fitting
