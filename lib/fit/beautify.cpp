#include "fit/beautify.hpp"

#include <Eigen/Sparse>
#include <Eigen/SparseCholesky>
#include <algorithm>
#include <functional>
#include <map>
#include <set>
#include <tuple>

#include <fmt/format.h>

#include "fit/primitive_fit.hpp"

namespace sv::fitting {

namespace {

constexpr double kRelationWeight = 1000;  // a relation residual against 1 px of data residual
constexpr double kAnchorWeight = 1;       // the pull of a joint to where it was
constexpr size_t kDataPointsPerPiece = 24;
constexpr int kRounds = 10;
constexpr double kExactRad = 1e-4;  // a joint turning less is smooth already
constexpr int kIterations = 30;
constexpr double kTangentScalePx = 10;  // a tangent mismatch of 1 rad weighs as 10 px

// Angle difference modulo pi, in (-pi/2, pi/2].
double wrap_half_turn(double a) {
  a = std::fmod(a, kPi);
  if (a <= -kPi / 2) a += kPi;
  if (a > kPi / 2) a -= kPi;
  return a;
}

// The edge points a primitive was fitted to (a closed edge's span may wrap past the end).
Polyline span_points(const Primitive& pr, const Polyline& pts) {
  Polyline out;
  int n = static_cast<int>(pts.size());
  if (pr.span0 <= pr.span1) {
    out.assign(pts.begin() + pr.span0, pts.begin() + pr.span1 + 1);
  } else {
    out.assign(pts.begin() + pr.span0, pts.end());
    out.insert(out.end(), pts.begin(), pts.begin() + std::min(pr.span1 + 1, n));
  }
  return out;
}

// ---------------------------------------------------------------------------------------
// The relations: what is to hold, by primitive index.

struct Family {
  double angle = 0;                        // direction of its quarter-0 lines, modulo pi
  std::vector<std::pair<int, int>> lines;  // (primitive, quarter): direction angle + quarter pi/2
  bool fixed = false;                      // the angle is given (horizontal, vertical), not solved
  // Residual: the angle itself (wrapped to a half turn) rather than its sine, whose gradient
  // vanishes a right angle away from the goal (enforce() may start anywhere; beautify starts
  // within a few degrees).
  bool angular = false;
};

struct Group {
  std::vector<int> members;  // primitives (radius, centre) or chain ends (coincidence)
  std::optional<Vec2> fixed;  // centres: a given common centre
};

// Lines on one common line: a direction (solved unless given) and an offset.
struct Collinear {
  std::vector<int> members;
  std::optional<double> angle;
};

// Tangent continuity: at a shared joint (end 0 = p0, 1 = p1 of each), or, with ends -1, a line
// (a) tangent to an arc or circle (b).
struct Tangent {
  int a = -1, b = -1, end_a = -1, end_b = -1;
};

// Mirror images about one axis (solved unless given as a line through two points); a pair
// (a, a) is a primitive symmetric in itself.
struct Mirror {
  std::vector<std::pair<int, int>> pairs;
  std::optional<std::pair<Vec2, Vec2>> axis;
};

struct Relations {
  std::vector<Family> families;
  std::vector<Group> radii, centres, ends;  // an end is 2 * chain + (0 start, 1 end)
  std::vector<Collinear> collinear;
  std::vector<Tangent> tangents;
  std::vector<Mirror> mirrors;
  bool empty() const {
    return families.empty() && radii.empty() && centres.empty() && ends.empty() &&
           collinear.empty() && tangents.empty() && mirrors.empty();
  }
};

Vec2 chain_end(const std::vector<Primitive>& prims, const ChainRef& c, int which) {
  return which == 0 ? prims[c.prims.front()].shape.p0 : prims[c.prims.back()].shape.p1;
}

// Greedy clustering: each item (in the given order) joins the first group whose seed is
// within reach, else seeds a new one. Groups smaller than min_size are dropped.
std::vector<Group> cluster(const std::vector<int>& items, const std::function<bool(int, int)>& near,
                           size_t min_size = 2) {
  std::vector<Group> groups;
  for (int i : items) {
    auto g = std::find_if(groups.begin(), groups.end(),
                          [&](const Group& g) { return near(g.members[0], i); });
    if (g != groups.end())
      g->members.push_back(i);
    else
      groups.push_back({{i}, std::nullopt});
  }
  std::erase_if(groups, [&](const Group& g) { return g.members.size() < min_size; });
  return groups;
}

// The axis a direction lies near: 0 horizontal, 1 vertical, -1 neither (within tol radians).
int near_axis(double angle, double tol) {
  if (std::abs(wrap_half_turn(angle)) <= tol) return 0;
  if (std::abs(wrap_half_turn(angle - kPi / 2)) <= tol) return 1;
  return -1;
}

// The turn at the joint where a ends and b starts, in radians (0 smooth, pi a cusp).
double kink(const Shape& a, const Shape& b) {
  Vec2 ta = a.end_tangent(), tb = b.start_tangent();
  return std::atan2(std::abs(cross(ta, tb)), dot(ta, tb));
}

Relations detect(const std::vector<Primitive>& prims, const std::vector<ChainRef>& chains,
                 const FitParams& p) {
  Relations rel;
  const double angle_tol = deg2rad(p.relation_angle_deg), tol = p.tolerance_px;
  const double axis_tol = deg2rad(p.axis_angle_deg);
  auto by_size = [&](std::vector<int> v, auto size) {
    std::stable_sort(v.begin(), v.end(), [&](int a, int b) { return size(a) > size(b); });
    return v;
  };
  std::vector<int> lines, rounds;
  for (int i = 0; i < static_cast<int>(prims.size()); ++i) {
    const Shape& s = prims[i].shape;
    if (s.type == PrimType::line && s.length() >= p.relation_min_line_px) lines.push_back(i);
    if (s.type == PrimType::circle || (s.type == PrimType::arc && std::isfinite(s.radius)))
      rounds.push_back(i);
  }
  lines = by_size(lines, [&](int i) { return prims[i].shape.length(); });
  auto dir = [&](int i) { return angle_of(prims[i].shape.p1 - prims[i].shape.p0); };
  // Direction clusters (seeded by the longest line), then perpendicular pairs of clusters.
  auto parallel = cluster(
      lines,
      [&](int seed, int i) { return std::abs(wrap_half_turn(dir(i) - dir(seed))) <= angle_tol; },
      1);
  for (const Group& g : parallel) {
    double a = dir(g.members[0]);
    auto f = std::find_if(rel.families.begin(), rel.families.end(), [&](const Family& f) {
      bool has_right_angle =
          std::any_of(f.lines.begin(), f.lines.end(), [](auto l) { return l.second == 1; });
      return !has_right_angle && std::abs(wrap_half_turn(a - f.angle - kPi / 2)) <= angle_tol;
    });
    if (f == rel.families.end()) {
      rel.families.push_back({a, {}});
      for (int i : g.members) rel.families.back().lines.push_back({i, 0});
    } else {
      for (int i : g.members) f->lines.push_back({i, 1});
    }
  }
  // Horizontal and vertical: a family all of whose lines lie near the axes turns onto them
  // (its angle given); otherwise each line near an axis is held to it on its own, and the
  // solve tells whether that agrees with its family.
  std::vector<Family> axis_lines;
  for (Family& f : rel.families) {
    std::set<int> implied;  // the family angle (0 or 1 quarter turn) each line's axis implies
    size_t near = 0;
    for (auto [i, q] : f.lines) {
      int ax = near_axis(dir(i), axis_tol);
      if (ax < 0) continue;
      ++near;
      implied.insert((ax + q) % 2);
    }
    if (near == f.lines.size() && implied.size() == 1) {
      f.fixed = true;
      f.angle = *implied.begin() * kPi / 2;
      continue;
    }
    for (auto [i, q] : f.lines)
      if (int ax = near_axis(dir(i), axis_tol); ax >= 0)
        axis_lines.push_back({ax * kPi / 2, {{i, 0}}, true});
  }
  std::erase_if(rel.families, [](const Family& f) { return f.lines.size() < (f.fixed ? 1u : 2u); });
  // Collinear: lines of one family and quarter whose ends lie near the longest one's line.
  for (const Family& f : rel.families)
    for (int q : {0, 1}) {
      std::vector<int> same;
      for (auto [i, qi] : f.lines)
        if (qi == q) same.push_back(i);
      auto groups = cluster(same, [&](int seed, int i) {
        const Shape &s = prims[seed].shape, &t = prims[i].shape;
        Vec2 u = unit(s.p1 - s.p0);
        return std::max(std::abs(cross(u, t.p0 - s.p0)), std::abs(cross(u, t.p1 - s.p0))) <=
               p.collinear_offset_px;
      });
      for (const Group& g : groups) {
        Collinear c{g.members, std::nullopt};
        if (f.fixed) c.angle = f.angle + q * kPi / 2;
        rel.collinear.push_back(c);
      }
    }
  rel.families.insert(rel.families.end(), axis_lines.begin(), axis_lines.end());
  rounds = by_size(rounds, [&](int i) { return prims[i].shape.radius; });
  rel.radii = cluster(rounds, [&](int seed, int i) {
    return std::abs(prims[i].shape.radius - prims[seed].shape.radius) <= tol;
  });
  rel.centres = cluster(rounds, [&](int seed, int i) {
    return dist(prims[i].shape.center, prims[seed].shape.center) <= tol;
  });
  // Tangent continuity at smooth joints: consecutive pieces (not both lines: two lines that
  // continue each other would be one) turning by less than tangent_angle_deg, short of the
  // fit's corners (join_corner_deg). Those smooth already are held only in chains that other
  // relations move.
  const double smooth = deg2rad(std::min(p.tangent_angle_deg, p.join_corner_deg));
  std::vector<Tangent> held;
  for (const ChainRef& ch : chains) {
    const size_t n = ch.prims.size();
    if (prims[ch.prims.front()].shape.type == PrimType::circle) continue;
    for (size_t k = 0; k + (ch.closed ? 0 : 1) < n; ++k) {
      int a = ch.prims[k], b = ch.prims[(k + 1) % n];
      if (a == b) continue;
      const Shape &sa = prims[a].shape, &sb = prims[b].shape;
      if (sa.type == PrimType::line && sb.type == PrimType::line) continue;
      double t = kink(sa, sb);
      if (t < smooth) (t > kExactRad ? rel.tangents : held).push_back({a, b, 1, 0});
    }
  }
  // Free ends of open chains that (nearly) meet but are not one point yet.
  std::vector<int> ends;
  for (int c = 0; c < static_cast<int>(chains.size()); ++c) {
    const ChainRef& ch = chains[c];
    if (ch.closed || prims[ch.prims.front()].shape.type == PrimType::circle) continue;
    if (!ch.pin_start) ends.push_back(2 * c);
    if (!ch.pin_end) ends.push_back(2 * c + 1);
  }
  auto end_at = [&](int e) { return chain_end(prims, chains[e / 2], e % 2); };
  rel.ends = cluster(ends, [&](int seed, int e) {
    double d = dist(end_at(seed), end_at(e));
    return d <= tol && d > 0 && !(e / 2 == seed / 2 && chains[e / 2].prims.size() < 2);
  });
  std::vector<int> chain_of(prims.size(), -1);
  for (size_t c = 0; c < chains.size(); ++c)
    for (int i : chains[c].prims) chain_of[i] = static_cast<int>(c);
  std::set<int> moving;
  for (const Family& f : rel.families)
    for (auto [i, q] : f.lines) moving.insert(chain_of[i]);
  for (const auto* groups : {&rel.radii, &rel.centres})
    for (const Group& g : *groups)
      for (int i : g.members) moving.insert(chain_of[i]);
  for (const Collinear& c : rel.collinear)
    for (int i : c.members) moving.insert(chain_of[i]);
  for (const Tangent& t : rel.tangents) moving.insert(chain_of[t.a]);
  for (const Group& g : rel.ends)
    for (int e : g.members) moving.insert(e / 2);
  for (const Tangent& t : held)
    if (moving.count(chain_of[t.a])) rel.tangents.push_back(t);
  return rel;
}

// ---------------------------------------------------------------------------------------
// The least-squares model: unknowns and residual blocks.

struct Joint {
  int slot = -1;  // first of two unknowns, or -1 when fixed
  Vec2 fixed;
  Vec2 original;
};

struct PieceVars {
  int j0 = -1, j1 = -1;  // joints (lines and arcs)
  int bulge = -1;        // arcs
  int circle = -1;       // circles: cx, cy, r
};

struct Block {
  std::vector<int> vars;  // unknowns it depends on
  int rows = 0;
  std::function<void(const std::vector<double>&, double*)> eval;
};

class Model {
 public:
  Model(const std::vector<Primitive>& prims, const std::vector<ChainRef>& chains,
        const Relations& rel)
      : prims_(prims), piece_(prims.size()) {
    std::vector<bool> related(prims.size(), false), chain_ends_related(chains.size(), false);
    for (const auto& f : rel.families)
      for (auto [i, q] : f.lines) related[i] = true;
    for (const auto& groups : {rel.radii, rel.centres})
      for (const auto& g : groups)
        for (int i : g.members) related[i] = true;
    for (const auto& c : rel.collinear)
      for (int i : c.members) related[i] = true;
    for (const auto& t : rel.tangents) related[t.a] = related[t.b] = true;
    for (const auto& m : rel.mirrors)
      for (auto [a, b] : m.pairs) related[a] = related[b] = true;
    for (const auto& g : rel.ends)
      for (int e : g.members) chain_ends_related[e / 2] = true;
    // Unknowns of every chain with a related primitive or end.
    std::vector<std::array<int, 2>> end_joint(chains.size(), {-1, -1});
    for (size_t c = 0; c < chains.size(); ++c) {
      const ChainRef& ch = chains[c];
      bool any = chain_ends_related[c] ||
                 std::any_of(ch.prims.begin(), ch.prims.end(), [&](int i) { return related[i]; });
      if (!any) continue;
      included_.insert(included_.end(), ch.prims.begin(), ch.prims.end());
      if (prims[ch.prims.front()].shape.type == PrimType::circle) {
        const Shape& s = prims[ch.prims.front()].shape;
        piece_[ch.prims.front()].circle = add({s.center.x, s.center.y, s.radius});
        continue;
      }
      const size_t n = ch.prims.size();
      std::vector<int> joint(n + 1);
      for (size_t k = 0; k <= n; ++k) {
        if (ch.closed && k == n) {
          joint[k] = joint[0];
          break;
        }
        Vec2 at = k < n ? prims[ch.prims[k]].shape.p0 : prims[ch.prims[n - 1]].shape.p1;
        bool pinned = (k == 0 && ch.pin_start) || (k == n && ch.pin_end);
        joint[k] = static_cast<int>(joints_.size());
        joints_.push_back({pinned ? -1 : add({at.x, at.y}), at, at});
      }
      end_joint[c] = {joint[0], joint[n]};
      for (size_t k = 0; k < n; ++k) {
        PieceVars& v = piece_[ch.prims[k]];
        v.j0 = joint[k];
        v.j1 = joint[k + 1];
        if (prims[ch.prims[k]].shape.type == PrimType::arc)
          v.bulge = add({prims[ch.prims[k]].shape.bulge});
      }
    }
    // Coincident free ends share the first one's unknowns, placed at their mean.
    for (const auto& g : rel.ends) {
      Joint& keep = joints_[end_joint[g.members[0] / 2][g.members[0] % 2]];
      Vec2 mean;
      for (int e : g.members) mean = mean + joints_[end_joint[e / 2][e % 2]].original;
      mean = mean / static_cast<double>(g.members.size());
      x_[keep.slot] = mean.x;
      x_[keep.slot + 1] = mean.y;
      for (size_t m = 1; m < g.members.size(); ++m) {
        int e = g.members[m];
        joints_[end_joint[e / 2][e % 2]].slot = keep.slot;
      }
    }
    add_data_blocks(chains);
    add_anchor_blocks();
    add_relation_blocks(rel);
  }

