// Tangent-continuous runs (G1): where the ink of a stroke has no corner, consecutive pieces
// meet with one tangent, so the robot draws through the joint without stopping to turn.
//
// Method, per chain:
//   1. each joint is classified from the ink: the turn the trace makes there beyond what its
//      curvature explains, 2 t(w) - t(2w), t(w) the turn between the chords w before and w after
//      the joint (w = fit.smooth_window_px, the stroke width): near 0 on a smooth curve of any
//      curvature, near phi at a corner of angle phi. A joint turning less than
//      fit.smooth_joint_deg is smooth;
//   2. a maximal run of pieces joined smoothly is refitted with its joints as the unknowns —
//      position and heading at each; a line runs from joint to joint, an arc leaves its joint
//      along the joint's heading and ends at the next — so that tangent continuity is one
//      equation per arc (it arrives along the next joint's heading) and two per line (both
//      headings along it). Levenberg-Marquardt minimizes the points' distances to their pieces
//      (the curvature form of the circle distance, smooth through curvature 0) plus the
//      equations' residuals at weights raised in turn from 10 to 1e7, so the fit moves from the
//      kinked pieces to a smooth curve through nearby minima; Newton steps of least norm then
//      make the equations exact. Each inner boundary moves to the point nearest its joint as
//      the joints move; the run's ends (corners, junctions, free ends) stay;
//   3. a run that leaves the tolerance (or the largest distance its pieces had) gets its worst
//      line turned into an arc, or its worst arc split, twice at most; failing that, or where
//      the robot would draw the smooth run slower than the kinked one with its turns, it is
//      cut at its sharpest joint and each part is tried again.
#pragma once
#include <vector>

#include "fit/segment.hpp"

namespace sv::fitting {

// The ink's concentrated turn at point k of pts (radians, >= 0): 2 t(w) - t(2w), clamped at 0,
// t(w) the unsigned turn between the chords from w before to k and from k to w after. On an
// open polyline a window is cut at its end (the turn over what there is).
double ink_corner_turn(Points pts, bool cyclic, int k, double w);

// Makes the smooth runs of a chain (as join_chain leaves it: consecutive pieces share their
// ends; on a closed chain pts repeats its first point at the end and indices are unrolled)
// tangent-continuous, within tolerance. The ends of every run (the chain's ends, its corners)
// stay where they are.
void make_tangent_continuous(std::vector<Piece>& pieces, Points pts, bool closed, const FitParams& p);

}  // namespace sv::fitting
