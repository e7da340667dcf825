#include "graph/centreline.hpp"

#include <algorithm>
#include <cmath>

#include "raster/profile.hpp"

namespace sv::graph {
namespace {

constexpr int kTangentReach = 2;          // least chain points each side giving the local direction
constexpr double kMaxCornerTurnDeg = 40;  // sharper turns make a lopsided section
constexpr double kMinSectionReach = 64;   // px a section may reach: strokes wider than the typical one
constexpr double kMinCornerDeg = 30;      // legs turning less than this meet in a curve, not a corner
constexpr double kMinCuspTurnDeg = 45;    // a cusp's base turns at least this much ...
constexpr double kCuspMargin = 0.3;       // ... and ink reaches this many widths beyond a round end
constexpr double kCuspMaxWidth = 1.5;     // ... in a spike no wider than this many widths halfway out
constexpr double kCuspMaxWidthSpread = 0.3;  // widths of a pen stroke vary less (10th-90th percentile)
constexpr double kLoneCentredOffset = 0.5;  // px a lone centred point in a mended run may lie off its chord

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

struct Section {
  bool ok = false;
  Vec2 normal;
  double offset = 0, width = 0;
};

// Measures every point's cross-section; a point is moved to the section's centre when the
// section is no wider than clean_ratio times the median of its neighbours' (a wider one
// runs into the ink of a junction or of a corner's other leg) and the move is small for
// that width.
void centre_trace(Trace& t, bool cyclic, const cv::Mat& coverage, double stroke_width, const CentreOptions& opt) {
  const Polyline& pts = t.pts;
  const int n = static_cast<int>(pts.size());
  const int m = cyclic ? n - 1 : n;
  auto wrap = [&](int i) { return cyclic ? ((i % m) + m) % m : std::clamp(i, 0, n - 1); };
  // Thinning of a thick stroke wanders by a pixel or two: its direction needs a longer chord.
  const int reach_pts = std::max(kTangentReach, static_cast<int>(std::lround(stroke_width / 3)));
  const int window = std::max(3, static_cast<int>(std::lround(stroke_width)));
  const double reach = std::max(kMinSectionReach, 2 * stroke_width);
  const double min_cos = std::cos(deg2rad(kMaxCornerTurnDeg));
  std::vector<Section> sec(n);
  for (int i = 0; i < n; ++i) {
    Vec2 p = pts[i], back = pts[wrap(i - reach_pts)], fwd = pts[wrap(i + reach_pts)];
    Vec2 in = p - back, ahead = fwd - p;
    if (norm(in) > 0 && norm(ahead) > 0 && dot(unit(in), unit(ahead)) < min_cos) continue;
    Vec2 normal = perp(unit(fwd - back));
    CrossSection cs = cross_section(coverage, p, normal, reach);
    if (cs.ok) sec[i] = {true, normal, cs.offset, cs.width};
  }
  Polyline out = pts;
  std::vector<float> near;
  for (int i = 0; i < n; ++i) {
    if (!sec[i].ok || std::abs(sec[i].offset) > std::max(1.0, opt.max_shift_ratio * sec[i].width)) continue;
    const bool node_pixel = !cyclic && (i == 0 || i == n - 1);  // stays with its node
    near.clear();
    for (int k = -window; k <= window; ++k) {
      int j = cyclic ? wrap(i + k) : i + k;
      if (j >= 0 && j < n && sec[j].ok) near.push_back(static_cast<float>(sec[j].width));
    }
    if (sec[i].width > opt.clean_ratio * median_of(near)) continue;
    if (!node_pixel) out[i] = pts[i] + sec[i].normal * sec[i].offset;
    t.width[i] = static_cast<float>(sec[i].width);
  }
  if (cyclic) out.back() = out.front(), t.width.back() = t.width.front();
  t.pts = std::move(out);
  smooth_centred(t, cyclic);
}

// Up to `count` centred points walking from index i in steps of `step`, stopping at the
// first point that is not centred or at the trace's end (a closed trace wraps around).
std::vector<Vec2> centred_run(const Trace& t, bool cyclic, int i, int step, int count) {
  const int n = static_cast<int>(t.pts.size()), m = cyclic ? n - 1 : n;
  std::vector<Vec2> run;
  for (int k = 0; k < count; ++k, i += step) {
    if (cyclic) i = ((i % m) + m) % m;
    if (i < 0 || i >= n || std::isnan(t.width[i])) break;
    run.push_back(t.pts[i]);
  }
  return run;
}

// Mends runs of uncentred points between two centred legs. Where the legs meet at an angle
// the run is a corner that thinning rounded off: it becomes the legs' meeting point, if
// that lies on ink and near the run. Where they continue smoothly the run is where a spur
// or a bump pulled the skeleton aside: it becomes the straight chord between the legs, if
// the run is short and stays near it. A lone centred point between uncentred ones (the
// skeleton zigzagging around a pinhole or a pruned loop) is no leg: such a stretch is mended
// as one run when it is straight and its centred points lie on the chord.
void mend_uncentred_runs(Trace& t, bool cyclic, const cv::Mat& coverage, double stroke_width) {
  const int n = static_cast<int>(t.pts.size());
  const int leg = std::max(3, static_cast<int>(std::lround(stroke_width / 2)));
  const double min_turn = std::cos(deg2rad(kMinCornerDeg));
  const double near_run = 0.5 * stroke_width + 1;
  auto uncentred = [&](int k) { return std::isnan(t.width[k]); };
  // The legs either side of run [a, b], oldest point first; false when either is too short.
  auto legs = [&](int a, int b, Line& in, Line& out) {
    if (b + 1 >= n) return false;
    std::vector<Vec2> before = centred_run(t, cyclic, a - 1, -1, leg), after = centred_run(t, cyclic, b + 1, 1, leg);
    if (before.size() < 2 || after.size() < 2) return false;
    std::reverse(before.begin(), before.end());
    in = principal_axis(before), out = principal_axis(after);
    return true;
  };
  // Run [a, b] may become the chord between its neighbours: short, near it, and any centred
  // point in it on it.
  auto near_chord = [&](int a, int b) {
    for (int k = a; k <= b; ++k) {
      const double off = point_segment_distance(t.pts[k], t.pts[a - 1], t.pts[b + 1]);
      if (off > (uncentred(k) ? near_run : kLoneCentredOffset)) return false;
    }
    return dist(t.pts[a - 1], t.pts[b + 1]) <= 3 * stroke_width;
  };
  Trace out;
  int i = 0;
  while (i < n) {
    if (!uncentred(i) || i == 0) {
      out.push(t.pts[i], t.width[i]);
      ++i;
      continue;
    }
    int a = i, b = i;
    while (b + 1 < n && uncentred(b + 1)) ++b;
    int e = b;
    while (e + 2 < n && !uncentred(e + 1) && uncentred(e + 2)) {
      e += 2;
      while (e + 1 < n && uncentred(e + 1)) ++e;
    }
    Line in, outl;
    if (e > b && legs(a, e, in, outl) && dot(in.dir, outl.dir) >= min_turn && near_chord(a, e)) {
      i = e + 1;
      continue;
    }
    i = b + 1;
    bool keep = true;
    if (legs(a, b, in, outl)) {
      Vec2 corner;
      if (dot(in.dir, outl.dir) < min_turn) {
        if (intersect(in, outl, corner) && coverage_at(coverage, corner) >= 0.5) {
          double near = 1e9;
          for (int k = a; k <= b; ++k) near = std::min(near, dist(corner, t.pts[k]));
          if (near <= near_run) out.push(corner), keep = false;
        }
      } else {
        keep = !near_chord(a, b);
      }
    }
    if (keep)
      for (int k = a; k <= b; ++k) out.push(t.pts[k], t.width[k]);
  }
  t = std::move(out);
}

// Starts a closed trace at a centred point, so that no corner straddles the seam.
// Restarts a closed trace (first point repeated last) at point `start`.
void rotate_closed(Trace& t, size_t start) {
  const size_t m = t.pts.size() - 1;
  if (start == 0 || start >= m) return;
  Trace r;
  for (size_t k = 0; k <= m; ++k) r.push(t.pts[(start + k) % m], t.width[(start + k) % m]);
  t = std::move(r);
}

void rotate_to_centred(Trace& t) {
  size_t start = 0;
  while (start + 1 < t.pts.size() && std::isnan(t.width[start])) ++start;
  rotate_closed(t, start);
}

}  // namespace

void centre_on_ink(StrokeGraph& g, const cv::Mat& coverage, double stroke_width, const CentreOptions& opt) {
  for (Edge& e : g.edges) {
    if (!e.alive || e.trace.pts.size() < 2) continue;
    const bool cyclic = e.closed && e.trace.pts.size() > 3 && dist(e.trace.pts.front(), e.trace.pts.back()) < 1e-9;
    centre_trace(e.trace, cyclic, coverage, stroke_width, opt);
    if (cyclic) {
      rotate_to_centred(e.trace);
      g.nodes[e.n0].p = e.trace.pts.front();
    }
    mend_uncentred_runs(e.trace, cyclic, coverage, stroke_width);
  }
}

void place_stroke_ends(StrokeGraph& g, const cv::Mat& coverage, double stroke_width) {
  for (Node& node : g.nodes) {
    if (!node.alive || node.loop || node.dot || node.degree() != 1) continue;
    End end = node.ends[0];
    Trace t = g.trace_from(end);
    double length = t.length();
    if (length < 1) continue;
    // Thinning bends the last pixels inside a round cap: the stroke's direction is taken
    // behind the cap, and the end is rebuilt straight from there.
    double half = median_width(t, 2 * stroke_width, stroke_width) / 2;
    double cap = std::min(0.5 * half, 0.3 * length);
    Vec2 base = point_at_length(t.pts, cap);
    Vec2 d = unit(base - point_at_length(t.pts, std::min(cap + std::max(2.0, stroke_width), length)));
    double to_edge = distance_to_edge(coverage, base, d, 2 * stroke_width + 2);
    if (to_edge < 0) continue;
    // The cap's centre lies half a width back from where the ink ends; thinning's own end
    // is trusted to within half a width of it either way (in a tapering brush tip it
    // reaches past the cap centre, and so does the drawn stroke).
    double skeleton_end = dot(t.pts.front() - base, d);
    double reach = std::clamp(to_edge - half, skeleton_end - half, skeleton_end + half);
    Vec2 target = base + d * std::min(reach, to_edge);
    // The end runs straight from the points behind both the cap and the target.
    Trace moved{{target}, {kUnknownWidth}};
    double s = 0;
    bool behind = false;
    for (size_t i = 0; i < t.pts.size(); ++i) {
      if (i > 0) s += dist(t.pts[i - 1], t.pts[i]);
      behind = behind || (s >= cap && dot(t.pts[i] - target, d) < 0) || i + 1 == t.pts.size();
      if (behind) moved.push(t.pts[i], t.width[i]);
    }
    if (end.tail) moved.reverse();
    g.edges[end.edge].trace = std::move(moved);
    node.p = target;
  }
}

namespace {

// The point at arc length at (s: the polyline's arc lengths); a closed polyline wraps around.
Vec2 point_at(const Polyline& pts, const std::vector<double>& s, double at, bool cyclic) {
  const double total = s.back();
  if (cyclic && total > 0) at = std::fmod(std::fmod(at, total) + total, total);
  if (at <= 0) return pts.front();
  if (at >= total) return pts.back();
  size_t i = std::upper_bound(s.begin(), s.end(), at) - s.begin();  // s[i-1] <= at < s[i]
  double f = (at - s[i - 1]) / (s[i] - s[i - 1]);
  return pts[i - 1] + (pts[i] - pts[i - 1]) * f;
}

// Where the trace turns at point i and ink reaches far out beyond the turn, returns how far
// (along the outward bisector), else 0.
double spike_depth(const Polyline& pts, const std::vector<double>& s, size_t i, bool cyclic, const cv::Mat& coverage,
                   double width, Vec2& outward) {
  const double d = std::max(2.0, 0.5 * width);
  Vec2 u = unit(point_at(pts, s, s[i] - d, cyclic) - pts[i]), v = unit(point_at(pts, s, s[i] + d, cyclic) - pts[i]);
  if (dot(u, v) < -std::cos(deg2rad(kMinCuspTurnDeg)) || norm(u + v) < 1e-9) return 0;
  outward = -unit(u + v);
  double depth = distance_to_edge(coverage, pts[i], outward, 3 * width);
  if (depth <= 0.5 * width + std::max(1.5, kCuspMargin * width)) return 0;
  // A spike of two merged strokes is narrow; a bulge of a brush corner is not.
  CrossSection middle = cross_section(coverage, pts[i] + outward * (0.5 * depth), perp(outward), 3 * width);
  return middle.ok && middle.width <= kCuspMaxWidth * width ? depth : 0;
}

// The point of a closed polyline where it turns least over a chord of half a width each way.
size_t straightest_point(const Polyline& pts, double width) {
  const std::vector<double> s = arc_lengths(pts);
  const double d = std::max(2.0, 0.5 * width);
  size_t best = 0;
  double straightest = 2;
  for (size_t i = 0; i + 1 < pts.size(); ++i) {
    Vec2 u = unit(pts[i] - point_at(pts, s, s[i] - d, true));
    Vec2 v = unit(point_at(pts, s, s[i] + d, true) - pts[i]);
    if (1 - dot(u, v) < straightest) straightest = 1 - dot(u, v), best = i;
  }
  return best;
}

// Recovers the cusps of one trace: see recover_cusps.
void recover_trace_cusps(Trace& t, bool cyclic, const cv::Mat& coverage, double width) {
  const std::vector<double> s = arc_lengths(t.pts);
  const size_t n = t.pts.size(), last = cyclic ? n - 1 : n;
  const double d = std::max(2.0, 0.5 * width);
  struct Cusp {
    size_t at;
    Vec2 tip;
  };
  std::vector<Cusp> cusps;
  double best = 0;
  Cusp current{};
  for (size_t i = 0; i <= last; ++i) {
    double depth = 0;
    Vec2 out;
    if (i < last && (cyclic || (s[i] >= d && s[i] <= s.back() - d)))
      depth = spike_depth(t.pts, s, i, cyclic, coverage, width, out);
    if (depth > best) best = depth, current = {i, t.pts[i] + out * (depth - 0.5 * width)};
    if (depth == 0 && best > 0) cusps.push_back(current), best = 0;
  }
  if (cusps.empty()) return;
  // Drop the rounded-off points around each cusp's base and run out to the tip and back.
  Trace out;
  size_t c = 0;
  for (size_t i = 0; i < n; ++i) {
    while (c < cusps.size() && s[cusps[c].at] + 0.5 * width < s[i]) {
      if (out.pts.empty() || dist(out.pts.back(), cusps[c].tip) > 1e-9) out.push(cusps[c].tip);
      ++c;
    }
    bool near = c < cusps.size() && std::abs(s[i] - s[cusps[c].at]) < 0.5 * width && i != 0 && i != n - 1;
    if (!near) out.push(t.pts[i], t.width[i]);
  }
  t = std::move(out);
}

}  // namespace

void recover_cusps(StrokeGraph& g, const cv::Mat& coverage, double stroke_width) {
  for (Edge& e : g.edges) {
    if (!e.alive || e.trace.pts.size() < 5) continue;
    // Only a pen of steady width draws cusps; a brush's swelling strokes have bulges instead.
    std::vector<float> w;
    for (float x : e.trace.width)
      if (!std::isnan(x)) w.push_back(x);
    if (w.size() < 5) continue;
    std::sort(w.begin(), w.end());
    const double median = w[w.size() / 2];
    if (w[w.size() * 9 / 10] - w[w.size() / 10] > kCuspMaxWidthSpread * median) continue;
    const bool cyclic = e.closed && dist(e.trace.pts.front(), e.trace.pts.back()) < 1e-9;
    if (!cyclic) {
      recover_trace_cusps(e.trace, false, coverage, median);
      continue;
    }
    // A cusp must not straddle the seam of a loop: work from its straightest point, then
    // restart at the anchor again (or move the anchor if it was at a cusp).
    const Vec2 anchor = e.trace.pts.front();
    rotate_closed(e.trace, straightest_point(e.trace.pts, median));
    recover_trace_cusps(e.trace, true, coverage, median);
    for (size_t k = 0; k < e.trace.pts.size(); ++k)
      if (dist(e.trace.pts[k], anchor) < 1e-9) rotate_closed(e.trace, k);
    g.nodes[e.n0].p = e.trace.pts.front();
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
