// sv-edit's geometric edits: merge, split, replace, refit, smooth, snap, enforce a relation.
//
// Conventions shared by these tools:
//   - new primitives get fresh ids (never a reused one); MergePrimitives, SplitPrimitive,
//     ReplacePrimitive and RefitPolyline remove the ids they replace, SmoothPrimitive changes
//     its primitive in place (same id), SnapEndpoints and EnforceRelation move geometry in place;
//   - connectivity is kept: an end shared with a primitive outside the edit before it is shared
//     after it (the edit pins such ends, or moves the neighbour's end along, re-deriving an arc
//     through its middle point);
//   - a primitive fitted to a graph edge keeps that provenance (edge and point span) where the
//     new geometry still stands for those points, and its fit_rms_px / fit_max_px are measured
//     against them.
#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <functional>
#include <map>
#include <optional>

#include "core/error.hpp"
#include "edit/edit.hpp"
#include "fit/fit.hpp"
#include "fit/primitive_fit.hpp"
#include "tools/common.hpp"
#include "tools/edit_common.hpp"
#include "tools/schema_parts.hpp"

namespace sv {

namespace {

namespace S = schema;
using fitting::deviation;

constexpr double kJointEps = 1e-3;  // ends this close are one joint

double join_px(const Scene& s) { return std::max(1.0, 0.5 * stroke_width_of(s)); }
double tolerance_of(const Scene& s) { return config_value(s, "fit.tolerance_px", 1.0); }

// ---------------------------------------------------------------- geometry helpers

// The arc from a through m to b (a line when the three are collinear).
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

// The shape with new ends: a line between them, an arc through its old middle point.
Shape with_ends(const Shape& s, Vec2 a, Vec2 b) {
  if (s.type == PrimType::line) return Shape::line(a, b);
  if (s.type == PrimType::arc) return through(a, s.at(0.5), b);
  return s;
}

// Arc-length fraction of the point of s nearest q (circles: from angle 0).
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

// Points running the way the shape runs.
Polyline oriented(Polyline pts, const Shape& s) {
  if (pts.size() >= 2 && s.type != PrimType::circle &&
      dist(s.p0, pts.front()) + dist(s.p1, pts.back()) > dist(s.p0, pts.back()) + dist(s.p1, pts.front()))
    std::reverse(pts.begin(), pts.end());
  return pts;
}

// What a primitive stands for: its source points, else dense samples of its shape.
Polyline points_of(const Scene& s, const Primitive& p) {
  Polyline pts = source_points(s, p);
  if (pts.empty()) return p.shape.sample(0.5);
  return oriented(pts, p.shape);
}

// Ends of primitives other than `skip` at (within kJointEps of) q.
bool shared_with_others(const Scene& s, Vec2 q, const std::set<std::string>& skip) {
  for (const auto& p : *s.primitives) {
    if (skip.count(p.id) || p.shape.type == PrimType::circle) continue;
    if (dist(p.shape.p0, q) <= kJointEps || dist(p.shape.p1, q) <= kJointEps) return true;
  }
  return false;
}

// Moves the ends of primitives outside `skip` that sit at a move's origin to its target.
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

// Recomputes a primitive's fit figures against its source points (when it has any).
void refresh_fit(const Scene& s, Primitive& p) {
  Polyline pts = source_points(s, p);
  if (pts.empty()) return;
  auto d = deviation(p.shape, pts);
  p.fit_rms_px = d.rms;
  p.fit_max_px = d.max;
}

// Replaces the primitives `old` by `fresh` (at the place of the first of them) in the list and
// in the tour.
void replace_primitives(Scene& s, const std::set<std::string>& old, const std::vector<Primitive>& fresh) {
  // In a list of T: drop the old, put the fresh where the first old one was (else at the end).
  auto splice = [&](auto& list, auto id_of, auto make) {
    auto is_old = [&](const auto& x) { return old.count(id_of(x)) > 0; };
    size_t pos = static_cast<size_t>(std::find_if(list.begin(), list.end(), is_old) - list.begin());
    std::erase_if(list, is_old);
    pos = std::min(pos, list.size());
    for (const auto& p : fresh) list.insert(list.begin() + static_cast<long>(pos++), make(p));
  };
  splice(*s.primitives, [](const Primitive& p) { return p.id; }, [](const Primitive& p) { return p; });
  if (s.tour)
    splice(*s.tour, [](const TourStep& t) { return t.primitive; },
           [](const Primitive& p) { return TourStep{p.id, false, 0}; });
}

std::vector<std::string> ids_of(const json& list) {
  std::vector<std::string> out;
  std::set<std::string> seen;
  for (const auto& id : list) {
    if (!seen.insert(id.get<std::string>()).second)
      throw Error(Code::invalid_selection, "primitive " + id.get<std::string>() + " is listed twice");
    out.push_back(id);
  }
  return out;
}

// The primitives the ids name, in order; not_found for an unknown id.
std::vector<const Primitive*> selection(const Scene& s, const std::vector<std::string>& ids) {
  std::vector<const Primitive*> sel;
  for (const auto& id : ids) sel.push_back(&primitive_or_throw(s, id));
  return sel;
}

// A circle through the points (Kasa, refined), if they are not collinear.
std::optional<fitting::Circle> circle_of(const Polyline& pts) {
  auto c = fitting::kasa_circle(pts);
  if (!c) return std::nullopt;
  auto r = fitting::refine_circle(pts, *c);
  if (!std::isfinite(r.radius) || r.radius <= 0) return c;
  return r;
}

// The best arc from a to b through the points (either turning sense); nullopt if none.
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

// ---------------------------------------------------------------- chains of primitives

struct Walk {
  std::vector<std::pair<size_t, bool>> order;  // index into the selection, flipped
  bool closed = false;
};

// Orders the selection (lines and arcs) into one chain whose consecutive ends meet within
// `join`; throws Error(no_result) when they branch, fall apart or contain a circle.
Walk walk_chain(const std::vector<const Primitive*>& sel, double join) {
  const size_t n = sel.size();
  for (const Primitive* p : sel)
    if (p->shape.type == PrimType::circle)
      throw Error(Code::no_result, p->id + " is a circle: it has no ends to chain with the others",
                  {{"reason", "a circle cannot be chained"}});
  auto end = [&](size_t i, int w) { return w ? sel[i]->shape.p1 : sel[i]->shape.p0; };
  // partner[i][w]: the (item, end) the end meets, or none.
  std::vector<std::array<std::pair<int, int>, 2>> partner(n, {std::pair{-1, -1}, std::pair{-1, -1}});
  for (size_t i = 0; i < n; ++i)
    for (int w : {0, 1}) {
      int count = 0;
      for (size_t j = 0; j < n; ++j)
        for (int v : {0, 1})
          if (j != i && dist(end(i, w), end(j, v)) <= join) {
            partner[i][w] = {static_cast<int>(j), v};
            ++count;
          }
      if (count > 1)
        throw Error(Code::no_result,
                    fmt::format("the primitives branch at {}: they do not form one chain", pt_text(end(i, w))),
                    {{"reason", "the selection branches, not one chain"}, {"at", point_json(end(i, w))}});
    }
  Walk walk;
  int start = -1, start_end = 0;
  for (size_t i = 0; i < n && start < 0; ++i)
    for (int w : {0, 1})
      if (partner[i][w].first < 0 && start < 0) start = static_cast<int>(i), start_end = w;
  walk.closed = start < 0;
  if (walk.closed) start = 0, start_end = 0;
  int cur = start, entry = start_end;
  std::vector<bool> seen(n, false);
  while (cur >= 0 && !seen[cur]) {
    seen[cur] = true;
    walk.order.push_back({static_cast<size_t>(cur), entry == 1});
    auto next = partner[cur][1 - entry];
    cur = next.first;
    entry = next.second;
  }
  if (walk.order.size() != n)
    throw Error(Code::no_result, "the primitives do not form one connected chain (their ends do not meet)",
                {{"reason", "not one connected chain"}});
  return walk;
}

// ---------------------------------------------------------------- MergePrimitives

struct Candidate {
  std::string kind;
  Shape shape;
  fitting::Deviation d{INFINITY, INFINITY};
};

ToolResult merge_primitives(const ToolContext& ctx, const json& req) {
  Scene out = editable(ctx.scene);
  std::vector<std::string> ids = ids_of(req["primitive_ids"]);
  std::vector<const Primitive*> sel = selection(ctx.scene, ids);
  if (sel.size() < 2) throw Error(Code::invalid_selection, "MergePrimitives needs at least two primitives");
  const std::set<std::string> gone(ids.begin(), ids.end());
  const double tol = req["fit_tolerance_px"].is_number() ? req["fit_tolerance_px"].get<double>() : tolerance_of(ctx.scene);
  if (!(tol > 0)) throw Error(Code::invalid_selection, "fit_tolerance_px must be positive");
  Walk walk = walk_chain(sel, join_px(ctx.scene));
  // One source edge for all: walk along the edge's direction, so the merged span reads forward.
  bool one_edge = ctx.scene.graph && !sel[0]->edge.empty() && ctx.scene.graph->edge(sel[0]->edge);
  for (const Primitive* p : sel) one_edge = one_edge && p->edge == sel[0]->edge;
  auto piece_shape = [&](const std::pair<size_t, bool>& w) {
    return w.second ? sel[w.first]->shape.reversed() : sel[w.first]->shape;
  };
  if (one_edge) {
    const Primitive& first = *sel[walk.order.front().first];
    Polyline src = source_points(ctx.scene, first);
    Shape s0 = piece_shape(walk.order.front());
    if (src.size() >= 2 && dist(s0.p0, src.back()) + dist(s0.p1, src.front()) <
                               dist(s0.p0, src.front()) + dist(s0.p1, src.back())) {
      std::reverse(walk.order.begin(), walk.order.end());
      for (auto& w : walk.order) w.second = !w.second;
    }
  }
  Polyline pts;
  for (const auto& w : walk.order) {
    Polyline part = oriented(points_of(ctx.scene, *sel[w.first]), piece_shape(w));
    pts.insert(pts.end(), part.begin() + (pts.empty() || part.empty() ? 0 : 1), part.end());
  }
  const Vec2 A = piece_shape(walk.order.front()).p0, B = piece_shape(walk.order.back()).p1;
  const bool pin_a = shared_with_others(ctx.scene, A, gone), pin_b = shared_with_others(ctx.scene, B, gone);
  const std::string target = req["target_kind"];
  if (walk.closed && (target == "line" || target == "arc"))
    throw Error(Code::no_result,
                fmt::format("{} close a loop: only a circle can replace them, not a {}", id_list(ids), target),
                {{"reason", "the primitives close a loop"}});
  if (!walk.closed && target == "circle")
    throw Error(Code::no_result, fmt::format("{} do not close a loop: a circle cannot replace them", id_list(ids)),
                {{"reason", "a circle needs primitives that close a loop"}});
  std::vector<Candidate> cands;
  auto consider = [&](const std::string& kind) {
    Candidate c{kind, {}, {}};
    if (kind == "line") {
      if (pin_a || pin_b) {
        c.shape = Shape::line(A, B);
      } else {
        auto f = fitting::fit_line(pts);
        auto proj = [&](Vec2 q) { return f.centroid + f.dir * dot(q - f.centroid, f.dir); };
        c.shape = Shape::line(proj(A), proj(B));
      }
      if (dist(c.shape.p0, c.shape.p1) < 1e-6) return;
    } else if (kind == "arc") {
      auto arc = arc_between(A, B, pts);
      if (!arc) return;
      c.shape = *arc;
    } else {
      auto circle = circle_of(pts);
      if (!circle) return;
      c.shape = Shape::circle(circle->center, circle->radius);
    }
    c.d = deviation(c.shape, pts);
    cands.push_back(c);
  };
  if (target == "auto") {
    if (walk.closed) {
      consider("circle");
    } else {
      consider("line");
      consider("arc");
    }
  } else {
    consider(target);
  }
  const Candidate* chosen = nullptr;
  for (const auto& c : cands)
    if (c.d.max <= tol) {
      chosen = &c;
      break;
    }
  if (!chosen) {
    const Candidate* best = nullptr;
    for (const auto& c : cands)
      if (!best || c.d.max < best->d.max) best = &c;
    if (!best)
      throw Error(Code::no_result, "merge rejected: no " + target + " can be fitted to the points",
                  {{"reason", "no shape fits the points"}, {"tolerance_px", tol}});
    std::string reason = fmt::format("the best {} is {:.2f} px from the points (rms {:.2f} px), beyond the tolerance {:.2f} px",
                                     best->kind, best->d.max, best->d.rms, tol);
    throw Error(Code::no_result, "merge rejected: " + reason,
                {{"reason", reason},
                 {"kind", best->kind},
                 {"fit_rms_px", round_to(best->d.rms, 1e-4)},
                 {"fit_max_px", round_to(best->d.max, 1e-4)},
                 {"tolerance_px", tol}});
  }
  Primitive np;
  np.id = fresh_primitive_id(out);
  np.shape = chosen->shape;
  np.fit_rms_px = chosen->d.rms;
  np.fit_max_px = chosen->d.max;
  np.semantic_role = sel[0]->semantic_role;
  for (const Primitive* p : sel)
    if (p->semantic_role != np.semantic_role) np.semantic_role = "unknown";
  if (one_edge) {
    np.edge = sel[0]->edge;
    np.span0 = sel[walk.order.front().first]->span0;
    np.span1 = sel[walk.order.back().first]->span1;
  }
  ToolResult r;
  r.touched = {np.id};
  // The chain's inner joints and free outer ends may have moved: neighbours there follow.
  std::vector<std::pair<Vec2, Vec2>> moves;
  for (size_t k = 0; k + 1 < walk.order.size(); ++k) {
    Vec2 j = piece_shape(walk.order[k]).p1;
    moves.push_back({j, nearest_on(np.shape, j)});
  }
  if (np.shape.type != PrimType::circle) moves.push_back({A, np.shape.p0}), moves.push_back({B, np.shape.p1});
  else moves.push_back({A, nearest_on(np.shape, A)});
  carry_joints(out, moves, gone, r.touched);
  replace_primitives(out, gone, {np});
  r.fields = {{"new_primitive_id", np.id},
              {"kind", chosen->kind},
              {"fit_rms_px", round_to(np.fit_rms_px, 1e-4)},
              {"fit_max_px", round_to(np.fit_max_px, 1e-4)}};
  r.llm_text = fmt::format("merged {} into {} {} (rms {:.2f} px, max {:.2f} px, tolerance {:.2f} px)", id_list(ids),
                           chosen->kind, np.id, np.fit_rms_px, np.fit_max_px, tol);
  r.scene = std::move(out);
  return r;
}

// ---------------------------------------------------------------- SplitPrimitive

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

ToolResult split_primitive(const ToolContext& ctx, const json& req) {
  Scene out = editable(ctx.scene);
  const Primitive& old = primitive_or_throw(ctx.scene, req["primitive_id"]);
  const Shape& sh = old.shape;
  const json& at = req["at"];
  const Polyline src = source_points(ctx.scene, old);  // edge order
  const FitParams fp = fit_params_of(ctx.scene);
  double t = 0;
  std::optional<size_t> src_k;
  std::string how;
  if (at.is_number()) {
    t = at.get<double>();
    if (!(t > 0 && t < 1))
      throw Error(Code::invalid_selection,
                  fmt::format("t = {} is not strictly between 0 and 1 (0 and 1 are the ends of {})", t, old.id),
                  {{"reason", "t outside (0, 1)"}, {"t", t}});
    how = fmt::format("t={}", t);
  } else if (at.is_array()) {
    Vec2 q{at.at(0).get<double>(), at.at(1).get<double>()};
    t = param_of(sh, q);
    how = "near " + pt_text(q);
  } else if (at == "auto_corner" || at == "auto_inflection") {
    if (src.size() < 3)
      throw Error(Code::no_result, old.id + " has no source points to find a " + at.get<std::string>().substr(5) + " in",
                  {{"reason", "no source points"}});
    size_t k = at == "auto_corner" ? corner_index(src, fp, old.id) : inflection_index(src, fp, old.id);
    src_k = k;
    t = param_of(sh, src[k]);
    how = at.get<std::string>().substr(5) + " at " + pt_text(src[k]);
  } else {
    throw Error(Code::invalid_selection, "at must be [x, y], a number t in (0, 1), \"auto_corner\" or \"auto_inflection\"",
                {{"reason", "bad split position"}});
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
      int ep = span_index(ctx.scene, old, kp), eq = span_index(ctx.scene, old, kq);
      fresh[0].span0 = forward ? ep : eq;
      fresh[0].span1 = forward ? eq : ep;
      fresh[1].span0 = fresh[0].span1;
      fresh[1].span1 = fresh[0].span0;
    } else {
      size_t k = src_k ? *src_k : nearest(P);
      k = std::clamp<size_t>(k, 0, src.size() - 1);
      const bool flipped = dist(sh.p0, src.back()) + dist(sh.p1, src.front()) <
                           dist(sh.p0, src.front()) + dist(sh.p1, src.back());
      int ek = span_index(ctx.scene, old, k);
      Primitive& head = fresh[flipped ? 1 : 0];  // the piece at the span's start
      Primitive& tail = fresh[flipped ? 0 : 1];
      head.span0 = old.span0, head.span1 = ek;
      tail.span0 = ek, tail.span1 = old.span1;
    }
    for (auto& p : fresh) {
      p.edge = old.edge;
      refresh_fit(ctx.scene, p);
    }
  }
  ToolResult r;
  std::vector<std::string> new_ids;
  for (const auto& p : fresh) new_ids.push_back(p.id), r.touched.insert(p.id);
  replace_primitives(out, {old.id}, fresh);
  r.fields = {{"new_primitive_ids", new_ids}, {"split_point", point_json(fresh[0].shape.p1)}};
  r.llm_text = fmt::format("split {} {} at {} ({}) into {}", prim_type_name(sh.type), old.id, pt_text(fresh[0].shape.p1),
                           how, id_list(new_ids));
  r.scene = std::move(out);
  return r;
}

// ---------------------------------------------------------------- ReplacePrimitive

// A span of one edge covering every listed primitive (they must share it), or nullopt.
std::optional<std::pair<int, int>> common_span(const Scene& s, const std::vector<const Primitive*>& ps) {
  if (!s.graph || ps.empty() || ps[0]->edge.empty() || !s.graph->edge(ps[0]->edge)) return std::nullopt;
  int lo = ps[0]->span0, hi = ps[0]->span1;
  for (const Primitive* p : ps) {
    if (p->edge != ps[0]->edge || p->span0 > p->span1) return std::nullopt;
    lo = std::min(lo, p->span0), hi = std::max(hi, p->span1);
  }
  return std::make_pair(lo, hi);
}

ToolResult replace_primitive(const ToolContext& ctx, const json& req) {
  Scene out = editable(ctx.scene);
  std::vector<std::string> ids = ids_of(req["primitive_ids"]);
  if (ids.empty()) throw Error(Code::invalid_selection, "ReplacePrimitive needs at least one primitive to replace");
  std::vector<const Primitive*> sel = selection(ctx.scene, ids);
  const std::set<std::string> gone(ids.begin(), ids.end());
  Shape shape = shape_from_spec(req["replacement"]);
  int snapped = 0;
  if (req["snap_to_existing_endpoints"].get<bool>() && shape.type != PrimType::circle) {
    const double reach = std::max(2.0, stroke_width_of(ctx.scene));
    auto snap = [&](Vec2 q) -> std::optional<Vec2> {
      std::optional<Vec2> best;
      double best_d = reach;
      for (const auto& p : *ctx.scene.primitives) {
        if (gone.count(p.id) || p.shape.type == PrimType::circle) continue;
        for (Vec2 e : {p.shape.p0, p.shape.p1})
          if (dist(e, q) <= best_d) best = e, best_d = dist(e, q);
      }
      return best;
    };
    Vec2 a = shape.p0, b = shape.p1;
    if (auto s = snap(a)) a = *s, ++snapped;
    if (auto s = snap(b); s && dist(*s, a) > 1e-6) b = *s, ++snapped;
    if (a != shape.p0 || b != shape.p1) shape = with_ends(shape, a, b);
    check_shape(shape, "the snapped replacement");
  }
  Primitive np;
  np.id = fresh_primitive_id(out);
  np.shape = shape;
  np.semantic_role = sel[0]->semantic_role;
  if (auto span = common_span(ctx.scene, sel)) {
    np.edge = sel[0]->edge;
    np.span0 = span->first, np.span1 = span->second;
    refresh_fit(ctx.scene, np);
  }
  replace_primitives(out, gone, {np});
  ToolResult r;
  r.touched = {np.id};
  r.fields = {{"new_primitive_id", np.id}, {"snapped_end_count", snapped}};
  r.llm_text = fmt::format("replaced {} by {} {} ({:.1f} px){}", id_list(ids), prim_type_name(shape.type), np.id,
                           shape.length(), snapped ? fmt::format(", {} end(s) snapped onto existing endpoints", snapped) : "");
  r.scene = std::move(out);
  return r;
}

// ---------------------------------------------------------------- RefitPolyline

ToolResult refit_polyline(const ToolContext& ctx, const json& req) {
  Scene out = editable(ctx.scene);
  std::vector<std::string> ids = ids_of(req["primitive_ids"]);
  if (ids.empty()) throw Error(Code::invalid_selection, "RefitPolyline needs at least one primitive");
  std::vector<const Primitive*> sel = selection(ctx.scene, ids);
  const std::string edge_id = sel[0]->edge;
  const Edge* edge = ctx.scene.graph && !edge_id.empty() ? ctx.scene.graph->edge(edge_id) : nullptr;
  for (const Primitive* p : sel)
    if (!edge || p->edge != edge_id)
      throw Error(Code::invalid_selection,
                  fmt::format("the primitives must share one source edge ({} is on {}, {} on {})", sel[0]->id,
                              edge_id.empty() ? "none" : edge_id, p->id, p->edge.empty() ? "none" : p->edge),
                  {{"reason", "no common source edge"}});
  const int n = static_cast<int>(edge->points.size());
  std::stable_sort(sel.begin(), sel.end(), [](const Primitive* a, const Primitive* b) { return a->span0 < b->span0; });
  int on_edge = 0;
  for (const auto& p : *ctx.scene.primitives) on_edge += p.edge == edge_id;
  const bool whole_loop = edge->closed && on_edge == static_cast<int>(sel.size());
  // The chain's ends, running along the edge.
  auto along = [&](const Primitive* p) {
    Polyline src = source_points(ctx.scene, *p);
    return oriented(src, p->shape) == src ? p->shape : p->shape.reversed();
  };
  auto meets = [&](const Primitive* a, const Primitive* b) {
    return a->shape.type != PrimType::circle && dist(along(a).p1, along(b).p0) <= join_px(ctx.scene);
  };
  // On a loop, a run may pass the edge's first point: it then starts after the gap in span order.
  if (edge->closed && !whole_loop && meets(sel.back(), sel.front()))
    for (size_t k = 0; k + 1 < sel.size(); ++k)
      if (!meets(sel[k], sel[k + 1])) {
        std::rotate(sel.begin(), sel.begin() + k + 1, sel.end());
        break;
      }
  for (size_t k = 0; k + 1 < sel.size(); ++k)
    if (!meets(sel[k], sel[k + 1]))
      throw Error(Code::invalid_selection,
                  fmt::format("{} and {} are not consecutive along {}: refit one contiguous run", sel[k]->id,
                              sel[k + 1]->id, edge_id),
                  {{"reason", "not contiguous"}});
  // The points: the whole loop, or the span from the first primitive's start to the last's end.
  Polyline pts;
  int offset = 0;
  bool closed = false;
  ChainEnds ends;
  const std::set<std::string> gone(ids.begin(), ids.end());
  if (whole_loop) {
    pts = edge->points;
    closed = true;
    if (sel.size() > 1 || sel[0]->shape.type != PrimType::circle) {
      Vec2 start = along(sel[0]).p0;
      if (shared_with_others(ctx.scene, start, gone)) ends.start = start, ends.pin_closed_start = true;
    }
  } else {
    offset = sel.front()->span0;
    int last = sel.back()->span1;
    int count = (last - offset + n) % n + 1;
    if (sel.front()->span0 <= sel.back()->span1) count = last - offset + 1;
    for (int k = 0; k < count; ++k) pts.push_back(edge->points[(offset + k) % n]);
    ends.start = along(sel.front()).p0;
    ends.end = along(sel.back()).p1;
  }
  FitParams fp = fit_params_of(ctx.scene);
  if (req["mdl_lambda_scale"].is_number()) fp.arc_cost *= req["mdl_lambda_scale"].get<double>();
  if (req["forbid_arc_shortcut"].get<bool>()) fp.min_arc_sagitta_px = 1e12;
  if (req["forbid_circle_shortcut"].get<bool>()) fp.circle_max_aspect = 0;
  // Split indices (into pts): the extra points, and for force_subdivide the longest piece's middle.
  std::vector<int> splits;
  const double reach = std::max(2.0, stroke_width_of(ctx.scene));
  for (const auto& q : req["extra_split_points"]) {
    Vec2 v{q.at(0).get<double>(), q.at(1).get<double>()};
    int best = 0;
    for (int k = 1; k < static_cast<int>(pts.size()); ++k)
      if (dist(pts[k], v) < dist(pts[best], v)) best = k;
    if (dist(pts[best], v) > reach)
      throw Error(Code::invalid_selection,
                  fmt::format("split point {} is {:.1f} px from the polyline (at most {:.1f})", pt_text(v),
                              dist(pts[best], v), reach),
                  {{"reason", "split point off the polyline"}});
    if (!closed && (best == 0 || best + 1 == static_cast<int>(pts.size())))
      throw Error(Code::invalid_selection, "split point " + pt_text(v) + " is at an end of the refitted run",
                  {{"reason", "split point at an end"}});
    splits.push_back(best);
  }
  struct Out {
    FittedPiece piece;
    int base;  // pts index of the piece's span0
  };
  auto run_fit = [&](std::vector<int> cuts) {
    std::sort(cuts.begin(), cuts.end());
    cuts.erase(std::unique(cuts.begin(), cuts.end()), cuts.end());
    std::vector<Out> res;
    if (cuts.empty()) {
      for (const auto& fpc : fit_polyline(pts, closed, fp, ends)) res.push_back({fpc, 0});
      return res;
    }
    // Open runs between cuts (a loop is opened at its first cut), each pinned at its ends.
    Polyline work = pts;
    std::vector<int> at = cuts;
    int shift = 0;
    if (closed) {
      shift = cuts[0];
      work.assign(pts.begin() + shift, pts.end());
      work.insert(work.end(), pts.begin(), pts.begin() + shift + 1);
      for (int& c : at) c -= shift;
      at.push_back(static_cast<int>(work.size()) - 1);
    } else {
      at.insert(at.begin(), 0);
      at.push_back(static_cast<int>(work.size()) - 1);
    }
    for (size_t k = 0; k + 1 < at.size(); ++k) {
      Polyline part(work.begin() + at[k], work.begin() + at[k + 1] + 1);
      ChainEnds e;
      e.start = (k == 0 && !closed && ends.start) ? *ends.start : work[at[k]];
      e.end = (k + 2 == at.size() && !closed && ends.end) ? *ends.end : work[at[k + 1]];
      for (auto fpc : fit_polyline(part, false, fp, e)) {
        int m = static_cast<int>(pts.size());
        res.push_back({fpc, (at[k] + shift) % m});
      }
    }
    return res;
  };
  std::vector<Out> fitted = run_fit(splits);
  if (req["force_subdivide"].get<bool>()) {
    for (int round = 0; round < 4 && fitted.size() <= sel.size(); ++round) {
      const Out* longest = nullptr;
      for (const auto& o : fitted)
        if (!longest || o.piece.shape.length() > longest->piece.shape.length()) longest = &o;
      int a = longest->base + longest->piece.span0, b = longest->base + longest->piece.span1;
      if (b < a) b += static_cast<int>(pts.size());
      if (b - a < 4) break;
      splits.push_back(((a + b) / 2) % static_cast<int>(pts.size()));
      fitted = run_fit(splits);
    }
    if (fitted.size() <= sel.size())
      throw Error(Code::no_result, fmt::format("{} cannot be subdivided further: too few source points", id_list(ids)),
                  {{"reason", "too few points to subdivide"}});
  }
  std::vector<Primitive> fresh;
  json summary = json::array();
  std::vector<std::string> new_ids;
  for (const auto& o : fitted) {
    Primitive p;
    p.id = fresh_primitive_id(out);
    p.shape = o.piece.shape;
    check_shape(p.shape, "a refitted piece");
    p.edge = edge_id;
    const int m = static_cast<int>(pts.size());
    auto to_edge = [&](int k) { return (offset + ((o.base + k) % m)) % n; };
    p.span0 = to_edge(o.piece.span0);
    p.span1 = to_edge(o.piece.span1);
    p.fit_rms_px = o.piece.rms_px;
    p.fit_max_px = o.piece.max_px;
    p.semantic_role = sel[0]->semantic_role;
    new_ids.push_back(p.id);
    summary.push_back({{"primitive_id", p.id},
                       {"type", prim_type_name(p.shape.type)},
                       {"fit_rms_px", round_to(p.fit_rms_px, 1e-4)},
                       {"fit_max_px", round_to(p.fit_max_px, 1e-4)}});
    fresh.push_back(p);
  }
  ToolResult r;
  for (const auto& id : new_ids) r.touched.insert(id);
  replace_primitives(out, gone, fresh);
  std::string kinds;
  for (const auto& p : fresh) {
    if (!kinds.empty()) kinds += ',';
    kinds += prim_type_name(p.shape.type);
  }
  r.fields = {{"new_primitive_ids", new_ids}, {"fit_summary", summary}};
  r.llm_text = fmt::format("refitted {} of {} as {} piece(s) [{}]: {}", id_list(ids), edge_id, fresh.size(), kinds,
                           id_list(new_ids));
  r.scene = std::move(out);
  return r;
}

// ---------------------------------------------------------------- SnapEndpoints

ToolResult snap_endpoints(const ToolContext& ctx, const json& req) {
  Scene out = editable(ctx.scene);
  const double tol = req["tolerance_px"].is_number() ? req["tolerance_px"].get<double>()
                                                     : std::max(1.0, 0.5 * stroke_width_of(ctx.scene));
  if (!(tol > 0)) throw Error(Code::invalid_selection, "tolerance_px must be positive");
  std::vector<Vec2> near_vertices;
  if (req["vertex_ids"].is_array()) {
    for (const auto& v : req["vertex_ids"]) {
      const Vertex* vx = ctx.scene.graph ? ctx.scene.graph->vertex(v.get<std::string>()) : nullptr;
      if (!vx) throw Error(Code::not_found, "no vertex " + v.get<std::string>(), {{"id", v}});
      near_vertices.push_back(vx->p);
    }
  }
  auto& prims = *out.primitives;
  struct End {
    size_t prim;
    int which;
    Vec2 at;
  };
  std::vector<End> ends;
  for (size_t i = 0; i < prims.size(); ++i)
    if (prims[i].shape.type != PrimType::circle)
      ends.push_back({i, 0, prims[i].shape.p0}), ends.push_back({i, 1, prims[i].shape.p1});
  // Clusters: ends of different primitives within the tolerance, transitively.
  std::vector<size_t> parent(ends.size());
  for (size_t k = 0; k < ends.size(); ++k) parent[k] = k;
  std::function<size_t(size_t)> root = [&](size_t k) { return parent[k] == k ? k : parent[k] = root(parent[k]); };
  for (size_t a = 0; a < ends.size(); ++a)
    for (size_t b = a + 1; b < ends.size(); ++b)
      if (ends[a].prim != ends[b].prim && dist(ends[a].at, ends[b].at) <= tol) parent[root(a)] = root(b);
  std::map<size_t, std::vector<size_t>> clusters;
  for (size_t k = 0; k < ends.size(); ++k) clusters[root(k)].push_back(k);
  std::vector<std::pair<Vec2, Vec2>> moves;
  json affected = json::array();
  double max_move = 0;
  ToolResult r;
  for (const auto& [root_k, members] : clusters) {
    if (members.size() < 2) continue;
    // Distinct positions (a shared joint counts once); nothing to do when they are one point.
    std::vector<Vec2> spots;
    for (size_t m : members) {
      bool known = false;
      for (Vec2 q : spots) known = known || dist(q, ends[m].at) <= 1e-9;
      if (!known) spots.push_back(ends[m].at);
    }
    if (spots.size() < 2) continue;
    // A primitive with both ends in the cluster would collapse: leave the cluster alone.
    std::set<size_t> owners;
    bool collapses = false;
    for (size_t m : members) collapses = collapses || !owners.insert(ends[m].prim).second;
    if (collapses) {
      r.warnings.push_back(fmt::format("ends near {} not snapped: one primitive has both ends there", pt_text(spots[0])));
      continue;
    }
    Vec2 mean;
    for (Vec2 q : spots) mean = mean + q / static_cast<double>(spots.size());
    if (!near_vertices.empty()) {
      bool near = false;
      for (Vec2 v : near_vertices) near = near || dist(v, mean) <= std::max(tol, stroke_width_of(ctx.scene));
      if (!near) continue;
    }
    // Ends outside the cluster at the same spots (joints of their own) follow.
    for (Vec2 q : spots) moves.push_back({q, mean}), max_move = std::max(max_move, dist(q, mean));
    // Its name: the nearest graph vertex within reach, else the position.
    std::string name = fmt::format("at {:.1f},{:.1f}", mean.x, mean.y);
    if (ctx.scene.graph) {
      double best = std::max(tol, stroke_width_of(ctx.scene));
      for (const auto& v : ctx.scene.graph->vertices)
        if (dist(v.p, mean) <= best) best = dist(v.p, mean), name = v.id;
    }
    affected.push_back(name);
  }
  carry_joints(out, moves, {}, r.touched);
  for (const auto& id : r.touched) refresh_fit(ctx.scene, prims[primitive_index(out, id)]);
  if (!req["rerun_solver"].get<bool>()) r.touched.clear();
  r.reroute = !affected.empty();
  r.fields = {{"affected_vertex_ids", affected}, {"max_displacement_px", round_to(max_move, 1e-4)}};
  r.llm_text = affected.empty()
                   ? fmt::format("no near-miss endpoints within {:.2f} px", tol)
                   : fmt::format("snapped {} near-miss endpoint cluster(s) ({}), largest move {:.2f} px", affected.size(),
                                 affected.size() <= 8 ? affected.dump() : std::string("..."), max_move);
  r.scene = std::move(out);
  return r;
}

// ---------------------------------------------------------------- EnforceRelation

ToolResult enforce_relation(const ToolContext& ctx, const json& req) {
  Scene out = editable(ctx.scene);
  std::vector<std::string> ids = ids_of(req["primitive_ids"]);
  selection(ctx.scene, ids);  // every id must name a primitive
  const std::string kind = req["relation"];
  json rec = {{"kind", kind}, {"primitives", ids}};
  if (!req["axis"].is_null()) rec["axis"] = req["axis"];
  std::set<std::string> moved;
  json solved = enforce_relations(out, json::array({rec}), &moved)[0];
  solved["enforced_by"] = "EnforceRelation";
  // The same relation on the same primitives replaces its earlier record.
  std::set<std::string> mine(ids.begin(), ids.end());
  json relations = json::array();
  for (const auto& r : out.relations) {
    std::set<std::string> theirs;
    for (const auto& id : r.value("primitives", json::array())) theirs.insert(id.get<std::string>());
    if (r.value("kind", "") != kind || theirs != mine) relations.push_back(r);
  }
  relations.push_back(solved);
  out.relations = relations;
  const bool deg = solved.contains("residual_deg");
  const double residual = deg ? solved["residual_deg"].get<double>() : solved["residual_px"].get<double>();
  ToolResult r;
  for (const auto& p : *out.primitives)
    if (moved.count(p.id)) r.touched.insert(p.id);
  if (!req["rerun_solver"].get<bool>()) r.touched.clear();
  r.reroute = !moved.empty();
  std::vector<std::string> affected(moved.begin(), moved.end());
  r.fields = {{"residual_after", residual}, {"residual_unit", deg ? "deg" : "px"}, {"affected_primitive_ids", affected}};
  r.llm_text = fmt::format("{} {} enforced: residual {:.4g} {}; moved {}", kind, id_list(ids), residual,
                           deg ? "deg" : "px", affected.empty() ? "nothing" : id_list(affected));
  r.scene = std::move(out);
  return r;
}

// ---------------------------------------------------------------- SmoothPrimitive

ToolResult smooth_primitive(const ToolContext& ctx, const json& req) {
  Scene out = editable(ctx.scene);
  const Primitive& old = primitive_or_throw(ctx.scene, req["primitive_id"]);
  Polyline src = source_points(ctx.scene, old);
  if (src.size() < 3)
    throw Error(Code::no_result, old.id + " has no source points to refit from (it was not fitted to a graph edge)",
                {{"reason", "no source points"}});
  Polyline pts = oriented(src, old.shape);
  std::string kind = req["target_kind"].is_string() ? req["target_kind"].get<std::string>() : prim_type_name(old.shape.type);
  if ((old.shape.type == PrimType::circle) != (kind == "circle"))
    throw Error(Code::invalid_selection,
                fmt::format("{} is a {}: it cannot be smoothed into a {}", old.id, prim_type_name(old.shape.type), kind),
                {{"reason", "circles stay circles; lines and arcs stay open"}});
  // Strength: the share of the worst points the fit ignores (robust trimming).
  const std::string strength = req["strength"];
  const double trim = strength == "mild" ? 0.0 : strength == "moderate" ? 0.05 : 0.15;
  const std::set<std::string> self{old.id};
  const bool pin0 = kind != "circle" && shared_with_others(ctx.scene, old.shape.p0, self);
  const bool pin1 = kind != "circle" && shared_with_others(ctx.scene, old.shape.p1, self);
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
  ToolResult r;
  r.touched = {p.id};
  if (shape->type != PrimType::circle) {
    carry_joints(out, {{old.shape.p0, shape->p0}, {old.shape.p1, shape->p1}}, self, r.touched);
  }
  const double tol = tolerance_of(ctx.scene);
  if (after.max > tol)
    r.warnings.push_back(fmt::format("{} is now {:.2f} px from its farthest source point (tolerance {:.2f} px)", p.id,
                                     after.max, tol));
  r.fields = {{"new_primitive_id", p.id},
              {"kind", prim_type_name(shape->type)},
              {"rms_before", round_to(before.rms, 1e-4)},
              {"rms_after", round_to(after.rms, 1e-4)},
              {"max_after_px", round_to(after.max, 1e-4)}};
  r.llm_text = fmt::format("smoothed {} ({}, {}): rms {:.3f} -> {:.3f} px, max {:.2f} px", p.id, strength,
                           prim_type_name(shape->type), before.rms, after.rms, after.max);
  r.scene = std::move(out);
  return r;
}

}  // namespace

