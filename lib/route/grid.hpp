// A uniform grid of cells over a set of boxes or points, for routing's searches near a place.
#pragma once
#include <algorithm>
#include <cmath>
#include <vector>

#include "core/geometry.hpp"

namespace sv {

// With a cell of about the typical spacing, a search visits a few cells per query instead of
// every item, and a nearest-first one stops once no unvisited cell can hold a better answer, so
// the results are exactly those of the exhaustive scans they replace (same costs, same
// tie-breaking).
struct Grid {
  double x0 = 0, y0 = 0, cell = 1;
  int w = 1, h = 1;
  Grid(const BBox& all, size_t items) {
    x0 = all.x0;
    y0 = all.y0;
    const double sx = std::max(all.x1 - all.x0, 0.0), sy = std::max(all.y1 - all.y0, 0.0);
    cell = std::sqrt(std::max(sx * sy, 1.0) / std::max<size_t>(items, 1));
    cell = std::max({cell, std::max(sx, sy) / 4096, 1e-6});  // at most 4096 cells a side
    w = std::max(1, static_cast<int>(sx / cell) + 1);
    h = std::max(1, static_cast<int>(sy / cell) + 1);
  }
  // Cell coordinates, clamped: a point outside the grid goes to the nearest cell.
  int cx(double x) const { return static_cast<int>(std::clamp(std::floor((x - x0) / cell), 0.0, w - 1.0)); }
  int cy(double y) const { return static_cast<int>(std::clamp(std::floor((y - y0) / cell), 0.0, h - 1.0)); }
  // Calls f(cell index) for the cells of Chebyshev ring r around the cell range [ax0..ax1] x
  // [ay0..ay1]; returns false when the ring lies wholly outside the grid. Every point first met
  // in ring r is at least (r - 1) * cell from any point in the range (the searches allow one more
  // ring for rounding at the cell borders).
  template <class F>
  bool ring(int ax0, int ay0, int ax1, int ay1, int r, F&& f) const {
    if (r > 0 && ax0 - (r - 1) <= 0 && ay0 - (r - 1) <= 0 && ax1 + (r - 1) >= w - 1 && ay1 + (r - 1) >= h - 1)
      return false;
    const int x_lo = ax0 - r, x_hi = ax1 + r, y_lo = ay0 - r, y_hi = ay1 + r;
    for (int y = std::max(y_lo, 0); y <= std::min(y_hi, h - 1); ++y) {
      const bool edge_row = y == y_lo || y == y_hi;
      if (edge_row || r == 0) {
        for (int x = std::max(x_lo, 0); x <= std::min(x_hi, w - 1); ++x) f(y * w + x);
      } else {
        if (x_lo >= 0) f(y * w + x_lo);
        if (x_hi < w) f(y * w + x_hi);
      }
    }
    return true;
  }
  // The greedy orders' search for the next item: visits the items listed in the cells from the
  // cell of p outwards, dropping those `gone` says are drawn already, until least(distance), no
  // more than any item at least that far costs, exceeds the best cost `visit` has found so far
  // (*best).
  template <class T, class Least, class Gone, class Visit>
  void nearest_first(std::vector<std::vector<T>>& cells, Vec2 p, const double* best, Least&& least, Gone&& gone,
                     Visit&& visit) const {
    const int px = cx(p.x), py = cy(p.y);
    for (int r = 0;; ++r) {
      if (r > 1 && least((r - 2) * cell) > *best) return;
      if (!ring(px, py, px, py, r, [&](int c) {
            auto& list = cells[c];
            for (size_t i = 0; i < list.size();) {
              if (gone(list[i])) {
                list[i] = list.back();
                list.pop_back();
                continue;
              }
              visit(list[i]);
              ++i;
            }
          }))
        return;
    }
  }
};

}  // namespace sv
