// Fewer, longer moves for the robot: merging runs of adjacent pieces of a chain under a looser
// tolerance than the one they were fitted at (sv-fit --fast).
//
// The robot stops at every command and a move's time grows like the square root of its length,
// so one move instead of two saves time; but a merged piece that leaves its neighbours at an
// angle costs spins the smooth original did not need. Fitting at the loose tolerance from the
// start finds the fewest pieces and puts cusps into round corners and bumps into straight
// edges; merging a faithful fit keeps its corners and tangent joins and takes only the merges
// the motion model says are faster.
#pragma once
#include <vector>

#include "fit/segment.hpp"

namespace sv::fitting {

// Merges runs of two or three consecutive pieces (joined: each starts where the previous one
// ends) into one line or arc between the run's outer ends, or turns one arc into a line, where
// that stays within `tolerance` of the points the run covers and lowers the chain's drawing time
// at `ppi` (each piece's move plus the spin at each joint, closing joint included when `closed`,
// lines driven whichever way turns less), the largest saving first. Runs do not cross a closed
// chain's start.
void merge_for_robot(std::vector<Piece>& pieces, Points pts, bool closed, double tolerance, double ppi,
                     const FitParams& p);

}  // namespace sv::fitting
