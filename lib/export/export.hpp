// Exports of the routed drawing: the same tour for the Doodlebot, for pen plotters, as SVG and
// as a PNG view, each a backend of one table (export_backends) from which sv-simulate makes its
// options. Adding a format is one more entry here (and its line in the man page).
//
// All read scene.commands from scene.robot.start, so what they carry is what sv-simulate
// times and draws; none re-orders or re-fits anything.
#pragma once
#include <map>
#include <opencv2/core.hpp>
#include <string>
#include <vector>

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
// offsets, G17 G90, G21 in millimetres; G4 dwells when asked for).
//
// Frame: G-code is y-up, the scene y-down. The export flips y, X = (x - X0) * s + m,
// Y = (Y0 - y) * s + m, with s the scale, m the margin and (X0, Y0) the origin: with
// origin image, X0 = 0 and Y0 = the source image's height - 1 px (pixel centres map onto 0..H;
// the drawing's lowest point when there is no source); with origin drawing, the lower left
// corner of the drawing's bounding box (drawing_bounds), so the plot starts at (m, m). The plot
// is not mirrored and lies in the positive quadrant. The flip turns clockwise-on-screen into
// clockwise-on-paper: an arc command of positive degrees (clockwise on screen) becomes G2, a
// negative one G3 (swapped when flip_y is off, where Y = (y - Y0) * s + m with Y0 the top).
//
// Feed: the drawing feed is written on the first drawing move after each pen command (a pen
// line such as "G1 Z0 F500" sets the modal feed too), so every G1/G2/G3 in the plane runs at
// `feed`.
//
// Arcs over 120 degrees are split into equal pieces of at most 120 degrees (a full circle is
// three), so every G2/G3 is unambiguous; an arc bowing less than arc_min_sagitta_px from its
// chord, or of a radius that is not finite, becomes a G1 to its end point. No NaN or infinity
// is ever written (Error(invalid_scene) instead).
struct GcodeOptions {
  enum class Units { mm, px };
  enum class Origin { image, drawing };
  Units units = Units::mm;  // mm: at the robot's scale (25.4 / robot.ppi mm per px), G21;
                            // px: 1 unit per px, no G20/G21 (the machine's own units)
  Origin origin = Origin::image;
  double margin_mm = 0;  // added to X and Y (in px units: margin_mm * ppi / 25.4)
  bool flip_y = true;
  std::string pen_up = "M5";         // servo or spindle off; e.g. "G0 Z5" for a Z-lift plotter
  std::string pen_down = "M3 S1000";  // e.g. "G1 Z0 F500"
  double feed = 1500;                // drawing feed, units per minute
  double dwell_s = 0;                // G4 P<seconds> after each pen command; 0: none
  double arc_min_sagitta_px = 0.01;
  int decimals = 4;
};
std::string gcode(const Scene& scene, const GcodeOptions& options);

// The bounding box of the pen-down paths in image pixels (arcs by their true extremes, not
// their ends); empty when nothing is drawn. The page of the SVG export and the origin of
// G-code's --gcode-origin drawing.
BBox drawing_bounds(const Scene& scene);

// The same drawing as SVG: one <path> per pen-down stroke with true arcs (A commands; the
// sweep flag is 1 for positive degrees, which turn clockwise on screen in SVG's y-down frame
// as in ours), stroke width = the source's, in an Inkscape layer; pen-up travel in a second
// layer hidden with display:none (Inkscape and rsvg leave it out).
// Page: a routed scene (robot.ppi) is drawn at its size on paper: viewBox = drawing_bounds in
// image pixels, width and height in mm at 25.4 / ppi mm per px, the scale of the G-code, so
// the page is the pen's path (a stroke on its edge is half outside it). A scene without a
// scale keeps the image as viewBox (pixel centres at integers) and px units.
std::string render_svg(const Scene& scene);
// The same drawing animated (SMIL): each stroke appears along its path as the robot draws it,
// at the times of scene.simulation (simulated here when absent), `speedup` times faster than
// real time; while it plays, the robot (a triangle along its heading, turning through spins),
// the pen-up travel (dashed, growing as it is travelled) and a clock of the robot's elapsed
// time. Its still image (what a renderer without animation shows, and the frozen last frame)
// is render_svg's drawing. speedup 0 (kAutoSpeedup): the whole drawing plays in about
// kAnimationTargetS seconds, never slower than real time (animation_speedup).
// Throws Error(invalid_scene) when the scene has no commands.
constexpr double kAutoSpeedup = 0;
constexpr double kAnimationTargetS = 30;
std::string render_svg_animated(const Scene& scene, double speedup = kAutoSpeedup);
// The speed-up an animation of `total_s` seconds of robot time plays at: `speedup` when
// positive, else total_s / kAnimationTargetS and at least 1.
double animation_speedup(double total_s, double speedup);

// An option of a backend besides its path: a value (with a default, maybe a closed set of
// choices) or a switch. A value whose flag ends in -mm or -px is a length, given with or without
// its unit as every such option of sv is (cli/values.hpp: 10cm, 4in; 2px).
struct ExportOption {
  std::string flag;  // "--gcode-units"
  std::string help;
  std::string value;  // the default; a switch's is "false"
  std::vector<std::string> choices;
  bool is_switch = false;
  bool positive_number = false;      // with choices: one of them or a positive number
  bool non_negative_number = false;
};

// Option flag -> value as given (the default otherwise; "true" or "false" for a switch).
using ExportSettings = std::map<std::string, std::string>;

struct ExportInput {
  const Scene& scene;
  class Store* store = nullptr;  // where a view finds the source image, when there is one
};

struct ExportBackend {
  std::string name;       // its key in sv-simulate's result ("images")
  std::string option;     // the option naming the file to write ("--gcode")
  std::string extension;  // of its files (".gcode")
  std::string help;
  std::vector<ExportOption> options;
  // The file's bytes; Error(invalid_scene) when the scene cannot be exported.
  std::string (*write)(const ExportInput& in, const ExportSettings& settings);
};

// The picture the view backend (--png) encodes, for a caller that sends it as an image itself.
cv::Mat export_view(const ExportInput& in, const ExportSettings& settings);

// Every backend, in the order sv-simulate writes them.
const std::vector<ExportBackend>& export_backends();

}  // namespace sv
