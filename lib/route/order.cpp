#include "route/order.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <map>
#include <optional>
#include <random>
#include <tuple>

#include "robot/motion.hpp"
#include "route/grid.hpp"

namespace sv {

TourPlanner::TourPlanner(const TrailSet& trails, const std::vector<Shape>& shapes, const CostModel& cost,
                         const OrderParams& params, std::optional<Pose> start)
    : trails_(trails), shapes_(shapes), cost_(cost), params_(params), start_(start) {
  size_t n = trails_.trails.size();
  orients_.resize(n);
  for (size_t t = 0; t < n; ++t) add_orientations(static_cast<int>(t));
  size_t count = 0;
  for (const auto& list : orients_) count += list.size();
  if (count <= kCachedOrientations) {
    for (auto& list : orients_)
      for (Orientation& o : list) o.id = static_cast<int>(cached_++);
    trans_cache_.assign(cached_ * cached_, NAN);
  }
  // Candidate lists: the trails whose entry and exit points come nearest, by bounding box.
  constexpr size_t kNear = 16;
  std::vector<BBox> box(n);
  for (size_t t = 0; t < n; ++t)
    for (const Orientation& o : orients_[t]) {
      box[t].add(o.in_pt);
      box[t].add(o.out_pt);
    }
  auto gap = [&](size_t a, size_t b) {
    double dx = std::max({0.0, box[a].x0 - box[b].x1, box[b].x0 - box[a].x1});
    double dy = std::max({0.0, box[a].y0 - box[b].y1, box[b].y0 - box[a].y1});
    return std::hypot(dx, dy);
  };
  near_.resize(n);
  if (n < 2) return;
  // The k smallest (gap, index) pairs per trail, as a partial sort over all others would give,
  // from the cells around each box outwards. Each trail is listed in every cell its box covers;
  // a box covering many cells is kept aside and compared with every query instead.
  BBox all;
  for (size_t t = 0; t < n; ++t) {
    all.add({box[t].x0, box[t].y0});
    all.add({box[t].x1, box[t].y1});
  }
  const Grid grid(all, n);
  std::vector<std::vector<int>> cells(static_cast<size_t>(grid.w) * grid.h);
  std::vector<int> wide;
  for (size_t t = 0; t < n; ++t) {
    const int x0 = grid.cx(box[t].x0), x1 = grid.cx(box[t].x1), y0 = grid.cy(box[t].y0), y1 = grid.cy(box[t].y1);
    if (static_cast<long>(x1 - x0 + 1) * (y1 - y0 + 1) > 64) {
      wide.push_back(static_cast<int>(t));
      continue;
    }
    for (int y = y0; y <= y1; ++y)
      for (int x = x0; x <= x1; ++x) cells[static_cast<size_t>(y) * grid.w + x].push_back(static_cast<int>(t));
  }
  std::vector<size_t> seen(n, SIZE_MAX);
  for (size_t a = 0; a < n; ++a) {
    const size_t k = std::min(kNear, n - 1);
    std::vector<std::pair<double, int>> by;  // a max-heap of the k best so far
    auto offer = [&](int b) {
      if (static_cast<size_t>(b) == a || seen[b] == a) return;
      seen[b] = a;
      std::pair<double, int> c{gap(a, b), b};
      if (by.size() < k) {
        by.push_back(c);
        std::push_heap(by.begin(), by.end());
      } else if (c < by.front()) {
        std::pop_heap(by.begin(), by.end());
        by.back() = c;
        std::push_heap(by.begin(), by.end());
      }
    };
    for (int b : wide) offer(b);
    const int ax0 = grid.cx(box[a].x0), ax1 = grid.cx(box[a].x1), ay0 = grid.cy(box[a].y0), ay1 = grid.cy(box[a].y1);
    for (int r = 0;; ++r) {
      // Stop once the ring cannot hold a pair smaller than the k-th (equal gaps may still win
      // on the index, hence the strict comparison).
      if (r > 1 && by.size() == k && (r - 2) * grid.cell > by.front().first) break;
      if (!grid.ring(ax0, ay0, ax1, ay1, r, [&](int c) {
            for (int b : cells[c]) offer(b);
          }))
        break;
    }
    std::sort(by.begin(), by.end());
    for (const auto& [g, b] : by) near_[a].push_back(b);
  }
}

std::vector<int> TourPlanner::positions(const Tour& t) const {
  std::vector<int> pos(orients_.size(), -1);
  for (size_t i = 0; i < t.size(); ++i) pos[t[i].trail] = static_cast<int>(i);
  return pos;
}

std::vector<Traversal> TourPlanner::steps_of(int trail, const Orientation& o) const {
  const Trail& t = trails_.trails[trail];
  if (t.kind == Trail::Kind::circle) return {{t.steps[0].prim, o.reverse, o.entry_rad}};
  size_t m = t.steps.size();
  std::vector<Traversal> seq;
  seq.reserve(m);
  for (size_t k = 0; k < m; ++k) seq.push_back(t.steps[(o.rotation + k) % m]);
  if (o.reverse) {
    std::reverse(seq.begin(), seq.end());
    for (auto& s : seq) s.reverse = !s.reverse;
  }
  return seq;
}

std::vector<Leg> TourPlanner::legs_of(int trail, const Orientation& o) const {
  std::vector<Leg> legs;
  for (const Traversal& s : steps_of(trail, o))
    legs.push_back(make_leg(shapes_[s.prim], s.reverse, s.entry_rad, cost_.flat_px));
  return legs;
}

void TourPlanner::add_circle_orientations(int trail, double entry_rad) {
  auto& list = orients_[trail];
  int base = static_cast<int>(list.size());
  for (bool r : {false, true}) {
    Leg l = make_leg(shapes_[trails_.trails[trail].steps[0].prim], r, entry_rad, cost_.flat_px);
    Orientation o;
    o.in_pt = o.out_pt = l.start;
    o.in_h = o.out_h = l.h_in;
    o.reverse = r;
    o.entry_rad = entry_rad;
    o.rev = base + (r ? 0 : 1);
    list.push_back(o);
  }
}

void TourPlanner::add_orientations(int trail) {
  const Trail& t = trails_.trails[trail];
  auto& list = orients_[trail];
  if (t.kind == Trail::Kind::dot) {
    Leg l = make_leg(shapes_[t.steps[0].prim], false, 0, cost_.flat_px);
    Orientation o;
    o.in_pt = o.out_pt = l.start;
    o.in_h = o.out_h = l.h_in;  // NaN: a dot takes whatever heading arrives
    list.push_back(o);
    return;
  }
  if (t.kind == Trail::Kind::circle) {
    for (int k = 0; k < params_.circle_entries; ++k)
      add_circle_orientations(trail, 2 * kPi * k / params_.circle_entries);
    return;
  }
  // Start vertices: an open trail starts at an end; a closed one where the turn it saves is
  // largest (its own internal turning is least), at most closed_starts of them.
  std::vector<int> rotations = {0};
  if (t.kind == Trail::Kind::closed) {
    std::vector<std::pair<double, int>> by_cost;
    for (size_t r = 0; r < t.steps.size(); ++r) {
      Orientation probe;
      probe.rotation = static_cast<int>(r);
      by_cost.emplace_back(choose_bits(legs_of(trail, probe), cost_, std::nullopt, -1, -1, nullptr),
                           static_cast<int>(r));
    }
    std::stable_sort(by_cost.begin(), by_cost.end());
    rotations.clear();
    for (size_t k = 0; k < by_cost.size() && k < static_cast<size_t>(params_.closed_starts); ++k)
      rotations.push_back(by_cost[k].second);
  }
  std::map<std::tuple<int, bool, int, int>, int> index;
  for (int r : rotations)
    for (bool rev : {false, true}) {
      Orientation o;
      o.rotation = r;
      o.reverse = rev;
      std::vector<Leg> legs = legs_of(trail, o);
      for (int bf = 0; bf < cost_.bits(legs.front()); ++bf)
        for (int bl = 0; bl < cost_.bits(legs.back()); ++bl) {
          if (legs.size() == 1 && bf != bl) continue;
          o.bit_first = bf;
          o.bit_last = bl;
          o.in_pt = legs.front().start;
          o.in_h = heading_in(legs.front(), bf);
          o.out_pt = legs.back().end;
          o.out_h = heading_out(legs.back(), bl);
          o.internal_s = choose_bits(legs, cost_, std::nullopt, bf, bl, nullptr);
          index[{r, rev, bf, bl}] = static_cast<int>(list.size());
          list.push_back(o);
        }
    }
  // The same trail drawn the other way turns by the same amounts: share one value so the
  // search's reversal deltas are exact.
  for (size_t k = 0; k < list.size(); ++k) {
    Orientation& o = list[k];
    o.rev = index.at({o.rotation, !o.reverse, o.bit_last, o.bit_first});
    if (static_cast<size_t>(o.rev) < k) o.internal_s = list[o.rev].internal_s;
  }
}

double TourPlanner::trans(const Orientation& a, const Orientation& b) const {
  if (a.id < 0 || b.id < 0) return cost_.transition(a.out_pt, a.out_h, b.in_pt, b.in_h);
  double& t = trans_cache_[static_cast<size_t>(a.id) * cached_ + static_cast<size_t>(b.id)];
  if (std::isnan(t)) t = cost_.transition(a.out_pt, a.out_h, b.in_pt, b.in_h);
  return t;
}

double TourPlanner::least_trip_s(double d) const {
  d = d * (1 - 1e-12) - 1e-9;  // rounding: never above the true cost
  return d > cost_.join_px ? cost_.trip(d) : 0.0;
}

double TourPlanner::from_start(const Orientation& o) const {
  if (!start_) return 0;
  return cost_.transition({start_->x, start_->y}, start_->heading_deg, o.in_pt, o.in_h);
}

double TourPlanner::cost(const Tour& tour) const {
  double c = 0;
  for (size_t i = 0; i < tour.size(); ++i) {
    const Orientation& o = at(tour[i]);
    c += o.internal_s + (i == 0 ? from_start(o) : trans(at(tour[i - 1]), o));
  }
  return c;
}

std::vector<Traversal> TourPlanner::expand(const Tour& tour) const {
  std::vector<Traversal> out;
  for (const Placement& p : tour) {
    auto s = steps_of(p.trail, at(p));
    out.insert(out.end(), s.begin(), s.end());
  }
  return out;
}

Tour TourPlanner::nearest_neighbour_from(int first) const {
  size_t n = orients_.size();
  Tour tour;
  std::vector<bool> used(n, false);
  const Orientation* cur = nullptr;
  if (first >= 0) {
    const auto& list = orients_[first];
    int k = static_cast<int>(std::min_element(list.begin(), list.end(),
                                              [](const Orientation& a, const Orientation& b) {
                                                return a.internal_s < b.internal_s;
                                              }) -
                             list.begin());
    tour.push_back({first, k});
    used[first] = true;
    cur = &list[k];
  }
  // The entry points of every orientation in a grid: the next trail is searched from the cells
  // nearest the current exit outwards, and the search stops once a cell's distance (the pen-up
  // travel it would cost) plus the least time any trail takes inside exceeds the best found
  // (turns only add). Ties go to the lowest (trail, orientation), as in a scan of all of them.
  BBox all;
  double least_inside = INFINITY;
  for (const auto& list : orients_)
    for (const Orientation& o : list) {
      all.add(o.in_pt);
      least_inside = std::min(least_inside, o.internal_s);
    }
  const Grid grid(all, n);
  std::vector<std::vector<Placement>> cells(static_cast<size_t>(grid.w) * grid.h);
  for (size_t u = 0; u < n; ++u)
    for (size_t k = 0; k < orients_[u].size(); ++k) {
      const Vec2 q = orients_[u][k].in_pt;
      cells[static_cast<size_t>(grid.cy(q.y)) * grid.w + grid.cx(q.x)].push_back({static_cast<int>(u), static_cast<int>(k)});
    }
  while (tour.size() < n) {
    double best = INFINITY;
    Placement pick;
    bool picked = false;
    auto consider = [&](int u, int k, double c) {
      if (c < best || (c == best && picked && std::tie(u, k) < std::tie(pick.trail, pick.orient))) {
        best = c;
        pick = {u, k};
        picked = true;
      }
    };
    if (!cur) {
      for (size_t u = 0; u < n; ++u) {
        if (used[u]) continue;
        for (size_t k = 0; k < orients_[u].size(); ++k) consider(static_cast<int>(u), static_cast<int>(k), from_start(orients_[u][k]) + orients_[u][k].internal_s);
      }
    } else {
      grid.nearest_first(
          cells, cur->out_pt, &best, [&](double d) { return least_trip_s(d) + least_inside; },
          [&](const Placement& pl) { return used[pl.trail]; },
          [&](const Placement& pl) {
            const Orientation& o = orients_[pl.trail][pl.orient];
            consider(pl.trail, pl.orient, trans(*cur, o) + o.internal_s);
          });
    }
    tour.push_back(pick);
    used[pick.trail] = true;
    cur = &at(pick);
  }
  return tour;
}

Tour TourPlanner::nearest_neighbour() const {
  int n = static_cast<int>(orients_.size());
  if (start_ || n == 0) return nearest_neighbour_from(-1);
  // Up to 24 first trails, spread over the list; fewer on large drawings, where one greedy
  // pass already scans n x (all orientations) transitions.
  size_t work = 0;
  for (const auto& list : orients_) work += list.size() * n;
  int firsts = static_cast<int>(std::clamp<size_t>(4'000'000 / std::max<size_t>(work, 1), 1, 24));
  firsts = std::min(firsts, n);
  Tour best;
  double best_cost = INFINITY;
  for (int i = 0; i < firsts; ++i) {
    Tour t = nearest_neighbour_from(static_cast<int>(static_cast<long>(i) * n / firsts));
    double c = cost(t);
    if (c < best_cost) {
      best_cost = c;
      best = std::move(t);
    }
  }
  return best;
}

Tour TourPlanner::circuit_order() const {
  const auto& circuits = trails_.circuits;
  std::vector<bool> used(circuits.size(), false);
  Tour tour;
  const Orientation* cur = nullptr;
  // The cheapest way into `trail` from where the robot is; open trails keep the circuit's direction.
  auto entry = [&](int trail) {
    bool open = trails_.trails[trail].kind == Trail::Kind::open;
    double best = INFINITY;
    int pick = 0;
    for (size_t k = 0; k < orients_[trail].size(); ++k) {
      const Orientation& o = orients_[trail][k];
      if (open && o.reverse) continue;
      double c = (cur ? trans(*cur, o) : from_start(o)) + o.internal_s;
      if (c < best) {
        best = c;
        pick = static_cast<int>(k);
      }
    }
    return std::make_pair(best, pick);
  };
  // Every allowed entry (circuit, position, orientation) in a grid, searched nearest-first as in
  // nearest_neighbour_from: the same pick as scanning them all (the least cost, ties to the
  // lowest circuit and position), without comparing every circuit with every other.
  struct Entry {
    int c, j, k;
  };
  BBox all;
  double least_inside = INFINITY;
  for (const auto& circ : circuits)
    for (int trail : circ)
      for (const Orientation& o : orients_[trail]) {
        all.add(o.in_pt);
        least_inside = std::min(least_inside, o.internal_s);
      }
  const Grid grid(all, trails_.trails.size());
  std::vector<std::vector<Entry>> cells(static_cast<size_t>(grid.w) * grid.h);
  for (size_t c = 0; c < circuits.size(); ++c)
    for (size_t j = 0; j < circuits[c].size(); ++j) {
      const int trail = circuits[c][j];
      const bool open = trails_.trails[trail].kind == Trail::Kind::open;
      for (size_t k = 0; k < orients_[trail].size(); ++k) {
        const Orientation& o = orients_[trail][k];
        if (open && o.reverse) continue;
        cells[static_cast<size_t>(grid.cy(o.in_pt.y)) * grid.w + grid.cx(o.in_pt.x)].push_back(
            {static_cast<int>(c), static_cast<int>(j), static_cast<int>(k)});
      }
    }
  for (size_t done = 0; done < circuits.size(); ++done) {
    double best = INFINITY;
    size_t pick_c = 0, pick_j = 0;
    if (!cur) {
      for (size_t c = 0; c < circuits.size(); ++c) {
        if (used[c]) continue;
        for (size_t j = 0; j < circuits[c].size(); ++j) {
          double v = entry(circuits[c][j]).first;
          if (v < best) {
            best = v;
            pick_c = c;
            pick_j = j;
          }
        }
        if (!start_) break;  // nothing to be near to: the first circuit as it is
      }
    } else {
      bool picked = false;
      grid.nearest_first(
          cells, cur->out_pt, &best, [&](double d) { return least_trip_s(d) + least_inside; },
          [&](const Entry& e) { return used[e.c]; },  // its circuit is drawn already
          [&](const Entry& e) {
            const Orientation& o = orients_[circuits[e.c][e.j]][e.k];
            const double v = trans(*cur, o) + o.internal_s;
            if (v < best || (v == best && picked && std::make_pair(size_t(e.c), size_t(e.j)) < std::make_pair(pick_c, pick_j))) {
              best = v;
              pick_c = e.c;
              pick_j = e.j;
              picked = true;
            }
          });
    }
    used[pick_c] = true;
    const auto& circ = circuits[pick_c];
    for (size_t k = 0; k < circ.size(); ++k) {
      int trail = circ[(pick_j + k) % circ.size()];
      tour.push_back({trail, entry(trail).second});
      cur = &at(tour.back());
    }
  }
  return tour;
}

Tour TourPlanner::as_listed(const std::vector<int>& order) {
  Tour tour;
  for (int trail : order) {
    const Trail& t = trails_.trails[trail];
    int pick = 0;
    if (t.kind == Trail::Kind::circle) {
      add_circle_orientations(trail, t.steps[0].entry_rad);
      pick = static_cast<int>(orients_[trail].size()) - (t.steps[0].reverse ? 1 : 2);
    } else {
      double best = INFINITY;
      for (size_t k = 0; k < orients_[trail].size(); ++k) {
        const Orientation& o = orients_[trail][k];
        if (o.reverse || o.rotation != 0) continue;
        const double c = (tour.empty() ? from_start(o) : trans(at(tour.back()), o)) + o.internal_s;
        if (c < best) {
          best = c;
          pick = static_cast<int>(k);
        }
      }
    }
    tour.push_back({trail, pick});
  }
  return tour;
}

bool TourPlanner::two_opt(Tour& t, Focus* focus) const {
  size_t n = t.size();
  bool improved = false;
  std::vector<int> pos = positions(t);
  std::vector<size_t> ends;
  for (size_t i = 0; i < n; ++i) {
    if (focus && !focus->looks(t[i].trail) && !(i > 0 && focus->looks(t[i - 1].trail))) continue;
    // Reversing t[i..j] creates t[i-1] -> t[j] and t[i] -> t[j+1]: try the j that make one
    // of them a transition between near trails (and j = i, reversing t[i] alone).
    ends.assign(1, i);
    if (i > 0)
      for (int w : near_[t[i - 1].trail])
        if (pos[w] >= static_cast<int>(i)) ends.push_back(pos[w]);
    for (int w : near_[t[i].trail])
      if (pos[w] > static_cast<int>(i)) ends.push_back(pos[w] - 1);
    std::sort(ends.begin(), ends.end());
    ends.erase(std::unique(ends.begin(), ends.end()), ends.end());
    for (size_t j : ends) {
      const Orientation &a = at(t[i]), &b = at(t[j]);
      const Orientation &ra = orients_[t[i].trail][a.rev], &rb = orients_[t[j].trail][b.rev];
      double before = i == 0 ? from_start(a) : trans(at(t[i - 1]), a);
      double after = i == 0 ? from_start(rb) : trans(at(t[i - 1]), rb);
      if (j + 1 < n) {
        before += trans(b, at(t[j + 1]));
        after += trans(ra, at(t[j + 1]));
      }
      if (after < before - 1e-9) {
        std::reverse(t.begin() + i, t.begin() + j + 1);
        for (size_t k = i; k <= j; ++k) {
          t[k].orient = at(t[k]).rev;
          pos[t[k].trail] = static_cast<int>(k);
        }
        if (focus) focus->touch(t, i > 0 ? i - 1 : i, std::min(j + 2, n));
        improved = true;
        break;
      }
    }
  }
  return improved;
}

bool TourPlanner::or_opt(Tour& t, Focus* focus) const {
  size_t n = t.size();
  bool improved = false;
  std::vector<int> pos = positions(t);
  // The cost of entering `o` after `prev` (nullptr: from the start).
  auto enter = [&](const Orientation* prev, const Orientation& o) { return prev ? trans(*prev, o) : from_start(o); };
  for (size_t len = 1; len <= 3 && len < n; ++len)
    for (size_t i = 0; i + len <= n; ++i) {
      if (focus && !focus->looks_at(t, i > 0 ? i - 1 : i, std::min(i + len + 1, n))) continue;
      const Orientation* prev = i > 0 ? &at(t[i - 1]) : nullptr;
      const Orientation* next = i + len < n ? &at(t[i + len]) : nullptr;
      const Orientation &first = at(t[i]), &last = at(t[i + len - 1]);
      double removed = enter(prev, first) + (next ? trans(last, *next) - enter(prev, *next) : 0);
      // The rest of the tour without the run: rest(q) for q in [0, n - len).
      auto rest = [&](size_t q) -> const Placement& { return q < i ? t[q] : t[q + len]; };
      // Insert before rest(q): at the ends, or next to a trail near the run's ends.
      std::vector<size_t> qs = {0, n - len};
      for (const Placement* e : {&t[i], &t[i + len - 1]})
        for (int w : near_[e->trail]) {
          size_t p = static_cast<size_t>(pos[w]);
          if (p >= i && p < i + len) continue;
          size_t r = p < i ? p : p - len;
          qs.push_back(r);
          qs.push_back(r + 1);
        }
      std::sort(qs.begin(), qs.end());
      qs.erase(std::unique(qs.begin(), qs.end()), qs.end());
      double best = -1e-9;
      size_t best_q = 0;
      bool best_flip = false;
      for (size_t q : qs) {
        if (q == i) continue;  // where it was
        const Orientation* a = q > 0 ? &at(rest(q - 1)) : nullptr;
        const Orientation* b = q < n - len ? &at(rest(q)) : nullptr;
        for (bool flip : {false, true}) {
          const Orientation& f = flip ? orients_[t[i + len - 1].trail][last.rev] : first;
          const Orientation& l = flip ? orients_[t[i].trail][first.rev] : last;
          double added = enter(a, f) + (b ? trans(l, *b) - enter(a, *b) : 0);
          if (added - removed < best) {
            best = added - removed;
            best_q = q;
            best_flip = flip;
          }
        }
      }
      if (best >= -1e-9) continue;
      const int was_prev = i > 0 ? t[i - 1].trail : -1, was_next = i + len < n ? t[i + len].trail : -1;
      // The run moves to positions best_q.. of the new tour: rotate the stretch between its old
      // and its new place, and renumber only that stretch.
      const size_t lo = std::min(i, best_q), hi = std::max(i, best_q) + len;
      std::rotate(t.begin() + lo, t.begin() + (best_q < i ? i : i + len), t.begin() + hi);
      if (best_flip) {
        std::reverse(t.begin() + best_q, t.begin() + best_q + len);
        for (size_t k = best_q; k < best_q + len; ++k) t[k].orient = at(t[k]).rev;
      }
      for (size_t k = lo; k < hi; ++k) pos[t[k].trail] = static_cast<int>(k);
      if (focus) {
        for (int w : {was_prev, was_next})  // now next to each other
          if (w >= 0) focus->touch(w);
        focus->touch(t, best_q > 0 ? best_q - 1 : 0, std::min(best_q + len + 1, n));
      }
      improved = true;
    }
  return improved;
}

bool TourPlanner::reorient(Tour& t, Focus* focus) const {
  size_t n = t.size();
  bool improved = false;
  for (size_t i = 0; i < n; ++i) {
    const size_t lo = i > 0 ? i - 1 : i, hi = std::min(i + 2, n);
    if (focus && !focus->looks_at(t, lo, hi)) continue;
    auto around = [&](const Orientation& o) {
      double c = o.internal_s + (i == 0 ? from_start(o) : trans(at(t[i - 1]), o));
      if (i + 1 < n) c += trans(o, at(t[i + 1]));
      return c;
    };
    double best = around(at(t[i])) - 1e-9;
    const auto& list = orients_[t[i].trail];
    for (size_t k = 0; k < list.size(); ++k) {
      double c = around(list[k]);
      if (c < best) {
        best = c;
        t[i].orient = static_cast<int>(k);
        improved = true;
        if (focus) focus->touch(t, lo, hi);
      }
    }
  }
  return improved;
}

void TourPlanner::improve(Tour& tour) const {
  // Sweeps over the whole tour take more passes to settle the longer the tour, so above
  // full_sweeps_max trails a pass after the first tries moves only next to the places the moves
  // of the last pass changed (Bentley's "don't look bits"): the work then follows the changes,
  // and a 100,000-primitive drawing routes in time linear in its size. Smaller drawings are
  // swept whole every pass, as their tours always were.
  std::optional<Focus> focus;
  if (tour.size() > static_cast<size_t>(params_.full_sweeps_max))
    focus.emplace(Focus{std::vector<char>(orients_.size(), 1), std::vector<char>(orients_.size(), 0)});
  passes(tour, focus ? &*focus : nullptr);
}

void TourPlanner::passes(Tour& tour, Focus* f) const {
  for (int pass = 0; pass < params_.max_passes; ++pass) {
    bool a = two_opt(tour, f);
    bool b = or_opt(tour, f);
    bool c = reorient(tour, f);
    if (!a && !b && !c) break;
    if (f) {
      f->look.swap(f->next);
      std::fill(f->next.begin(), f->next.end(), 0);
    }
  }
}

void TourPlanner::explore(Tour& tour, int rounds) const {
  const size_t n = tour.size();
  if (n < 5) return;
  std::mt19937 rng(20261206);
  const size_t window = std::min<size_t>(n - 1, 30);  // the cuts' spread: a local kick
  double best = cost(tour);
  for (int r = 0; r < rounds; ++r) {
    const size_t a = std::uniform_int_distribution<size_t>(1, n - 1)(rng);
    const size_t hi = std::min(n - 1, a + window);
    if (hi < a + 2) continue;
    size_t b = std::uniform_int_distribution<size_t>(a + 1, hi - 1)(rng);
    size_t c = std::uniform_int_distribution<size_t>(b + 1, hi)(rng);
    Tour u(tour.begin(), tour.begin() + static_cast<long>(a));
    u.insert(u.end(), tour.begin() + static_cast<long>(b), tour.begin() + static_cast<long>(c));
    u.insert(u.end(), tour.begin() + static_cast<long>(a), tour.begin() + static_cast<long>(b));
    u.insert(u.end(), tour.begin() + static_cast<long>(c), tour.end());
    // Only the three new joints are looked at first: the moves then follow what they change,
    // so a round costs about a pass over the tour whatever its length.
    Focus f{std::vector<char>(orients_.size(), 0), std::vector<char>(orients_.size(), 0)};
    for (size_t k : {a, b, c}) f.touch(u, k - 1, std::min(k + 1, n));
    std::fill(f.next.begin(), f.next.end(), 0);
    passes(u, &f);
    if (const double cu = cost(u); cu < best - 1e-9) {
      best = cu;
      tour = std::move(u);
    }
  }
}

void TourPlanner::refine_circles(Tour& tour) {
  size_t n = tour.size();
  for (size_t i = 0; i < n; ++i) {
    int trail = tour[i].trail;
    if (trails_.trails[trail].kind != Trail::Kind::circle) continue;
    if (i == 0 && !start_ && n == 1) continue;
    const Shape& s = shapes_[trails_.trails[trail].steps[0].prim];
    auto around = [&](double entry, bool rev) {
      Leg l = make_leg(s, rev, entry, cost_.flat_px);
      Orientation o;
      o.in_pt = o.out_pt = l.start;
      o.in_h = o.out_h = l.h_in;
      double c = i == 0 ? from_start(o) : trans(at(tour[i - 1]), o);
      if (i + 1 < n) c += trans(o, at(tour[i + 1]));
      return c;
    };
    // Sample every half degree, then a golden-section search within the best sample's bracket.
    constexpr int kSamples = 720;
    double best = INFINITY, best_entry = 0;
    bool best_rev = false;
    for (bool rev : {false, true})
      for (int k = 0; k < kSamples; ++k) {
        double e = 2 * kPi * k / kSamples, c = around(e, rev);
        if (c < best) {
          best = c;
          best_entry = e;
          best_rev = rev;
        }
      }
    const double g = (std::sqrt(5.0) - 1) / 2;
    double lo = best_entry - 2 * kPi / kSamples, hi = best_entry + 2 * kPi / kSamples;
    for (int it = 0; it < 40; ++it) {
      double m1 = hi - g * (hi - lo), m2 = lo + g * (hi - lo);
      if (around(m1, best_rev) < around(m2, best_rev)) hi = m2;
      else lo = m1;
    }
    double e = (lo + hi) / 2;
    if (around(e, best_rev) < best) best_entry = e;
    const Orientation& cur = at(tour[i]);
    if (around(best_entry, best_rev) >= around(cur.entry_rad, cur.reverse) - 1e-9) continue;
    add_circle_orientations(trail, best_entry);
    tour[i].orient = static_cast<int>(orients_[trail].size()) - (best_rev ? 1 : 2);
  }
}

}  // namespace sv
