#include "suggest/candidates.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <set>

#include "core/error.hpp"
#include "edit/edit.hpp"
#include "eval/coverage.hpp"
#include "eval/drawing.hpp"
#include "eval/score.hpp"
#include "fit/params.hpp"
#include "robot/motion.hpp"
#include "route/route.hpp"

namespace sv::suggest {

namespace {

constexpr double kJoinPx = 1.5;          // ends this close are one joint (the route's snap, doubled)
constexpr double kSmoothJointDeg = 30;   // joints turning less may be made tangent
constexpr double kLongWayDeg = 120;      // turns around one stroke this large may be saved by reversing it
constexpr double kNoInkShare = 0.2;      // a stroke with less of its length near ink has none under it
constexpr double kDuplicateShare = 0.95; // a stroke this much along another is a duplicate
constexpr size_t kMaxPairwise = 4000;    // primitives beyond which the pairwise searches are skipped

bool round_kind(const Shape& s) { return s.type != PrimType::line; }

// The drawn order of the command stream: consecutive drawing commands with what lies between
// them (the turn in place, and whether the pen was lifted).
struct Joint {
  std::string a, b;
  double spin_deg = 0;  // summed turns between the two
  bool pen_up = false;
};
std::vector<Joint> joints_of(const Scene& s) {
  std::vector<Joint> out;
  if (!s.commands) return out;
  std::string last;
  Joint cur;
  for (const Command& c : *s.commands) {
    if (c.kind == Command::Kind::spin) {
      cur.spin_deg += c.degrees;
      continue;
    }
    if (!c.pen_down) {
      cur.pen_up = true;
      continue;
    }
    if (c.primitive.empty()) continue;
    if (!last.empty() && c.primitive != last) {
      cur.a = last, cur.b = c.primitive;
      out.push_back(cur);
    }
    cur = Joint{};
    last = c.primitive;
  }
  return out;
}

Candidate merge_candidate(const std::vector<std::string>& ids, const std::string& target, std::optional<double> tol,
                          const std::string& why) {
  Candidate c;
  c.tool = "MergePrimitives";
  c.targets = ids;
  c.request = {{"primitive_ids", ids}, {"target_kind", target}};
  if (tol) c.request["fit_tolerance_px"] = round_to(*tol, 1e-4);
  c.edit_kind = target == "circle" ? "merge_arc_chain_to_circle" : "merge_primitives";
  c.description = fmt::format("merge {} into one {}{}", id_list(ids), target == "auto" ? "line or arc" : target,
                              tol ? fmt::format(" within {:.2f} px", *tol) : "");
  c.rationale = why;
  return c;
}

// Runs of primitives whose consecutive members satisfy `fits` and meet end to end at a joint
// only they share (a junction of three cannot be merged across).
std::vector<std::vector<std::string>> runs(const std::vector<Primitive>& prims, const Scope& scope,
                                           const std::function<bool(const Primitive&, const Primitive&)>& fits) {
  const size_t n = prims.size();
  std::vector<std::array<int, 2>> next(n, {-1, -1});
  std::vector<std::array<int, 2>> degree(n, {0, 0});
  auto end = [&](size_t i, int w) { return w ? prims[i].shape.p1 : prims[i].shape.p0; };
  std::vector<std::array<std::vector<size_t>, 2>> meets(n);
  for (size_t i = 0; i < n; ++i)
    for (size_t j = i + 1; j < n; ++j) {
      if (prims[i].shape.type == PrimType::circle || prims[j].shape.type == PrimType::circle) continue;
      for (int w : {0, 1})
        for (int v : {0, 1})
          if (dist(end(i, w), end(j, v)) <= kJoinPx) {
            ++degree[i][w], ++degree[j][v];
            meets[i][w].push_back(j), meets[j][v].push_back(i);
          }
    }
  std::vector<std::vector<size_t>> adj(n);
  for (size_t i = 0; i < n; ++i)
    for (int w : {0, 1})
      if (degree[i][w] == 1) {
        size_t j = meets[i][w][0];
        bool mutual = false;
        for (int v : {0, 1})
          mutual = mutual || (degree[j][v] == 1 && meets[j][v][0] == i && dist(end(i, w), end(j, v)) <= kJoinPx);
        if (mutual && j > i && fits(prims[i], prims[j]) && scope.touches(prims[i]) && scope.touches(prims[j]))
          adj[i].push_back(j), adj[j].push_back(i);
      }
  // Each component of the compatibility graph is a path or a loop (every end has one partner).
  std::vector<bool> seen(n, false);
  std::vector<std::vector<std::string>> out;
  for (size_t i = 0; i < n; ++i) {
    if (seen[i] || adj[i].empty()) continue;
    size_t start = i;  // walk back to a path end, if there is one (a loop starts at i)
    for (size_t prev = SIZE_MAX, at = i, steps = 0; steps <= n; ++steps) {
      size_t nxt = SIZE_MAX;
      for (size_t j : adj[at])
        if (j != prev) nxt = j;
      if (nxt == i) break;
      if (nxt == SIZE_MAX) {  // an end, or two pieces meeting at both ends
        start = at;
        break;
      }
      prev = at, at = nxt;
    }
    std::vector<std::string> run;
    for (size_t prev = SIZE_MAX, at = start; at != SIZE_MAX && !seen[at];) {
      seen[at] = true;
      run.push_back(prims[at].id);
      size_t nxt = SIZE_MAX;
      for (size_t j : adj[at])
        if (j != prev && !seen[j]) nxt = j;
      prev = at, at = nxt;
    }
    if (run.size() >= 2) out.push_back(run);
  }
  return out;
}

double angle_between_deg(Vec2 u, Vec2 v) {
  double a = std::abs(rad2deg(std::atan2(cross(u, v), dot(u, v))));
  return std::min(a, 180 - a);  // lines have no direction here
}

// Share of `s`'s length within `d` of the points.
double share_near(const Shape& s, const NearestPoints& near, double d) {
  Polyline pts = s.sample(1.0);
  if (pts.empty() || near.empty()) return 0;
  size_t in = 0;
  for (Vec2 q : pts) in += near.distance(q, d) <= d;
  return static_cast<double>(in) / pts.size();
}

}  // namespace

std::vector<MergeGroup> similar_groups(const Scene& s, const Scope& scope, bool aggressive) {
  std::vector<MergeGroup> out;
  if (!s.primitives || s.primitives->size() > kMaxPairwise) return out;
  const auto& prims = *s.primitives;
  const double sw = stroke_width_of(s), cover = default_tolerance(sw);
  const double fit_tol = fit_params_of(s).tolerance_px;
  const double k = aggressive ? 2.0 : 1.0;
  const double angle = 2.0 * k, offset = fit_tol * k;
  auto add = [&](std::vector<std::string> ids, const std::string& kind, const std::string& target, const std::string& why) {
    MergeGroup g;
    g.tolerance_px = cover;
    std::optional<double> tol = aggressive ? std::optional<double>(std::max(fit_tol, cover / 2)) : std::nullopt;
    try {
      edit::Merged m = edit::merge_primitives(s, ids, target, tol);
      g.replacement = m.scene.primitive(m.id)->shape;
      g.fit_rms_px = m.fit_rms_px, g.fit_max_px = m.fit_max_px;
    } catch (const Error&) {
      return;  // not one shape within the tolerance: not a group to merge
    }
    g.edit = merge_candidate(ids, target, tol, why);
    g.edit.merge_kind = kind;
    out.push_back(std::move(g));
  };
  // Collinear lines end to end.
  auto collinear = [&](const Primitive& a, const Primitive& b) {
    if (a.shape.type != PrimType::line || b.shape.type != PrimType::line) return false;
    if (angle_between_deg(a.shape.p1 - a.shape.p0, b.shape.p1 - b.shape.p0) > angle) return false;
    // The line through the two ends they do not share.
    const bool a0 = std::min(dist(a.shape.p0, b.shape.p0), dist(a.shape.p0, b.shape.p1)) <= kJoinPx;
    const bool b0 = std::min(dist(b.shape.p0, a.shape.p0), dist(b.shape.p0, a.shape.p1)) <= kJoinPx;
    Shape far = Shape::line(a0 ? a.shape.p1 : a.shape.p0, b0 ? b.shape.p1 : b.shape.p0);
    for (Vec2 q : {a.shape.p0, a.shape.p1, b.shape.p0, b.shape.p1})
      if (far.distance_to(q) > offset) return false;
    return true;
  };
  for (auto& ids : runs(prims, scope, collinear))
    add(ids, "fuse_collinear_lines", "line",
        fmt::format("{} lines lie on one line (directions within {:.1f} deg, ends within {:.2f} px): one move instead of {}",
                    ids.size(), angle, offset, ids.size()));
  // Arcs of one circle end to end; all of it is a circle.
  auto co_arc = [&](const Primitive& a, const Primitive& b) {
    if (a.shape.type != PrimType::arc || b.shape.type != PrimType::arc) return false;
    return dist(a.shape.center, b.shape.center) <= offset * 2 && std::abs(a.shape.radius - b.shape.radius) <= offset * 2;
  };
  for (auto& ids : runs(prims, scope, co_arc)) {
    double sweep = 0;
    for (const auto& id : ids) sweep += std::abs(s.primitive(id)->shape.sweep_rad());
    const Shape& first = s.primitive(ids.front())->shape;
    bool circle = sweep > 2 * kPi * 0.95;
    add(ids, circle ? "rebuild_circle_from_arcs" : "fuse_co_arc", circle ? "circle" : "arc",
        fmt::format("{} arcs share one circle (centres and radii within {:.2f} px, radius {:.1f} px, {:.0f} deg in all)"
                    ": {}",
                    ids.size(), offset * 2, first.radius, rad2deg(sweep),
                    circle ? "one circle, drawn in one turn" : "one arc instead of " + std::to_string(ids.size())));
  }
  // A stroke lying along another: drawing it again adds time and no ink.
  const double along = sw * 0.5 * k;
  std::vector<BBox> boxes;
  for (const auto& p : prims) {
    BBox b;
    for (Vec2 q : p.shape.sample(2.0)) b.add(q);
    boxes.push_back(b);
  }
  for (size_t i = 0; i < prims.size(); ++i) {
    const Primitive& a = prims[i];
    if (!scope.touches(a) || a.shape.length() < sw) continue;
    const Polyline pts = a.shape.sample(1.0);
    for (size_t j = 0; j < prims.size(); ++j) {
      const Primitive& b = prims[j];
      if (j == i || b.shape.length() < a.shape.length() || (b.shape.length() == a.shape.length() && j > i)) continue;
      const BBox &ba = boxes[i], &bb = boxes[j];
      if (ba.x0 < bb.x0 - along || ba.x1 > bb.x1 + along || ba.y0 < bb.y0 - along || ba.y1 > bb.y1 + along) continue;
      size_t in = 0;
      double sum = 0, worst = 0;
      for (Vec2 q : pts) {
        const double d = b.shape.distance_to(q);
        in += d <= along;
        sum += d * d, worst = std::max(worst, d);
      }
      const double share = static_cast<double>(in) / std::max<size_t>(1, pts.size());
      if (share < kDuplicateShare) continue;
      MergeGroup g;
      g.tolerance_px = cover;
      g.replacement = b.shape;
      g.fit_rms_px = std::sqrt(sum / std::max<size_t>(1, pts.size())), g.fit_max_px = worst;
      g.edit.tool = "DeletePrimitive";
      g.edit.edit_kind = "delete_primitive";
      g.edit.merge_kind = "deduplicate_overlap";
      g.edit.targets = {a.id, b.id};
      g.edit.request = {{"primitive_ids", {a.id}}};
      g.edit.description = fmt::format("delete {}: it lies along {}", a.id, b.id);
      g.edit.rationale = fmt::format("{:.0f}% of {} lies within {:.2f} px of {} (worst {:.2f} px): drawn twice", 100 * share,
                                     a.id, along, b.id, worst);
      out.push_back(std::move(g));
      break;
    }
  }
  return out;
}

namespace {

// What the candidates are proposed from (the scene, its source's ink, the scope, the joints of
// its command stream, its tolerances), and the candidates, in the order they are proposed.
struct Proposer {
  Proposer(const Scene& scene, const std::vector<Polyline>& ink, const Scope& sc)
      : s(scene), reference(ink), scope(sc), prims(*s.primitives), sw(stroke_width_of(s)), cover(default_tolerance(sw)),
        fit_tol(fit_params_of(s).tolerance_px), joints(joints_of(s)) {}
  bool in_scope(const std::string& id) const {
    const Primitive* p = s.primitive(id);
    return p && scope.touches(*p);
  }
  void tangents();
  void merged_runs();
  void reversals();
  void snaps();
  void ink_and_tremor();
  void refits();
  void reroutes();

