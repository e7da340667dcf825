#include "fit/through.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <optional>
#include <set>

#include "fit/primitive_fit.hpp"

namespace sv::fitting {

namespace {

// A chain end at a junction: primitive `prim`, its p1 end when at_p1, else its p0 end.
struct End {
  int prim = -1;
  bool at_p1 = false;
  bool operator<(const End& o) const { return std::tie(prim, at_p1) < std::tie(o.prim, o.at_p1); }
  bool operator==(const End& o) const { return prim == o.prim && at_p1 == o.at_p1; }
};

// A member of a merged path: a primitive, traversed p1 -> p0 when reversed.
struct Member {
  int prim = -1;
  bool reversed = false;
};

struct MergedPath {
  std::vector<Member> members;  // in path order
  Shape shape;                  // oriented along the path
  std::vector<std::string> joints;  // the junctions the path passes through
  double max_px = 0, rms_px = 0;
  Polyline points;  // the members' source points along the path
};

Polyline span_points(const Primitive& pr, const Graph& g) {
  const Edge* e = g.edge(pr.edge);
  Polyline out;
  if (!e || e->points.empty()) return out;
  const int n = static_cast<int>(e->points.size());
  int a = std::clamp(pr.span0, 0, n - 1), b = std::clamp(pr.span1, 0, n - 1);
  if (a <= b) {
    out.assign(e->points.begin() + a, e->points.begin() + b + 1);
  } else {
    out.assign(e->points.begin() + a, e->points.end());
    out.insert(out.end(), e->points.begin(), e->points.begin() + b + 1);
  }
  return out;
}

Shape oriented(const Shape& s, bool reversed) { return reversed ? s.reversed() : s; }

// The end of the path a member list starts (head) or finishes (tail) with.
End head_end(const std::vector<Member>& m) { return {m.front().prim, m.front().reversed}; }
End tail_end(const std::vector<Member>& m) { return {m.back().prim, !m.back().reversed}; }

std::vector<Member> reversed_path(std::vector<Member> m) {
  std::reverse(m.begin(), m.end());
  for (Member& x : m) x.reversed = !x.reversed;
  return m;
}

// Direction leaving the junction along a primitive from the given end.
Vec2 leaving(const Shape& s, bool at_p1) { return at_p1 ? s.end_tangent() * -1.0 : s.start_tangent(); }

// One primitive for the path of `members` between its outer ends: a line, or (when every
// member is an arc turning the same way) an arc; nullopt when it leaves the limit.
std::optional<Shape> fit_through(const std::vector<Member>& members, const std::vector<Primitive>& prims,
                                 Points pts, double limit, const FitParams& p) {
  Shape first = oriented(prims[members.front().prim].shape, members.front().reversed);
  Shape last = oriented(prims[members.back().prim].shape, members.back().reversed);
  Vec2 a = first.p0, b = last.p1;
  if (dist(a, b) < 2 * p.tolerance_px) return std::nullopt;
  bool lines = true, arcs = true;
  double sign = 0;
  for (const Member& m : members) {
    Shape s = oriented(prims[m.prim].shape, m.reversed);
    lines = lines && s.type == PrimType::line;
    if (s.type != PrimType::arc) {
      arcs = false;
      continue;
    }
    double sg = s.bulge > 0 ? 1.0 : -1.0;
    if (sign != 0 && sg != sign) arcs = false;
    sign = sg;
  }
  Shape line = Shape::line(a, b);
  if (max_distance(line, pts) <= limit) return line;
  if (lines || !arcs) return std::nullopt;
  auto kasa = kasa_circle(pts);
  if (!kasa) return std::nullopt;
  Circle c = refine_circle(pts, *kasa);
  auto arc = fit_arc_between(a, b, sign, chord_offset(a, b, c.center), pts);
  if (!arc || max_distance(*arc, pts) > limit) return std::nullopt;
  if (std::abs(arc->sweep_rad()) > deg2rad(p.max_sweep_deg)) return std::nullopt;
  return arc;
}

// The point of a shape nearest q.
Vec2 nearest_on(const Shape& s, Vec2 q) {
  if (s.type == PrimType::line || !std::isfinite(s.radius)) {
    Vec2 d = s.p1 - s.p0;
    double L2 = dot(d, d);
    double t = L2 > 0 ? std::clamp(dot(q - s.p0, d) / L2, 0.0, 1.0) : 0.0;
    return s.p0 + d * t;
  }
  Vec2 on = s.center + unit(q - s.center) * s.radius;
  if (s.type == PrimType::circle || s.distance_to(on) < 1e-6) return on;
  return dist(q, s.p0) < dist(q, s.p1) ? s.p0 : s.p1;
}

// The shape with one end moved to q: a line stays a line, an arc keeps its bulge.
Shape with_end(const Shape& s, bool at_p1, Vec2 q) {
  Vec2 a = at_p1 ? s.p0 : q, b = at_p1 ? q : s.p1;
  return s.type == PrimType::arc ? Shape::arc(a, b, s.bulge) : Shape::line(a, b);
}

}  // namespace

std::vector<int> merge_through_strokes(std::vector<Primitive>& prims, const Graph& graph,
                                       const FitParams& p) {
  const int n = static_cast<int>(prims.size());
  std::vector<int> remap(n);
  for (int i = 0; i < n; ++i) remap[i] = i;
  if (p.through_angle_deg <= 0 || n < 2) return remap;

  // The chain ends at every junction (chains are consecutive primitives of one edge).
  std::map<std::string, std::vector<End>> at;
  std::map<End, std::string> vertex_of;
  for (const Edge& e : graph.edges) {
    int first = -1, last = -1;
    for (int i = 0; i < n; ++i)
      if (prims[i].edge == e.id) {
        if (first < 0) first = i;
        last = i;
      }
    if (first < 0 || prims[first].shape.type == PrimType::circle) continue;
    const Vertex* v0 = graph.vertex(e.v0);
    const Vertex* v1 = graph.vertex(e.v1);
    if (v0 && v0->degree >= 3) {
      at[e.v0].push_back({first, false});
      vertex_of[{first, false}] = e.v0;
    }
    if (v1 && v1->degree >= 3) {
      at[e.v1].push_back({last, true});
      vertex_of[{last, true}] = e.v1;
    }
  }

  // Candidate pairs: ends at one junction that continue each other, straightest first.
  struct Candidate {
    double turn;
    std::string vertex;
    End a, b;
  };
  std::vector<Candidate> cands;
  const double max_turn = deg2rad(p.through_angle_deg);
  for (const auto& [v, ends] : at)
    for (size_t i = 0; i < ends.size(); ++i)
      for (size_t j = i + 1; j < ends.size(); ++j) {
        const End &a = ends[i], &b = ends[j];
        if (a.prim == b.prim) continue;
        Vec2 da = leaving(prims[a.prim].shape, a.at_p1), db = leaving(prims[b.prim].shape, b.at_p1);
        double turn = std::acos(std::clamp(-dot(da, db), -1.0, 1.0));
        if (turn <= max_turn) cands.push_back({turn, v, a, b});
      }
  std::stable_sort(cands.begin(), cands.end(), [](const Candidate& x, const Candidate& y) { return x.turn < y.turn; });

  std::vector<MergedPath> groups(n);
  std::vector<int> group_of(n);
  for (int i = 0; i < n; ++i) {
    groups[i].members = {{i, false}};
    groups[i].shape = prims[i].shape;
    groups[i].max_px = prims[i].fit_max_px;
    groups[i].rms_px = prims[i].fit_rms_px;
    group_of[i] = i;
  }
  std::set<End> used;
  for (const Candidate& c : cands) {
    if (used.count(c.a) || used.count(c.b)) continue;
    int ga = group_of[c.a.prim], gb = group_of[c.b.prim];
    if (ga == gb) continue;
    // Path A ends at the junction, path B starts there.
    std::vector<Member> A = groups[ga].members, B = groups[gb].members;
    if (!(tail_end(A) == c.a)) A = reversed_path(A);
    if (!(head_end(B) == c.b)) B = reversed_path(B);
    if (!(tail_end(A) == c.a) || !(head_end(B) == c.b)) continue;
    std::vector<Member> path = A;
    path.insert(path.end(), B.begin(), B.end());
    Polyline pts;
    double limit = p.tolerance_px;
    for (const Member& m : path) {
      Polyline sp = span_points(prims[m.prim], graph);
      if (m.reversed) std::reverse(sp.begin(), sp.end());
      pts.insert(pts.end(), sp.begin(), sp.end());
      limit = std::max(limit, prims[m.prim].fit_max_px);
    }
    if (pts.size() < 2) continue;
    auto shape = fit_through(path, prims, pts, limit * (1 + 1e-9), p);
    if (!shape) continue;
    MergedPath merged;
    merged.members = std::move(path);
    merged.shape = *shape;
    merged.joints = groups[ga].joints;
    merged.joints.insert(merged.joints.end(), groups[gb].joints.begin(), groups[gb].joints.end());
    merged.joints.push_back(c.vertex);
    Deviation d = deviation(*shape, pts);
    merged.max_px = d.max;
    merged.rms_px = d.rms;
    merged.points = std::move(pts);
    used.insert(c.a);
    used.insert(c.b);
    groups[gb] = {};
    for (const Member& m : merged.members) group_of[m.prim] = ga;
    groups[ga] = std::move(merged);
  }

  // The other chain ends at a through stroke's junction (the stems) move onto it.
  for (int g = 0; g < n; ++g) {
    if (groups[g].members.size() < 2) continue;
    for (const std::string& v : groups[g].joints) {
      const Vertex* vx = graph.vertex(v);
      if (!vx) continue;
      Vec2 q = nearest_on(groups[g].shape, vx->p);
      for (const End& e : at[v]) {
        if (used.count(e)) continue;
        MergedPath& s = groups[group_of[e.prim]];
        if (group_of[e.prim] == g) continue;
        // Which end of the stem's path it is (a single member is its own path).
        bool at_tail;
        if (tail_end(s.members) == e) at_tail = true;
        else if (head_end(s.members) == e) at_tail = false;
        else continue;
        if (s.shape.type == PrimType::circle) continue;
        Polyline pts = s.points;
        if (pts.empty()) {
          pts = span_points(prims[e.prim], graph);
          if (s.members.front().reversed) std::reverse(pts.begin(), pts.end());
        }
        Shape moved = with_end(s.shape, at_tail, q);
        Deviation d = deviation(moved, pts);
        if (d.max <= std::max(p.tolerance_px, s.max_px) * (1 + 1e-9)) {
          s.shape = moved;
          s.max_px = d.max;
          s.rms_px = d.rms;
          s.points = std::move(pts);
        }
      }
    }
  }

  // The primitives in order: a merged one where its first member was.
  std::vector<Primitive> out;
  std::vector<int> new_index(n, -1);
  for (int i = 0; i < n; ++i) {
    const MergedPath& g = groups[group_of[i]];
    int first = n;
    for (const Member& m : g.members) first = std::min(first, m.prim);
    if (first != i) continue;
    Primitive pr = prims[i];
    bool rev = false;
    for (const Member& m : g.members)
      if (m.prim == i) rev = m.reversed;
    pr.shape = oriented(g.shape, rev);
    pr.fit_max_px = g.max_px;
    pr.fit_rms_px = g.rms_px;
    // Provenance in the primitive's own direction: its first member first.
    std::vector<Member> path = rev ? reversed_path(g.members) : g.members;
    for (const Member& m : path)
      if (m.prim != i) pr.more_sources.push_back({prims[m.prim].edge, prims[m.prim].span0, prims[m.prim].span1});
    for (const Member& m : g.members) new_index[m.prim] = static_cast<int>(out.size());
    out.push_back(std::move(pr));
  }
  for (size_t k = 0; k < out.size(); ++k) out[k].id = fmt::format("p_{:04d}", k + 1);
  prims = std::move(out);
  return new_index;
}

std::vector<int> absorb_retraces(std::vector<Primitive>& prims, double tolerance_px, double join_px) {
  const int n = static_cast<int>(prims.size());
  const double reversal = -std::cos(deg2rad(30));
  std::vector<int> into(n, -1);  // the primitive an absorbed one went into
  // `a` reaching to the turning point `tip` near its end (a line is extended along itself to
  // it: the fit may end the two pieces a little apart there), when it then covers `b`.
  auto covering = [&](const Primitive& a, bool tip_at_p1, Vec2 tip, const Primitive& b) -> std::optional<Shape> {
    Shape s = a.shape;
    if (s.type == PrimType::line) {
      const Vec2 from = tip_at_p1 ? s.p0 : s.p1, to = tip_at_p1 ? s.p1 : s.p0;
      const Vec2 along = unit(to - from);
      if (dot(tip - to, along) > 0) (tip_at_p1 ? s.p1 : s.p0) = from + along * dot(tip - from, along);
    }
    if (b.shape.length() > s.length() + tolerance_px) return std::nullopt;
    for (Vec2 q : b.shape.sample(1.0))
      if (s.distance_to(q) > tolerance_px * (1 + 1e-9)) return std::nullopt;
    return s;
  };
  // The primitives kept so far, in order; each new one is checked against the last of them, and
  // one that swallows that last one is checked again against the one before, from where the
  // swallowed one started.
  std::vector<int> kept;
  std::vector<Vec2> starts;
  for (const Primitive& p : prims) starts.push_back(p.shape.p0);
  for (int k = 0; k < n; ++k) {
    int b = k;
    while (tolerance_px > 0 && !kept.empty()) {
      const int a = kept.back();
      const Primitive &pa = prims[a], &pb = prims[b];
      if (pa.edge.empty() || pa.edge != pb.edge || pa.shape.type == PrimType::circle ||
          pb.shape.type == PrimType::circle || dist(pa.shape.p1, starts[b]) > join_px ||
          dot(pa.shape.end_tangent(), pb.shape.start_tangent()) > reversal)
        break;
      if (auto s = covering(pa, true, pb.shape.p0, pb)) {
        prims[a].shape = *s;
        into[b] = a;
        b = -1;
        break;
      }
      auto s = covering(pb, false, pa.shape.p1, pa);
      if (!s) break;
      prims[b].shape = *s;
      into[a] = b;
      starts[b] = starts[a];
      kept.pop_back();
    }
    if (b >= 0) kept.push_back(b);
  }
  std::vector<Primitive> out;
  std::vector<int> new_index(n, -1);
  for (int i : kept) {
    new_index[i] = static_cast<int>(out.size());
    out.push_back(prims[i]);
  }
  for (int i = 0; i < n; ++i) {
    if (into[i] < 0) continue;
    int host = into[i];
    while (into[host] >= 0) host = into[host];
    Primitive& h = out[new_index[host]];
    h.more_sources.push_back({prims[i].edge, prims[i].span0, prims[i].span1});
    h.more_sources.insert(h.more_sources.end(), prims[i].more_sources.begin(), prims[i].more_sources.end());
    new_index[i] = new_index[host];
  }
  for (size_t k = 0; k < out.size(); ++k) out[k].id = fmt::format("p_{:04d}", k + 1);
  prims = std::move(out);
  return new_index;
}

}  // namespace sv::fitting
