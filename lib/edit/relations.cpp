// Relations of an edited scene: enforcing explicit relations through the beautify solver, and
// re-solving the recorded ones after an edit touched their primitives.
#include <fmt/format.h>

#include <algorithm>
#include <deque>
#include <map>

#include "core/error.hpp"
#include "edit/edit.hpp"
#include "edit/geometry.hpp"
#include "edit/joints.hpp"
#include "fit/beautify.hpp"
#include "fit/primitive_fit.hpp"

namespace sv {

namespace {

using edit::kJointEps;

// A relation beautify detected but could not hold ("status": "dropped").
bool is_dropped(const json& r) { return r.value("status", "") == "dropped"; }

// The scene's primitives arranged as the solver's chains: a working copy in which every piece
// runs along its chain (`flipped` records which were turned round), the chains, and the
// sampled points of primitives without provenance.
struct SceneChains {
  std::vector<Primitive> prims;
  std::vector<bool> flipped;
  std::deque<Polyline> samples;
  std::vector<fitting::ChainRef> chains;
};

Polyline span_of(const Edge& e, const Primitive& p) {
  const int n = static_cast<int>(e.points.size());
  int a = std::clamp(p.span0, 0, n - 1), b = std::clamp(p.span1, 0, n - 1);
  Polyline out;
  if (a <= b) {
    out.assign(e.points.begin() + a, e.points.begin() + b + 1);
  } else {
    out.assign(e.points.begin() + a, e.points.end());
    out.insert(out.end(), e.points.begin(), e.points.begin() + b + 1);
  }
  return out;
}

SceneChains scene_chains(const Scene& s) {
  SceneChains sc;
  sc.prims = *s.primitives;
  sc.flipped.assign(sc.prims.size(), false);
  std::map<std::string, std::vector<int>> by_edge;
  std::vector<int> alone;
  for (int i = 0; i < static_cast<int>(sc.prims.size()); ++i) {
    const Primitive& p = sc.prims[i];
    const Edge* e = s.graph && !p.edge.empty() ? s.graph->edge(p.edge) : nullptr;
    // A primitive fitted across a junction is no piece of one edge's chain: it stands alone.
    if (e && !e->points.empty() && p.more_sources.empty()) by_edge[p.edge].push_back(i);
    else alone.push_back(i);
  }
  auto standalone = [&](int i) {
    Primitive& p = sc.prims[i];
    sc.samples.push_back(p.shape.sample(1.0));
    p.span0 = 0;
    p.span1 = static_cast<int>(sc.samples.back().size()) - 1;
    fitting::ChainRef ch;
    ch.prims = {i};
    ch.points = &sc.samples.back();
    ch.held = false;
    sc.chains.push_back(ch);
  };
  for (int i : alone) standalone(i);
  for (auto& entry : by_edge) {
    // Not a structured binding: clang 14 (scripts/sanitize) cannot capture one in a lambda.
    const auto& edge_id = entry.first;
    auto& idx = entry.second;
    const Edge& e = *s.graph->edge(edge_id);
    std::stable_sort(idx.begin(), idx.end(), [&](int a, int b) { return sc.prims[a].span0 < sc.prims[b].span0; });
    std::vector<int> run;
    auto flush = [&] {
      if (run.empty()) return;
      fitting::ChainRef ch;
      ch.prims = run;
      ch.points = &e.points;
      const Shape &first = sc.prims[run.front()].shape, &last = sc.prims[run.back()].shape;
      ch.closed = e.closed && first.type != PrimType::circle && dist(first.p0, last.p1) <= kJointEps &&
                  run.size() == idx.size();
      sc.chains.push_back(ch);
      run.clear();
    };
    for (int i : idx) {
      Primitive& p = sc.prims[i];
      if (p.shape.type == PrimType::circle) {
        flush();
        run = {i};
        flush();
        continue;
      }
      Polyline pts = span_of(e, p);
      if (pts.size() >= 2 && dist(p.shape.p0, pts.front()) + dist(p.shape.p1, pts.back()) >
                                 dist(p.shape.p0, pts.back()) + dist(p.shape.p1, pts.front())) {
        p.shape = p.shape.reversed();
        sc.flipped[i] = true;
      }
      if (!run.empty() && dist(sc.prims[run.back()].shape.p1, p.shape.p0) > kJointEps) flush();
      run.push_back(i);
    }
    flush();
  }
  // Junctions: chain ends at one point (a closed chain's own two ends do not make one).
  struct End {
    int chain, which;
    Vec2 at;
  };
  std::vector<End> ends;
  for (int c = 0; c < static_cast<int>(sc.chains.size()); ++c) {
    const auto& ch = sc.chains[c];
    if (sc.prims[ch.prims.front()].shape.type == PrimType::circle) continue;
    ends.push_back({c, 0, sc.prims[ch.prims.front()].shape.p0});
    ends.push_back({c, 1, sc.prims[ch.prims.back()].shape.p1});
  }
  std::vector<int> group(ends.size(), -1);
  int groups = 0;
  for (size_t a = 0; a < ends.size(); ++a) {
    if (group[a] >= 0) continue;
    std::vector<size_t> members{a};
    for (size_t b = a + 1; b < ends.size(); ++b)
      if (group[b] < 0 && dist(ends[a].at, ends[b].at) <= kJointEps) members.push_back(b);
    bool several = false;
    for (size_t m : members) several = several || ends[m].chain != ends[a].chain;
    if (!several) continue;
    for (size_t m : members) group[m] = groups;
    ++groups;
  }
  for (size_t k = 0; k < ends.size(); ++k)
    (ends[k].which == 0 ? sc.chains[ends[k].chain].junction_start : sc.chains[ends[k].chain].junction_end) = group[k];
  return sc;
}

bool is_round(const Shape& s) {
  return s.type == PrimType::circle || (s.type == PrimType::arc && std::isfinite(s.radius));
}

Vec2 point_of(const json& v) { return {v.at(0).get<double>(), v.at(1).get<double>()}; }
bool is_point(const json& v) { return v.is_array() && v.size() == 2 && v[0].is_number() && v[1].is_number(); }

// The record's axis as the spec's given direction, centre or mirror axis.
void parse_axis(RelationKind kind, const json& axis, fitting::RelationSpec& spec) {
  if (axis.is_null()) return;
  using K = RelationKind;
  const bool directed = kind == K::parallel || kind == K::perpendicular || kind == K::collinear;
  auto bad = [&](const std::string& why) {
    throw Error(Code::invalid_selection,
                "axis " + axis.dump() + " for " + relation_kind_name(kind) + ": " + why, {{"reason", why}});
  };
  if (axis.is_number()) {
    if (directed) spec.angle_rad = deg2rad(axis.get<double>());
    else if (kind == K::mirror) spec.axis = std::make_pair(Vec2{axis.get<double>(), 0}, Vec2{axis.get<double>(), 1});
    else bad("a number is a direction in degrees (parallel, perpendicular, collinear) or a mirror's vertical axis x");
  } else if (is_point(axis)) {
    if (kind == K::concentric) spec.centre = point_of(axis);
    else bad("a point [x, y] is the common centre of concentric primitives");
  } else if (axis.is_array() && axis.size() == 2 && is_point(axis[0]) && is_point(axis[1])) {
    Vec2 a = point_of(axis[0]), b = point_of(axis[1]);
    if (dist(a, b) < 1e-9) bad("the axis' two points coincide");
    if (kind == K::mirror) spec.axis = std::make_pair(a, b);
    else if (directed) spec.angle_rad = angle_of(b - a);
    else bad("a line [[x0, y0], [x1, y1]] is a mirror axis or a direction");
  } else {
    bad("expected a number, a point [x, y] or a line [[x0, y0], [x1, y1]]");
  }
  if (kind == K::horizontal || kind == K::vertical) bad("horizontal and vertical take no axis");
}

// How far the listed primitives are from sharing one end point (px).
double coincidence_residual(const Scene& s, const std::vector<size_t>& idx) {
  const auto& prims = *s.primitives;
  auto ends = [&](size_t i) {
    const Shape& sh = prims[i].shape;
    return sh.type == PrimType::circle ? std::vector<Vec2>{} : std::vector<Vec2>{sh.p0, sh.p1};
  };
  double best = INFINITY;
  for (Vec2 e : ends(idx[0])) {
    double worst = 0;
    for (size_t k = 1; k < idx.size(); ++k) {
      double near = INFINITY;
      for (Vec2 f : ends(idx[k])) near = std::min(near, dist(e, f));
      worst = std::max(worst, near);
    }
    best = std::min(best, worst);
  }
  return best;
}

}  // namespace

json enforce_relations(Scene& s, const json& relations, std::set<std::string>* moved) {
  if (!s.primitives) throw Error(Code::invalid_scene, "the scene has no primitives");
  const FitParams params = fit_params_of(s);
  const auto& prims = *s.primitives;
  json records = json::array();
  std::vector<fitting::RelationSpec> specs;
  std::vector<size_t> spec_record;
  for (const json& r : relations) {
    const std::string kind = r.value("kind", "");
    json ids = r.value("primitives", json::array());
    std::vector<size_t> idx;
    std::set<std::string> seen;
    for (const auto& id : ids) {
      const std::string name = id.get<std::string>();
      if (!seen.insert(name).second)
        throw Error(Code::invalid_selection, kind + " names " + name + " twice", {{"reason", "duplicate id"}});
      auto it = std::find_if(prims.begin(), prims.end(), [&](const Primitive& p) { return p.id == name; });
      if (it == prims.end()) throw Error(Code::not_found, "no primitive " + name, {{"id", name}});
      idx.push_back(static_cast<size_t>(it - prims.begin()));
    }
    json rec = {{"kind", kind}, {"primitives", ids}};
    if (r.contains("axis") && !r["axis"].is_null()) rec["axis"] = r["axis"];
    auto need = [&](bool ok, const std::string& why) {
      if (!ok) throw Error(Code::invalid_selection, kind + ": " + why, {{"reason", why}, {"relation", kind}});
    };
    const std::optional<RelationKind> parsed = relation_kind_of(kind);
    if (!parsed) throw Error(Code::invalid_selection, "unknown relation '" + kind + "'", {{"reason", "unknown relation"}});
    using K = RelationKind;
    const K k = *parsed;
    if (k == K::coincident) {
      need(idx.size() >= 2, "needs at least two primitives");
      double res = coincidence_residual(s, idx);
      if (!(res <= params.tolerance_px))
        throw Error(Code::unsolvable_constraint,
                    fmt::format("the ends of {} are {:.2f} px apart (tolerance {:.2f} px)", ids.dump(), res,
                                params.tolerance_px),
                    {{"reason", "ends apart"}, {"relation", kind}, {"residual", res},
                     {"tolerance_px", params.tolerance_px}});
      rec["residual_px"] = round_to(res, 1e-6);
      records.push_back(rec);
      continue;
    }
    fitting::RelationSpec spec;
    spec.kind = k;
    for (size_t i : idx) spec.prims.push_back(static_cast<int>(i));
    auto all = [&](auto pred) {
      return std::all_of(idx.begin(), idx.end(), [&](size_t i) { return pred(prims[i].shape); });
    };
    auto line = [](const Shape& sh) { return sh.type == PrimType::line; };
    if (k == K::parallel || k == K::perpendicular || k == K::collinear) {
      need(idx.size() >= 2, "needs at least two lines");
      need(all(line), "relates lines only");
    } else if (k == K::horizontal || k == K::vertical) {
      need(!idx.empty(), "needs at least one line");
      need(all(line), "relates lines only");
    } else if (k == K::equal_radius || k == K::concentric) {
      need(all(is_round), "relates arcs and circles only");
      need(idx.size() >= 2 || (k == K::concentric && !idx.empty() && is_point(r.value("axis", json()))),
           "needs at least two arcs or circles (or one and a centre as axis)");
    } else if (k == K::tangent_continuity) {
      need(idx.size() == 2, "relates exactly two primitives");
    } else {  // mirror
      need(!idx.empty(), "needs primitives: pairs a0, b0, a1, b1, ... (an odd last one is symmetric in itself)");
      for (size_t q = 0; q + 1 < idx.size(); q += 2)
        need(prims[idx[q]].shape.type == prims[idx[q + 1]].shape.type,
             fmt::format("{} and {} are of different types", prims[idx[q]].id, prims[idx[q + 1]].id));
    }
    parse_axis(k, r.value("axis", json()), spec);
    specs.push_back(spec);
    spec_record.push_back(records.size());
    records.push_back(rec);
  }
  if (specs.empty()) return records;
  SceneChains sc = scene_chains(s);
  fitting::EnforceOutcome o = fitting::enforce(sc.prims, sc.chains, specs, params);
  if (!o.ok) {
    json details = {{"reason", o.reason}, {"tolerance_px", params.tolerance_px}};
    if (o.failed >= 0) {
      details["relation"] = relation_kind_name(specs[o.failed].kind);
      details["residual"] = round_to(o.residuals[o.failed], 1e-6);
      details["residual_unit"] = o.units[o.failed];
    }
    if (o.broken >= 0) {
      details["primitive_id"] = sc.prims[o.broken].id;
      details["max_px"] = round_to(o.broken_max_px, 1e-4);
    }
    throw Error(Code::unsolvable_constraint, "cannot enforce: " + o.reason, details);
  }
  auto& out = *s.primitives;
  for (int i : o.moved) {
    Shape sh = sc.prims[i].shape;
    if (sc.flipped[i]) sh = sh.reversed();
    out[i].shape = sh;
    if (!out[i].edge.empty() && s.graph && s.graph->edge(out[i].edge)) {
      out[i].fit_rms_px = sc.prims[i].fit_rms_px;
      out[i].fit_max_px = sc.prims[i].fit_max_px;
    }
    if (moved) moved->insert(out[i].id);
  }
  for (size_t k = 0; k < specs.size(); ++k)
    records[spec_record[k]][o.units[k] == "deg" ? "residual_deg" : "residual_px"] = round_to(o.residuals[k], 1e-6);
  return records;
}

std::vector<std::string> resolve_relations(Scene& s, const std::set<std::string>& touched) {
  std::vector<std::string> warnings;
  json kept = json::array();
  for (const auto& r : s.relations) {
    bool complete = true;
    for (const auto& id : r.value("primitives", json::array()))
      complete = complete && s.primitive(id.get<std::string>()) != nullptr;
    if (is_dropped(r)) {  // a record of what beautify could not hold: never re-solved
      if (complete) kept.push_back(r);
      continue;
    }
    // A relation goes with its primitives: deleting one is what the user asked, not a warning.
    if (complete) kept.push_back(r);
  }
  s.relations = kept;
  if (touched.empty() || !s.primitives) return warnings;
  // The relations naming a touched primitive, the explicitly enforced ones first.
  std::vector<size_t> affected;
  for (size_t k = 0; k < s.relations.size(); ++k) {
    if (is_dropped(s.relations[k])) continue;
    for (const auto& id : s.relations[k].value("primitives", json::array()))
      if (touched.count(id.get<std::string>())) {
        affected.push_back(k);
        break;
      }
  }
  if (affected.empty()) return warnings;
  std::stable_sort(affected.begin(), affected.end(), [&](size_t a, size_t b) {
    return s.relations[a].contains("enforced_by") && !s.relations[b].contains("enforced_by");
  });
  auto update = [&](size_t k, const json& solved) {
    json& r = s.relations[k];
    r.erase("residual_deg");
    r.erase("residual_px");
    for (const char* key : {"residual_deg", "residual_px"})
      if (solved.contains(key)) r[key] = solved[key];
  };
  // All together; when that fails, one at a time, dropping those that cannot hold.
  json together = json::array();
  for (size_t k : affected) together.push_back(s.relations[k]);
  try {
    Scene trial = s;
    json solved = enforce_relations(trial, together);
    s.primitives = std::move(trial.primitives);
    for (size_t m = 0; m < affected.size(); ++m) update(affected[m], solved[m]);
    return warnings;
  } catch (const Error&) {
  }
  std::set<size_t> dropped;
  json accepted = json::array();
  std::vector<size_t> accepted_index;
  for (size_t k : affected) {
    json attempt = accepted;
    attempt.push_back(s.relations[k]);
    try {
      Scene trial = s;
      json solved = enforce_relations(trial, attempt);
      s.primitives = std::move(trial.primitives);
      accepted = attempt;
      accepted_index.push_back(k);
      for (size_t m = 0; m < accepted_index.size(); ++m) update(accepted_index[m], solved[m]);
    } catch (const Error& e) {
      dropped.insert(k);
      warnings.push_back(fmt::format("relation {} of {} dropped: {}", s.relations[k].value("kind", "?"),
                                     s.relations[k].value("primitives", json::array()).dump(), e.what()));
    }
  }
  json rest = json::array();
  for (size_t k = 0; k < s.relations.size(); ++k)
    if (!dropped.count(k)) rest.push_back(s.relations[k]);
  s.relations = rest;
  return warnings;
}

edit::Enforced edit::enforce_relation(const Scene& in, const std::string& kind, const std::vector<std::string>& ids,
                                      const json& axis) {
  Enforced r;
  r.scene = editable(in);
  Scene& out = r.scene;
  selection(in, ids);  // every id must name a primitive, once
  json rec = {{"kind", kind}, {"primitives", ids}};
  if (!axis.is_null()) rec["axis"] = axis;
  std::set<std::string> moved;
  json solved = enforce_relations(out, json::array({rec}), &moved)[0];
  solved["enforced_by"] = "EnforceRelation";
  // The same relation on the same primitives replaces its earlier record.
  std::set<std::string> mine(ids.begin(), ids.end());
  json relations = json::array();
  for (const auto& rel : out.relations) {
    std::set<std::string> theirs;
    for (const auto& id : rel.value("primitives", json::array())) theirs.insert(id.get<std::string>());
    if (rel.value("kind", "") != kind || theirs != mine) relations.push_back(rel);
  }
  relations.push_back(solved);
  out.relations = relations;
  r.degrees = solved.contains("residual_deg");
  r.residual = r.degrees ? solved["residual_deg"].get<double>() : solved["residual_px"].get<double>();
  for (const auto& p : *out.primitives)
    if (moved.count(p.id)) r.touched.insert(p.id);
  r.moved.assign(moved.begin(), moved.end());
  return r;
}

}  // namespace sv