  const Scene& s;
  const std::vector<Polyline>& reference;
  const Scope& scope;
  const std::vector<Primitive>& prims;
  const double sw, cover, fit_tol;
  const std::vector<Joint> joints;
  std::vector<Candidate> out;
};

// A spin at a nearly smooth joint of the command stream is saved by making it tangent (or, below,
// by one command for both pieces).
void Proposer::tangents() {
  for (const Joint& j : joints) {
    if (j.pen_up || !in_scope(j.a) || !in_scope(j.b)) continue;
    const Shape &sa = s.primitive(j.a)->shape, &sb = s.primitive(j.b)->shape;
    const double spin = std::abs(j.spin_deg);
    if (sa.type == PrimType::circle || sb.type == PrimType::circle || spin < 1e-3) continue;
    if (spin > kSmoothJointDeg || !(round_kind(sa) || round_kind(sb))) continue;
    Candidate c;
    c.tool = "EnforceRelation";
    c.edit_kind = "enforce_relation";
    c.targets = {j.a, j.b};
    c.request = {{"relation", "tangent_continuity"}, {"primitive_ids", {j.a, j.b}}};
    c.description = fmt::format("make {} and {} tangent at their joint", j.a, j.b);
    c.rationale = fmt::format("the robot turns {:.1f} deg in place between {} and {} ({:.2f} s): tangent, the robot "
                              "drives on without turning",
                              spin, j.a, j.b, motion_of(scene_robot(s)).spin_s(spin));
    out.push_back(std::move(c));
  }
}

// Runs drawn without lifting the pen: a window of two to four consecutive pieces may be one
// command, within the fit's tolerance or, looser, the coverage tolerance (half a stroke width,
// the bound sv-fit --fast merges to everywhere).
void Proposer::merged_runs() {
  std::vector<std::vector<std::string>> chains;
  for (size_t k = 0; k < joints.size(); ++k) {
    const Joint& j = joints[k];
    auto mergeable = [&](const std::string& id) {
      const Primitive* p = s.primitive(id);
      return p && p->shape.type != PrimType::circle && scope.touches(*p);
    };
    if (j.pen_up || !mergeable(j.a) || !mergeable(j.b)) continue;
    if (chains.empty() || chains.back().back() != j.a || k == 0 || joints[k - 1].pen_up) chains.push_back({j.a});
    chains.back().push_back(j.b);
  }
  for (const auto& chain : chains)
    for (size_t n = 2; n <= std::min<size_t>(4, chain.size()); ++n)
      for (size_t i = 0; i + n <= chain.size(); ++i) {
        std::vector<std::string> ids(chain.begin() + i, chain.begin() + i + n);
        if (std::set<std::string>(ids.begin(), ids.end()).size() < n) continue;  // a piece drawn twice
        const std::string why = fmt::format("{} pieces drawn one after another: one command, none of the turns between them", n);
        if (n == 2) out.push_back(merge_candidate(ids, "auto", std::nullopt, why));
        if (cover > fit_tol) out.push_back(merge_candidate(ids, "auto", cover, why));
      }
}

// A stroke the robot turns much around, or lifts the pen beside, may be drawn the other way.
void Proposer::reversals() {
  std::map<std::string, double> turn_around;  // the turning before and after each stroke
  std::set<std::string> beside_pen_up;
  for (const Joint& j : joints) {
    if (!in_scope(j.a) || !in_scope(j.b)) continue;
    turn_around[j.a] += std::abs(j.spin_deg), turn_around[j.b] += std::abs(j.spin_deg);
    if (j.pen_up) beside_pen_up.insert({j.a, j.b});
  }
  for (const auto& [id, deg] : turn_around) {
    if (deg < kLongWayDeg && !beside_pen_up.count(id)) continue;
    Candidate c;
    c.tool = "ReverseDirection";
    c.edit_kind = "reverse_primitive_direction";
    c.targets = {id};
    c.request = {{"primitive_ids", {id}}};
    c.description = "draw " + id + " the other way";
    c.rationale = fmt::format("the robot turns {:.0f} deg in place around {}{}: driven the other way it may turn and travel less",
                              deg, id, beside_pen_up.count(id) ? " and lifts the pen beside it" : "");
    out.push_back(std::move(c));
  }
}

// Ends of different strokes that nearly meet: snapped, one pen-down path may draw both.
void Proposer::snaps() {
  const double snap = std::max(1.0, sw / 2);
  double nearest = INFINITY;
  std::string near_a, near_b;
  if (prims.size() <= kMaxPairwise)
    for (size_t i = 0; i < prims.size(); ++i)
      for (size_t j = i + 1; j < prims.size(); ++j) {
        if (prims[i].shape.type == PrimType::circle || prims[j].shape.type == PrimType::circle) continue;
        if (!scope.touches(prims[i]) && !scope.touches(prims[j])) continue;
        for (Vec2 e : {prims[i].shape.p0, prims[i].shape.p1})
          for (Vec2 f : {prims[j].shape.p0, prims[j].shape.p1}) {
            double d = dist(e, f);
            if (d > 0.05 && d <= snap && d < nearest) nearest = d, near_a = prims[i].id, near_b = prims[j].id;
          }
      }
  if (!near_a.empty()) {
    Candidate c;
    c.tool = "SnapEndpoints";
    c.edit_kind = "snap_endpoints";
    c.targets = {near_a, near_b};
    c.request = json::object();
    c.description = "snap the near-miss ends together";
    c.rationale = fmt::format("ends of different strokes lie within {:.2f} px (closest: {} and {}, {:.2f} px) without "
                              "meeting: joined, the robot need not lift the pen there",
                              snap, near_a, near_b, nearest);
    out.push_back(std::move(c));
  }
}

// Strokes with no ink under them, and tremor.
void Proposer::ink_and_tremor() {
  NearestPoints ink(reference, 1.0);
  for (const Primitive& p : prims) {
    if (!scope.touches(p)) continue;
    if (!ink.empty() && p.shape.length() >= sw) {
      double share = share_near(p.shape, ink, cover);
      if (share < kNoInkShare) {
        Candidate c;
        c.tool = "DeletePrimitive";
        c.edit_kind = "delete_primitive";
        c.targets = {p.id};
        c.request = {{"primitive_ids", {p.id}}};
        c.description = "delete " + p.id + ": no ink under it";
        c.rationale = fmt::format("only {:.0f}% of {} lies within {:.2f} px of the source's ink", 100 * share, p.id, cover);
        out.push_back(std::move(c));
      }
    }
    if (p.shape.type != PrimType::circle && p.fit_rms_px > 0.5 * fit_tol && !p.edge.empty()) {
      Candidate c;
      c.tool = "SmoothPrimitive";
      c.edit_kind = "smooth_primitive";
      c.targets = {p.id};
      c.request = {{"primitive_id", p.id}, {"strength", "moderate"}};
      c.description = "smooth the tremor of " + p.id;
      c.rationale = fmt::format("{} follows its points at {:.2f} px rms (tolerance {:.2f} px): tremor", p.id, p.fit_rms_px, fit_tol);
      out.push_back(c);
      if (p.shape.type == PrimType::line && p.fit_max_px > fit_tol * 0.75) {
        c.edit_kind = "replace_with_arc";
        c.request["target_kind"] = "arc";
        c.description = "replace the wobbly line " + p.id + " by an arc";
        c.rationale = fmt::format("{} is a line {:.2f} px from its points at worst: they bow", p.id, p.fit_max_px);
        out.push_back(std::move(c));
      }
    }
  }
}

// The escalation: a looser threshold of the stage (ExplainThreshold names it), for each source
// stroke drawn in several pieces and for the whole drawing; the caller gives the whole-drawing
// one the request's region.
void Proposer::refits() {
  const double mwr = fit_params_of(s).merge_width_ratio;
  std::map<std::string, std::vector<std::string>> by_edge;
  for (const Primitive& p : prims)
    if (!p.edge.empty() && scope.touches(p)) by_edge[p.edge].push_back(p.id);
  auto refit = [&](double ratio, const std::vector<std::string>& ids, const std::string& where) {
    Candidate c;
    c.tool = "RerunStage";
    c.edit_kind = "refit_polyline";
    c.targets = ids;
    c.request = {{"stage", "vectorize"}, {"config_overrides", {{"fit.merge_width_ratio", ratio}}}};
    if (!ids.empty()) c.request["region"] = {{"kind", "primitive_set"}, {"primitive_ids", ids}};
    c.description = fmt::format("refit {} with fit.merge_width_ratio {}", where, ratio);
    c.rationale = fmt::format(
        "ExplainThreshold fit.merge_width_ratio: {} now; at {} runs of pieces merge into one line or arc within {:.2f} px "
        "({} of the stroke width) where the robot draws that faster",
        mwr, ratio, ratio * sw, ratio);
    out.push_back(std::move(c));
  };
  // A stroke may be refitted to a whole stroke width, the whole drawing to half of it at most
  // (sv-fit --fast's bound): looser, the whole drawing saved no more on the corpus than its
  // strokes one by one, and each candidate is a dry run. A stroke at a quarter width costs less
  // of the budget: where it is spent, refine takes more steps (144 dev drawings: 54.6 -> 54.5 s
  // at the same f1 at 1 px).
  for (double ratio : {0.25, 0.5, 1.0}) {
    if (mwr >= ratio || !s.graph) continue;
    for (const auto& [edge, ids] : by_edge)
      if (ids.size() >= 2) refit(ratio, ids, fmt::format("stroke {} ({})", edge, id_list(ids)));
    if (ratio <= 0.5) refit(ratio, {}, "the drawing");
  }
}

// The route may redraw pieces half the coverage tolerance off their shape, or all of it:
// the looser one merges more and costs more fidelity, which the measurement weighs. It may also
// join ends up to 1.5 or 3 px apart (refine on the 144 dev drawings: 55.3 -> 55.0 s at the same
// f1 at 1 px; 2 and 4, or 3 and 6 px, measured the same).
void Proposer::reroutes() {
  if (!s.tour) return;
  const RouteParams rp = route_params_of(s);
  // A re-route with `key` at `to` (from `now`); the rationale says what that changes.
  auto reroute = [&](const char* key, double now, double to, int digits, const char* effect) {
    if (now >= to - 1e-6) return;
    Candidate c;
    c.tool = "RerunStage";
    c.edit_kind = "reorder_tour";
    c.request = {{"stage", "route_optimize"}, {"config_overrides", {{key, round_to(to, 1e-3)}}}};
    c.description = fmt::format("re-route with {} {:.{}f}", key, to, digits);
    c.rationale = fmt::format("ExplainThreshold {}: {:.{}f} px now; at {:.{}f} px {}", key, now, digits, to, digits, effect);
    out.push_back(std::move(c));
  };
  for (double to : {cover / 2, cover})
    reroute("route.deviation_px", rp.deviation_px, to, 3, "more consecutive pieces are redrawn as one command");
  // Ends a little apart joined as one vertex: the gap is drawn across instead of lifting the pen.
  for (double to : {1.5, 3.0})
    reroute("route.snap_px", rp.snap_px, to, 2,
            "primitive ends that close are one vertex, and gaps up to twice that are drawn across without lifting "
            "the pen");
}

}  // namespace

std::vector<Candidate> propose(const Scene& s, const std::vector<Polyline>& reference, const Scope& scope) {
  if (!s.primitives || s.primitives->empty()) return {};
  Proposer p(s, reference, scope);
  for (MergeGroup& g : similar_groups(s, scope, false)) p.out.push_back(std::move(g.edit));
  p.tangents();
  p.merged_runs();
  p.reversals();
  p.snaps();
  p.ink_and_tremor();
  p.refits();
  p.reroutes();
  return std::move(p.out);
}

}  // namespace sv::suggest
