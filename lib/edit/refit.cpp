// RefitPolyline's geometry: the fitter run again on the span of one source edge, with overrides.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "core/error.hpp"
#include "edit/edit.hpp"
#include "edit/geometry.hpp"
#include "edit/joints.hpp"
#include "fit/fit.hpp"

namespace sv::edit {

Refitted refit_polyline(const Scene& in, const std::vector<std::string>& ids, const RefitOptions& opt) {
  Refitted r;
  r.scene = editable(in);
  Scene& out = r.scene;
  if (ids.empty()) throw Error(Code::invalid_selection, "RefitPolyline needs at least one primitive");
  std::vector<const Primitive*> sel = selection(in, ids);
  const std::string edge_id = sel[0]->edge;
  const Edge* edge = in.graph && !edge_id.empty() ? in.graph->edge(edge_id) : nullptr;
  for (const Primitive* p : sel)
    if (!edge || p->edge != edge_id)
      throw Error(Code::invalid_selection,
                  fmt::format("the primitives must share one source edge ({} is on {}, {} on {})", sel[0]->id,
                              edge_id.empty() ? "none" : edge_id, p->id, p->edge.empty() ? "none" : p->edge),
                  {{"reason", "no common source edge"}});
  const int n = static_cast<int>(edge->points.size());
  std::stable_sort(sel.begin(), sel.end(), [](const Primitive* a, const Primitive* b) { return a->span0 < b->span0; });
  int on_edge = 0;
  for (const auto& p : *in.primitives) on_edge += p.edge == edge_id;
  const bool whole_loop = edge->closed && on_edge == static_cast<int>(sel.size());
  // The chain's ends, running along the edge.
  auto along = [&](const Primitive* p) {
    Polyline src = source_points(in, *p);
    return oriented(src, p->shape) == src ? p->shape : p->shape.reversed();
  };
  auto meets = [&](const Primitive* a, const Primitive* b) {
    return a->shape.type != PrimType::circle && dist(along(a).p1, along(b).p0) <= join_px(in);
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
      if (shared_with_others(in, start, gone)) ends.start = start, ends.pin_closed_start = true;
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
  FitParams fp = fit_params_of(in);
  if (opt.arc_cost_scale) fp.arc_cost *= *opt.arc_cost_scale;
  if (opt.forbid_arcs) fp.min_arc_sagitta_px = 1e12;  // FitParams::arcs_allowed() is then false
  if (opt.forbid_circle) fp.circle_max_aspect = 0;
  // Split indices (into pts): the extra points, and for force_subdivide the longest piece's middle.
  std::vector<int> splits;
  const double reach = std::max(2.0, stroke_width_of(in));
  for (Vec2 v : opt.split_points) {
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
  if (opt.force_subdivide) {
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
    p.route_deviation_px = 0;  // drawn as refitted, not redrawn straight within the route's deviation
    r.touched.insert(p.id);
    r.pieces.push_back(p);
  }
  splice_primitives(out, gone, r.pieces);
  r.edge = edge_id;
  return r;
}

}  // namespace sv::edit
