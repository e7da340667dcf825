#include "route/trails.hpp"

#include <boost/graph/adjacency_list.hpp>
#include <boost/graph/connected_components.hpp>
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <map>

#include "core/error.hpp"
#include "robot/motion.hpp"
// The vendored header's asserts name variables a release build leaves unused.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wunused-variable"
#include "route/boost/maximum_weighted_matching.hpp"
#pragma GCC diagnostic pop
#include "route/grid.hpp"

namespace sv {

namespace {

// Up to this many items are paired by dynamic programming over subsets, faster there than the
// blossom algorithm (1.5 against 3.8 us at 8 items; 8.3 against 5.7 us at 10, 15.7 ms against
// 39 us at 18).
constexpr int kDpMax = 8;

std::vector<std::pair<int, int>> dp_pairing(const std::vector<std::vector<double>>& w) {
  const int n = static_cast<int>(w.size());
  // f[mask]: least cost of pairing the items in mask, the lowest of them paired first.
  uint32_t full = (1u << n) - 1;
  std::vector<double> f(size_t(full) + 1, INFINITY);
  std::vector<int8_t> partner(size_t(full) + 1, -1);
  f[0] = 0;
  for (uint32_t mask = 1; mask <= full; ++mask) {
    if (__builtin_popcount(mask) % 2) continue;
    int i = __builtin_ctz(mask);
    for (int j = i + 1; j < n; ++j) {
      if (!(mask >> j & 1)) continue;
      double c = f[mask & ~(1u << i) & ~(1u << j)] + w[i][j];
      if (c < f[mask]) {
        f[mask] = c;
        partner[mask] = static_cast<int8_t>(j);
      }
    }
  }
  std::vector<std::pair<int, int>> pairs;
  for (uint32_t mask = full; mask;) {
    int i = __builtin_ctz(mask), j = partner[mask];
    pairs.emplace_back(i, j);
    mask &= ~(1u << i) & ~(1u << j);
  }
  return pairs;
}

// Edmonds' blossom algorithm (Boost.Graph's maximum_weighted_matching) on the complete graph:
// a least-cost perfect pairing is a heaviest matching under the weights C - cost once C exceeds
// n/2 times the largest cost (then every perfect matching outweighs every other). Integer
// weights keep the algorithm exact: costs in nanoseconds (coarser when the sums would overflow).
// Returns nothing when the matching is not perfect (it always is; the check costs nothing).
std::vector<std::pair<int, int>> blossom_pairing(const std::vector<std::vector<double>>& w) {
  const int n = static_cast<int>(w.size());
  double most = 0;
  for (int i = 0; i < n; ++i)
    for (int j = i + 1; j < n; ++j) most = std::max(most, w[i][j]);
  // The matching's weight (n/2 edges of at most C) must stay below the algorithm's limit, a
  // quarter of the type's largest value, with room to spare.
  double unit = 1e9;
  while (unit > 1e-3 && (most * unit + 1) * (n / 2.0 + 1) * (n / 2.0 + 1) > 1e17) unit /= 10;
  const long long C = static_cast<long long>(std::llround(most * unit)) * (n / 2) + 1;
  using Graph = boost::adjacency_list<boost::vecS, boost::vecS, boost::undirectedS, boost::no_property,
                                      boost::property<boost::edge_weight_t, long long>>;
  Graph g(n);
  for (int i = 0; i < n; ++i)
    for (int j = i + 1; j < n; ++j) boost::add_edge(i, j, C - std::llround(w[i][j] * unit), g);
  std::vector<boost::graph_traits<Graph>::vertex_descriptor> mate(n);
  boost::mwm_1_88::maximum_weighted_matching(g, mate.data());
  std::vector<std::pair<int, int>> pairs;
  for (int i = 0; i < n; ++i) {
    if (mate[i] == boost::graph_traits<Graph>::null_vertex()) return {};
    if (static_cast<int>(mate[i]) > i) pairs.emplace_back(i, static_cast<int>(mate[i]));
  }
  return pairs;
}

std::vector<std::pair<int, int>> greedy_pairing(const std::vector<std::vector<double>>& w) {
  const int n = static_cast<int>(w.size());
  std::vector<std::pair<int, int>> order, pairs;
  for (int i = 0; i < n; ++i)
    for (int j = i + 1; j < n; ++j) order.emplace_back(i, j);
  std::stable_sort(order.begin(), order.end(),
                   [&](auto a, auto b) { return w[a.first][a.second] < w[b.first][b.second]; });
  std::vector<bool> used(n, false);
  for (auto [i, j] : order)
    if (!used[i] && !used[j]) {
      used[i] = used[j] = true;
      pairs.emplace_back(i, j);
    }
  for (bool improved = true; improved;) {
    improved = false;
    for (size_t a = 0; a < pairs.size(); ++a)
      for (size_t b = a + 1; b < pairs.size(); ++b) {
        auto [i, j] = pairs[a];
        auto [k, l] = pairs[b];
        double now = w[i][j] + w[k][l];
        if (w[i][k] + w[j][l] < now - 1e-12) {
          pairs[a] = {i, k};
          pairs[b] = {j, l};
          improved = true;
        } else if (w[i][l] + w[j][k] < now - 1e-12) {
          pairs[a] = {i, l};
          pairs[b] = {j, k};
          improved = true;
        }
      }
  }
  return pairs;
}

}  // namespace

std::vector<std::pair<int, int>> min_cost_pairing(const std::vector<std::vector<double>>& w, int exact_max) {
  const int n = static_cast<int>(w.size());
  if (n < 2) return {};
  if (n <= exact_max) {
    if (n <= kDpMax) return dp_pairing(w);
    if (auto pairs = blossom_pairing(w); !pairs.empty()) return pairs;
  }
  return greedy_pairing(w);
}

namespace {

// Greedy clustering of primitive ends: an end joins the nearest vertex seed within snap_px,
// else seeds a new vertex, so a vertex spans at most 2 snap_px. Cells of snap_px size make the
// lookup local.
class VertexIndex {
 public:
  explicit VertexIndex(double snap) : snap_(std::max(snap, 1e-9)) {}
  int find_or_add(Vec2 p) {
    auto [cx, cy] = cell(p);
    int best = -1;
    double bd = INFINITY;
    for (long dx = -1; dx <= 1; ++dx)
      for (long dy = -1; dy <= 1; ++dy) {
        auto it = grid_.find({cx + dx, cy + dy});
        if (it == grid_.end()) continue;
        for (int id : it->second) {
          double d = dist(points[id], p);
          if (d <= snap_ && (d < bd || (d == bd && id < best))) {
            bd = d;
            best = id;
          }
        }
      }
    if (best >= 0) return best;
    points.push_back(p);
    grid_[cell(p)].push_back(static_cast<int>(points.size()) - 1);
    return static_cast<int>(points.size()) - 1;
  }
  std::vector<Vec2> points;

