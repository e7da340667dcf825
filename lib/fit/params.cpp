#include "fit/params.hpp"

#include <algorithm>

namespace sv {

namespace {

// What the fit derives its thresholds from.
struct FitBasis {
  double stroke_width_px = 0;  // 0: unknown (the declared defaults)
  double trace_noise_px = 0;
};

using FitParam = Param<FitParams, FitBasis>;

// A rule on the stroke width and the thresholds declared before; applied when the width is known.
std::function<std::optional<double>(const FitBasis&, const FitParams&)> by_width(double (*rule)(double, const FitParams&)) {
  return [rule](const FitBasis& b, const FitParams& p) -> std::optional<double> {
    if (b.stroke_width_px > 0) return rule(b.stroke_width_px, p);
    return std::nullopt;
  };
}

ParamSpec derived(ParamSpec s, const char* from, const char* rule) {
  s.from = from;
  s.derivation = rule;
  return s;
}

const ParamSet<FitParams, FitBasis>& fit_params() {
  static const ParamSet<FitParams, FitBasis> set = [] {
    std::vector<FitParam> t = {
        {derived(param_spec("fit.trace_noise_px", "px",
                      "noise of one traced centreline point, measured about the chords of its neighbours"),
                 "image", "root-mean-square offset of each traced point from its neighbours' chord (closest 90 %), "
                          "divided by sqrt(1.5)"),
         &FitParams::trace_noise_px, [](const FitBasis& b, const FitParams&) { return std::optional(b.trace_noise_px); }},
        {param_spec("fit.noise_allowance", "",
              "the tolerance allows this many times the trace noise on top of its stroke-width part"),
         &FitParams::noise_allowance},
        {param_spec("fit.max_noise_allowance_px", "px", "largest noise allowance added to the tolerance"),
         &FitParams::max_noise_allowance_px},
        {param_spec("fit.width_tolerance_ratio", "", "the tolerance's stroke-width part is this fraction of the stroke width"),
         &FitParams::width_tolerance_ratio},
        {param_spec("fit.max_width_tolerance_px", "px",
              "largest stroke-width part of the tolerance, unless thick_tolerance_ratio * sw is larger"),
         &FitParams::max_width_tolerance_px},
        {param_spec("fit.thick_tolerance_ratio", "", "a thick stroke's tolerance grows with its width at this fraction of it"),
         &FitParams::thick_tolerance_ratio},
        {derived(param_spec("fit.tolerance_px", "px",
                      "largest distance of an edge point to its primitive: min(width_tolerance_ratio * sw, "
                      "max(max_width_tolerance, thick_tolerance_ratio * sw)) + min(noise_allowance * trace_noise, "
                      "max_noise_allowance) px",
                      0.001),
                 "stroke_width",
                 "min(width_tolerance_ratio * sw, max(max_width_tolerance_px, thick_tolerance_ratio * sw)) + "
                 "min(noise_allowance * trace_noise_px, max_noise_allowance_px)"),
         &FitParams::tolerance_px,
         by_width([](double sw, const FitParams& p) {
           return std::min(p.width_tolerance_ratio * sw, std::max(p.max_width_tolerance_px, p.thick_tolerance_ratio * sw)) +
                  std::min(p.noise_allowance * p.trace_noise_px, p.max_noise_allowance_px);
         })},
        {param_spec("fit.corner_angle_deg", "deg",
              "turn within the corner window that makes a sharp corner (a forced breakpoint)", 0, 180),
         &FitParams::corner_angle_deg},
        {derived(param_spec("fit.corner_window_px", "px",
                      "arc length before and after a point over which its turn is measured: max(3, sw/2)"),
                 "stroke_width", "max(3, sw / 2)"),
         &FitParams::corner_window_px, by_width([](double sw, const FitParams&) { return std::max(3.0, 0.5 * sw); })},
        {param_spec("fit.join_corner_deg", "deg",
              "turn between adjacent pieces above which they meet at the intersection of their curves", 0, 180),
         &FitParams::join_corner_deg},
        {derived(param_spec("fit.join_max_px", "px",
                      "farthest a corner intersection may lie from the breakpoint: max(2, sw/2)"),
                 "stroke_width", "max(2, sw / 2)"),
         &FitParams::join_max_px, by_width([](double sw, const FitParams&) { return std::max(2.0, 0.5 * sw); })},
        {derived(param_spec("fit.corner_cut_px", "px",
                      "farthest the trace of a cut corner may pass from the corner's two lines: sw/2 (the corner "
                      "lies inside the ink)"),
                 "stroke_width", "sw / 2"),
         &FitParams::corner_cut_px, by_width([](double sw, const FitParams&) { return 0.5 * sw; })},
        {derived(param_spec("fit.end_hook_px", "px",
                      "a piece at a free end of a stroke no longer than this, turning off beyond "
                      "fit.join_corner_deg, is the trace curling inside the stroke's round cap (a photographed "
                      "end's shadow, a brush's press) and is dropped: sw/4 (dev photographs: primitive f1 0.907 -> "
                      "0.915; at sw/2 hanzi f1 fell 0.0005); 0: kept"),
                 "stroke_width", "sw / 4"),
         &FitParams::end_hook_px, by_width([](double sw, const FitParams&) { return 0.25 * sw; })},
        {param_spec("fit.max_sweep_deg", "deg", "largest sweep of one arc; longer ones split"), &FitParams::max_sweep_deg},
        {param_spec("fit.min_arc_sagitta_px", "px", "an arc bowing less than this from its chord is a line"),
         &FitParams::min_arc_sagitta_px},
        {param_spec("fit.min_arc_sweep_deg", "deg",
              "an arc turning less than this is a line (a long flat arc would swallow straight runs)"),
         &FitParams::min_arc_sweep_deg},
        {param_spec("fit.arc_cost", "squared tolerances",
              "extra description length of an arc over a line, in squared tolerances"),
         &FitParams::arc_cost},
        {param_spec("fit.piece_cost", "squared tolerances",
              "description length of one more piece: a cover of more pieces than the fewest is taken when its "
              "squared residuals (over squared tolerances) are lower by more than this per piece added, it has more "
              "lines, keeps within fit.piece_fit_px and within fit.piece_gain of the fewest pieces' farthest point, "
              "and the robot draws it no slower (a short line between two corners that arcs swallowed within "
              "tolerance, as on thick rounded rectangles: junction drawings' rounded rectangles counted right "
              "0.92 -> 1.00, tabler primitive f1 0.917 -> 0.932; at 3 a Hershey script drawing came out 1.4 s "
              "slower, at 30 the tabler drawing was not found); 0: the fewest pieces always"),
         &FitParams::piece_cost},
        {param_spec("fit.piece_gain", "",
              "a cover of more pieces keeps its farthest point within this fraction of the fewest pieces' (a "
              "wobbly stroke has lower residuals in more pieces too, but its farthest wobble stays as far: hand-"
              "drawn rounded squares measure 0.48 of it, thick clean icons 0.04)"),
         &FitParams::piece_gain},
        {param_spec("fit.piece_fit_px", "px",
              "a cover of more pieces keeps every point within this of its pieces (clean ink's own structure "
              "does: 0.05 px on a thick tabler icon)"),
         &FitParams::piece_fit_px},
        {param_spec("fit.circle_max_aspect", "", "largest principal-axis ratio of a closed loop fitted as one circle"),
         &FitParams::circle_max_aspect},
        {param_spec("fit.circle_cycle_edges", "edges",
              "most edges of a cycle through junctions (a circle cut where strokes meet or cross it) fitted as one "
              "circle when all its points are within tolerance of it; 0: never",
              0, std::numeric_limits<double>::infinity(), ParamType::integer),
         &FitParams::circle_cycle_edges},
        {derived(param_spec("fit.circle_cycle_min_radius_px", "px",
                      "smallest radius of such a circle: the stroke width (a smaller cycle rings a speck of paper in "
                      "merged ink, its hole under half a stroke wide)"),
                 "stroke_width", "sw"),
         &FitParams::circle_cycle_min_radius_px, by_width([](double sw, const FitParams&) { return sw; })},
        {param_spec("fit.dot_length_px", "px", "an edge shorter than this is a dot, drawn as a line this long"),
         &FitParams::dot_length_px},
        {param_spec("fit.beautify", "", "1: enforce near relations between primitives within tolerance; 0: leave them", 0, 1,
              ParamType::flag),
         &FitParams::beautify},
        {param_spec("fit.relation_angle_deg", "deg",
              "lines whose directions differ by less (or by less from a right angle) are made parallel "
              "(perpendicular)",
              0, 90),
         &FitParams::relation_angle_deg},
        {param_spec("fit.relation_min_line_px", "px",
              "shortest line whose direction takes part in parallel and perpendicular relations"),
         &FitParams::relation_min_line_px},
        {param_spec("fit.through_angle_deg", "deg",
              "chain ends at a junction whose directions continue each other within this (the bar of a T) are "
              "fitted as one primitive when it stays within tolerance; 0: never",
              0, 180),
         &FitParams::through_angle_deg},
        {param_spec("fit.retrace_px", "px",
              "a primitive that only turns back over its neighbour on the same edge (an out-and-back the graph made "
              "where two strokes share ink) and stays within this and the tolerance of it is part of that neighbour, "
              "not a stroke of its own; the route draws that stretch again or travels over it, whichever is faster. "
              "At most a pixel, so dropping it moves no ink visibly (junction drawings: primitive counts right "
              "0.64 -> 0.85 at any bound from 0.5 px up); 0: never"),
         &FitParams::retrace_px},
        {param_spec("fit.axis_angle_deg", "deg", "lines whose direction differs by less from horizontal (vertical) are made so",
              0, 90),
         &FitParams::axis_angle_deg},
        {derived(param_spec("fit.collinear_offset_px", "px",
                      "parallel lines whose ends lie this close to the longest one's line are made collinear "
                      "(one common line): the tolerance"),
                 "stroke_width", "fit.tolerance_px"),
         &FitParams::collinear_offset_px, by_width([](double, const FitParams& p) { return p.tolerance_px; })},
        {param_spec("fit.tangent_angle_deg", "deg",
              "consecutive pieces (not both lines) turning by less at their joint are made tangent (G1); "
              "at most join_corner_deg, so corners stay corners (more than a degree costs brush strokes "
              "ink fidelity)",
              0, 180),
         &FitParams::tangent_angle_deg},
        {param_spec("fit.smooth_joint_deg", "deg",
              "a joint where the ink turns by less than this beyond what its curvature explains (2 t(w) - t(2w), "
              "t(w) the turn between the chords a smooth window before and after) is smooth: the pieces of such "
              "runs are fitted tangent-continuous (G1), so the robot draws through without turning; 0: never",
              0, 180),
         &FitParams::smooth_joint_deg},
        {derived(param_spec("fit.smooth_window_px", "px",
                      "arc length before and after a joint over which the ink's turn is measured: max(3, sw)"),
                 "stroke_width", "max(3, sw)"),
         &FitParams::smooth_window_px, by_width([](double sw, const FitParams&) { return std::max(3.0, sw); })},
        {param_spec("fit.merge_width_ratio", "",
              "0: off; else runs of adjacent pieces merge into one line or arc within this fraction of the stroke "
              "width of their points where the robot draws that faster, and a loop that close to a circle is one "
              "(sv-fit --fast: 0.5)"),
         &FitParams::merge_width_ratio},
        {derived(param_spec("fit.merge_tolerance_px", "px",
                      "largest distance of a primitive from its points once runs are merged: max(tolerance, "
                      "merge_width_ratio * sw)"),
                 "stroke_width", "max(fit.tolerance_px, merge_width_ratio * sw); fit.tolerance_px when sw is unknown"),
         &FitParams::merge_tolerance_px,
         by_width([](double sw, const FitParams& p) { return std::max(p.tolerance_px, p.merge_width_ratio * sw); }),
         [](const FitParams& p) { return p.tolerance_px; }},
    };
    const FitParams defaults;
    for (FitParam& f : t) f.spec.value = defaults.*f.field;
    return ParamSet<FitParams, FitBasis>("sv-fit", std::move(t));
  }();
  return set;
}

}  // namespace

const ParamTable& fit_param_table() { return fit_params().table(); }

FitParams resolve_fit_params(double stroke_width_px, double trace_noise_px, const FitOptions& opt, Scene* record) {
  ParamResolver<FitParams, FitBasis> r(fit_params(), opt.overrides, record);
  FitParams p;
  r.resolve_all({stroke_width_px, trace_noise_px}, p);
  return p;
}

FitParams fit_params_of(const Scene& s) {
  // Where the scene lacks a threshold, what sv-fit derives from its stroke width.
  return fit_params().read(s, resolve_fit_params(s.source ? s.source->stroke_width_px : 0, 0, {}));
}

}  // namespace sv
