// SplitPrimitive's geometry: where a primitive splits (a point, a parameter, the sharpest
// corner or the inflection of its source points) and the two pieces with their provenance.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "core/error.hpp"
#include "edit/edit.hpp"
#include "edit/geometry.hpp"
#include "edit/joints.hpp"
#include "fit/fit.hpp"

namespace sv::edit {

namespace {

// Signed turn (rad) at each point over `window` px of arc length either side; nullopt where
// the window runs off either end.
std::vector<std::optional<double>> turns(const Polyline& pts, double window) {
  const size_t n = pts.size();
  std::vector<double> s(n, 0.0);
  for (size_t k = 1; k < n; ++k) s[k] = s[k - 1] + dist(pts[k - 1], pts[k]);
  std::vector<std::optional<double>> out(n);
  size_t lo = 0, hi = 0;
  for (size_t k = 0; k < n; ++k) {
    while (lo + 1 < k && s[k] - s[lo + 1] >= window) ++lo;
    while (hi < n && s[hi] - s[k] < window) ++hi;
    if (hi >= n || s[k] - s[lo] < window || lo == k) continue;
    Vec2 u = pts[k] - pts[lo], v = pts[hi] - pts[k];
    out[k] = std::atan2(cross(u, v), dot(u, v));
  }
  return out;
}

// The source point of the sharpest corner: the largest turn beyond the typical one.
size_t corner_index(const Polyline& pts, const FitParams& fp, const std::string& id) {
  auto t = turns(pts, fp.corner_window_px);
  std::vector<double> mags;
  for (const auto& v : t)
    if (v) mags.push_back(std::abs(*v));
  if (mags.empty())
    throw Error(Code::no_result, id + " is too short to have a corner", {{"reason", "too few source points"}});
  std::vector<double> sorted = mags;
  std::nth_element(sorted.begin(), sorted.begin() + sorted.size() / 2, sorted.end());
  const double typical = sorted[sorted.size() / 2];
  size_t best = 0;
  double best_excess = -1;
  for (size_t k = 0; k < t.size(); ++k)
    if (t[k] && std::abs(*t[k]) - typical > best_excess) best_excess = std::abs(*t[k]) - typical, best = k;
  if (rad2deg(best_excess) < fp.join_corner_deg)
    throw Error(Code::no_result,
                fmt::format("{} has no corner: its sharpest turn is {:.1f} deg over {:.1f} px beyond the typical "
                            "{:.1f} deg (a corner turns {:.0f} deg more)",
                            id, rad2deg(best_excess + typical), fp.corner_window_px, rad2deg(typical), fp.join_corner_deg),
                {{"reason", "no corner in the source points"}, {"largest_turn_deg", round3(rad2deg(best_excess + typical))}});
  return best;
}

// The source point where the curvature changes sign between two runs that each clearly bend.
size_t inflection_index(const Polyline& pts, const FitParams& fp, const std::string& id) {
  double len = polyline_length(pts);
  double window = std::max(fp.corner_window_px, 0.08 * len);
  auto t = turns(pts, window);
  const double min_turn = deg2rad(1.0), significant = deg2rad(4.0);
  struct Run {
    int sign;
    size_t first, last;
    double peak;
  };
  std::vector<Run> runs;
  for (size_t k = 0; k < t.size(); ++k) {
    if (!t[k] || std::abs(*t[k]) < min_turn) continue;
    int sign = *t[k] > 0 ? 1 : -1;
    if (!runs.empty() && runs.back().sign == sign) {
      runs.back().last = k;
      runs.back().peak = std::max(runs.back().peak, std::abs(*t[k]));
    } else {
      runs.push_back({sign, k, k, std::abs(*t[k])});
    }
  }
  size_t best = 0;
  double best_score = 0;
  for (size_t r = 0; r + 1 < runs.size(); ++r) {
    double score = std::min(runs[r].peak, runs[r + 1].peak);
    if (score <= best_score) continue;
    // The crossing: the smallest turn between the two runs.
    size_t at = runs[r].last;
    for (size_t k = runs[r].last; k <= runs[r + 1].first; ++k)
      if (t[k] && std::abs(*t[k]) < std::abs(*t[at])) at = k;
    if (runs[r].last == runs[r + 1].first - 1) at = runs[r + 1].first;
    best = at, best_score = score;
  }
  if (best_score < significant)
    throw Error(Code::no_result,
                fmt::format("{} has no inflection: its source points do not bend both ways (by {:.0f} deg over {:.1f} px)",
                            id, rad2deg(significant), window),
                {{"reason", "no curvature sign change in the source points"}});
  return best;
}

// The edge index of a point of a primitive's span (spans may wrap on closed edges).
int span_index(const Scene& s, const Primitive& p, size_t k) {
  const Edge* e = s.graph->edge(p.edge);
  const int n = static_cast<int>(e->points.size());
  return static_cast<int>((p.span0 + static_cast<long>(k)) % n);
}

}  // namespace

Split split_primitive(const Scene& in, const std::string& id, const SplitAt& at) {
  Split r;
  r.scene = editable(in);
  Scene& out = r.scene;
  const Primitive& old = primitive_or_throw(in, id);
  const Shape& sh = old.shape;
  const Polyline src = source_points(in, old);  // edge order
  const FitParams fp = fit_params_of(in);
  double t = 0;
  std::optional<size_t> src_k;
  std::string how;
  if (at.kind == SplitAt::fraction) {
    t = at.t;
    if (!(t > 0 && t < 1))
      throw Error(Code::invalid_selection,
                  fmt::format("t = {} is not strictly between 0 and 1 (0 and 1 are the ends of {})", t, old.id),
                  {{"reason", "t outside (0, 1)"}, {"t", t}});
    how = fmt::format("t={}", t);
  } else if (at.kind == SplitAt::point) {
    t = param_of(sh, at.q);
    how = "near " + pt_text(at.q);
  } else {
    const std::string what = at.kind == SplitAt::corner ? "corner" : "inflection";
    if (src.size() < 3)
      throw Error(Code::no_result, old.id + " has no source points to find a " + what + " in",
                  {{"reason", "no source points"}});
    size_t k = at.kind == SplitAt::corner ? corner_index(src, fp, old.id) : inflection_index(src, fp, old.id);
    src_k = k;
    t = param_of(sh, src[k]);
    how = what + " at " + pt_text(src[k]);
  }
  std::vector<Shape> pieces;
  Vec2 P = sh.at(t);
  if (sh.type == PrimType::circle) {
    // A circle splits into two half circles (both drawn with positive sweep), meeting at the
    // point and at its opposite.
    double phi = angle_of(P - sh.center);
    Vec2 Q = sh.center + from_angle(phi + kPi) * sh.radius;
    pieces = {Shape::arc(P, Q, 1.0), Shape::arc(Q, P, 1.0)};
  } else {
    const double L = sh.length();
    if (t * L < 0.5 || (1 - t) * L < 0.5)
      throw Error(Code::invalid_selection,
                  fmt::format("the split point {} is at the {} of {} (within 0.5 px): nothing to split", pt_text(P),
                              t * L < 0.5 ? "start" : "end", old.id),
                  {{"reason", "split point at an end"}, {"t", round_to(t, 1e-6)}});
    if (sh.type == PrimType::line) {
      pieces = {Shape::line(sh.p0, P), Shape::line(P, sh.p1)};
    } else {
      double sw = sh.sweep_rad();
      pieces = {Shape::arc(sh.p0, P, std::tan(sw * t / 4)), Shape::arc(P, sh.p1, std::tan(sw * (1 - t) / 4))};
      for (auto& p : pieces)
        if (!std::isfinite(p.radius)) p = Shape::line(p.p0, p.p1);
    }
  }
  std::vector<Primitive> fresh;
  for (const Shape& s : pieces) {
    check_shape(s, "a piece of " + old.id);
    Primitive p;
    p.id = fresh_primitive_id(out);
    p.shape = s;
    p.semantic_role = old.semantic_role;
    fresh.push_back(p);
  }
  // Provenance: the span splits at the source point nearest the split point.
  if (src.size() >= 2) {
    auto nearest = [&](Vec2 q) {
      size_t best = 0;
      for (size_t k = 1; k < src.size(); ++k)
        if (dist(src[k], q) < dist(src[best], q)) best = k;
      return best;
    };
    if (sh.type == PrimType::circle) {
      // The first half runs from P to Q: along the points from kp to kq, or against them.
      size_t kp = nearest(fresh[0].shape.p0), kq = nearest(fresh[0].shape.p1);
      size_t len = (kq + src.size() - kp) % src.size();
      Vec2 mid = src[(kp + len / 2) % src.size()];
      bool forward = fresh[0].shape.distance_to(mid) <= fresh[1].shape.distance_to(mid);
      int ep = span_index(in, old, kp), eq = span_index(in, old, kq);
      fresh[0].span0 = forward ? ep : eq;
      fresh[0].span1 = forward ? eq : ep;
      fresh[1].span0 = fresh[0].span1;
      fresh[1].span1 = fresh[0].span0;
    } else {
      size_t k = src_k ? *src_k : nearest(P);
      k = std::clamp<size_t>(k, 0, src.size() - 1);
      const bool flipped = dist(sh.p0, src.back()) + dist(sh.p1, src.front()) <
                           dist(sh.p0, src.front()) + dist(sh.p1, src.back());
      int ek = span_index(in, old, k);
      Primitive& head = fresh[flipped ? 1 : 0];  // the piece at the span's start
      Primitive& tail = fresh[flipped ? 0 : 1];
      head.span0 = old.span0, head.span1 = ek;
      tail.span0 = ek, tail.span1 = old.span1;
    }
    for (auto& p : fresh) {
      p.edge = old.edge;
      refresh_fit(in, p);
    }
  }
  for (const auto& p : fresh) r.ids.push_back(p.id), r.touched.insert(p.id);
  splice_primitives(out, {old.id}, fresh);
  r.at = fresh[0].shape.p1;
  r.how = how;
  r.type = sh.type;
  return r;
}

}  // namespace sv::edit
