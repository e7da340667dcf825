// Segmentation of a polyline into the fewest lines and arcs within tolerance.
#pragma once
#include <cstdint>
#include <optional>
#include <unordered_map>
#include <vector>

#include "fit/params.hpp"
#include "fit/moments.hpp"
#include "fit/primitive_fit.hpp"

namespace sv::fitting {

// A piece of a chain: its shape and the inclusive index range of the points it covers.
struct Piece {
  Shape shape;
  int i0 = 0, i1 = 0;
};

struct Corner {
  int index = 0;
  double turn_rad = 0;
};

// Sharp corners: points where the direction turns by at least corner_angle_deg between the
// chords to the points corner_window_px before and after, the turn is concentrated there (over
// twice the window it grows by less than half, where on an arc it would double), and it is the
// largest turn within the window. On a cyclic polyline the windows wrap around. By index.
std::vector<Corner> find_corners(Points pts, bool cyclic, const FitParams& p);

// The ink's concentrated turn at each point `at` of pts (radians, >= 0): 2 t(w) - t(2w),
// clamped at 0, t(w) the unsigned turn between the chords from w before the point and to w
// after it. Near 0 on a smooth curve of any curvature (there t grows with the window), near phi
// at a corner of angle phi (there it does not). On an open polyline a window is cut at its end.
std::vector<double> ink_corner_turns(Points pts, bool cyclic, const std::vector<int>& at, double w);

// The robot's time for pieces drawn in a row, turning in place at every kink.
double run_time_s(const std::vector<Shape>& shapes, double ppi);

class Segmenter {
 public:
  Segmenter(Points pts, const FitParams& p);
  // The pieces covering [i0, i1]: those of the fewest (breakpoints), or with piece_cost > 0 a
  // cover of more pieces where it shows other structure (richer_cover).
  std::vector<Piece> cover(int i0, int i1) const;
  // The free fit of points [i, j]: a line when one is within tolerance, else an arc; nullopt
  // when neither is.
  std::optional<Shape> fit_span(int i, int j) const;
  // fit_span of [i, j] as one piece; where even that fails (rare: admissibility is not
  // exactly hereditary), the halves, recursively.
  std::vector<Piece> fit_pieces(int i, int j) const;

 private:
  bool line_fits(int i, int j) const;
  bool line_within(int i, int j) const;
  // An arc within tolerance: Kasa's circle when it fits (enough to decide admissibility),
  // refined by Gauss-Newton on radial residuals when it does not or when `geometric`.
  std::optional<Shape> arc_fits(int i, int j, bool geometric) const;
  bool fits(int i, int j, bool lines_only) const;
  // Furthest j in [known_good, limit] with fits(i, j), by galloping then bisection from a j
  // known to fit.
  int reach_forward(int i, int known_good, int limit, bool lines_only) const;
  // Smallest i in [limit, known_good] with fits(i, j).
  int reach_backward(int j, int known_good, int limit) const;
  double span_cost(int i, int j, bool as_line) const;
  // Breakpoints i0 = b0 < b1 < ... < bK = i1 of the fewest pieces covering [i0, i1].
  //
  // Every sub-span of an admissible span is admissible, so the greedy furthest reach from
  // either end gives the fewest pieces K, and bounds where the k-th breakpoint of any K-piece
  // cover can lie: between the k-th backward and forward greedy breakpoints. A dynamic program
  // over those windows then minimizes the description length, sum over pieces of
  // (arc_cost if an arc) + squared residuals / tolerance^2, with O(1) residuals from moments.
  std::vector<int> breakpoints(int i0, int i1) const;
  std::vector<int> cheapest_cover(const std::vector<int>& forward,
                                  const std::vector<int>& backward) const;
  struct Cover;
  Cover cover_of(const std::vector<int>& breakpoints) const;
  // A cover of the same span with more pieces than the fewest (`few`, at breakpoints `fewest`)
  // where they describe the points better by more than piece_cost each (a short line between
  // two arcs that one flat arc would swallow within tolerance); nullopt where none does.
  std::optional<Cover> richer_cover(const std::vector<int>& fewest, const Cover& few) const;

  Points pts_;
  const FitParams& p_;
  SpanMoments moments_;
  double tol_;
  // Answers of line_fits and of arc_fits' admissibility, by span.
  static uint64_t span_key(int i, int j) { return static_cast<uint64_t>(i) << 32 | static_cast<uint32_t>(j); }
  mutable std::unordered_map<uint64_t, bool> line_fits_, arc_fits_;
};

// Pieces covering the segmenter's points from fixed.front() to fixed.back(), with a
// breakpoint at each index of `fixed` (sorted).
std::vector<Piece> segment_polyline(const Segmenter& seg, const std::vector<int>& fixed);

}  // namespace sv::fitting
