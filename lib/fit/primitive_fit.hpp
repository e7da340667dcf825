// Single-primitive least-squares fitters over a run of points: a line by orthogonal
// regression, a circle by Kasa's algebraic fit refined by Gauss-Newton on geometric
// residuals, an arc on a circle, and an arc between two fixed endpoints.
#pragma once
#include <optional>
#include <span>

#include "core/geometry.hpp"

namespace sv::fitting {

using Points = std::span<const Vec2>;

// Root-mean-square and largest distance of points to a shape.
struct Deviation {
  double rms = 0, max = 0;
};
Deviation deviation(const Shape& s, Points pts);
// The largest distance of points to a shape; with `stop`, the first distance beyond it (for
// a caller that only compares the largest with `stop` and below).
double max_distance(const Shape& s, Points pts, double stop = INFINITY);

// The total least-squares line: through the centroid along the principal axis.
struct LineFit {
  Vec2 centroid;
  Vec2 dir{1, 0};
};
LineFit fit_line(Points pts);
// The segment of that line between the projections of the first and the last point.
Shape line_segment(const LineFit& f, Points pts);

struct Circle {
  Vec2 center;
  double radius = 0;
};
// Kasa's fit (least squares on x^2 + y^2 + Dx + Ey + F, on centred data); nullopt when the
// points are collinear or too few.
std::optional<Circle> kasa_circle(Points pts);
// Gauss-Newton with Levenberg damping on the radial residuals |p - c| - r.
Circle refine_circle(Points pts, Circle c, int max_iterations = 12);

// The arc of circle `c` from the projection of the first point to that of the last, sweeping
// the way the points travel (the unwrapped angle they cover). nullopt if it sweeps nothing.
std::optional<Shape> arc_on_circle(const Circle& c, Points pts);

// The arc from a to b whose sweep has the sign of `sweep_sign` that fits pts best radially.
// Its centre lies on the chord's bisector; Gauss-Newton on that one offset, from h0.
// nullopt when a and b coincide.
std::optional<Shape> fit_arc_between(Vec2 a, Vec2 b, double sweep_sign, double h0, Points pts);
// Signed offset of a centre along the left normal of the chord a->b (the fit_arc_between
// parameter).
double chord_offset(Vec2 a, Vec2 b, Vec2 center);

// Sagitta of an arc: the largest distance between the arc and its chord.
double sagitta(const Shape& arc);

}  // namespace sv::fitting