 private:
  std::pair<long, long> cell(Vec2 p) const {
    return {static_cast<long>(std::floor(p.x / snap_)), static_cast<long>(std::floor(p.y / snap_))};
  }
  double snap_;
  std::map<std::pair<long, long>, std::vector<int>> grid_;
};

// An edge of the augmented graph: a primitive (line, arc, or circle self-loop) or a virtual
// pen-up edge between two matched odd vertices. Half-edge 2e leaves u, 2e+1 leaves v.
struct GraphEdge {
  int u = 0, v = 0;
  int prim = -1;  // -1: virtual
  double entry_rad = 0;
};

class TransitionSystem {
 public:
  TransitionSystem(const std::vector<Shape>& shapes, const std::vector<Vec2>& vertices,
                   std::vector<GraphEdge> edges, const CostModel& cost)
      : vertices_(vertices), edges_(std::move(edges)), cost_(cost) {
    size_t he = 2 * edges_.size();
    out_.resize(he);
    flippable_.resize(he);
    mate_.assign(he, -1);
    at_.resize(vertices_.size());
    for (size_t e = 0; e < edges_.size(); ++e) {
      const GraphEdge& g = edges_[e];
      for (int end = 0; end < 2; ++end) {
        int h = static_cast<int>(2 * e) + end;
        at_[end ? g.v : g.u].push_back(h);
        if (g.prim < 0) {
          Vec2 from = vertices_[end ? g.v : g.u], to = vertices_[end ? g.u : g.v];
          out_[h] = rad2deg(angle_of(to - from));
          flippable_[h] = cost_.reverse_drive;
        } else {
          Leg l = make_leg(shapes[g.prim], end == 1, g.entry_rad, cost_.flat_px);
          out_[h] = l.h_in;
          flippable_[h] = cost_.bits(l) == 2;
        }
      }
    }
  }