  const std::vector<int>& included() const { return included_; }

  Shape shape(int i, const std::vector<double>& x) const {
    const PieceVars& v = piece_[i];
    if (v.circle >= 0)
      return Shape::circle({x[v.circle], x[v.circle + 1]}, std::abs(x[v.circle + 2]));
    Vec2 a = joint(v.j0, x), b = joint(v.j1, x);
    if (v.bulge >= 0) return Shape::arc(a, b, x[v.bulge]);
    return Shape::line(a, b);
  }

  // Levenberg-Marquardt on the sparse normal equations, finite-difference Jacobian per block.
  // The damping is additive (Levenberg's lambda I): Marquardt's scaling by diag(J^T J) would
  // damp the stiff relation directions and crawl along the weakly anchored ones.
  std::vector<double> solve(int iterations = kIterations) const {
    std::vector<double> x = x_;
    double cost = cost_of(x), lambda = 1e-3;
    Normal eq = normal_pattern();
    // The sparsity pattern never changes (every pair of unknowns a block shares is stored), so
    // the fill-reducing ordering is computed once.
    Eigen::SimplicialLDLT<Eigen::SparseMatrix<double>> ldlt;
    ldlt.analyzePattern(eq.h);
    for (int it = 0; it < iterations; ++it) {
      linearize(x, eq);
      bool improved = false;
      while (lambda < 1e10 && !improved) {
        Eigen::SparseMatrix<double> a = eq.h;
        for (int k : eq.diagonal) a.valuePtr()[k] += lambda;
        ldlt.factorize(a);
        if (ldlt.info() != Eigen::Success) {
          lambda *= 10;
          continue;
        }
        Eigen::VectorXd step = ldlt.solve(-eq.g);
        std::vector<double> next = x;
        for (size_t k = 0; k < next.size(); ++k) next[k] += step(k);
        double next_cost = cost_of(next);
        if (std::isfinite(next_cost) && next_cost < cost) {
          improved = true;
          bool converged = step.norm() < 1e-4 || cost - next_cost < 1e-6 * cost;
          x = std::move(next);
          cost = next_cost;
          lambda = std::max(lambda / 10, 1e-12);
          if (converged) return x;
        } else {
          lambda *= 10;
        }
      }
      if (!improved) break;
    }
    return x;
  }

