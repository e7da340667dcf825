// What the stroke graph measured of a filled mark (graph/filled.hpp) when it replaced the mark's
// ink by a stroke: kept on the mark's edges in the scene, so that the thresholds that decided it
// can be named afterwards with the figures they were compared with (ExplainThreshold).
#pragma once
#include <string>

namespace sv {

struct MarkRecord {
  bool loop = false;      // found as a small loop filled in (graph.filled_loop_*), else a filled mark
  std::string drawn_as;   // "outline", "path" or "dot"
  double diameter_px = 0; // its largest inscribed ink disc
  // Loops: the share of the core (ink more than w/2 from paper) farther than graph.filled_loop_reach_px
  // from every stroke, and the reach from which that share falls under a third.
  double unreached = 0, flip_reach_px = 0;
  bool operator==(const MarkRecord&) const = default;
};

}  // namespace sv
