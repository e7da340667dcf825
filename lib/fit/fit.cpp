#include "fit/fit.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "core/error.hpp"
#include "fit/beautify.hpp"
#include "fit/chain.hpp"
#include "fit/cycles.hpp"
#include "fit/robot_merge.hpp"
#include "fit/segment.hpp"
#include "fit/tangent.hpp"
#include "fit/through.hpp"
#include "robot/motion.hpp"

namespace sv {

namespace {

using fitting::Piece;
using fitting::Points;

FittedPiece finish(const Piece& pc, Points pts, int span0, int span1) {
  auto d = fitting::deviation(pc.shape, pts.subspan(pc.i0, pc.i1 - pc.i0 + 1));
  return {pc.shape, span0, span1, d.rms, d.max};
}

// A dot: a line dot_length_px long through the centroid, along the points' main axis.
std::vector<FittedPiece> fit_dot(const Polyline& points, const FitParams& p) {
  fitting::LineFit f = fitting::fit_line(points);
  Vec2 half = f.dir * (0.5 * p.dot_length_px);
  Piece pc{Shape::line(f.centroid - half, f.centroid + half), 0,
           static_cast<int>(points.size()) - 1};
  return {finish(pc, points, pc.i0, pc.i1)};
}

// Pieces of zero length carry no drawing; their points go to the previous piece.
void drop_empty(std::vector<Piece>& pieces) {
  std::vector<Piece> out;
  for (const Piece& pc : pieces) {
    if (pc.shape.length() > 1e-9 || pieces.size() == 1) {
      out.push_back(pc);
    } else if (!out.empty()) {
      out.back().i1 = pc.i1;
    }
  }
  if (out.empty()) return;
  if (out.front().i0 != pieces.front().i0) out.front().i0 = pieces.front().i0;
  pieces = std::move(out);
}

// Breakpoints forced at the ends and at the corners.
std::vector<int> forced_breaks(Points pts, const std::vector<int>& corners) {
  int last = static_cast<int>(pts.size()) - 1;
  std::vector<int> fixed{0};
  for (int c : corners)
    if (c > 0 && c < last) fixed.push_back(c);
  fixed.push_back(last);
  std::sort(fixed.begin(), fixed.end());
  fixed.erase(std::unique(fixed.begin(), fixed.end()), fixed.end());
  return fixed;
}

// The point of a piece's span (unrolled index, see join_chain) farthest from its shape.
std::pair<int, double> worst_point(const Piece& pc, Points pts, bool closed) {
  const int m = static_cast<int>(pts.size()) - 1;
  ShapeDistance distance(pc.shape);
  std::pair<int, double> worst{pc.i0, -1};
  for (int k = pc.i0; k <= pc.i1; ++k) {
    double d = distance(closed ? pts[((k % m) + m) % m] : pts[k]);
    if (d > worst.second) worst = {k, d};
  }
  return worst;
}

// Whether --fast merging is on and looser than the fit.
bool merging(const FitParams& p) {
  return p.merge_width_ratio > 0 && p.merge_tolerance_px > p.tolerance_px && p.robot_ppi > 0;
}

void merge_if_fast(std::vector<Piece>& pieces, Points pts, bool closed, const FitParams& p) {
  if (merging(p)) fitting::merge_for_robot(pieces, pts, closed, p.merge_tolerance_px, p.robot_ppi, p);
}

constexpr int kRepairRounds = 3;

// Segments pts (a breakpoint forced at each corner) and joins the pieces into a chain; a
// piece that joining pushed beyond tolerance is split at its worst point and the chain joined
// again. Returns the pieces and the closing joint's move (see join_chain). `segmented`: that
// segmentation when the caller already has it.
std::pair<std::vector<Piece>, int> fit_chain(Points pts, const std::vector<int>& corners,
                                             bool closed, const ChainEnds& ends,
                                             const FitParams& p, const std::vector<Piece>* segmented = nullptr) {
  fitting::Segmenter seg(pts, p);
  auto free = segmented ? *segmented : fitting::segment_polyline(seg, forced_breaks(pts, corners));
  std::optional<Vec2> start = ends.start, end = ends.end;
  if (closed) end = start;
  for (int round = 0;; ++round) {
    auto joined = free;
    int shift = fitting::join_chain(joined, pts, closed, start, end, p);
    std::vector<Piece> next;
    bool split = false;
    for (size_t k = 0; k < joined.size(); ++k) {
      const Piece& f = free[k];
      auto [cut, worst] = worst_point(joined[k], pts, closed);
      if (round < kRepairRounds && worst > p.tolerance_px && f.i1 - f.i0 >= 2) {
        cut = std::clamp(cut, f.i0 + 1, f.i1 - 1);
        for (const auto& part : {seg.fit_pieces(f.i0, cut), seg.fit_pieces(cut, f.i1)})
          next.insert(next.end(), part.begin(), part.end());
        split = true;
      } else {
        next.push_back(f);
      }
    }
    if (!split) return {joined, shift};
    free = std::move(next);
  }
}

// A free end's last piece no longer than end_hook_px that turns off at a corner (beyond
// join_corner_deg) lies inside the stroke's round cap: the trace curled there (a photographed
// end's shadow, a blot), the stroke did not.
void drop_end_hooks(std::vector<Piece>& pieces, const ChainEnds& ends, const FitParams& p) {
  auto hook = [&](const Piece& end, const Piece& next, bool at_start) {
    Vec2 a = at_start ? end.shape.end_tangent() : next.shape.end_tangent();
    Vec2 b = at_start ? next.shape.start_tangent() : end.shape.start_tangent();
    return end.shape.length() <= p.end_hook_px &&
           std::atan2(std::abs(cross(a, b)), dot(a, b)) > deg2rad(p.join_corner_deg);
  };
  if (pieces.size() >= 2 && !ends.end && hook(pieces.back(), pieces[pieces.size() - 2], false)) pieces.pop_back();
  if (pieces.size() >= 2 && !ends.start && hook(pieces.front(), pieces[1], true)) pieces.erase(pieces.begin());
}

std::vector<FittedPiece> fit_open(const Polyline& points, const FitParams& p,
                                  const ChainEnds& ends) {
  std::vector<int> corners;
  for (const auto& c : fitting::find_corners(points, false, p)) corners.push_back(c.index);
  auto pieces = fit_chain(points, corners, false, ends, p).first;
  fitting::absorb_corner_cuts(pieces, points, false, false, p);
  fitting::make_tangent_continuous(pieces, points, false, p);
  merge_if_fast(pieces, points, false, p);
  fitting::split_long_arcs(pieces, points, p);
  drop_empty(pieces);
  drop_end_hooks(pieces, ends, p);
  std::vector<FittedPiece> out;
  for (const Piece& pc : pieces) out.push_back(finish(pc, points, pc.i0, pc.i1));
  return out;
}

// The loop's points rotated to start at `s`, with the start repeated at the end.
Polyline rotated_loop(Points loop, int s) {
  Polyline w(loop.begin() + s, loop.end());
  w.insert(w.end(), loop.begin(), loop.begin() + s);
  w.push_back(loop[s]);
  return w;
}

// The loop's corners as indices of the loop rotated to start at s.
std::vector<int> rotated_corners(const std::vector<int>& corners, int s, int m) {
  std::vector<int> out;
  for (int c : corners) out.push_back(((c - s) % m + m) % m);
  return out;
}

// The pieces of a loop started at s, before joining.
std::vector<Piece> segment_loop(Points loop, int s, const std::vector<int>& corners,
                                const FitParams& p) {
  Polyline w = rotated_loop(loop, s);
  fitting::Segmenter seg(w, p);
  return fitting::segment_polyline(
      seg, forced_breaks(w, rotated_corners(corners, s, static_cast<int>(loop.size()))));
}

// The breakpoint of a loop's pieces where the direction turns most (an index of the loop).
int sharpest_break(const std::vector<Piece>& pieces, int s, int m) {
  int best = s;
  double best_turn = -1;
  for (size_t k = 1; k < pieces.size(); ++k) {
    Vec2 a = pieces[k - 1].shape.end_tangent(), b = pieces[k].shape.start_tangent();
    double turn = std::abs(std::atan2(cross(a, b), dot(a, b)));
    if (turn > best_turn) {
      best_turn = turn;
      best = (pieces[k].i0 + s) % m;
    }
  }
  return best;
}

std::vector<FittedPiece> fit_loop(const Polyline& points, const FitParams& p,
                                  const ChainEnds& ends) {
  Polyline loop = points;
  bool repeats_start = loop.size() > 1 && dist(loop.front(), loop.back()) <= 1e-3;
  if (repeats_start) loop.pop_back();
  const int m = static_cast<int>(loop.size());
  if (m < 3) return fit_open(points, p, ends);
  const int last = static_cast<int>(points.size()) - 1;
  // With --fast a loop within the merge tolerance of a circle is that circle: one move.
  FitParams round = p;
  if (merging(p)) round.tolerance_px = p.merge_tolerance_px;
  if (auto c = fitting::round_loop(loop, round)) {
    Shape circle = Shape::circle(c->center, c->radius);
    auto d = fitting::deviation(circle, loop);
    return {{circle, 0, last, d.rms, d.max}};
  }
  auto found = fitting::find_corners(loop, true, p);
  std::vector<int> corners;
  for (const auto& c : found) corners.push_back(c.index);
  // Where the chain starts: the junction it hangs from, else the sharpest corner, else the
  // sharpest break of a first fit started anywhere (so that start is no arbitrary cut).
  int s = 0;
  if (!ends.pin_closed_start && !found.empty()) {
    s = std::max_element(found.begin(), found.end(), [](const auto& a, const auto& b) {
          return a.turn_rad < b.turn_rad;
        })->index;
  }
  std::optional<std::vector<Piece>> segmented;  // the segmentation of the loop started at s
  if (!ends.pin_closed_start && found.empty()) {
    segmented = segment_loop(loop, s, corners, p);
    if (segmented->size() > 1) {
      int s2 = sharpest_break(*segmented, s, m);
      auto second = segment_loop(loop, s2, corners, p);
      if (second.size() <= segmented->size()) s = s2, segmented = std::move(second);
    }
  }
  Polyline w = rotated_loop(loop, s);
  ChainEnds loop_ends;
  if (ends.pin_closed_start) loop_ends.start = ends.start.value_or(w.front());
  auto [pieces, d] =
      fit_chain(w, rotated_corners(corners, s, m), true, loop_ends, p, segmented ? &*segmented : nullptr);
  if (d != 0) {
    s = ((s + d) % m + m) % m;
    w = rotated_loop(loop, s);
    for (Piece& pc : pieces) {
      pc.i0 -= d;
      pc.i1 -= d;
    }
  }
  if (int moved = fitting::absorb_corner_cuts(pieces, w, true, ends.pin_closed_start, p); moved != 0) {
    s = (s + moved) % m;
    w = rotated_loop(loop, s);
  }
  fitting::make_tangent_continuous(pieces, w, true, p);
  merge_if_fast(pieces, w, true, p);
  fitting::split_long_arcs(pieces, w, p);
  drop_empty(pieces);
  auto original = [&](int k) {
    return k == m ? (s == 0 && repeats_start ? last : s) : (s + k) % m;
  };
  std::vector<FittedPiece> out;
  for (const Piece& pc : pieces) out.push_back(finish(pc, w, original(pc.i0), original(pc.i1)));
  return out;
}

// The circle of a graph cycle, its provenance every edge of the cycle in full, the first as edge/span.
Primitive cycle_primitive(const fitting::CycleCircle& cy, const std::vector<Edge>& edges, std::string id) {
  Primitive pr;
  pr.id = std::move(id);
  pr.shape = Shape::circle(cy.circle.center, cy.circle.radius);
  pr.edge = edges[cy.edges.front()].id;
  pr.span1 = static_cast<int>(edges[cy.edges.front()].points.size()) - 1;
  for (size_t j = 1; j < cy.edges.size(); ++j) {
    const Edge& more = edges[cy.edges[j]];
    pr.more_sources.push_back({more.id, 0, static_cast<int>(more.points.size()) - 1});
  }
  pr.fit_rms_px = cy.rms_px;
  pr.fit_max_px = cy.max_px;
  return pr;
}

}  // namespace

double trace_noise_px(const std::vector<const Polyline*>& polylines) {
  std::vector<double> offsets;
  for (const Polyline* pts : polylines)
    for (size_t k = 1; k + 1 < pts->size(); ++k) {
      Vec2 a = (*pts)[k - 1], b = (*pts)[k + 1];
      if (dist(a, b) > 1e-9) offsets.push_back(std::abs(cross(unit(b - a), (*pts)[k] - a)));
    }
  if (offsets.empty()) return 0;
  std::sort(offsets.begin(), offsets.end());
  size_t kept = std::max<size_t>(1, offsets.size() * 9 / 10);
  double sum = 0;
  for (size_t k = 0; k < kept; ++k) sum += offsets[k] * offsets[k];
  // A point's offset from its neighbours' chord has 1.5 times one point's variance.
  return std::sqrt(sum / kept / 1.5);
}

std::map<std::string, double> fast_overrides() { return {{"fit.merge_width_ratio", 0.5}}; }

std::vector<FittedPiece> fit_polyline(const Polyline& points, bool closed, const FitParams& p,
                                      const ChainEnds& ends) {
  if (points.empty()) return {};
  double length = polyline_length(points) + (closed ? dist(points.back(), points.front()) : 0.0);
  if (points.size() == 1 || length < p.dot_length_px) return fit_dot(points, p);
  if (closed) return fit_loop(points, p, ends);
  return fit_open(points, p, ends);
}

void fit(Scene& scene, const FitOptions& opt) {
  if (!scene.graph) throw Error(Code::invalid_scene, "fit needs the stroke graph (scene.graph)");
  double sw = scene.source ? scene.source->stroke_width_px : 0.0;
  std::vector<const Polyline*> traced;
  for (const Edge& e : scene.graph->edges) traced.push_back(&e.points);
  FitParams p = resolve_fit_params(sw, trace_noise_px(traced), opt, &scene);
  // The robot's scale from the whole drawing (every vertex: a refit of some edges sees them all).
  BBox extent;
  for (const Vertex& v : scene.graph->vertices) extent.add(v.p);
  for (const Edge& e : scene.graph->edges)
    for (Vec2 q : e.points) extent.add(q);
  if (!extent.empty()) p.robot_ppi = ppi_for_footprint(std::max({extent.width(), extent.height(), 1.0}));
  std::vector<Primitive> prims;
  std::vector<fitting::ChainRef> chains;
  const std::vector<Edge>& edges = scene.graph->edges;
  // Circles the graph cut at junctions, each emitted in place of its first edge; the strokes
  // meeting one are pinned to their junction's projection onto it, so they end on it.
  const std::vector<fitting::CycleCircle> cycles = fitting::cycle_circles(*scene.graph, p);
  std::vector<int> cycle_of(edges.size(), -1);
  std::map<std::string, const fitting::Circle*> circle_at;
  for (size_t c = 0; c < cycles.size(); ++c) {
    for (int k : cycles[c].edges) cycle_of[k] = static_cast<int>(c);
    for (const std::string& v : cycles[c].vertices) circle_at.emplace(v, &cycles[c].circle);
  }
  auto pin = [&](const Vertex& v) {
    auto it = circle_at.find(v.id);
    if (it == circle_at.end() || dist(v.p, it->second->center) < 1e-9) return v.p;
    return it->second->center + unit(v.p - it->second->center) * it->second->radius;
  };
  for (size_t k = 0; k < edges.size(); ++k) {
    const Edge& e = edges[k];
    if (cycle_of[k] >= 0) {
      const fitting::CycleCircle& cy = cycles[cycle_of[k]];
      if (cy.edges.front() != static_cast<int>(k)) continue;
      prims.push_back(cycle_primitive(cy, edges, fmt::format("p_{:04d}", prims.size() + 1)));
      chains.push_back({{static_cast<int>(prims.size()) - 1}, &cy.points, false, false, false, -1, -1, true});
      continue;
    }
    const Vertex* v0 = scene.graph->vertex(e.v0);
    const Vertex* v1 = scene.graph->vertex(e.v1);
    // Junctions pin the chain so strokes connect; a free end needs no pin (the end point,
    // projected onto the chain, is closer to the ink).
    ChainEnds ends;
    if (v0 && v0->degree >= 2) ends.start = pin(*v0);
    if (v1 && v1->degree >= 2) ends.end = pin(*v1);
    ends.pin_closed_start = e.closed && v0 && v0->degree > 2;
    fitting::ChainRef chain{{},
                            &e.points,
                            e.closed,
                            e.closed ? ends.pin_closed_start : ends.start.has_value(),
                            e.closed ? ends.pin_closed_start : ends.end.has_value(),
                            -1,
                            -1,
                            true};
    for (const FittedPiece& fp : fit_polyline(e.points, e.closed, p, ends)) {
      Primitive pr;
      pr.id = fmt::format("p_{:04d}", prims.size() + 1);
      pr.shape = fp.shape;
      pr.edge = e.id;
      pr.span0 = fp.span0;
      pr.span1 = fp.span1;
      pr.fit_rms_px = fp.rms_px;
      pr.fit_max_px = fp.max_px;
      chain.prims.push_back(static_cast<int>(prims.size()));
      prims.push_back(std::move(pr));
    }
    if (chain.prims.empty()) continue;
    chain.closed = chain.closed && prims[chain.prims.front()].shape.type != PrimType::circle &&
                   prims[chain.prims.front()].shape.p0 == prims[chain.prims.back()].shape.p1;
    chains.push_back(std::move(chain));
  }
  // Merged primitives answer to the merge tolerance, and so do the relations among them.
  FitParams bound = p;
  bound.tolerance_px = std::max(p.tolerance_px, p.merge_tolerance_px);
  scene.relations = p.beautify > 0 ? fitting::beautify(prims, chains, bound) : json::array();
  // Through strokes: one primitive across a junction where the drawing continues straight.
  std::vector<std::string> old_ids;
  for (const Primitive& pr : prims) old_ids.push_back(pr.id);
  std::vector<int> merged_into = fitting::merge_through_strokes(prims, *scene.graph, bound);
  // Out-and-back pieces: part of the primitive they retrace.
  const std::vector<int> absorbed_into =
      fitting::absorb_retraces(prims, std::min(bound.tolerance_px, p.retrace_px), bound.tolerance_px);
  for (int& i : merged_into) i = absorbed_into[i];
  std::map<std::string, int> new_of;
  std::vector<int> members(prims.size(), 0);
  for (size_t i = 0; i < old_ids.size(); ++i) {
    new_of[old_ids[i]] = merged_into[i];
    ++members[merged_into[i]];
  }
  // Relations among merged primitives were enforced on their parts: they are dropped.
  json kept = json::array();
  for (json r : scene.relations) {
    bool keep = r.contains("primitives");
    if (keep)
      for (json& id : r["primitives"]) {
        auto it = new_of.find(id.get<std::string>());
        if (it == new_of.end() || members[it->second] > 1) {
          keep = false;
          break;
        }
        id = prims[it->second].id;
      }
    if (keep) kept.push_back(std::move(r));
  }
  scene.relations = std::move(kept);
  for (Primitive& pr : prims)
    if (pr.fit_max_px > bound.tolerance_px * (1 + 1e-9)) pr.issues.push_back("exceeds_tolerance");
  record_joints(prims);
  scene.primitives = std::move(prims);
}

void record_joints(std::vector<Primitive>& prims) {
  for (Primitive& pr : prims) pr.joint_start = pr.joint_end = Primitive::Joint::none;
  auto meet = [&](Primitive& a, Primitive& b) {
    Vec2 ta = a.shape.end_tangent(), tb = b.shape.start_tangent();
    const bool smooth = !(a.shape.type == PrimType::line && b.shape.type == PrimType::line) &&
                        std::atan2(std::abs(cross(ta, tb)), dot(ta, tb)) < kSmoothJointRad;
    a.joint_end = b.joint_start = smooth ? Primitive::Joint::smooth : Primitive::Joint::corner;
  };
  auto stroke = [](const Primitive& pr) { return pr.shape.type != PrimType::circle && !pr.edge.empty(); };
  for (size_t i = 0; i < prims.size();) {
    size_t j = i + 1;  // [i, j): the primitives of one edge, in order
    while (j < prims.size() && stroke(prims[i]) && stroke(prims[j]) && prims[j].edge == prims[i].edge &&
           prims[j].shape.p0 == prims[j - 1].shape.p1)
      ++j;
    for (size_t k = i + 1; k < j; ++k) meet(prims[k - 1], prims[k]);
    if (j - i > 1 && prims[j - 1].shape.p1 == prims[i].shape.p0) meet(prims[j - 1], prims[i]);
    i = j;
  }
}

}  // namespace sv