 private:
  int add(std::initializer_list<double> values) {
    int slot = static_cast<int>(x_.size());
    x_.insert(x_.end(), values);
    return slot;
  }

  Vec2 joint(int j, const std::vector<double>& x) const {
    const Joint& jt = joints_[j];
    return jt.slot < 0 ? jt.fixed : Vec2{x[jt.slot], x[jt.slot + 1]};
  }

  std::vector<int> vars_of(int i) const {
    const PieceVars& v = piece_[i];
    std::vector<int> out;
    if (v.circle >= 0) return {v.circle, v.circle + 1, v.circle + 2};
    for (int j : {v.j0, v.j1})
      if (joints_[j].slot >= 0) out.insert(out.end(), {joints_[j].slot, joints_[j].slot + 1});
    if (v.bulge >= 0) out.push_back(v.bulge);
    std::sort(out.begin(), out.end());
    out.erase(std::unique(out.begin(), out.end()), out.end());
    return out;
  }

  // Data: each piece's distance to a sample of its points (signed; to the full line or circle).
  void add_data_blocks(const std::vector<ChainRef>& chains) {
    for (const ChainRef& ch : chains)
      for (int i : ch.prims) {
        if (std::find(included_.begin(), included_.end(), i) == included_.end()) continue;
        Polyline all = span_points(prims_[i], *ch.points);
        size_t m = std::min(all.size(), kDataPointsPerPiece);
        Polyline sample;
        for (size_t k = 0; k < m; ++k)
          sample.push_back(all[m == 1 ? 0 : k * (all.size() - 1) / (m - 1)]);
        blocks_.push_back({vars_of(i), static_cast<int>(m),
                           [this, i, sample](const std::vector<double>& x, double* out) {
                             Shape s = shape(i, x);
                             bool straight = s.type == PrimType::line || !std::isfinite(s.radius);
                             Vec2 u = unit(s.p1 - s.p0);
                             for (size_t k = 0; k < sample.size(); ++k)
                               out[k] = straight ? cross(u, sample[k] - s.p0)
                                                 : norm(sample[k] - s.center) - s.radius;
                           }});
      }
  }

  void add_anchor_blocks() {
    std::vector<int> seen;
    for (const Joint& j : joints_) {
      if (j.slot < 0 || std::find(seen.begin(), seen.end(), j.slot) != seen.end()) continue;
      seen.push_back(j.slot);
      int slot = j.slot;
      Vec2 at{x_[slot], x_[slot + 1]};
      blocks_.push_back(
          {{slot, slot + 1}, 2, [slot, at](const std::vector<double>& x, double* out) {
             out[0] = kAnchorWeight * (x[slot] - at.x);
             out[1] = kAnchorWeight * (x[slot + 1] - at.y);
           }});
    }
  }

  void add_relation_blocks(const Relations& rel) {
    for (const Family& f : rel.families) {
      int angle = f.fixed ? -1 : add({f.angle});
      const double given = f.angle;
      const bool angular = f.angular;
      for (const auto& line : f.lines) {
        const int i = line.first, quarter = line.second;  // named, not bound: clang 14 captures no binding
        auto vars = vars_of(i);
        if (angle >= 0) vars.push_back(angle);
        double scale = kRelationWeight * prims_[i].shape.length();
        double turn = quarter * kPi / 2;
        blocks_.push_back({vars, 1,
                           [this, i, angle, given, scale, turn, angular](const std::vector<double>& x, double* out) {
                             Shape s = shape(i, x);
                             double a = (angle >= 0 ? x[angle] : given) + turn;
                             out[0] = angular ? scale * wrap_half_turn(angle_of(s.p1 - s.p0) - a)
                                              : scale * cross(unit(s.p1 - s.p0), from_angle(a));
                           }});
      }
    }
    for (const Collinear& c : rel.collinear) {
      const Shape& first = prims_[c.members[0]].shape;
      double a0 = c.angle ? *c.angle : angle_of(first.p1 - first.p0);
      int angle = c.angle ? -1 : add({a0});
      int offset = add({dot(perp(from_angle(a0)), (first.p0 + first.p1) * 0.5)});
      for (int i : c.members) {
        auto vars = vars_of(i);
        if (angle >= 0) vars.push_back(angle);
        vars.push_back(offset);
        blocks_.push_back({vars, 2, [this, i, angle, a0, offset](const std::vector<double>& x, double* out) {
                             Shape s = shape(i, x);
                             Vec2 n = perp(from_angle(angle >= 0 ? x[angle] : a0));
                             out[0] = kRelationWeight * (dot(n, s.p0) - x[offset]);
                             out[1] = kRelationWeight * (dot(n, s.p1) - x[offset]);
                           }});
      }
    }
    for (const Tangent& t : rel.tangents) {
      auto vars = vars_of(t.a);
      for (int v : vars_of(t.b)) vars.push_back(v);
      std::sort(vars.begin(), vars.end());
      vars.erase(std::unique(vars.begin(), vars.end()), vars.end());
      blocks_.push_back({vars, 1, [this, t](const std::vector<double>& x, double* out) {
                           Shape a = shape(t.a, x), b = shape(t.b, x);
                           if (t.end_a < 0) {  // line a tangent to the round b
                             double d = std::abs(cross(unit(a.p1 - a.p0), b.center - a.p0));
                             out[0] = kRelationWeight * (d - b.radius);
                             return;
                           }
                           // Directions leaving the joint along each primitive: opposite when smooth.
                           Vec2 ua = t.end_a == 0 ? a.start_tangent() : -a.end_tangent();
                           Vec2 ub = t.end_b == 0 ? b.start_tangent() : -b.end_tangent();
                           out[0] = kRelationWeight * kTangentScalePx * cross(ua, ub);
                         }});
    }
    for (const Mirror& m : rel.mirrors) add_mirror_blocks(m);
    for (const Group& g : rel.radii) {
      double mean = 0;
      for (int i : g.members) mean += prims_[i].shape.radius / g.members.size();
      int radius = add({mean});
      for (int i : g.members) {
        auto vars = vars_of(i);
        vars.push_back(radius);
        blocks_.push_back({vars, 1, [this, i, radius](const std::vector<double>& x, double* out) {
                             out[0] = kRelationWeight * (shape(i, x).radius - x[radius]);
                           }});
      }
    }
    for (const Group& g : rel.centres) {
      Vec2 mean;
      for (int i : g.members)
        mean = mean + prims_[i].shape.center / static_cast<double>(g.members.size());
      if (g.fixed) mean = *g.fixed;
      int centre = g.fixed ? -1 : add({mean.x, mean.y});
      for (int i : g.members) {
        auto vars = vars_of(i);
        if (centre >= 0) vars.insert(vars.end(), {centre, centre + 1});
        blocks_.push_back({vars, 2, [this, i, centre, mean](const std::vector<double>& x, double* out) {
                             Vec2 c = shape(i, x).center;
                             Vec2 at = centre >= 0 ? Vec2{x[centre], x[centre + 1]} : mean;
                             out[0] = kRelationWeight * (c.x - at.x);
                             out[1] = kRelationWeight * (c.y - at.y);
                           }});
      }
    }
  }