  // Time of the turn when the robot arrives at a vertex along half-edge x and leaves along y.
  double turn_cost(int x, int y) const {
    double turn = std::abs(wrap_deg(out_[y] - (out_[x] + 180)));
    if (flippable_[x] || flippable_[y]) turn = std::min(turn, 180 - turn);
    // A plotter turns for free, but a straight line through a crossing is still best drawn
    // straight (fewer commands, and the way a person draws it): its turns are priced at the
    // Doodlebot's spins scaled far below any move.
    return cost_.motion.plotter ? 1e-6 * spin_time_s(turn) : spin_time_s(turn);
  }

  // At every vertex, pair the edge ends so the turns take least time.
  void pair_least_turning() {
    for (const auto& ends : at_) {
      std::vector<std::vector<double>> w(ends.size(), std::vector<double>(ends.size(), 0));
      for (size_t i = 0; i < ends.size(); ++i)
        for (size_t j = 0; j < ends.size(); ++j) w[i][j] = turn_cost(ends[i], ends[j]);
      for (auto [i, j] : min_cost_pairing(w, 18)) {
        mate_[ends[i]] = ends[j];
        mate_[ends[j]] = ends[i];
      }
    }
  }

  // The closed strands of the pairing: leave along h, arrive at the far end h^1, leave along
  // its mate. Each edge appears in one strand, in the direction first met.
  std::vector<std::vector<int>> strands() const {
    std::vector<std::vector<int>> out;
    std::vector<bool> used(edges_.size(), false);
    for (size_t e = 0; e < edges_.size(); ++e)
      if (!used[e]) out.push_back(strand_from(static_cast<int>(2 * e), used));
    return out;
  }

  // Splices every strand without pen-up edges into another strand it meets, where re-pairing
  // the two strands' ends at the shared vertex adds the least turning; repeats until only
  // strands with pen-up edges, or a component's single closed strand, remain. Strands never
  // leave their connected component, so each is done alone (`components`: the vertices of
  // each, ascending): the same splices as over the whole drawing, each at the cost of its size.
  void splice_closed_strands(const std::vector<std::vector<int>>& components) {
    std::vector<bool> used(edges_.size(), false);
    std::vector<int> strand_of(edges_.size());
    for (const auto& vertices : components)
      splice_component(vertices, used, strand_of);
  }

  int vertex_of(int h) const { return h % 2 ? edges_[h / 2].v : edges_[h / 2].u; }
  const GraphEdge& edge(int h) const { return edges_[h / 2]; }

 private:
  // `used` comes and goes all false; strand_of is scratch.
  void splice_component(const std::vector<int>& vertices, std::vector<bool>& used, std::vector<int>& strand_of) {
    for (;;) {
      std::vector<std::vector<int>> cycles;
      for (int v : vertices)
        for (int h : at_[v])
          if (!used[h / 2]) cycles.push_back(strand_from(h & ~1, used));
      std::vector<bool> has_virtual(cycles.size(), false);
      for (size_t c = 0; c < cycles.size(); ++c)
        for (int h : cycles[c]) {
          strand_of[h / 2] = static_cast<int>(c);
          if (edges_[h / 2].prim < 0) has_virtual[c] = true;
          used[h / 2] = false;  // for the next round
        }
      double best = INFINITY;
      std::array<int, 4> pick{};
      for (int v : vertices) {
        const auto& ends = at_[v];
        std::vector<std::pair<int, int>> pairs;
        for (int x : ends)
          if (x < mate_[x]) pairs.emplace_back(x, mate_[x]);
        for (size_t i = 0; i < pairs.size(); ++i)
          for (size_t j = i + 1; j < pairs.size(); ++j) {
            int s1 = strand_of[pairs[i].first / 2], s2 = strand_of[pairs[j].first / 2];
            if (s1 == s2 || (has_virtual[s1] && has_virtual[s2])) continue;
            auto [a, b] = pairs[i];
            auto [c, d] = pairs[j];
            double now = turn_cost(a, b) + turn_cost(c, d);
            double alt1 = turn_cost(a, c) + turn_cost(b, d) - now;
            double alt2 = turn_cost(a, d) + turn_cost(b, c) - now;
            if (alt1 < best) {
              best = alt1;
              pick = {a, c, b, d};
            }
            if (alt2 < best) {
              best = alt2;
              pick = {a, d, b, c};
            }
          }
      }
      if (!std::isfinite(best)) return;
      mate_[pick[0]] = pick[1];
      mate_[pick[1]] = pick[0];
      mate_[pick[2]] = pick[3];
      mate_[pick[3]] = pick[2];
    }
  }

