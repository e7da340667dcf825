// The fit stage's thresholds: the values the fitting passes read, and their declarations.
#pragma once
#include <map>
#include <string>

#include "core/params.hpp"

namespace sv {

// Every threshold of the fit stage; fit_param_table() declares each (key, limits, doc), its
// default being the value here.
struct FitParams {
  double trace_noise_px = 0;
  double noise_allowance = 1.5;
  double max_noise_allowance_px = 0.5;
  double width_tolerance_ratio = 0.25;
  double max_width_tolerance_px = 1.0;
  double thick_tolerance_ratio = 0.1;
  double tolerance_px = 1.0;
  double corner_angle_deg = 50;
  double corner_window_px = 3;
  double join_corner_deg = 15;
  double join_max_px = 3;
  double corner_cut_px = 1.5;
  double end_hook_px = 1.5;
  double max_sweep_deg = 350;
  double min_arc_sagitta_px = 0.5;
  double min_arc_sweep_deg = 10;
  double arc_cost = 1;
  double piece_cost = 10;
  double piece_gain = 0.5;
  double piece_fit_px = 0.5;
  double circle_max_aspect = 1.3;
  double circle_cycle_edges = 8;
  double circle_cycle_min_radius_px = 4;
  double dot_length_px = 1;
  double beautify = 1;
  double relation_angle_deg = 3;
  double relation_min_line_px = 10;
  double through_angle_deg = 8;
  double retrace_px = 1;
  double axis_angle_deg = 3;
  double collinear_offset_px = 1;
  double tangent_angle_deg = 1;
  double smooth_joint_deg = 15;
  double smooth_window_px = 3;
  double merge_width_ratio = 0;
  double merge_tolerance_px = 1.0;
  // Not a threshold: pixels per inch at the robot's default footprint, which fit() sets from
  // the graph's extent for the merge pass.
  double robot_ppi = 0;

  // Whether the fit may draw arcs at all (an edit forbids them with a sagitta gate of 1e12 px).
  bool arcs_allowed() const { return min_arc_sagitta_px < 1e9; }
};

// The declarations of the fit.* keys of FitParams, in the order the config records them.
const ParamTable& fit_param_table();

struct FitOptions {
  // "fit.KEY" -> value; recorded in the scene's config with provenance "user".
  std::map<std::string, double> overrides;
};

// Resolves every threshold from the stroke width (0 when unknown: defaults), the measured
// trace noise and the user's overrides, and records each in `record`'s config when given
// ("fit.tolerance_px", ...) with its provenance ("stroke_width", "image", "default" or "user")
// and a one-line doc. The tolerance is min(sw/4, 1 px) plus a noise allowance,
// min(noise_allowance * trace noise, max_noise_allowance_px), so that tracing noise does not
// become detail while a clean trace is held close. Throws Error(invalid_selection) for a key or
// value fit_param_table() refuses.
FitParams resolve_fit_params(double stroke_width_px, double trace_noise_px, const FitOptions& opt,
                             Scene* record = nullptr);
// The fit thresholds the scene was fitted with (its config "fit.*"; where absent, what sv-fit
// derives from the scene's stroke width): the one reading of them every module uses.
FitParams fit_params_of(const Scene& s);

}  // namespace sv
