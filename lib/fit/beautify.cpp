#include "fit/beautify.hpp"

#include <Eigen/Sparse>
#include <Eigen/SparseCholesky>
#include <algorithm>
#include <functional>

#include "fit/primitive_fit.hpp"

namespace sv::fitting {

namespace {

constexpr double kRelationWeight = 1000;  // a relation residual against 1 px of data residual
constexpr double kAnchorWeight = 1;       // the pull of a joint to where it was
constexpr size_t kDataPointsPerPiece = 24;
constexpr int kRounds = 6;
constexpr int kIterations = 30;

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
};

struct Group {
  std::vector<int> members;  // primitives (radius, centre) or chain ends (coincidence)
};

struct Relations {
  std::vector<Family> families;
  std::vector<Group> radii, centres, ends;  // an end is 2 * chain + (0 start, 1 end)
  bool empty() const {
    return families.empty() && radii.empty() && centres.empty() && ends.empty();
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
      groups.push_back({{i}});
  }
  std::erase_if(groups, [&](const Group& g) { return g.members.size() < min_size; });
  return groups;
}

Relations detect(const std::vector<Primitive>& prims, const std::vector<ChainRef>& chains,
                 const FitParams& p) {
  Relations rel;
  const double angle_tol = deg2rad(p.relation_angle_deg), tol = p.tolerance_px;
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
  std::erase_if(rel.families, [](const Family& f) { return f.lines.size() < 2; });
  rounds = by_size(rounds, [&](int i) { return prims[i].shape.radius; });
  rel.radii = cluster(rounds, [&](int seed, int i) {
    return std::abs(prims[i].shape.radius - prims[seed].shape.radius) <= tol;
  });
  rel.centres = cluster(rounds, [&](int seed, int i) {
    return dist(prims[i].shape.center, prims[seed].shape.center) <= tol;
  });
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
  std::vector<double> solve() const {
    std::vector<double> x = x_;
    double cost = cost_of(x), lambda = 1e-3;
    const int n = static_cast<int>(x.size());
    Eigen::SparseMatrix<double> eye(n, n);
    eye.setIdentity();
    // The sparsity pattern never changes (every Jacobian entry of a block is stored), so the
    // fill-reducing ordering is computed once.
    Eigen::SimplicialLDLT<Eigen::SparseMatrix<double>> ldlt;
    bool analyzed = false;
    for (int it = 0; it < kIterations; ++it) {
      auto [jac, r] = linearize(x);
      Eigen::SparseMatrix<double> h = jac.transpose() * jac;
      Eigen::VectorXd g = jac.transpose() * r;
      bool improved = false;
      while (lambda < 1e10 && !improved) {
        Eigen::SparseMatrix<double> a = h + lambda * eye;
        if (!analyzed) ldlt.analyzePattern(a);
        analyzed = true;
        ldlt.factorize(a);
        if (ldlt.info() != Eigen::Success) {
          lambda *= 10;
          continue;
        }
        Eigen::VectorXd step = ldlt.solve(-g);
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
                                                 : length(sample[k] - s.center) - s.radius;
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
      int angle = add({f.angle});
      for (auto [i, quarter] : f.lines) {
        auto vars = vars_of(i);
        vars.push_back(angle);
        double scale = kRelationWeight * prims_[i].shape.length();
        double turn = quarter * kPi / 2;
        blocks_.push_back(
            {vars, 1, [this, i, angle, scale, turn](const std::vector<double>& x, double* out) {
               Shape s = shape(i, x);
               out[0] = scale * cross(unit(s.p1 - s.p0), from_angle(x[angle] + turn));
             }});
      }
    }
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
      int centre = add({mean.x, mean.y});
      for (int i : g.members) {
        auto vars = vars_of(i);
        vars.insert(vars.end(), {centre, centre + 1});
        blocks_.push_back({vars, 2, [this, i, centre](const std::vector<double>& x, double* out) {
                             Vec2 c = shape(i, x).center;
                             out[0] = kRelationWeight * (c.x - x[centre]);
                             out[1] = kRelationWeight * (c.y - x[centre + 1]);
                           }});
      }
    }
  }

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

  std::pair<Eigen::SparseMatrix<double>, Eigen::VectorXd> linearize(
      const std::vector<double>& x0) const {
    int rows = 0;
    for (const Block& b : blocks_) rows += b.rows;
    Eigen::VectorXd r(rows);
    std::vector<Eigen::Triplet<double>> entries;
    // Central differences: the relation residuals are stiff, and one-sided differences are
    // not accurate enough for Gauss-Newton to converge quickly.
    constexpr double h = 1e-5;
    std::vector<double> x = x0, ahead, behind;
    int row = 0;
    for (const Block& b : blocks_) {
      ahead.assign(b.rows, 0.0);
      behind.assign(b.rows, 0.0);
      b.eval(x, ahead.data());
      for (int k = 0; k < b.rows; ++k) r(row + k) = ahead[k];
      for (int v : b.vars) {
        x[v] = x0[v] + h;
        b.eval(x, ahead.data());
        x[v] = x0[v] - h;
        b.eval(x, behind.data());
        x[v] = x0[v];
        for (int k = 0; k < b.rows; ++k)
          entries.emplace_back(row + k, v, (ahead[k] - behind[k]) / (2 * h));
      }
      row += b.rows;
    }
    Eigen::SparseMatrix<double> jac(rows, static_cast<int>(x0.size()));
    jac.setFromTriplets(entries.begin(), entries.end());
    return {jac, r};
  }

  const std::vector<Primitive>& prims_;
  std::vector<PieceVars> piece_;
  std::vector<Joint> joints_;
  std::vector<double> x_;
  std::vector<Block> blocks_;
  std::vector<int> included_;
};

// ---------------------------------------------------------------------------------------

void remove_primitive(Relations& rel, int i, const std::vector<ChainRef>& chains) {
  for (Family& f : rel.families) std::erase_if(f.lines, [&](auto l) { return l.first == i; });
  std::erase_if(rel.families, [](const Family& f) { return f.lines.size() < 2; });
  for (auto* groups : {&rel.radii, &rel.centres}) {
    for (Group& g : *groups) std::erase(g.members, i);
    std::erase_if(*groups, [](const Group& g) { return g.members.size() < 2; });
  }
  for (Group& g : rel.ends)
    std::erase_if(g.members, [&](int e) {
      const auto& c = chains[e / 2].prims;
      return std::find(c.begin(), c.end(), i) != c.end();
    });
  std::erase_if(rel.ends, [](const Group& g) { return g.members.size() < 2; });
}

bool in_relation(const Relations& rel, int i, const std::vector<ChainRef>& chains) {
  for (const Family& f : rel.families)
    if (std::any_of(f.lines.begin(), f.lines.end(), [&](auto l) { return l.first == i; }))
      return true;
  for (const auto* groups : {&rel.radii, &rel.centres})
    for (const Group& g : *groups)
      if (std::find(g.members.begin(), g.members.end(), i) != g.members.end()) return true;
  for (const Group& g : rel.ends)
    for (int e : g.members) {
      const auto& c = chains[e / 2].prims;
      if (std::find(c.begin(), c.end(), i) != c.end()) return true;
    }
  return false;
}

json ids_of(const std::vector<Primitive>& prims, const std::vector<int>& members) {
  json ids = json::array();
  for (int i : members) ids.push_back(prims[i].id);
  return ids;
}

json records(const std::vector<Primitive>& prims, const std::vector<ChainRef>& chains,
             const Relations& rel) {
  json out = json::array();
  auto dir = [&](int i) { return angle_of(prims[i].shape.p1 - prims[i].shape.p0); };
  auto residual = [](double v) { return round_to(v, 1e-6); };
  for (const Family& f : rel.families) {
    std::vector<int> quarter[2];
    for (auto [i, q] : f.lines) quarter[q].push_back(i);
    for (const auto& lines : quarter) {
      if (lines.size() < 2) continue;
      double worst = 0;
      for (int i : lines) worst = std::max(worst, std::abs(wrap_half_turn(dir(i) - dir(lines[0]))));
      out.push_back({{"kind", "parallel"},
                     {"primitives", ids_of(prims, lines)},
                     {"residual_deg", residual(rad2deg(worst))}});
    }
    if (!quarter[0].empty() && !quarter[1].empty()) {
      int a = quarter[0][0], b = quarter[1][0];  // the longest of each direction
      double off = std::abs(std::abs(wrap_half_turn(dir(a) - dir(b))) - kPi / 2);
      out.push_back({{"kind", "perpendicular"},
                     {"primitives", ids_of(prims, {a, b})},
                     {"residual_deg", residual(rad2deg(off))}});
    }
  }
  for (const Group& g : rel.radii) {
    auto [lo, hi] = std::minmax_element(g.members.begin(), g.members.end(), [&](int a, int b) {
      return prims[a].shape.radius < prims[b].shape.radius;
    });
    out.push_back({{"kind", "equal_radius"},
                   {"primitives", ids_of(prims, g.members)},
                   {"residual_px", residual(prims[*hi].shape.radius - prims[*lo].shape.radius)}});
  }
  for (const Group& g : rel.centres) {
    double worst = 0;
    for (int i : g.members)
      worst = std::max(worst, dist(prims[i].shape.center, prims[g.members[0]].shape.center));
    out.push_back({{"kind", "concentric"},
                   {"primitives", ids_of(prims, g.members)},
                   {"residual_px", residual(worst)}});
  }
  for (const Group& g : rel.ends) {
    std::vector<int> members;
    double worst = 0;
    Vec2 first = chain_end(prims, chains[g.members[0] / 2], g.members[0] % 2);
    for (int e : g.members) {
      const auto& c = chains[e / 2].prims;
      members.push_back(e % 2 == 0 ? c.front() : c.back());
      worst = std::max(worst, dist(chain_end(prims, chains[e / 2], e % 2), first));
    }
    out.push_back({{"kind", "coincident"},
                   {"primitives", ids_of(prims, members)},
                   {"residual_px", residual(worst)}});
  }
  return out;
}

}  // namespace