  // A point of a shape a mirror relation pairs: 0 start, 1 end, 2 middle, 3 centre.
  static Vec2 feature(const Shape& s, int which) {
    switch (which) {
      case 0: return s.p0;
      case 1: return s.p1;
      case 2: return s.at(0.5);
      default: return s.center;
    }
  }

  static Vec2 reflect(Vec2 q, double angle, double offset) {
    Vec2 n = from_angle(angle);  // the axis' normal; the axis is {q : n.q = offset}
    return q - n * (2 * (dot(n, q) - offset));
  }

  // Mirror: the axis (normal angle, offset) solved unless given; each pair's features
  // reflected onto their partners (matched by nearness at the start), circles also by radius.
  void add_mirror_blocks(const Mirror& m) {
    double angle0 = 0, offset0 = 0;
    if (m.axis) {
      Vec2 d = unit(m.axis->second - m.axis->first);
      angle0 = angle_of(perp(d));
      offset0 = dot(from_angle(angle0), m.axis->first);
    } else {
      auto [a, b] = m.pairs.front();
      const Shape &sa = prims_[a].shape, &sb = prims_[b].shape;
      Vec2 ca = sa.type == PrimType::circle ? sa.center : sa.at(0.5);
      Vec2 cb = sb.type == PrimType::circle ? sb.center : sb.at(0.5);
      Vec2 n = a == b ? unit(sa.p1 - sa.p0) : unit(cb - ca);
      angle0 = angle_of(n);
      offset0 = a == b ? dot(n, (sa.p0 + sa.p1) * 0.5) : dot(n, (ca + cb) * 0.5);
    }
    const int axis = m.axis ? -1 : add({angle0, offset0});
    mirror_axes_.push_back(axis);
    for (const auto& pair : m.pairs) {
      const int a = pair.first, b = pair.second;  // named, not bound: clang 14 captures no binding
      const Shape &sa = prims_[a].shape, &sb = prims_[b].shape;
      std::vector<std::pair<int, int>> match;  // (feature of a, feature of b)
      if (sa.type == PrimType::circle) {
        match = {{3, 3}};
      } else {
        auto miss = [&](int fa, int fb) {
          return dist(reflect(feature(sa, fa), angle0, offset0), feature(sb, fb));
        };
        // A primitive symmetric in itself maps its start onto its end; a pair matches ends by
        // nearness under the starting axis.
        bool straight = a != b && miss(0, 0) + miss(1, 1) <= miss(0, 1) + miss(1, 0);
        match = {{0, straight ? 0 : 1}, {1, straight ? 1 : 0}};
        if (sa.type == PrimType::arc) match.push_back({2, 2});
      }
      auto vars = vars_of(a);
      for (int v : vars_of(b)) vars.push_back(v);
      if (axis >= 0) vars.insert(vars.end(), {axis, axis + 1});
      std::sort(vars.begin(), vars.end());
      vars.erase(std::unique(vars.begin(), vars.end()), vars.end());
      const bool round = sa.type == PrimType::circle;
      const int rows = 2 * static_cast<int>(match.size()) + (round && a != b ? 1 : 0);
      blocks_.push_back({vars, rows,
                         [this, a, b, match, axis, angle0, offset0, round](const std::vector<double>& x,
                                                                           double* out) {
                           Shape u = shape(a, x), v = shape(b, x);
                           double an = axis >= 0 ? x[axis] : angle0, off = axis >= 0 ? x[axis + 1] : offset0;
                           int k = 0;
                           for (auto [fa, fb] : match) {
                             Vec2 d = reflect(feature(u, fa), an, off) - feature(v, fb);
                             out[k++] = kRelationWeight * d.x;
                             out[k++] = kRelationWeight * d.y;
                           }
                           if (round && a != b) out[k++] = kRelationWeight * (u.radius - v.radius);
                         }});
    }
  }

 public:
  // The solved axis of the k-th mirror relation: (normal angle, offset), or nullopt when given.
  std::optional<std::pair<double, double>> mirror_axis(size_t k, const std::vector<double>& x) const {
    if (k >= mirror_axes_.size() || mirror_axes_[k] < 0) return std::nullopt;
    return std::make_pair(x[mirror_axes_[k]], x[mirror_axes_[k] + 1]);
  }

 private:

  double cost_of(const std::vector<double>& x) const {
    double cost = 0;
    std::vector<double> out;
    for (const Block& b : blocks_) {
      out.assign(b.rows, 0.0);
      b.eval(x, out.data());
      for (double v : out) cost += v * v;
    }
    return cost;
  }

  // The normal equations J^T J and J^T r of the residuals, never forming J: each block adds
  // the products of its own columns. h holds every pair of unknowns that some block shares, and
  // the diagonal; slots[b] are the places in h.valuePtr() of block b's pairs (p, q), q >= p,
  // in the lower triangle, which `upper` copies to the upper one.
  struct Normal {
    Eigen::SparseMatrix<double> h;
    Eigen::VectorXd g;
    std::vector<std::vector<int>> slots;
    std::vector<int> diagonal;
    std::vector<std::pair<int, int>> upper;  // (lower slot, its mirror)
  };

  Normal normal_pattern() const {
    const int n = static_cast<int>(x_.size());
    std::vector<Eigen::Triplet<double>> pairs;
    for (int v = 0; v < n; ++v) pairs.emplace_back(v, v, 0.0);
    for (const Block& b : blocks_)
      for (int p : b.vars)
        for (int q : b.vars) pairs.emplace_back(p, q, 0.0);
    Normal eq;
    eq.h.resize(n, n);
    eq.h.setFromTriplets(pairs.begin(), pairs.end());
    eq.h.makeCompressed();
    const int *outer = eq.h.outerIndexPtr(), *inner = eq.h.innerIndexPtr();
    auto slot = [&](int row, int col) {
      return static_cast<int>(std::lower_bound(inner + outer[col], inner + outer[col + 1], row) - inner);
    };
    for (int v = 0; v < n; ++v) eq.diagonal.push_back(slot(v, v));
    for (int col = 0; col < n; ++col)
      for (int k = outer[col]; k < outer[col + 1]; ++k)
        if (inner[k] > col) eq.upper.emplace_back(k, slot(col, inner[k]));
    for (const Block& b : blocks_) {
      std::vector<int>& s = eq.slots.emplace_back();
      for (size_t p = 0; p < b.vars.size(); ++p)
        for (size_t q = p; q < b.vars.size(); ++q)
          s.push_back(slot(std::max(b.vars[p], b.vars[q]), std::min(b.vars[p], b.vars[q])));
    }
    eq.g.resize(n);
    return eq;
  }

  // J by central differences (the relation residuals are stiff, and one-sided differences are
  // not accurate enough for Gauss-Newton to converge quickly), block by block in the order of
  // the rows, so that each sum adds its terms in the order of J's rows, as Eigen's products of
  // the whole J did.
  void linearize(const std::vector<double>& x0, Normal& eq) const {
    constexpr double h = 1e-5;
    double* values = eq.h.valuePtr();
    std::fill(values, values + eq.h.nonZeros(), 0.0);
    eq.g.setZero();
    std::vector<double> x = x0, r, ahead, behind, jac;  // jac: the block's columns, one after another
    for (size_t bi = 0; bi < blocks_.size(); ++bi) {
      const Block& b = blocks_[bi];
      const size_t nv = b.vars.size(), rows = static_cast<size_t>(b.rows);
      r.assign(rows, 0.0);
      b.eval(x, r.data());
      jac.resize(nv * rows);
      for (size_t c = 0; c < nv; ++c) {
        const int v = b.vars[c];
        ahead.assign(rows, 0.0);
        behind.assign(rows, 0.0);
        x[v] = x0[v] + h;
        b.eval(x, ahead.data());
        x[v] = x0[v] - h;
        b.eval(x, behind.data());
        x[v] = x0[v];
        for (size_t k = 0; k < rows; ++k) jac[c * rows + k] = (ahead[k] - behind[k]) / (2 * h);
      }
      for (size_t k = 0; k < rows; ++k) {
        const int* slot = eq.slots[bi].data();
        for (size_t p = 0; p < nv; ++p) {
          const double jp = jac[p * rows + k];
          eq.g(b.vars[p]) += jp * r[k];
          for (size_t q = p; q < nv; ++q) values[*slot++] += jp * jac[q * rows + k];
        }
      }
    }
    // J^T J is symmetric, term by term: the upper triangle's sums are the lower one's.
    for (auto [lower, mirror] : eq.upper) values[mirror] = values[lower];
  }

