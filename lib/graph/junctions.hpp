// Junctions and crossings. Thinning turns the blob where strokes meet into a small cluster
// of nodes and bends every arm towards it; a crossing of thick or shallow strokes becomes
// two 3-way nodes joined by a short "ribbon" of merged ink. Here nodes of one physical
// junction are merged, crossings are resolved into strokes that run straight through, and
// the remaining junctions are moved to where their arms actually meet.
#pragma once
#include <opencv2/core.hpp>

#include "graph/stroke_graph.hpp"

namespace sv::graph {

struct JunctionOptions {
  double merge_length = 4;       // junction nodes joined by a shorter edge are one junction
  double crossing_length = 12;   // two 3-way junctions joined by a shorter edge may be a crossing
  double meeting_length = 16;    // ... or, when not a crossing, two strokes ending together on a third
  double clean_width_ratio = 1.25;  // an arm's own stroke begins where its sections are no wider
  double clean_run = 2;             // ... than this times its typical width, for this long (px),
                                    // and no nearer the junction than this
  double arm_window = 4;         // length of arm (px) over which its direction is measured,
                                 // up to four times this, placing a junction, while the arm runs straight
  double max_turn_deg = 40;      // a stroke through a crossing or into a cusp bends at most this much
  double max_offset = 2;         // every arm's line passes this close to the crossing point
  double tangent_max_deg = 12;   // a stem meeting a circle at no more than this shares its ink: the
                                 // junction is where the stem's line touches the circle,
  double tangent_exact_deg = 6;  // ... at the tangent point when it meets it at no more than this
  double tangent_offset = 1.5;   // ... and the circle's trace is this close to its fitted circle
  double circle_stem_offset = 1;  // a stem ending on a loop this close to a circle, at any angle, meets
                                  // it where its line does
  double circle_touch = 1.5;      // two circles fitted to loops this close to touching do touch
  double apex_straight_widths = 8;  // strokes sharing ink down to a stem meet where their lines do when
                                    // each runs straight this many widths (and twice as far as carried)
};

// 1. Merges junction nodes joined by an edge shorter than merge_length, or by two edges together
//    shorter than four times it (a bubble round a pinhole of paper where strokes part).
//    Then resolves two circles that touch, side by side or one inside the other at its rim: they
//    share their ink about the contact, which thinning makes two 3-way nodes joined by each
//    circle's own part and by the shared ribbon. Each circle is fitted to its own part away from
//    the shared ink (more than half of it, within tangent_offset); when the two touch within
//    circle_touch, each runs on its circle through the contact as a loop of its own and the
//    ribbon goes.
// 2. Pairs arms of 4-way (and 2k-way) junctions, and of two 3-way junctions joined by a
//    ribbon shorter than crossing_length, into strokes through a crossing: every pair must
//    continue straight (tangents anti-parallel within max_turn_deg, measured outside the
//    shared ink) and every arm's line must pass near the common crossing point (least-squares
//    intersection of the arm lines). Paired arms are joined into one edge through that
//    point; two arms of one edge close it into a loop. Two 3-way junctions joined by an edge
//    shorter than meeting_length that are no crossing are one junction when the lines of their
//    four other arms pass within max_offset of one point on the ink (a K's arms on its bar).
// 3. Resolves cusps: a 3-way junction whose two arms both continue straight into the third,
//    a short branch to a free end (the merged tip of two strokes meeting tangentially),
//    becomes one edge running out along the branch to its end and back. When the two arms run
//    straight (apex_straight_widths), or one of them bends as a circle does and the branch does
//    not run on along that circle, and their lines (or the line and the circle) meet on the
//    branch, on the ink (an acute Y, the branch its stem), they run on to that point and the
//    branch starts there.
// 4. Resolves a straight stem touching a circle, or leaving it at no more than tangent_max_deg,
//    which shares the circle's ink for a while, so that the skeleton splits (into a loop and
//    the stem, or into the circle, a ribbon and the stem's two halves) well past the contact;
//    and a stem ending on a loop at any angle when the loop keeps within circle_stem_offset of
//    a circle (thinning bends the loop towards the stem, and the fit cut it into arcs and lines):
//    the junction moves to where the stem's line, fitted to its own stroke, touches the circle
//    fitted to the loop away from the shared ink (the foot of the centre when within
//    tangent_exact_deg of the tangent), the circle's edge runs on the circle through it as a
//    loop, the ribbon goes, and the stem runs straight from it.
//    Likewise a straight stem ending along the tangent of an arc that runs on through the contact
//    both ways (a line into the bottom of a rounded end): the arc's circle is fitted to its own
//    ink on both sides, more than a stroke width from the stem's line, where it bends as a circle
//    does and keeps within tangent_offset of it; when the stem's line touches that circle, the
//    junction is the foot of the centre on it, the arc runs on its circle through it, and the
//    stem runs straight to it.
// 5. Moves each remaining junction to the least-squares meeting point of its arms' lines
//    (kept at the nodes' centroid when that point is off the ink, coverage being the
//    image of raster/ink.hpp), or for a T (two of three arms continuing each other within
//    15 degrees) to where the stem's line meets the line through the bar arms' centroids,
//    and replaces the distorted part of every arm (up to where its own stroke begins, as
//    told by its cross-section widths, or a little farther where it only then runs straight)
//    by a straight run to it; of an arm whose line misses the junction by more than a stroke
//    width (an arc leaving it tangentially), only as much as stays within half a width of
//    that run.
void resolve_junctions(StrokeGraph& g, const cv::Mat& coverage, const JunctionOptions& opt);

}  // namespace sv::graph
