// SnapEndpoints' geometry: near-miss junctions closed, ends that nearly meet moved to their
// mean, an end that nearly meets another primitive's interior (a T) moved onto it.
#include <fmt/format.h>

#include <algorithm>
#include <functional>
#include <map>

#include "core/error.hpp"
#include "edit/edit.hpp"
#include "edit/geometry.hpp"
#include "edit/joints.hpp"

namespace sv::edit {

Snapped snap_endpoints(const Scene& in, const std::vector<std::string>& vertex_ids, std::optional<double> tolerance_px) {
  Snapped r;
  r.scene = editable(in);
  Scene& out = r.scene;
  const double tol = tolerance_px ? *tolerance_px : std::max(1.0, 0.5 * stroke_width_of(in));
  if (!(tol > 0)) throw Error(Code::invalid_selection, "tolerance_px must be positive");
  std::vector<Vec2> near_vertices;
  for (const auto& v : vertex_ids) {
    const Vertex* vx = in.graph ? in.graph->vertex(v) : nullptr;
    if (!vx) throw Error(Code::not_found, "no vertex " + v, {{"id", v}});
    near_vertices.push_back(vx->p);
  }
  const double reach = std::max(tol, stroke_width_of(in));
  // Whether a snap at q is one the request asks for (near one of its vertices, if it names any).
  auto wanted = [&](Vec2 q) {
    if (near_vertices.empty()) return true;
    return std::any_of(near_vertices.begin(), near_vertices.end(), [&](Vec2 v) { return dist(v, q) <= reach; });
  };
  // A snap's name: the nearest graph vertex within reach, else the position.
  auto name_of = [&](Vec2 q) {
    std::string name = fmt::format("at {:.1f},{:.1f}", q.x, q.y);
    double best = reach;
    if (in.graph)
      for (const auto& v : in.graph->vertices)
        if (dist(v.p, q) <= best) best = dist(v.p, q), name = v.id;
    return name;
  };
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
  double max_move = 0;
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
    if (!wanted(mean)) continue;
    // Ends outside the cluster at the same spots (joints of their own) follow.
    for (Vec2 q : spots) moves.push_back({q, mean}), max_move = std::max(max_move, dist(q, mean));
    r.clusters.push_back(name_of(mean));
  }
  carry_joints(out, moves, {}, r.touched);
  // T near misses: a free end within the tolerance of another primitive's interior (beyond the
  // tolerance of that primitive's ends, which the clusters above handle) moves onto its nearest
  // point there, the ends joined to it along.
  for (size_t i = 0; i < prims.size(); ++i) {
    if (prims[i].shape.type == PrimType::circle) continue;
    for (int which : {0, 1}) {
      const Shape& own = prims[i].shape;
      const Vec2 e = which ? own.p1 : own.p0, other_end = which ? own.p0 : own.p1;
      const Primitive* target = nullptr;
      double nearest = INFINITY;
      bool attached = false;
      for (const auto& q : prims) {
        // Primitives ending here are joined to this end, not touched by it.
        if (q.id == prims[i].id || (q.shape.type != PrimType::circle &&
                                    (dist(q.shape.p0, e) <= kJointEps || dist(q.shape.p1, e) <= kJointEps)))
          continue;
        double d = q.shape.distance_to(e);
        attached = attached || d <= kJointEps;
        if (d < nearest) nearest = d, target = &q;
      }
      if (attached || !target || nearest > tol) continue;
      const Shape& t = target->shape;
      if (t.type != PrimType::circle && (dist(t.p0, e) <= tol || dist(t.p1, e) <= tol)) continue;
      const Vec2 onto = nearest_on(t, e);
      if (!wanted(onto) || dist(onto, other_end) < 1e-6) continue;
      carry_joints(out, {{e, onto}}, {target->id}, r.touched);
      max_move = std::max(max_move, dist(e, onto));
      r.clusters.push_back(name_of(onto));
    }
  }
  if (r.clusters.empty())
    throw Error(Code::no_result,
                fmt::format("no near-miss endpoints within {:.2f} px{}: nothing to snap", tol,
                            near_vertices.empty() ? "" : " of the given vertices"),
                {{"reason", "no near-miss endpoints"}, {"tolerance_px", tol}});
  for (const auto& id : r.touched) refresh_fit(in, prims[primitive_index(out, id)]);
  r.max_move_px = max_move;
  r.tolerance_px = tol;
  return r;
}

}  // namespace sv::edit
