// What the stroke graph measured when a rule decided part of it, kept in the scene so that the
// thresholds that decided it can be named afterwards with the figures they were compared with
// (ExplainThreshold).
#pragma once
#include <string>

namespace sv {

// A filled mark (graph/filled.hpp), on the edges that stand for it.
struct MarkRecord {
  bool loop = false;      // found as a small loop filled in (graph.filled_loop_*), else a filled mark
  std::string drawn_as;   // "cover" (a mark), "outline" or "dot" (a loop); "path" from earlier versions
  double diameter_px = 0; // its largest inscribed ink disc
  // Loops: the share of the core (ink more than w/2 from paper) farther than graph.filled_loop_reach_px
  // from every stroke, and the reach from which that share falls under a third.
  double unreached = 0, flip_reach_px = 0;
  bool operator==(const MarkRecord&) const = default;
};

// A stem that touches a circle tangentially (graph/junctions.cpp, resolve_tangent_circle) or ends
// on an arc along its tangent (resolve_tangent_arc), on the junction placed at the contact.
struct TangentRecord {
  bool arc = false;             // on an arc (only the offsets decide), else on a closed loop's circle
  int stems = 1;                // 1: the stem ends on the circle; 2: it runs through the contact
  double meet_deg = 0;          // angle between the stem's line and the circle
  double line_gap_px = 0;       // how far the stem's line passes outside the circle (< 0: inside)
  double circle_off_px = 0;     // largest distance of the circle's own ink from it
  bool operator==(const TangentRecord&) const = default;
};

}  // namespace sv
