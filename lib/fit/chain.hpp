// Turning independently fitted pieces into one continuous chain.
#pragma once
#include <optional>
#include <vector>

#include "fit/segment.hpp"

namespace sv::fitting {

// A chain's points by unrolled index: on a closed chain (pts repeats its first point at the
// end) indices wrap around, so a span may run across the start.
class ChainPoints {
 public:
  ChainPoints(Points pts, bool closed)
      : pts_(pts), closed_(closed), m_(static_cast<int>(pts.size()) - 1) {}
  Vec2 at(int k) const { return closed_ ? pts_[((k % m_) + m_) % m_] : pts_[k]; }
  Polyline span(int a, int b) const {
    Polyline out;
    for (int k = a; k <= b; ++k) out.push_back(at(k));
    return out;
  }
  // The index in [lo, hi] of the point nearest q (`fallback` when the range is empty).
  int nearest(int lo, int hi, Vec2 q, int fallback) const {
    int best = fallback;
    for (int k = lo; k <= hi; ++k)
      if (dist(at(k), q) < dist(at(best), q)) best = k;
    return best;
  }
  int last() const { return m_; }

 private:
  Points pts_;
  bool closed_;
  int m_;
};

// The exact point where piece a (ending at breakpoint q) and piece b (starting there) meet:
// at a corner (their directions differ by join_corner_deg or more) the intersection of their
// curves nearest q, if within join_max_px of q; at a smooth join of a line and an arc, or of
// two arcs, the point where their curves touch (the curves fix it far better than the
// residuals fix a breakpoint where a curve leaves its tangent). nullopt when there is none.
std::optional<Vec2> exact_joint(const Shape& a, const Shape& b, Vec2 q, const FitParams& p);
// The fallback joint: q projected onto both curves, averaged.
Vec2 projected_joint(const Shape& a, const Shape& b, Vec2 q);

// Makes pieces (covering pts in order, consecutive ones sharing a breakpoint) one continuous
// chain. Each joint is the exact joint when that keeps both neighbours within tolerance, else
// whichever of the exact joint and the breakpoint projected onto either curve or both
// (averaged) leaves the neighbours closest to their points; its breakpoint moves to the
// point nearest it. Open ends sit at `start`/`end` (default: the end points projected
// onto their pieces). A closed chain (pts repeats its first point at the end) ends where it
// starts: at `start` when given, else at its closing joint, whose breakpoint may move across
// the start; the return value is that move (points; negative: backwards), and the first and
// last spans are then given in unrolled indices (first.i0 = move, last.i1 = m + move).
// Finally each piece is refitted between its joints: the segment for a line; for an arc, the
// best arc between them turning the same way, or the segment when that is within tolerance or
// closer.
int join_chain(std::vector<Piece>& pieces, Points pts, bool closed, std::optional<Vec2> start,
               std::optional<Vec2> end, const FitParams& p);

// Corners the tracing cut: where two lines (each longer than the cut) turn by
// corner_angle_deg or more (less than a reversal: a hook's tip is where its trace ends)
// across one or two short lines or arcs whose points stay within corner_cut_px of the two
// lines extended to their intersection, and come that near the intersection itself, the
// short pieces go and the two lines meet at the intersection. A pencil or blurred stroke's
// corner is traced across with its centreline corner still inside the ink (a pencil's
// rounded tip often as a short arc); the segmentation alone keeps the cut as a primitive. A
// closed chain (as join_chain gives it) whose closing joint is absorbed starts again at the
// joint after its middle piece, unless its start is pinned; the return value is that move of
// its start (points, as join_chain's), 0 when it stays.
int absorb_corner_cuts(std::vector<Piece>& pieces, Points pts, bool closed, bool pinned_start,
                       const FitParams& p);

// Splits arcs sweeping more than max_sweep_deg into halves (the point span split where the
// points pass the arc's middle).
void split_long_arcs(std::vector<Piece>& pieces, Points pts, const FitParams& p);

}  // namespace sv::fitting
