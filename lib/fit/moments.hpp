// Prefix sums of the raw moments x^a y^b (a + b <= 4) of a point sequence, so that the
// residual of the best line or circle over any span [i, j] costs O(1). The dynamic program
// compares many candidate spans; only the chosen ones are fitted point by point.
//
// The sums run over the centreline sampled every pixel or closer: the points, and between two
// points farther apart the ones densify() would add. Residuals, and the costs and screens made
// of them, so weigh the trace the same whatever spacing the graph stores (graph.point_spacing_px:
// a diagonal pixel step is one step at 1.5 px, two at 1 px).
#pragma once
#include <array>
#include <optional>
#include <vector>

#include "core/geometry.hpp"
#include "fit/primitive_fit.hpp"

namespace sv::fitting {

class SpanMoments {
 public:
  explicit SpanMoments(Points pts);
  // Samples in [i, j]: the points and those added between them.
  double samples(int i, int j) const { return sum(i, j, 0); }
  // Residual sum of squares of the orthogonal-regression line over the samples of [i, j].
  double line_sse(int i, int j) const;
  // Residual sum of squares of Kasa's circle over [i, j], converted to geometric units
  // (an algebraic residual d^2 - r^2 is about 2r times the radial one); +inf when degenerate.
  double circle_sse(int i, int j) const;
  // Kasa's circle over [i, j] when its circle_sse is at most max_sse; nullopt when it is not,
  // or when the points are collinear or too few.
  std::optional<Circle> circle_within(int i, int j, double max_sse) const;

 private:
  static constexpr int kOrder = 4;
  using Sums = std::array<double, 15>;  // index (a, b) -> a * (11 - a) / 2 + b, a + b <= 4
  static int slot(int a, int b) { return a * (2 * kOrder + 3 - a) / 2 + b; }
  // Central moments mu[a][b] (2 <= a + b <= Order; of the fourth order only u^4, u^2 v^2 and
  // v^4) of [i, j] about its own centroid. A line needs the second order only.
  template <int Order>
  void central(int i, int j, double mu[5][5]) const;
  struct Kasa {
    Vec2 center;  // relative to the span's centroid
    double r2 = 0, residual = 0;
    Vec2 centroid;
  };
  std::optional<Kasa> kasa(int i, int j) const;

  double sum(int i, int j, int s) const { return prefix_[at_[j] + 1][s] - prefix_[at_[i]][s]; }

  Vec2 origin_;
  std::vector<Sums> prefix_;  // prefix_[m] = sums over samples [0, m)
  std::vector<int> at_;       // at_[k] = the sample of point k
};

}  // namespace sv::fitting
