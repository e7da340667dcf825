// MergePrimitives' geometry: a chain of primitives walked end to end and refitted as one shape.
#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cmath>

#include "core/error.hpp"
#include "edit/edit.hpp"
#include "edit/geometry.hpp"
#include "edit/joints.hpp"
#include "fit/fit.hpp"
#include "fit/primitive_fit.hpp"

namespace sv::edit {

namespace {

using fitting::deviation;

// A chain of primitives in walking order.
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

struct Candidate {
  std::string kind;
  Shape shape;
  fitting::Deviation d{INFINITY, INFINITY};
};

}  // namespace

Merged merge_primitives(const Scene& in, const std::vector<std::string>& ids, const std::string& target,
                        std::optional<double> tolerance_px) {
  Merged r;
  r.scene = editable(in);
  Scene& out = r.scene;
  std::vector<const Primitive*> sel = selection(in, ids);
  if (sel.size() < 2) throw Error(Code::invalid_selection, "MergePrimitives needs at least two primitives");
  const std::set<std::string> gone(ids.begin(), ids.end());
  const double tol = tolerance_px ? *tolerance_px : tolerance_of(in);
  if (!(tol > 0)) throw Error(Code::invalid_selection, "fit_tolerance_px must be positive");
  Walk walk = walk_chain(sel, join_px(in));
  // One source edge for all: walk along the edge's direction, so the merged span reads forward.
  bool one_edge = in.graph && !sel[0]->edge.empty() && in.graph->edge(sel[0]->edge);
  for (const Primitive* p : sel) one_edge = one_edge && p->edge == sel[0]->edge;
  auto piece_shape = [&](const std::pair<size_t, bool>& w) {
    return w.second ? sel[w.first]->shape.reversed() : sel[w.first]->shape;
  };
  if (one_edge) {
    const Primitive& first = *sel[walk.order.front().first];
    Polyline src = source_points(in, first);
    Shape s0 = piece_shape(walk.order.front());
    if (src.size() >= 2 && dist(s0.p0, src.back()) + dist(s0.p1, src.front()) <
                               dist(s0.p0, src.front()) + dist(s0.p1, src.back())) {
      std::reverse(walk.order.begin(), walk.order.end());
      for (auto& w : walk.order) w.second = !w.second;
    }
  }
  Polyline pts;
  for (const auto& w : walk.order) {
    Polyline part = oriented(points_of(in, *sel[w.first]), piece_shape(w));
    pts.insert(pts.end(), part.begin() + (pts.empty() || part.empty() ? 0 : 1), part.end());
  }
  const Vec2 A = piece_shape(walk.order.front()).p0, B = piece_shape(walk.order.back()).p1;
  const bool pin_a = shared_with_others(in, A, gone), pin_b = shared_with_others(in, B, gone);
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
  splice_primitives(out, gone, {np});
  r.id = np.id;
  r.kind = chosen->kind;
  r.fit_rms_px = np.fit_rms_px;
  r.fit_max_px = np.fit_max_px;
  r.tolerance_px = tol;
  return r;
}

}  // namespace sv::edit
