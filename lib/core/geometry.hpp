// Plane geometry in image pixels: x right, y down, pixel (col, row) centred at (col, row).
// Angles are measured with atan2(dy, dx) in that frame, so a positive angle turns from +x
// towards +y (clockwise on screen), the convention of the scene and the robot.
#pragma once
#include <algorithm>
#include <cmath>
#include <numbers>
#include <string>
#include <vector>

namespace sv {

constexpr double kPi = std::numbers::pi;
inline double deg2rad(double d) { return d * kPi / 180.0; }
inline double rad2deg(double r) { return r * 180.0 / kPi; }
// Wraps an angle in degrees to (-180, 180].
double wrap_deg(double d);

struct Vec2 {
  double x = 0, y = 0;
  Vec2 operator+(Vec2 o) const { return {x + o.x, y + o.y}; }
  Vec2 operator-(Vec2 o) const { return {x - o.x, y - o.y}; }
  Vec2 operator*(double s) const { return {x * s, y * s}; }
  Vec2 operator/(double s) const { return {x / s, y / s}; }
  Vec2 operator-() const { return {-x, -y}; }
  bool operator==(const Vec2&) const = default;
};
inline double dot(Vec2 a, Vec2 b) { return a.x * b.x + a.y * b.y; }
inline double cross(Vec2 a, Vec2 b) { return a.x * b.y - a.y * b.x; }
// Not std::hypot: pixel coordinates are nowhere near where x^2 overflows, and the square root
// is several times faster on the paths every point of a drawing takes.
inline double norm(Vec2 a) { return std::sqrt(a.x * a.x + a.y * a.y); }
inline double dist(Vec2 a, Vec2 b) { return norm(a - b); }
inline Vec2 unit(Vec2 a) { double n = norm(a); return n > 0 ? a / n : Vec2{1, 0}; }
inline Vec2 perp(Vec2 a) { return {-a.y, a.x}; }  // +90 degrees in the y-down frame
inline Vec2 from_angle(double rad) { return {std::cos(rad), std::sin(rad)}; }
inline double angle_of(Vec2 a) { return std::atan2(a.y, a.x); }

// Where the line through `a` along the unit `dir` crosses the circle (centre, radius): none, or
// two points (one twice where it touches), in the order met along dir.
std::vector<Vec2> line_circle(Vec2 a, Vec2 dir, Vec2 centre, double radius);

using Polyline = std::vector<Vec2>;
double polyline_length(const Polyline& p);
// The polyline with points added along each longer step, evenly, so that consecutive points are
// at most `spacing` apart; repeated points are dropped.
Polyline densify(const Polyline& pts, double spacing);
// The points densify() adds between a and b, appended to `out`.
void append_between(Vec2 a, Vec2 b, double spacing, Polyline& out);
// Distance from q to the segment [a, b]. Inline: the fitter's inner loops call it per point.
inline double point_segment_distance(Vec2 q, Vec2 a, Vec2 b) {
  Vec2 v = b - a;
  double l2 = dot(v, v);
  if (l2 <= 0) return dist(q, a);
  double t = std::clamp(dot(q - a, v) / l2, 0.0, 1.0);
  return dist(q, a + v * t);
}

enum class PrimType { line, arc, circle };
const char* prim_type_name(PrimType t);
PrimType prim_type_from(const std::string& s);  // throws Error(invalid_scene)

// A line (p0, p1), an arc (p0, p1, bulge = tan(sweep/4), sweep > 0 turning counter-clockwise
// in the y-down frame) or a full circle (center, radius). Circles have no endpoints of their
// own: where drawing enters one is a property of the tour, not of the shape.
struct Shape {
  PrimType type = PrimType::line;
  Vec2 p0, p1;
  double bulge = 0;
  Vec2 center;
  double radius = 0;

  static Shape line(Vec2 a, Vec2 b) { return {PrimType::line, a, b, 0, {}, 0}; }
  static Shape arc(Vec2 a, Vec2 b, double bulge);
  static Shape circle(Vec2 c, double r) { return {PrimType::circle, {}, {}, 0, c, r}; }

  double sweep_rad() const;       // signed; 2*pi for a circle
  double length() const;
  // Arc centre and radius (from p0, p1, bulge); also fills center/radius.
  void derive_arc();
  // Start and end points; a circle starts and ends at the angle `entry_rad`.
  Vec2 start(double entry_rad = 0) const;
  Vec2 end(double entry_rad = 0) const;
  // Unit tangent of travel at the start and at the end (forward direction).
  Vec2 start_tangent(double entry_rad = 0) const;
  Vec2 end_tangent(double entry_rad = 0) const;
  // Point at arc-length fraction t in [0, 1].
  Vec2 at(double t, double entry_rad = 0) const;
  // Samples no farther than `step` apart, including both ends.
  Polyline sample(double step, double entry_rad = 0) const;
  // The same shape traversed the other way (circles: mirrored sweep via negative radius is not
  // used; a reversed circle is the same shape drawn with negative sweep, see route).
  Shape reversed() const;
  // Radial inside an arc's wedge, else to the nearer end (ShapeDistance).
  double distance_to(Vec2 q) const;
};

// Distance from points to one shape, without trigonometry per point: whether a point is in
// an arc's wedge is decided by cross products with the end radii.
class ShapeDistance {
 public:
  explicit ShapeDistance(const Shape& s);
  double operator()(Vec2 q) const { return kind_ == Kind::segment ? point_segment_distance(q, a_, b_) : to_curve(q); }

 private:
  double to_curve(Vec2 q) const;  // circles and arcs: inline below, for the fitting's loops

  enum class Kind { segment, circle, arc } kind_;
  Vec2 a_, b_, c_, u0_, u1_;
  double r_ = 0, sense_ = 1;
  bool major_ = false;
};

inline double ShapeDistance::to_curve(Vec2 q) const {
  if (kind_ == Kind::circle) return std::abs(dist(q, c_) - r_);
  Vec2 v = q - c_;
  // Inside the wedge swept from u0 to u1: for a minor arc, on the inner side of both end
  // radii (and not opposite them); for a major arc, outside the complementary minor wedge.
  bool inside =
      major_ ? !(sense_ * cross(u1_, v) > 0 && sense_ * cross(v, u0_) > 0)
             : sense_ * cross(u0_, v) >= 0 && sense_ * cross(v, u1_) >= 0 && dot(v, u0_ + u1_) >= 0;
  if (inside) return std::abs(norm(v) - r_);
  return std::min(dist(q, a_), dist(q, b_));
}

// Same type and the same geometry: ends (lines, arcs), centre and radius (circles) within
// `tol_px`, bulge within `tol_bulge`. The defaults ask for equality.
bool same_shape(const Shape& a, const Shape& b, double tol_px = 0, double tol_bulge = 0);

struct BBox {
  double x0 = INFINITY, y0 = INFINITY, x1 = -INFINITY, y1 = -INFINITY;
  void add(Vec2 p);
  bool empty() const { return x0 > x1; }
  double width() const { return empty() ? 0 : x1 - x0; }
  double height() const { return empty() ? 0 : y1 - y0; }
};

}  // namespace sv
