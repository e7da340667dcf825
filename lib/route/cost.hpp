// Routing's view of the drawing: each primitive drawn one way is a Leg (its ends and the
// robot's heading along it), and every choice is priced in robot seconds by the firmware
// motion model at the drawing's physical scale.
#pragma once
#include <optional>
#include <vector>

#include "core/scene.hpp"
#include "robot/motion.hpp"

namespace sv {

// A primitive drawn in one direction, reduced to what the motion needs.
struct Leg {
  Vec2 start, end;
  double h_in = 0, h_out = 0;  // heading (degrees) at the start and at the end, driving forwards
  bool straight = false;       // drawn with a line command, so it may also be driven backwards
  bool dot = false;            // zero length: the pen touches down once, at any heading
  bool circle = false;
  double bulge = 0;            // arcs, in the direction of travel
  Vec2 center;                 // circles
  int turn = 1;                // circles: +1 positive sweep, -1 negative
  double reach_px = 0;         // farthest the pen gets from the start: how far a heading error carries
};

// `reverse` draws p1 -> p0 (circles: negative sweep); circles start at `entry_rad` about the
// centre. Arcs flatter than `flat_px` (sagitta) are drawn as straight lines.
Leg make_leg(const Shape& s, bool reverse, double entry_rad, double flat_px);

// Heading along a leg driven forwards (bit 0) or backwards (bit 1, straight legs only).
inline double heading_in(const Leg& l, int bit) { return l.h_in + 180.0 * bit; }
inline double heading_out(const Leg& l, int bit) { return l.h_out + 180.0 * bit; }

// The fastest pen-up way from one pose to another (CostModel::travel): turn, straight line
// (backwards when `back`), turn; or, when `sweep` is not 0, one arc of that sweep that does one
// of the two turns on the way, preceded by the other turn (`arc_first`: the arc leaves along
// the present heading and the turn comes after it).
struct Travel {
  double s = 0;  // its time, turns included, pen lift and drop not
  bool back = false;
  double sweep = 0;
  bool arc_first = false;
};

struct CostModel {
  Motion motion;              // the robot's motion model at the drawing's scale, pen time included
  double join_px = 1.5;       // gaps up to this are drawn across without lifting the pen
  double flat_px = 0.005;     // arcs with a smaller sagitta are drawn as lines
  bool reverse_drive = true;  // straight moves (pen-up travel, drawn lines) may run backwards
  bool travel_arcs = true;    // pen-up travel may be an arc (route/emit.hpp)

  // A pen-up trip of `d` px with its lift and drop (the part of transition() that is not turning).
  double trip(double d) const { return motion.travel_s(d) + 2 * motion.pen_time_s; }

  int bits(const Leg& l) const { return l.straight && reverse_drive ? 2 : 1; }
  double spin(double deg) const;  // turning by `deg` the short way
  // Pen-up travel from pose (p, h) to q, where the next leg leaves at heading h2: the fastest
  // of turn, line (forwards or backwards, whichever turns less), turn and the two single arcs
  // (when travel_arcs). Every move ramps up from rest and time grows with the square root of a
  // short move's length, so turning within one arc can cost less than a separate spin. The
  // emitter draws what this plans, so the search prices each transition as it is emitted.
  Travel travel(Vec2 p, double h, Vec2 q, double h2) const;
  // Getting from pose (p, h) to pose (q, h2): a turn in place when q is within join_px, else
  // travel() plus a pen lift and drop. A NaN heading is free (a dot has no heading of its own).
  double transition(Vec2 p, double h, Vec2 q, double h2) const;
};

// Chooses the driving direction (bit) of every straight leg so that the turns and travel
// between consecutive legs take the least time: a Viterbi pass over two states per straight
// leg. `first_bit`/`last_bit` >= 0 pin the ends; `start` prices the way in from a pose.
// Returns the time of the turns and travel (not of drawing the legs themselves).
double choose_bits(const std::vector<Leg>& legs, const CostModel& cost, const std::optional<Pose>& start,
                   int first_bit, int last_bit, std::vector<int>* bits);

}  // namespace sv
