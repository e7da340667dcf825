// Stage 2 of routing: the order in which the trails are drawn and how each is entered.
//
// Every trail has a few orientations: its direction, the driving direction (forwards or
// backwards) of a straight first and last leg, the start vertex of a closed trail, the entry
// angle and sense of a free circle. A tour is a sequence of (trail, orientation); its time is
// the turns inside the trails plus the transitions between them (turn, pen-up line, turn) from
// the motion model. The search is the reference's: nearest-neighbour seeds (and the Euler
// circuits' own order), then 2-opt with segment reversal, or-opt moves of up to three trails
// with optional reversal, and re-orientation of single trails, all first-improvement with O(1)
// deltas (transitions are symmetric under reversal). As in Lin-Kernighan implementations, the
// moves only consider new transitions between near trails (candidate lists of the 16 nearest),
// which keeps a pass linear in the number of trails; free circles then get a continuous entry
// angle for their neighbours.
#pragma once
#include <optional>
#include <vector>

#include "route/trails.hpp"

namespace sv {

struct Orientation {
  Vec2 in_pt, out_pt;
  double in_h = 0, out_h = 0;  // heading on entry and exit, degrees; NaN = any (dots)
  double internal_s = 0;       // turns inside the trail
  int rev = 0;                 // the orientation that draws the same trail the other way
  int rotation = 0;            // closed trails: index of the first step
  bool reverse = false;
  int bit_first = 0, bit_last = 0;  // driving direction of the first and last leg
  double entry_rad = 0;             // free circles
  int id = -1;                      // index in the planner's transition cache (-1: not cached)
};

struct Placement {
  int trail = 0, orient = 0;
};
using Tour = std::vector<Placement>;

struct OrderParams {
  int circle_entries = 24;     // entry angles tried per free circle during the search
  int closed_starts = 16;      // start vertices tried per closed trail
  int max_passes = 50;         // improvement passes over the tour
  int full_sweeps_max = 5000;  // trails up to which every pass tries every move (see improve)
};

class TourPlanner {
 public:
  TourPlanner(const TrailSet& trails, const std::vector<Shape>& shapes, const CostModel& cost,
              const OrderParams& params, std::optional<Pose> start);

  // Greedy nearest neighbour on the true transition time, from the start pose or, without
  // one, the best of several first trails (24 on small drawings).
  Tour nearest_neighbour() const;
  // The Euler circuits' own order (trails joined by their matched pen-up edges), circuits
  // taken nearest-first.
  Tour circuit_order() const;
  // The trails in the order given, each drawn as its steps list it (a circle entered where and
  // in the sense its step says), the driving directions of its first and last legs those that
  // cost least after the trail before: a given tour, to improve from.
  Tour as_listed(const std::vector<int>& order);
  // Local search until no move helps (or max_passes).
  void improve(Tour& tour) const;
  // Iterated local search: `rounds` times, a double bridge (three cuts close together, the two
  // middle runs swapped: a move 2-opt and or-opt cannot undo) followed by improve()'s moves at
  // the three new joints and wherever those moves lead (don't-look bits: a round costs about one
  // pass whatever the tour's length); a result is kept only when cost() is lower, so the tour
  // never gets worse. Deterministic (a fixed seed).
  void explore(Tour& tour, int rounds) const;
  // Moves each free circle's entry point and sense to the best continuous angle for its
  // neighbours in the tour.
  void refine_circles(Tour& tour);
  // Time of turns and transitions (drawing time excluded: it does not depend on the order).
  double cost(const Tour& tour) const;
  // The tour as primitives in drawing order.
  std::vector<Traversal> expand(const Tour& tour) const;

 private:
  std::vector<Traversal> steps_of(int trail, const Orientation& o) const;
  std::vector<Leg> legs_of(int trail, const Orientation& o) const;
  void add_orientations(int trail);
  // Both senses of a circle entered at entry_rad (the second is the first's reverse).
  void add_circle_orientations(int trail, double entry_rad);
  const Orientation& at(const Placement& p) const { return orients_[p.trail][p.orient]; }
  double trans(const Orientation& a, const Orientation& b) const;
  double from_start(const Orientation& o) const;
  // No pen-up trip of length d costs less than this (a trip within join_px may cost nothing).
  double least_trip_s(double d) const;
  Tour nearest_neighbour_from(int first) const;
  std::vector<int> positions(const Tour& t) const;
  // Which trails a pass of improve() tries moves at, on long tours: those a move touched in the
  // last pass (look), and those touched in this one (next; also looked at for the rest of it).
  struct Focus {
    std::vector<char> look, next;
    bool looks(int trail) const { return look[trail]; }
    bool looks_at(const Tour& t, size_t lo, size_t hi) const {
      for (size_t k = lo; k < hi; ++k)
        if (look[t[k].trail]) return true;
      return false;
    }
    void touch(int trail) { look[trail] = next[trail] = 1; }
    void touch(const Tour& t, size_t lo, size_t hi) {
      for (size_t k = lo; k < hi; ++k) touch(t[k].trail);
    }
  };
  // improve()'s passes; with a focus, only at the trails it looks at and those moves touch.
  void passes(Tour& tour, Focus* focus) const;
  bool two_opt(Tour& t, Focus* focus) const;
  bool or_opt(Tour& t, Focus* focus) const;
  bool reorient(Tour& t, Focus* focus) const;

  const TrailSet& trails_;
  const std::vector<Shape>& shapes_;
  CostModel cost_;
  OrderParams params_;
  std::optional<Pose> start_;
  std::vector<std::vector<Orientation>> orients_;  // per trail
  std::vector<std::vector<int>> near_;             // per trail, the nearest others
  // trans() between the orientations built with the planner, each pair computed once: the
  // search asks for the same pairs many times (nearest neighbour from 24 starts, every pass of
  // improve). Only up to kCachedOrientations (an 8 MiB table); NaN = not yet computed.
  static constexpr size_t kCachedOrientations = 1024;
  size_t cached_ = 0;
  mutable std::vector<double> trans_cache_;
};

}  // namespace sv
