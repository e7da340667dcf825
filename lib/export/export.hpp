// Exports of the routed drawing: the same tour for the Doodlebot and for pen plotters.
//
// Both read scene.commands from scene.robot.start, so what they carry is what sv-simulate
// times and draws; neither re-orders or re-fits anything.
#pragma once
#include <string>

#include "core/scene.hpp"

namespace sv {

// The Doodlebot command stream as its server (and the evaluation scorer) reads it:
// {"start": {"x", "y", "heading_deg"}, "commands": [{"kind": "line", "distance", "penDown"} |
// {"kind": "spin", "degrees"} | {"kind": "arc", "radius", "degrees"}], "ppi", "footprint_mm"},
// pixel units, x right, y down, positive degrees turning clockwise on screen.
// Throws Error(invalid_scene) when the scene has no commands.
json doodlebot_stream(const Scene& scene);
// The stream as text, one command per line.
std::string doodlebot_stream_text(const Scene& scene);

// G-code for pen plotters (RS-274 subset: G0 travel, G1 lines, G2/G3 arcs with I J centre
// offsets, G17 G21 G90).
//
// Frame: G-code is y-up, the scene y-down. The export flips y about the image's height,
// X = x * scale, Y = (H - y) * scale with H = the source image's height - 1 px (pixel centres
// map onto 0..H; the drawing's lowest point when there is no source), so the plot is not
// mirrored and lies in the positive quadrant. The flip turns
// clockwise-on-screen into clockwise-on-paper: an arc command of positive degrees (clockwise on
// screen) becomes G2, a negative one G3 (swapped when flip_y is off).
//
// Arcs over 180 degrees are split into equal pieces of at most 180 degrees (a full circle is
// two), so every G2/G3 is unambiguous; an arc bowing less than arc_min_sagitta_px from its
// chord, or of a radius that is not finite, becomes a G1 to its end point. No NaN or infinity
// is ever written (Error(invalid_scene) instead).
struct GcodeOptions {
  enum class Units { mm, px };
  Units units = Units::mm;  // mm: at the robot's scale (25.4 / robot.ppi mm per px); px: 1 unit per px
  bool flip_y = true;
  std::string pen_up = "M5";         // servo or spindle off; e.g. "G0 Z5" for a Z-lift plotter
  std::string pen_down = "M3 S1000";  // e.g. "G1 Z0 F500"
  double feed = 1500;                // drawing feed, units per minute
  double arc_min_sagitta_px = 0.01;
  int decimals = 4;
};
std::string gcode(const Scene& scene, const GcodeOptions& options);

}  // namespace sv
