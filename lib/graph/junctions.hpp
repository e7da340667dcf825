// Junctions and crossings. Thinning turns the blob where strokes meet into a small cluster
// of nodes and bends every arm towards it; a crossing of thick or shallow strokes becomes
// two 3-way nodes joined by a short "ribbon" of merged ink. Here nodes of one physical
// junction are merged, crossings are resolved into strokes that run straight through, and
// the remaining junctions are moved to where their arms actually meet.
#pragma once
#include "graph/stroke_graph.hpp"

namespace sv::graph {

struct JunctionOptions {
  double merge_length = 4;     // junction nodes joined by a shorter edge are one junction
  double crossing_length = 12; // two 3-way junctions joined by a shorter edge may be a crossing
  double arm_skip = 4;         // an arm's direction is measured beyond this distance ...
  double arm_window = 4;       // ... over this length of it
  double trim = 3;             // arm points closer to the junction point are replaced by a straight run
  double max_turn_deg = 40;    // a stroke through a crossing bends at most this much
  double max_offset = 2;       // every arm's line passes this close to the crossing point
};

// 1. Merges junction nodes joined by an edge shorter than merge_length.
// 2. Pairs arms of 4-way (and 2k-way) junctions, and of two 3-way junctions joined by a
//    ribbon shorter than crossing_length, into strokes through a crossing: every pair must
//    continue straight (tangents anti-parallel within max_turn_deg, measured outside the
//    blob) and every arm's line must pass near the common crossing point (least-squares
//    intersection of the arm lines). Paired arms are joined into one edge through that
//    point; two arms of one edge close it into a loop.
// 3. Moves each remaining junction to the least-squares meeting point of its arms' lines
//    and replaces the distorted part of every arm by a straight run to it.
void resolve_junctions(StrokeGraph& g, const JunctionOptions& opt);

}  // namespace sv::graph
