#include "graph/centreline.hpp"

#include <algorithm>
#include <cmath>

#include "raster/profile.hpp"

namespace sv::graph {
namespace {

constexpr int kTangentReach = 2;          // least chain points each side giving the local direction
constexpr double kMaxCornerTurnDeg = 40;  // sharper turns make a lopsided section
constexpr double kMaxWidthFactor = 3;     // a wider section runs into another stroke

double median_width(const Trace& t, double max_length, double fallback) {
  std::vector<float> w;
  double s = 0;
  for (size_t i = 0; i < t.pts.size() && s <= max_length; ++i) {
    if (i > 0) s += dist(t.pts[i - 1], t.pts[i]);
    if (!std::isnan(t.width[i])) w.push_back(t.width[i]);
  }
  if (w.empty()) return fallback;
  auto mid = w.begin() + w.size() / 2;
  std::nth_element(w.begin(), mid, w.end());
  return *mid;
}

// Light [1 2 1]/4 smoothing of runs of centred points (known width), which removes the
// residual jitter of the cross-section measurements; a circle of radius r shrinks by only
// 1/(4r) px per pass.
void smooth_centred(Trace& t, bool cyclic) {
  const int n = static_cast<int>(t.pts.size());
  Polyline out = t.pts;
  for (int i = 0; i < n; ++i) {
    bool end = !cyclic && (i == 0 || i == n - 1);
    if (end || std::isnan(t.width[i])) continue;
    int a = i > 0 ? i - 1 : n - 2, b = i < n - 1 ? i + 1 : 1;
    if (std::isnan(t.width[a]) || std::isnan(t.width[b])) continue;
    out[i] = (t.pts[a] + t.pts[i] * 2 + t.pts[b]) / 4;
  }
  if (cyclic) out.back() = out.front();
  t.pts = std::move(out);
}

void centre_trace(Trace& t, bool closed, const cv::Mat& coverage, double stroke_width, double max_shift) {
  const Polyline& pts = t.pts;
  const int n = static_cast<int>(pts.size());
  if (n < 2) return;
  const bool cyclic = closed && n > 3 && dist(pts.front(), pts.back()) < 1e-9;
  const int m = cyclic ? n - 1 : n;
  auto at = [&](int i) { return cyclic ? pts[((i % m) + m) % m] : pts[std::clamp(i, 0, n - 1)]; };
  // Thinning of a thick stroke wanders by a pixel or two: its direction needs a longer chord.
  const int reach_pts = std::max(kTangentReach, static_cast<int>(std::lround(stroke_width / 3)));
  const double reach = kMaxWidthFactor * stroke_width / 2 + 2;
  const double min_cos = std::cos(deg2rad(kMaxCornerTurnDeg));
  Polyline out = pts;
  for (int i = 0; i < n; ++i) {
    Vec2 p = pts[i], back = at(i - reach_pts), fwd = at(i + reach_pts);
    Vec2 in = p - back, ahead = fwd - p;
    if (norm(in) > 0 && norm(ahead) > 0 && dot(unit(in), unit(ahead)) < min_cos) continue;
    Vec2 normal = perp(unit(fwd - back));
    CrossSection cs = cross_section(coverage, p, normal, reach);
    if (!cs.ok || std::abs(cs.offset) > max_shift || cs.width > kMaxWidthFactor * stroke_width) continue;
    out[i] = p + normal * cs.offset;
    t.width[i] = static_cast<float>(cs.width);
  }
  if (cyclic) out.back() = out.front(), t.width.back() = t.width.front();
  t.pts = std::move(out);
  smooth_centred(t, cyclic);
}

}  // namespace

void centre_on_ink(StrokeGraph& g, const cv::Mat& coverage, double stroke_width, double max_shift) {
  for (Edge& e : g.edges)
    if (e.alive) centre_trace(e.trace, e.closed, coverage, stroke_width, max_shift);
}

void place_stroke_ends(StrokeGraph& g, const cv::Mat& coverage, double stroke_width) {
  for (Node& node : g.nodes) {
    if (!node.alive || node.loop || node.dot || node.degree() != 1) continue;
    End end = node.ends[0];
    Trace t = g.trace_from(end);
    double length = t.length();
    if (length < 1) continue;
    Vec2 tip = t.pts.front();
    Vec2 d = unit(tip - point_at_length(t.pts, std::min(std::max(2.0, stroke_width), length)));
    double half = median_width(t, 2 * stroke_width, stroke_width) / 2;
    double to_edge = distance_to_edge(coverage, tip, d, 2 * stroke_width + 2);
    if (to_edge < 0) continue;
    double shift = std::clamp(to_edge - half, -half, half);
    Vec2 target = tip + d * shift;
    Trace moved;
    if (shift >= 0) {
      int steps = static_cast<int>(std::ceil(shift));
      for (int k = 0; k < steps; ++k) moved.push(target - d * (shift * k / steps));
      moved.append(t);
    } else {
      size_t first = 0;
      while (first + 1 < t.pts.size() && dot(t.pts[first] - target, d) > 0) ++first;
      moved.push(target);
      for (size_t i = first; i < t.pts.size(); ++i) moved.push(t.pts[i], t.width[i]);
    }
    if (end.tail) moved.reverse();
    g.edges[end.edge].trace = std::move(moved);
    node.p = target;
  }
}

void centre_dots(StrokeGraph& g, const cv::Mat& coverage, double stroke_width) {
  const int r = std::max(2, static_cast<int>(std::ceil(0.75 * stroke_width)));
  for (Node& node : g.nodes) {
    if (!node.alive || !node.dot) continue;
    int cx = static_cast<int>(std::lround(node.p.x)), cy = static_cast<int>(std::lround(node.p.y));
    double sw = 0, sx = 0, sy = 0;
    for (int y = std::max(0, cy - r); y <= std::min(coverage.rows - 1, cy + r); ++y)
      for (int x = std::max(0, cx - r); x <= std::min(coverage.cols - 1, cx + r); ++x) {
        if ((x - cx) * (x - cx) + (y - cy) * (y - cy) > r * r) continue;
        double c = coverage.at<uchar>(y, x);
        sw += c, sx += c * x, sy += c * y;
      }
    if (sw > 0) node.p = {sx / sw, sy / sw};
  }
}

}  // namespace sv::graph