  // The strand through half-edge `first`, marking its edges used.
  std::vector<int> strand_from(int first, std::vector<bool>& used) const {
    std::vector<int> cycle;
    int h = first;
    do {
      if (used[h / 2]) throw Error(Code::internal, "route: transition system retraces an edge");
      used[h / 2] = true;
      cycle.push_back(h);
      h = mate_[h ^ 1];
    } while (h != first);
    return cycle;
  }

  const std::vector<Vec2>& vertices_;
  std::vector<GraphEdge> edges_;
  const CostModel& cost_;
  std::vector<double> out_;  // heading leaving the vertex along each half-edge, degrees
  std::vector<bool> flippable_;
  std::vector<int> mate_;
  std::vector<std::vector<int>> at_;  // half-edges at each vertex
};

Traversal traversal_of(const GraphEdge& g, int h) { return {g.prim, h % 2 == 1, g.entry_rad}; }

}  // namespace

TrailSet build_trails(const std::vector<Shape>& shapes, const CostModel& cost, const TrailParams& params) {
  TrailSet out;
  VertexIndex index(params.snap_px);
  std::vector<GraphEdge> edges;
  std::vector<int> circles, dots;
  for (size_t i = 0; i < shapes.size(); ++i) {
    const Shape& s = shapes[i];
    Leg l = make_leg(s, false, 0, cost.flat_px);
    if (l.dot) {
      dots.push_back(static_cast<int>(i));
    } else if (s.type == PrimType::circle) {
      circles.push_back(static_cast<int>(i));
    } else {
      int u = index.find_or_add(s.p0);
      int v = index.find_or_add(s.p1);
      edges.push_back({u, v, static_cast<int>(i), 0});
    }
  }
  const std::vector<Vec2>& vpos = index.points;
  // A circle through a vertex is drawn from there, as a loop of that vertex's trail: the vertex
  // nearest the circle (the lowest one of equals), looked for in the grid cells around the
  // circle's box (among all vertices when that box covers more cells than there are vertices).
  BBox all;
  for (Vec2 q : vpos) all.add(q);
  const Grid grid(all, vpos.size());
  std::vector<std::vector<int>> cells(static_cast<size_t>(grid.w) * grid.h);
  for (size_t v = 0; v < vpos.size(); ++v)
    cells[static_cast<size_t>(grid.cy(vpos[v].y)) * grid.w + grid.cx(vpos[v].x)].push_back(static_cast<int>(v));
  std::vector<int> free_circles;
  for (int c : circles) {
    const Shape& s = shapes[c];
    int best = -1;
    double bd = INFINITY;
    auto consider = [&](int v) {
      double d = std::abs(dist(vpos[v], s.center) - s.radius);
      if (d <= params.snap_px && (d < bd || (d == bd && v < best))) {
        bd = d;
        best = v;
      }
    };
    const double reach = s.radius + params.snap_px;
    const int x0 = grid.cx(s.center.x - reach), x1 = grid.cx(s.center.x + reach), y0 = grid.cy(s.center.y - reach),
              y1 = grid.cy(s.center.y + reach);
    if (static_cast<double>(x1 - x0 + 1) * (y1 - y0 + 1) > static_cast<double>(vpos.size())) {
      for (size_t v = 0; v < vpos.size(); ++v) consider(static_cast<int>(v));
    } else {
      for (int y = y0; y <= y1; ++y)
        for (int x = x0; x <= x1; ++x)
          for (int v : cells[static_cast<size_t>(y) * grid.w + x]) consider(v);
    }
    if (best < 0) {
      free_circles.push_back(c);
      continue;
    }
    edges.push_back({best, best, c, angle_of(vpos[best] - s.center)});
  }
  int nv = static_cast<int>(vpos.size());
  out.vertices = nv;

  boost::adjacency_list<boost::vecS, boost::vecS, boost::undirectedS> g(nv);
  std::vector<int> degree(nv, 0);
  for (const auto& e : edges) {
    boost::add_edge(e.u, e.v, g);
    ++degree[e.u];
    ++degree[e.v];
  }
  std::vector<int> comp(nv);
  int ncomp = nv ? boost::connected_components(g, comp.data()) : 0;

  // Pair each component's odd vertices by least time: a pen-up trip, or drawing again a line
  // that joins them (the pen stays down, so the trail goes on; a line can be driven back
  // without turning). Drawing it again is taken at equal time: the trip would lift the pen.
  std::map<std::pair<int, int>, int> redraw;  // odd pair -> the shortest line joining it
  if (params.redraw_lines)
    for (const GraphEdge& e : edges) {
      if (e.u == e.v || shapes[e.prim].type != PrimType::line || degree[e.u] % 2 == 0 || degree[e.v] % 2 == 0) continue;
      auto key = std::minmax(e.u, e.v);
      auto [it, fresh] = redraw.emplace(key, e.prim);
      if (!fresh && shapes[e.prim].length() < shapes[it->second].length()) it->second = e.prim;
    }
  std::vector<std::vector<int>> odd(ncomp);
  for (int v = 0; v < nv; ++v)
    if (degree[v] % 2) odd[comp[v]].push_back(v);
  for (const auto& o : odd) {
    out.odd_vertices += static_cast<int>(o.size());
    std::vector<std::vector<double>> w(o.size(), std::vector<double>(o.size(), 0));
    auto redrawn = [&](size_t i, size_t j) {
      auto it = redraw.find(std::minmax(o[i], o[j]));
      // Within a part in a million: the line's length and its snapped ends' distance differ a little.
      return it != redraw.end() &&
                     cost.motion.draw_line_s(shapes[it->second].length()) <= cost.trip(dist(vpos[o[i]], vpos[o[j]])) * (1 + 1e-6)
                 ? it->second
                 : -1;
    };
    for (size_t i = 0; i < o.size(); ++i)
      for (size_t j = 0; j < o.size(); ++j) {
        const int line = i == j ? -1 : redrawn(i, j);
        const double trip = cost.motion.travel_s(dist(vpos[o[i]], vpos[o[j]]));
        w[i][j] = line >= 0 ? std::min(trip, cost.motion.draw_line_s(shapes[line].length())) : trip;
      }
    for (auto [i, j] : min_cost_pairing(w, params.exact_matching_max)) {
      edges.push_back({o[i], o[j], redrawn(i, j), 0});
      if (edges.back().prim >= 0) ++out.redrawn;
    }
  }

  TransitionSystem ts(shapes, vpos, edges, cost);
  ts.pair_least_turning();
  std::vector<std::vector<int>> comp_vertices(ncomp);
  for (int v = 0; v < nv; ++v) comp_vertices[comp[v]].push_back(v);
  ts.splice_closed_strands(comp_vertices);

  // Cut each strand at its pen-up edges; a strand without any is a closed trail.
  std::vector<int> circuit_of_comp(ncomp, -1);
  for (const auto& cycle : ts.strands()) {
    int c = comp[ts.vertex_of(cycle.front())];
    if (circuit_of_comp[c] < 0) {
      circuit_of_comp[c] = static_cast<int>(out.circuits.size());
      out.circuits.emplace_back();
    }
    auto& circuit = out.circuits[circuit_of_comp[c]];
    size_t n = cycle.size(), k = 0;
    while (k < n && ts.edge(cycle[k]).prim >= 0) ++k;
    if (k == n) {
      Trail t{Trail::Kind::closed, {}};
      for (int h : cycle) t.steps.push_back(traversal_of(ts.edge(h), h));
      circuit.push_back(static_cast<int>(out.trails.size()));
      out.trails.push_back(std::move(t));
      continue;
    }
    Trail cur{Trail::Kind::open, {}};
    for (size_t j = 1; j <= n; ++j) {
      int h = cycle[(k + j) % n];
      if (ts.edge(h).prim >= 0) {
        cur.steps.push_back(traversal_of(ts.edge(h), h));
        continue;
      }
      circuit.push_back(static_cast<int>(out.trails.size()));
      out.trails.push_back(std::move(cur));
      cur = Trail{Trail::Kind::open, {}};
    }
  }
  for (int c : free_circles) {
    out.circuits.push_back({static_cast<int>(out.trails.size())});
    out.trails.push_back({Trail::Kind::circle, {{c, false, 0}}});
  }
  for (int d : dots) {
    out.circuits.push_back({static_cast<int>(out.trails.size())});
    out.trails.push_back({Trail::Kind::dot, {{d, false, 0}}});
  }
  out.components = ncomp + static_cast<int>(free_circles.size() + dots.size());
  return out;
}

}  // namespace sv