void add_geometry_edit_tools(std::vector<Tool>& out) {
  const json ids = S::array(S::id("primitive id"), "");
  const json point_or_t = {
      {"description",
       "where to split: [x, y] (snapped to the nearest point on the primitive), a number t in (0, 1) (arc-length "
       "fraction; circles from angle 0), \"auto_corner\" (the sharpest turn of the source points) or "
       "\"auto_inflection\" (where their curvature changes sign)"},
      {"anyOf", json::array({S::point(), {{"type", "number"}}, S::enumeration({"auto_corner", "auto_inflection"}, "")})}};
  const json axis = {
      {"description",
       "parallel/perpendicular/collinear: a direction in degrees or a line [[x0, y0], [x1, y1]]; concentric: the "
       "centre [x, y]; mirror: a number x (the vertical axis x = number) or a line [[x0, y0], [x1, y1]] (default: "
       "solved); horizontal/vertical: none"},
      {"anyOf", json::array({{{"type", "number"}}, S::point(), S::array(S::point(), ""), {{"type", "null"}}})},
      {"default", nullptr}};
  out.push_back({"MergePrimitives", "mutation", "sv-edit", "",
                 "Replace a chain of primitives by one line, arc or circle fitted to their source points (ends at the "
                 "chain's outer ends); refused when the fit leaves the tolerance.",
                 S::object({{"primitive_ids", ids},
                            {"target_kind", S::with_default(S::enumeration({"line", "arc", "circle", "auto"},
                                                                           "auto: a line, else an arc, else (a closed "
                                                                           "loop) a circle"),
                                                            "auto")},
                            {"fit_tolerance_px",
                             S::nullable(S::number("largest distance of a point to the merged shape (default: the "
                                                   "scene's fit.tolerance_px)",
                                                   0))}},
                           {"primitive_ids"}),
                 S::object({{"new_primitive_id", S::string("")},
                            {"kind", S::string("line, arc or circle")},
                            {"fit_rms_px", S::number("")},
                            {"fit_max_px", S::number("")}}),
                 merge_primitives, ToolKind::edit});
  out.push_back({"SplitPrimitive", "mutation", "sv-edit", "",
                 "Split a primitive in two at a point, a parameter, its sharpest corner or its inflection; both pieces "
                 "get fresh ids (a circle becomes two half circles).",
                 S::object({{"primitive_id", S::id("the primitive to split")}, {"at", point_or_t}},
                           {"primitive_id", "at"}),
                 S::object({{"new_primitive_ids", S::array(S::string(""), "the two pieces, in drawing order")},
                            {"split_point", S::point("where the pieces meet")}}),
                 split_primitive, ToolKind::edit});
  out.push_back({"ReplacePrimitive", "mutation", "sv-edit", "",
                 "Swap primitives for one explicit shape; its ends snap onto existing endpoints nearby.",
                 S::object({{"primitive_ids", ids},
                            {"replacement", replacement_spec_schema("the new primitive")},
                            {"snap_to_existing_endpoints",
                             S::with_default(S::boolean("move the new ends onto other primitives' endpoints within "
                                                        "max(2 px, stroke width)"),
                                             true)}},
                           {"primitive_ids", "replacement"}),
                 S::object({{"new_primitive_id", S::string("")},
                            {"snapped_end_count", S::integer("ends moved onto existing endpoints")}}),
                 replace_primitive, ToolKind::edit});
  out.push_back(
      {"RefitPolyline", "mutation", "sv-edit", "",
       "Re-run the fitter on the span of one source edge the primitives cover, with overrides (no arcs, no circle, "
       "more or fewer pieces, forced breakpoints); the run's ends stay where they were.",
       S::object({{"primitive_ids", S::array(S::id("primitive id"), "consecutive primitives of one source edge")},
                  {"force_subdivide", S::with_default(S::boolean("end with more pieces than before (the longest is "
                                                                 "split at its middle until it does)"),
                                                      false)},
                  {"forbid_arc_shortcut", S::with_default(S::boolean("lines only"), false)},
                  {"forbid_circle_shortcut", S::with_default(S::boolean("a closed loop may not become one circle"), false)},
                  {"mdl_lambda_scale", S::nullable(S::number("multiplies fit.arc_cost, the description-length "
                                                             "penalty of an arc over a line",
                                                             0))},
                  {"extra_split_points", S::with_default(S::array(S::point(), "forced breakpoints (snapped to the "
                                                                              "nearest source point)"),
                                                         json::array())}},
                 {"primitive_ids"}),
       S::object({{"new_primitive_ids", S::array(S::string(""), "")},
                  {"fit_summary", S::array(S::object({{"primitive_id", S::string("")},
                                                      {"type", S::primitive_type()},
                                                      {"fit_rms_px", S::number("")},
                                                      {"fit_max_px", S::number("")}}),
                                           "one entry per new primitive")}}),
       refit_polyline, ToolKind::edit});
  out.push_back({"SnapEndpoints", "mutation", "sv-edit", "",
                 "Close near-miss junctions: ends of different primitives closer than the tolerance (but not one "
                 "point) move to their mean; arcs keep passing through their middle.",
                 S::object({{"vertex_ids", S::nullable(S::array(S::id("graph vertex id"), "only clusters near these "
                                                                                          "vertices (default: all)"))},
                            {"tolerance_px", S::nullable(S::number("default max(1, stroke width / 2)", 0))},
                            {"rerun_solver", S::with_default(S::boolean("re-solve the relations of the moved "
                                                                        "primitives"),
                                                             true)}}),
                 S::object({{"affected_vertex_ids", S::array(S::string("the nearest graph vertex id, or \"at x,y\""),
                                                             "the clusters snapped")},
                            {"max_displacement_px", S::number("largest end move")}}),
                 snap_endpoints, ToolKind::edit});
  out.push_back(
      {"EnforceRelation", "mutation", "sv-edit", "",
       "Make a relation exact with the beautify solver, every primitive held within tolerance of its source points; "
       "refused (unsolvable_constraint) when it cannot hold. Recorded in the scene's relations and re-solved after "
       "later edits.",
       S::object({{"relation", S::enumeration({"parallel", "perpendicular", "equal_radius", "concentric", "collinear",
                                               "tangent_continuity", "mirror", "horizontal", "vertical"},
                                              "perpendicular: every other line at right angles to the first; mirror: "
                                              "pairs a0, b0, a1, b1, ... (an odd last one symmetric in itself); "
                                              "tangent_continuity: two primitives at their shared end, or a line "
                                              "tangent to an arc or circle")},
                  {"primitive_ids", ids},
                  {"axis", axis},
                  {"rerun_solver", S::with_default(S::boolean("re-solve the other recorded relations of the moved "
                                                              "primitives too"),
                                                   true)}},
                 {"relation", "primitive_ids"}),
       S::object({{"residual_after", S::number("how far from exact the relation is")},
                  {"residual_unit", S::enumeration({"deg", "px"}, "")},
                  {"affected_primitive_ids", S::array(S::string(""), "primitives whose geometry moved")}}),
       enforce_relation, ToolKind::edit});
  out.push_back({"SmoothPrimitive", "mutation", "sv-edit", "",
                 "Refit one primitive to its source points as a single line, arc or circle, ignoring the tolerance "
                 "(ends shared with neighbours stay put); the id stays the same.",
                 S::object({{"primitive_id", S::id("the primitive")},
                            {"strength", S::with_default(S::enumeration({"mild", "moderate", "strong"},
                                                                        "share of the worst points ignored: 0, 5 "
                                                                        "or 15 %"),
                                                         "moderate")},
                            {"target_kind", S::nullable(S::enumeration({"line", "arc"}, "default: keep the type"))}},
                           {"primitive_id"}),
                 S::object({{"new_primitive_id", S::string("the same id: changed in place")},
                            {"kind", S::string("")},
                            {"rms_before", S::number("px, the old shape against the source points")},
                            {"rms_after", S::number("px, the new shape against the same points")},
                            {"max_after_px", S::number("")}}),
                 smooth_primitive, ToolKind::edit});
}

}  // namespace sv
