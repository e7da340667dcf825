// ReplacePrimitive's geometry: an explicit shape in place of primitives, its ends snapped onto
// existing endpoints nearby.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "core/error.hpp"
#include "edit/edit.hpp"
#include "edit/geometry.hpp"
#include "edit/joints.hpp"

namespace sv::edit {

namespace {

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

}  // namespace

Replaced replace_by_shape(const Scene& in, const std::vector<std::string>& ids, Shape shape, bool snap_ends) {
  Replaced r;
  r.scene = editable(in);
  Scene& out = r.scene;
  if (ids.empty()) throw Error(Code::invalid_selection, "ReplacePrimitive needs at least one primitive to replace");
  std::vector<const Primitive*> sel = selection(in, ids);
  const std::set<std::string> gone(ids.begin(), ids.end());
  int snapped = 0;
  if (snap_ends && shape.type != PrimType::circle) {
    const double reach = std::max(2.0, stroke_width_of(in));
    auto snap = [&](Vec2 q) -> std::optional<Vec2> {
      std::optional<Vec2> best;
      double best_d = reach;
      for (const auto& p : *in.primitives) {
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
  np.route_deviation_px = 0;  // drawn as given
  np.semantic_role = sel[0]->semantic_role;
  if (auto span = common_span(in, sel)) {
    np.edge = sel[0]->edge;
    np.span0 = span->first, np.span1 = span->second;
    refresh_fit(in, np);
  }
  splice_primitives(out, gone, {np});
  r.touched = {np.id};
  r.id = np.id;
  r.snapped_ends = snapped;
  return r;
}

}  // namespace sv::edit