  const std::vector<Primitive>& prims_;
  std::vector<PieceVars> piece_;
  std::vector<Joint> joints_;
  std::vector<double> x_;
  std::vector<Block> blocks_;
  std::vector<int> included_;
  std::vector<int> mirror_axes_;
};

// ---------------------------------------------------------------------------------------
// Memberships: one primitive's (or chain end's) part in one relation, the unit a
// contradiction or a tolerance breach drops.

enum class Part { family, radius, centre, collinear, tangent, ends };

struct Membership {
  Part part;
  size_t group;  // index into the relations of its kind
  int member;    // primitive (family line, radius, centre, collinear), chain end (ends); tangent: -
};

std::vector<Membership> memberships(const Relations& rel) {
  std::vector<Membership> out;
  for (size_t g = 0; g < rel.families.size(); ++g)
    for (auto [i, q] : rel.families[g].lines) out.push_back({Part::family, g, i});
  for (size_t g = 0; g < rel.radii.size(); ++g)
    for (int i : rel.radii[g].members) out.push_back({Part::radius, g, i});
  for (size_t g = 0; g < rel.centres.size(); ++g)
    for (int i : rel.centres[g].members) out.push_back({Part::centre, g, i});
  for (size_t g = 0; g < rel.collinear.size(); ++g)
    for (int i : rel.collinear[g].members) out.push_back({Part::collinear, g, i});
  for (size_t g = 0; g < rel.tangents.size(); ++g) out.push_back({Part::tangent, g, -1});
  for (size_t g = 0; g < rel.ends.size(); ++g)
    for (int e : rel.ends[g].members) out.push_back({Part::ends, g, e});
  return out;
}

int end_prim(const std::vector<ChainRef>& chains, int e) {
  const auto& c = chains[e / 2].prims;
  return e % 2 == 0 ? c.front() : c.back();
}

// The axis kind of a line of a family whose angle is given: horizontal or vertical.
RelationKind axis_kind(const Family& f, int quarter) {
  int k = static_cast<int>(std::lround(f.angle / (kPi / 2)));
  return ((k + quarter) % 2 + 2) % 2 == 0 ? RelationKind::horizontal : RelationKind::vertical;
}

// A relation as recorded: its kind and primitives (the reference first).
struct Described {
  RelationKind kind = RelationKind::parallel;
  std::vector<int> prims;
  bool operator<(const Described& o) const {
    return std::tie(kind, prims) < std::tie(o.kind, o.prims);
  }
};

// The relation a membership stands for: the member with the first other member of its
// relation (the reference of the residual).
Described describe(const Relations& rel, const Membership& m, const std::vector<ChainRef>& chains) {
  auto other = [&](const std::vector<int>& members) {
    for (int j : members)
      if (j != m.member) return j;
    return m.member;
  };
  switch (m.part) {
    case Part::family: {
      const Family& f = rel.families[m.group];
      int q = 0;
      std::vector<int> same, across;
      for (auto [i, qi] : f.lines)
        if (i == m.member) q = qi;
      for (auto [i, qi] : f.lines)
        if (i != m.member) (qi == q ? same : across).push_back(i);
      if (f.fixed) return {axis_kind(f, q), {m.member}};
      if (!same.empty()) return {RelationKind::parallel, {same[0], m.member}};
      return {RelationKind::perpendicular, {across.empty() ? m.member : across[0], m.member}};
    }
    case Part::radius: return {RelationKind::equal_radius, {other(rel.radii[m.group].members), m.member}};
    case Part::centre: return {RelationKind::concentric, {other(rel.centres[m.group].members), m.member}};
    case Part::collinear: return {RelationKind::collinear, {other(rel.collinear[m.group].members), m.member}};
    case Part::tangent: {
      const Tangent& t = rel.tangents[m.group];
      return {RelationKind::tangent_continuity, {t.a, t.b}};
    }
    case Part::ends: {
      const auto& g = rel.ends[m.group].members;
      int o = g[0] == m.member && g.size() > 1 ? g[1] : g[0];
      return {RelationKind::coincident, {end_prim(chains, o), end_prim(chains, m.member)}};
    }
  }
  return {};
}

// How far a described relation is from holding on the given shapes (degrees for the angular
// kinds, pixels otherwise).
double residual_of(const Described& d, const std::vector<Primitive>& prims) {
  auto sh = [&](int i) -> const Shape& { return prims[i].shape; };
  auto dir = [&](int i) { return angle_of(sh(i).p1 - sh(i).p0); };
  const int a = d.prims.front(), b = d.prims.back();
  if (d.kind == RelationKind::horizontal) return rad2deg(std::abs(wrap_half_turn(dir(b))));
  if (d.kind == RelationKind::vertical) return rad2deg(std::abs(wrap_half_turn(dir(b) - kPi / 2)));
  if (d.kind == RelationKind::parallel) return rad2deg(std::abs(wrap_half_turn(dir(b) - dir(a))));
  if (d.kind == RelationKind::perpendicular)
    return rad2deg(std::abs(std::abs(wrap_half_turn(dir(b) - dir(a))) - kPi / 2));
  if (d.kind == RelationKind::tangent_continuity) return rad2deg(kink(sh(a), sh(b)));
  if (d.kind == RelationKind::equal_radius) return std::abs(sh(a).radius - sh(b).radius);
  if (d.kind == RelationKind::concentric) return dist(sh(a).center, sh(b).center);
  if (d.kind == RelationKind::collinear) {
    Vec2 u = unit(sh(a).p1 - sh(a).p0);
    return std::max(std::abs(cross(u, sh(b).p0 - sh(a).p0)), std::abs(cross(u, sh(b).p1 - sh(a).p0)));
  }
  if (d.kind == RelationKind::coincident) {
    double best = INFINITY;
    for (Vec2 u : {sh(a).p0, sh(a).p1})
      for (Vec2 v : {sh(b).p0, sh(b).p1}) best = std::min(best, dist(u, v));
    return best;
  }
  return 0;
}

// A residual as a multiple of its threshold (above 1: the relation does not hold).
double excess(const Described& d, const std::vector<Primitive>& prims) {
  return residual_of(d, prims) / (is_angular(d.kind) ? kEnforceMaxDeg : kEnforceMaxPx);
}

bool involves(const Relations& rel, const Membership& m, int i, const std::vector<ChainRef>& chains) {
  if (m.part == Part::tangent) return rel.tangents[m.group].a == i || rel.tangents[m.group].b == i;
  if (m.part == Part::ends) {
    const auto& c = chains[m.member / 2].prims;
    return std::find(c.begin(), c.end(), i) != c.end();
  }
  return m.member == i;
}

void remove_membership(Relations& rel, const Membership& m) {
  switch (m.part) {
    case Part::family: {
      Family& f = rel.families[m.group];
      std::erase_if(f.lines, [&](auto l) { return l.first == m.member; });
      if (f.lines.size() < (f.fixed ? 1u : 2u)) rel.families.erase(rel.families.begin() + m.group);
      break;
    }
    case Part::radius:
    case Part::centre:
    case Part::ends: {
      auto& groups = m.part == Part::radius ? rel.radii : m.part == Part::centre ? rel.centres : rel.ends;
      std::erase(groups[m.group].members, m.member);
      if (groups[m.group].members.size() < 2) groups.erase(groups.begin() + m.group);
      break;
    }
    case Part::collinear: {
      std::erase(rel.collinear[m.group].members, m.member);
      if (rel.collinear[m.group].members.size() < 2) rel.collinear.erase(rel.collinear.begin() + m.group);
      break;
    }
    case Part::tangent: rel.tangents.erase(rel.tangents.begin() + m.group); break;
  }
}

void remove_primitive(Relations& rel, int i, const std::vector<ChainRef>& chains) {
  for (Family& f : rel.families) std::erase_if(f.lines, [&](auto l) { return l.first == i; });
  std::erase_if(rel.families, [](const Family& f) { return f.lines.size() < (f.fixed ? 1u : 2u); });
  for (auto* groups : {&rel.radii, &rel.centres}) {
    for (Group& g : *groups) std::erase(g.members, i);
    std::erase_if(*groups, [](const Group& g) { return g.members.size() < 2; });
  }
  for (Collinear& c : rel.collinear) std::erase(c.members, i);
  std::erase_if(rel.collinear, [](const Collinear& c) { return c.members.size() < 2; });
  std::erase_if(rel.tangents, [&](const Tangent& t) { return t.a == i || t.b == i; });
  for (Group& g : rel.ends)
    std::erase_if(g.members, [&](int e) {
      const auto& c = chains[e / 2].prims;
      return std::find(c.begin(), c.end(), i) != c.end();
    });
  std::erase_if(rel.ends, [](const Group& g) { return g.members.size() < 2; });
}

bool in_relation(const Relations& rel, int i, const std::vector<ChainRef>& chains) {
  for (const Membership& m : memberships(rel))
    if (involves(rel, m, i, chains)) return true;
  return false;
}

json ids_of(const std::vector<Primitive>& prims, const std::vector<int>& members) {
  json ids = json::array();
  for (int i : members) ids.push_back(prims[i].id);
  return ids;
}

std::string id_list(const std::vector<Primitive>& prims, const std::vector<int>& members) {
  std::string out;
  for (int i : members) {
    if (!out.empty()) out += ',';
    out += prims[i].id;
  }
  return out;
}

json residual_field(RelationKind kind, double v) {
  return {{is_angular(kind) ? "residual_deg" : "residual_px", round_to(v, 1e-6)}};
}

json records(const std::vector<Primitive>& prims, const std::vector<ChainRef>& chains,
             const Relations& rel) {
  json out = json::array();
  auto push = [&](RelationKind kind, const std::vector<int>& members, double residual) {
    json r = {{"kind", relation_kind_name(kind)}, {"primitives", ids_of(prims, members)}, {"status", "enforced"}};
    r.update(residual_field(kind, residual));
    out.push_back(r);
  };
  auto worst = [&](RelationKind kind, const std::vector<int>& members) {
    double w = 0;
    for (size_t k = 1; k < members.size(); ++k)
      w = std::max(w, residual_of({kind, {members[0], members[k]}}, prims));
    return w;
  };
  for (const Family& f : rel.families) {
    std::vector<int> quarter[2];
    for (auto [i, q] : f.lines) quarter[q].push_back(i);
    if (f.fixed)
      for (int q : {0, 1})
        if (!quarter[q].empty()) {
          double w = 0;
          for (int i : quarter[q]) w = std::max(w, residual_of({axis_kind(f, q), {i}}, prims));
          push(axis_kind(f, q), quarter[q], w);
        }
    for (const auto& lines : quarter)
      if (lines.size() >= 2) push(RelationKind::parallel, lines, worst(RelationKind::parallel, lines));
    if (!quarter[0].empty() && !quarter[1].empty()) {
      std::vector<int> pair{quarter[0][0], quarter[1][0]};  // the longest of each direction
      push(RelationKind::perpendicular, pair, worst(RelationKind::perpendicular, pair));
    }
  }
  for (const Collinear& c : rel.collinear) push(RelationKind::collinear, c.members, worst(RelationKind::collinear, c.members));
  for (const Tangent& t : rel.tangents) push(RelationKind::tangent_continuity, {t.a, t.b}, worst(RelationKind::tangent_continuity, {t.a, t.b}));
  for (const Group& g : rel.radii) {
    auto [lo, hi] = std::minmax_element(g.members.begin(), g.members.end(), [&](int a, int b) {
      return prims[a].shape.radius < prims[b].shape.radius;
    });
    push(RelationKind::equal_radius, g.members, prims[*hi].shape.radius - prims[*lo].shape.radius);
  }
  for (const Group& g : rel.centres) push(RelationKind::concentric, g.members, worst(RelationKind::concentric, g.members));
  for (const Group& g : rel.ends) {
    std::vector<int> members;
    double w = 0;
    Vec2 first = chain_end(prims, chains[g.members[0] / 2], g.members[0] % 2);
    for (int e : g.members) {
      members.push_back(end_prim(chains, e));
      w = std::max(w, dist(chain_end(prims, chains[e / 2], e % 2), first));
    }
    push(RelationKind::coincident, members, w);
  }
  return out;
}

// The relations dropped so far, each once, with the reason it was dropped.
class Dropped {
 public:
  void add(const Described& d, const std::string& reason) {
    if (seen_.insert(d).second) list_.push_back({d, reason});
  }
  void append_to(json& out, const std::vector<Primitive>& prims) const {
    for (const auto& [d, reason] : list_) {
      json r = {{"kind", relation_kind_name(d.kind)}, {"primitives", ids_of(prims, d.prims)}, {"status", "dropped"},
                {"reason", reason}};
      r.update(residual_field(d.kind, residual_of(d, prims)));
      out.push_back(r);
    }
  }