json beautify(std::vector<Primitive>& prims, const std::vector<ChainRef>& chains,
              const FitParams& p) {
  Relations rel = detect(prims, chains, p);
  std::vector<int> chain_of(prims.size(), -1);
  for (size_t c = 0; c < chains.size(); ++c)
    for (int i : chains[c].prims) chain_of[i] = static_cast<int>(c);
  for (int round = 0; round < kRounds && !rel.empty(); ++round) {
    Model model(prims, chains, rel);
    std::vector<double> x = model.solve();
    std::vector<Primitive> next = prims;
    std::vector<int> outside;
    for (int i : model.included()) {
      next[i].shape = model.shape(i, x);
      auto d = deviation(next[i].shape, span_points(prims[i], *chains[chain_of[i]].points));
      next[i].fit_rms_px = d.rms;
      next[i].fit_max_px = d.max;
      bool finite = std::isfinite(d.max) &&
                    (next[i].shape.type != PrimType::arc || std::isfinite(next[i].shape.radius));
      if (!finite || d.max > p.tolerance_px * (1 + 1e-9)) outside.push_back(i);
    }
    if (outside.empty()) {
      prims = std::move(next);
      return records(prims, chains, rel);
    }
    // A primitive outside tolerance leaves its relations; one in none was pushed out by
    // its chain's related primitives, which leave theirs.
    for (int i : outside) {
      if (in_relation(rel, i, chains)) {
        remove_primitive(rel, i, chains);
        continue;
      }
      for (int j : chains[chain_of[i]].prims) remove_primitive(rel, j, chains);
    }
  }
  return json::array();
}

}  // namespace sv::fitting