 private:
  std::set<Described> seen_;
  std::vector<std::pair<Described, std::string>> list_;
};

}  // namespace

json beautify(std::vector<Primitive>& prims, const std::vector<ChainRef>& chains,
              const FitParams& p) {
  Relations rel = detect(prims, chains, p);
  std::vector<int> chain_of(prims.size(), -1);
  for (size_t c = 0; c < chains.size(); ++c)
    for (int i : chains[c].prims) chain_of[i] = static_cast<int>(c);
  Dropped dropped;
  for (int round = 0; round < kRounds && !rel.empty(); ++round) {
    Model model(prims, chains, rel);
    std::vector<double> x = model.solve();
    std::vector<Primitive> next = prims;
    std::vector<std::pair<int, double>> outside;  // primitive, its farthest point
    for (int i : model.included()) {
      next[i].shape = model.shape(i, x);
      auto d = deviation(next[i].shape, span_points(prims[i], *chains[chain_of[i]].points));
      next[i].fit_rms_px = d.rms;
      next[i].fit_max_px = d.max;
      bool finite = std::isfinite(d.max) &&
                    (next[i].shape.type != PrimType::arc || std::isfinite(next[i].shape.radius));
      if (!finite || d.max > p.tolerance_px * (1 + 1e-9)) outside.push_back({i, d.max});
    }
    const auto all = memberships(rel);
    if (outside.empty()) {
      // Every primitive within tolerance: the relations must also hold, else the one furthest
      // from holding contradicts the others and goes.
      size_t worst = 0;
      double worst_excess = 0;
      std::vector<double> ex(all.size());
      for (size_t k = 0; k < all.size(); ++k) {
        ex[k] = excess(describe(rel, all[k], chains), next);
        if (ex[k] > worst_excess) worst_excess = ex[k], worst = k;
      }
      if (worst_excess <= 1) {
        prims = std::move(next);
        json out = records(prims, chains, rel);
        dropped.append_to(out, prims);
        return out;
      }
      Described d = describe(rel, all[worst], chains);
      // What it contradicts: another relation of its primitives, one that does not hold first.
      std::optional<Described> against;
      double against_excess = -1;
      for (size_t k = 0; k < all.size(); ++k) {
        Described o = describe(rel, all[k], chains);
        if (o.kind == d.kind && std::set<int>(o.prims.begin(), o.prims.end()) ==
                                    std::set<int>(d.prims.begin(), d.prims.end()))
          continue;
        bool shares = std::any_of(d.prims.begin(), d.prims.end(),
                                  [&](int i) { return involves(rel, all[k], i, chains); });
        if (shares && ex[k] > against_excess) against = o, against_excess = ex[k];
      }
      dropped.add(d, against ? fmt::format("contradicts {} {}", relation_kind_name(against->kind), id_list(prims, against->prims))
                             : fmt::format("stays {:.3g} {} from holding", residual_of(d, next),
                                           is_angular(d.kind) ? "deg" : "px"));
      remove_membership(rel, all[worst]);
      continue;
    }
    // A primitive outside tolerance leaves its relations; one in none was pushed out by
    // its chain's related primitives, which leave theirs.
    for (auto [i, max_px] : outside) {
      std::string reason = fmt::format("would move {} {:.2f} px off its ink (tolerance {:.2f})",
                                       prims[i].id, max_px, p.tolerance_px);
      std::vector<int> leaving{i};
      if (!in_relation(rel, i, chains)) leaving = chains[chain_of[i]].prims;
      for (int j : leaving) {
        for (const Membership& m : memberships(rel))
          if (involves(rel, m, j, chains)) dropped.add(describe(rel, m, chains), reason);
        remove_primitive(rel, j, chains);
      }
    }
  }
  // Unsettled: nothing is enforced.
  for (const Membership& m : memberships(rel))
    dropped.add(describe(rel, m, chains), "the solve did not settle");
  json out = json::array();
  dropped.append_to(out, prims);
  return out;
}


namespace {

// An arc the solver flattened is a line (a bulge of zero has no centre).
Shape sanitized(Shape s) {
  if (s.type == PrimType::arc && (std::abs(s.bulge) < 1e-9 || !std::isfinite(s.radius)))
    return Shape::line(s.p0, s.p1);
  return s;
}

bool finite_shape(const Shape& s) {
  auto ok = [](Vec2 v) { return std::isfinite(v.x) && std::isfinite(v.y); };
  if (s.type == PrimType::circle) return ok(s.center) && std::isfinite(s.radius) && s.radius > 1e-6;
  return ok(s.p0) && ok(s.p1) && dist(s.p0, s.p1) > 1e-6 && std::isfinite(s.bulge);
}

// The ends (0 = p0, 1 = p1) at which a and b meet, or (-1, -1).
std::pair<int, int> shared_ends(const Shape& a, const Shape& b, double eps) {
  if (a.type == PrimType::circle || b.type == PrimType::circle) return {-1, -1};
  std::pair<int, int> best{-1, -1};
  double best_d = eps;
  for (int ea : {0, 1})
    for (int eb : {0, 1}) {
      double d = dist(ea ? a.p1 : a.p0, eb ? b.p1 : b.p0);
      if (d <= best_d) best_d = d, best = {ea, eb};
    }
  return best;
}

double line_dir(const Shape& s) { return angle_of(s.p1 - s.p0); }

bool is_round(const Shape& s) {
  return s.type == PrimType::circle || (s.type == PrimType::arc && std::isfinite(s.radius));
}


// The solver's relation for each spec (slot[k]: spec k's index among those of its kind), or false,
// the outcome saying why, for a spec the solver cannot take.
bool solver_relations(const std::vector<Primitive>& prims, const std::vector<RelationSpec>& specs, double joint_eps,
                      Relations& rel, std::vector<int>& slot, EnforceOutcome& out) {
  for (size_t k = 0; k < specs.size(); ++k) {
    const RelationSpec& r = specs[k];
    const auto& ids = r.prims;
    if (ids.empty()) continue;
    const RelationKind kind = r.kind;
    if (is_direction(kind)) {
      Family f;
      f.angular = true;
      f.fixed = kind == RelationKind::horizontal || kind == RelationKind::vertical || r.angle_rad.has_value();
      f.angle = kind == RelationKind::horizontal ? 0.0 : kind == RelationKind::vertical ? kPi / 2 : r.angle_rad ? *r.angle_rad : line_dir(prims[ids[0]].shape);
      for (size_t m = 0; m < ids.size(); ++m) f.lines.push_back({ids[m], kind == RelationKind::perpendicular && m > 0 ? 1 : 0});
      if (!f.fixed) {
        // Start from the lines' mean direction (doubled angles: modulo a half turn), or, when
        // they cancel out (a right angle from the goal), halfway, off the wrap-around.
        Vec2 sum;
        double weight = 0;
        for (auto [i, q] : f.lines) {
          double L = prims[i].shape.length();
          sum = sum + from_angle(2 * (line_dir(prims[i].shape) - q * kPi / 2)) * L;
          weight += L;
        }
        f.angle = norm(sum) > 0.1 * weight ? 0.5 * angle_of(sum) : line_dir(prims[ids[0]].shape) - kPi / 4;
      }
      slot[k] = static_cast<int>(rel.families.size());
      rel.families.push_back(f);
      out.units[k] = "deg";
    } else if (kind == RelationKind::collinear) {
      slot[k] = static_cast<int>(rel.collinear.size());
      rel.collinear.push_back({ids, r.angle_rad});
    } else if (kind == RelationKind::equal_radius) {
      slot[k] = static_cast<int>(rel.radii.size());
      rel.radii.push_back({ids, std::nullopt});
    } else if (kind == RelationKind::concentric) {
      slot[k] = static_cast<int>(rel.centres.size());
      rel.centres.push_back({ids, r.centre});
    } else if (kind == RelationKind::tangent_continuity) {
      if (ids.size() != 2) {
        out.failed = static_cast<int>(k);
        out.reason = "tangent_continuity relates exactly two primitives";
        return false;
      }
      const Shape &a = prims[ids[0]].shape, &b = prims[ids[1]].shape;
      auto [ea, eb] = shared_ends(a, b, joint_eps);
      Tangent t{ids[0], ids[1], ea, eb};
      if (ea < 0) {
        if (a.type == PrimType::line && is_round(b)) t = {ids[0], ids[1], -1, -1};
        else if (b.type == PrimType::line && is_round(a)) t = {ids[1], ids[0], -1, -1};
        else {
          out.failed = static_cast<int>(k);
          out.reason = "the two primitives share no end (tangent continuity holds at a joint, or between a line and an arc or circle)";
          return false;
        }
        out.units[k] = "px";
      } else {
        out.units[k] = "deg";
      }
      slot[k] = static_cast<int>(rel.tangents.size());
      rel.tangents.push_back(t);
    } else if (kind == RelationKind::mirror) {
      Mirror m;
      for (size_t q = 0; q < ids.size(); q += 2) m.pairs.push_back({ids[q], q + 1 < ids.size() ? ids[q + 1] : ids[q]});
      m.axis = r.axis;
      slot[k] = static_cast<int>(rel.mirrors.size());
      rel.mirrors.push_back(m);
    } else {
      out.failed = static_cast<int>(k);
      out.reason = std::string(relation_kind_name(kind)) + " is not one the solver enforces";  // coincident
      return false;
    }
  }
  return true;
}

// The chains the solve moves: those with a related primitive and, through their junctions, their
// neighbours. An end at a junction of a related chain moves with the other ends there (rel.ends);
// every other end is pinned. False, the outcome saying why, when a related primitive is in no chain.
bool solved_chains(const std::vector<Primitive>& prims, const std::vector<ChainRef>& chains_in,
                   const std::vector<RelationSpec>& specs, const std::vector<int>& chain_of, Relations& rel,
                   std::vector<ChainRef>& chains, EnforceOutcome& out) {
  std::set<int> live;
  for (const RelationSpec& r : specs)
    for (int i : r.prims) {
      if (chain_of[i] < 0) {
        out.reason = "primitive " + prims[i].id + " belongs to no chain";
        return false;
      }
      const ChainRef& ch = chains_in[chain_of[i]];
      for (int j : {ch.junction_start, ch.junction_end})
        if (j >= 0) live.insert(j);
    }
  chains = chains_in;
  std::map<int, std::vector<int>> joined;
  for (size_t c = 0; c < chains.size(); ++c) {
    ChainRef& ch = chains[c];
    if (prims[ch.prims.front()].shape.type == PrimType::circle) continue;
    for (int which : {0, 1}) {
      int j = which == 0 ? ch.junction_start : ch.junction_end;
      bool& pin = which == 0 ? ch.pin_start : ch.pin_end;
      if (j < 0) continue;
      pin = !live.count(j);
      if (!pin) joined[j].push_back(static_cast<int>(2 * c + which));
    }
  }
  for (auto& [j, members] : joined)
    if (members.size() >= 2) rel.ends.push_back({members, std::nullopt});
  return true;
}

// The solved shapes into `next`, each held primitive's deviation from its points measured;
// out.broken names the one pushed farthest beyond max(tolerance, its deviation before). False,
// the outcome saying why, when the solve leaves a shape degenerate.
bool solved_shapes(const Model& model, const std::vector<double>& x, const std::vector<Primitive>& prims,
                   const std::vector<ChainRef>& chains, const std::vector<int>& chain_of, const FitParams& p,
                   std::vector<Primitive>& next, EnforceOutcome& out) {
  double worst_excess = 0;
  for (int i : model.included()) {
    Shape s = sanitized(model.shape(i, x));
    if (!finite_shape(s)) {
      out.broken = i;
      out.broken_max_px = INFINITY;
      out.reason = "the solve left " + prims[i].id + " degenerate";
      return false;
    }
    next[i].shape = s;
    const ChainRef& ch = chains[chain_of[i]];
    if (!ch.held) continue;
    Polyline pts = span_points(prims[i], *ch.points);
    auto before = deviation(prims[i].shape, pts);
    auto d = deviation(s, pts);
    next[i].fit_rms_px = d.rms;
    next[i].fit_max_px = d.max;
    double limit = std::max(p.tolerance_px, before.max) * (1 + 1e-9) + 1e-9;
    if (!(d.max <= limit) && d.max - limit > worst_excess) {
      worst_excess = d.max - limit;
      out.broken = i;
      out.broken_max_px = d.max;
    }
  }
  return true;
}

// How far a relation is from exact on the solved shapes (degrees or pixels, as its unit says).
double residual(const RelationSpec& r, int slot, const Relations& rel, const Model& model, const std::vector<double>& x,
                const std::vector<Primitive>& next) {
  auto sh = [&](int i) -> const Shape& { return next[i].shape; };
  const auto& ids = r.prims;
  double res = 0;
  const RelationKind kind = r.kind;
  if (kind == RelationKind::parallel || kind == RelationKind::horizontal || kind == RelationKind::vertical) {
    double ref = rel.families[slot].fixed ? rel.families[slot].angle : line_dir(sh(ids[0]));
    for (int i : ids) res = std::max(res, std::abs(wrap_half_turn(line_dir(sh(i)) - ref)));
    res = rad2deg(res);
  } else if (kind == RelationKind::perpendicular) {
    double ref = line_dir(sh(ids[0]));
    if (r.angle_rad) res = std::abs(wrap_half_turn(ref - *r.angle_rad));
    for (size_t m = 1; m < ids.size(); ++m)
      res = std::max(res, std::abs(std::abs(wrap_half_turn(line_dir(sh(ids[m])) - ref)) - kPi / 2));
    res = rad2deg(res);
  } else if (kind == RelationKind::collinear) {
    const Shape& f = sh(ids[0]);
    Vec2 u = unit(f.p1 - f.p0);
    for (int i : ids) res = std::max({res, std::abs(cross(u, sh(i).p0 - f.p0)), std::abs(cross(u, sh(i).p1 - f.p0))});
  } else if (kind == RelationKind::equal_radius) {
    double lo = INFINITY, hi = -INFINITY;
    for (int i : ids) lo = std::min(lo, sh(i).radius), hi = std::max(hi, sh(i).radius);
    res = hi - lo;
  } else if (kind == RelationKind::concentric) {
    Vec2 c = r.centre ? *r.centre : sh(ids[0]).center;
    for (int i : ids) res = std::max(res, dist(sh(i).center, c));
  } else if (kind == RelationKind::tangent_continuity) {
    const Tangent& t = rel.tangents[slot];
    const Shape &a = sh(t.a), &b = sh(t.b);
    if (t.end_a < 0) {
      res = std::abs(std::abs(cross(unit(a.p1 - a.p0), b.center - a.p0)) - b.radius);
    } else {
      Vec2 ua = t.end_a == 0 ? a.start_tangent() : -a.end_tangent();
      Vec2 ub = t.end_b == 0 ? b.start_tangent() : -b.end_tangent();
      res = rad2deg(std::atan2(std::abs(cross(ua, ub)), -dot(ua, ub)));
      if (dist(t.end_a ? a.p1 : a.p0, t.end_b ? b.p1 : b.p0) > 1e-6) res = std::max(res, 180.0);
    }
  } else if (kind == RelationKind::mirror) {
    const Mirror& m = rel.mirrors[slot];
    double an = 0, off = 0;
    if (auto ax = model.mirror_axis(static_cast<size_t>(slot), x)) {
      std::tie(an, off) = *ax;
    } else {
      Vec2 d = unit(m.axis->second - m.axis->first);
      an = angle_of(perp(d));
      off = dot(from_angle(an), m.axis->first);
    }
    auto refl = [&](Vec2 q) {
      Vec2 n = from_angle(an);
      return q - n * (2 * (dot(n, q) - off));
    };
    for (auto [a, b] : m.pairs) {
      const Shape &u = sh(a), &v = sh(b);
      if (u.type == PrimType::circle) {
        res = std::max({res, dist(refl(u.center), v.center), std::abs(u.radius - v.radius)});
        continue;
      }
      double straight = std::max(dist(refl(u.p0), v.p0), dist(refl(u.p1), v.p1));
      double crossed = std::max(dist(refl(u.p0), v.p1), dist(refl(u.p1), v.p0));
      res = std::max(res, a == b ? crossed : std::min(straight, crossed));
      if (u.type == PrimType::arc) res = std::max(res, dist(refl(u.at(0.5)), v.at(0.5)));
    }
  }
  return res;
}

// A chain none of whose pieces moved by more than the scene's coordinate quantum stays as it
// was (its junction neighbours may then be that little apart from it). The primitives that moved.
std::vector<int> keep_still_chains(const std::vector<Primitive>& prims, const std::vector<ChainRef>& chains,
                                   std::vector<Primitive>& next) {
  std::vector<int> moved;
  auto shift = [&](size_t i) {
    const Shape &a = prims[i].shape, &b = next[i].shape;
    if (a.type != b.type) return double(INFINITY);
    if (a.type == PrimType::circle) return std::max(dist(a.center, b.center), std::abs(a.radius - b.radius));
    return std::max({dist(a.p0, b.p0), dist(a.p1, b.p1), dist(a.at(0.5), b.at(0.5))});
  };
  for (const ChainRef& ch : chains) {
    bool still = std::all_of(ch.prims.begin(), ch.prims.end(), [&](int i) { return !(shift(i) > 1e-4); });
    for (int i : ch.prims) {
      if (still) next[i] = prims[i];
      else if (shift(i) > 0) moved.push_back(i);
    }
  }
  std::sort(moved.begin(), moved.end());
  return moved;
}
}  // namespace

EnforceOutcome enforce(std::vector<Primitive>& prims, const std::vector<ChainRef>& chains_in,
                       const std::vector<RelationSpec>& specs, const FitParams& p) {
  EnforceOutcome out;
  out.residuals.assign(specs.size(), 0.0);
  out.units.assign(specs.size(), "px");
  Relations rel;
  std::vector<int> slot(specs.size(), -1);
  if (!solver_relations(prims, specs, std::max(1e-3, 0.5 * p.tolerance_px), rel, slot, out)) return out;
  std::vector<int> chain_of(prims.size(), -1);
  for (size_t c = 0; c < chains_in.size(); ++c)
    for (int i : chains_in[c].prims) chain_of[i] = static_cast<int>(c);
  std::vector<ChainRef> chains;
  if (!solved_chains(prims, chains_in, specs, chain_of, rel, chains, out)) return out;

  Model model(prims, chains, rel);
  const std::vector<double> x = model.solve(200);
  std::vector<Primitive> next = prims;
  if (!solved_shapes(model, x, prims, chains, chain_of, p, next, out)) return out;
  for (size_t k = 0; k < specs.size(); ++k)
    if (!specs[k].prims.empty()) out.residuals[k] = residual(specs[k], slot[k], rel, model, x, next);
  if (out.broken >= 0) {
    out.reason = fmt::format("{} would leave its tolerance: {:.2f} px from its points (tolerance {:.2f} px)",
                             prims[out.broken].id, out.broken_max_px, p.tolerance_px);
    return out;
  }
  for (size_t k = 0; k < specs.size(); ++k) {
    double limit = out.units[k] == "deg" ? kEnforceMaxDeg : kEnforceMaxPx;
    if (!(out.residuals[k] <= limit)) {
      out.failed = static_cast<int>(k);
      out.reason = fmt::format("{} could not be made exact: residual {:.3g} {} (limit {} {})",
                               relation_kind_name(specs[k].kind),
                               out.residuals[k], out.units[k], limit, out.units[k]);
      return out;
    }
  }
  out.moved = keep_still_chains(prims, chains, next);
  prims = std::move(next);
  out.ok = true;
  return out;
}
}  // namespace sv::fitting
