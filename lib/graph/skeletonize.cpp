#include "graph/skeletonize.hpp"

#include <cmath>
#include <limits>
#include <opencv2/imgproc.hpp>
#include <optional>

#include "core/error.hpp"
#include "graph/centreline.hpp"
#include "graph/filled.hpp"
#include "graph/doubled.hpp"
#include "graph/gaps.hpp"
#include "graph/junctions.hpp"
#include "graph/prune.hpp"
#include "graph/to_scene.hpp"
#include "graph/trace.hpp"
#include "raster/clean.hpp"
#include "raster/ink.hpp"
#include "raster/profile.hpp"
#include "raster/threads.hpp"
#include "raster/thin.hpp"

namespace sv {
namespace {

// Stroke width assumed when none can be measured (only dots, or a uniform image).
constexpr double kDefaultStrokeWidth = 3;

constexpr double kInf = std::numeric_limits<double>::infinity();

// Every skeleton.* and graph.* parameter, in the units the stage works in: px values at the
// traced resolution (the scene and the user give them at the drawing's). Measured ones are
// recorded as found; the others are resolved once the stroke width is known.
struct SkeletonParams {
  double trace_scale = 1;
  // Finding the ink (raster/ink.hpp) and what it measured.
  double background_cell_px = 0, light_stroke_scale = 0, light_page_scale = 0, paper_contrast = 0, page_contrast = 0,
         weak_ratio = 0, noise_ratio = 0, peak_radius_ratio = 0, grain_holes = 0, grain_sigma_ratio = 0,
         sheet_step = 0;
  double off_sheet = 0, paper_level = 0, paper_noise = 0, ink_level = 0, threshold = 0, weak_threshold = 0,
         ink_holes = 0, grain_sigma_px = 0, peak_radius_px = 0;
  // The stroke graph (graph/).
  double junction_merge_px = 0, crossing_merge_px = 0, meeting_merge_px = 0, arm_clean_run_px = 0, arm_window_px = 0,
         crossing_max_turn_deg = 0, crossing_max_offset_px = 0, tangent_stem_max_deg = 0, tangent_stem_exact_deg = 0,
         apex_straight_widths = 0, circle_stem_offset_px = 0,
         tangent_circle_offset_px = 0, circle_touch_px = 0;
  double filled_min_diameter_px = 0, filled_core_radius_px = 0, filled_remnant_px = 0,
         filled_loop_diameter_px = 0, filled_loop_reach_px = 0;
  double gap_join_px = 0, gap_t_join_px = 0, gap_join_max_turn_deg = 0, gap_join_offset_px = 0,
         gap_corner_max_turn_deg = 0, gap_t_min_angle_deg = 0;
  // The skeleton's cleaning, and the centreline.
  double stroke_width_px = 0, min_speck_area_px = 0, max_hole_area_px = 0, max_sliver_width_px = 0;
  double refine_max_shift_ratio = 0, clean_width_ratio = 0, spur_protrusion_px = 0, dot_length_px = 0,
         double_stroke_px = 0, point_spacing_px = 0;
};

// What the skeleton derives its parameters from: the drawing's px per traced px, and the
// stroke width in traced px.
struct SkeletonBasis {
  double scale = 1;
  double w = 0;
};

using S = SkeletonParams;
using SkeletonParam = Param<SkeletonParams, SkeletonBasis>;

// The drawing's units per traced unit of a declaration's values.
double drawing_units(const ParamSpec& spec, const SkeletonBasis& b) {
  return spec.unit == "px" ? b.scale : spec.unit == "px^2" ? b.scale * b.scale : 1.0;
}

SkeletonParam constant(const char* key, double S::*field, double value, const char* unit, const char* doc,
                       double max = kInf, double min = 0) {
  ParamSpec s = param_spec(key, unit, doc, min, max);
  s.value = value;
  return {s, field};
}

// Derived by its rule from the stroke width at the drawing's resolution.
SkeletonParam from_width(const char* key, double S::*field, const char* rule, double (*derive)(double),
                         const char* unit, const char* doc) {
  SkeletonParam p = constant(key, field, 0, unit, doc);
  p.spec.value.reset();
  p.spec.derivation = rule;
  p.spec.from = "stroke_width";
  p.derive = [derive](const SkeletonBasis& b, const SkeletonParams&) { return std::optional(derive(b.w * b.scale)); };
  return p;
}

// Measured on the image; `settable`: a user's value takes its place (else it is only reported).
SkeletonParam measured(const char* key, double S::*field, const char* rule, const char* unit, const char* doc,
                       bool settable, double max = kInf, std::optional<double> value = std::nullopt) {
  SkeletonParam p = constant(key, field, 0, unit, doc, max);
  p.spec.value = value;
  p.spec.derivation = rule;
  p.spec.from = "image";
  if (!settable) p.spec.set_by = "";
  return p;
}

const ParamSet<SkeletonParams, SkeletonBasis>& skeleton_params() {
  static const ParamSet<SkeletonParams, SkeletonBasis> set = [] {
    const InkOptions in;
    const graph::CentreOptions cen;
    const graph::GapOptions gap;
    SkeletonParam scale = measured(
        "skeleton.trace_scale", &S::trace_scale,
        "floor(w / 16 px) where w is the 10th-percentile stroke width of an image over 4 megapixels, measured on a "
        "copy of about 2 megapixels, when that is at least 2; else 1",
        "",
        "the drawing is traced at 1/trace_scale of its resolution: strokes 32 px or wider trace as well at 16 px, in "
        "1/trace_scale^2 of the time and memory. Every value in px is the drawing's; the floors and caps of the "
        "measured values apply at the traced resolution. 1 traces at full resolution",
        true, 64);
    scale.spec.min = 1;
    return ParamSet<SkeletonParams, SkeletonBasis>("sv-skeleton", {
        scale,
        constant("skeleton.background_cell_px", &S::background_cell_px, in.background_cell_px, "px",
                 "cell size (px) of the local paper-level map that evens out tinted, blotchy paper and uneven light"),
        constant("skeleton.light_stroke_scale", &S::light_stroke_scale, in.stroke_scale, "",
                 "the light is estimated around dark structures narrower than this fraction of the image's shorter "
                 "side (strokes), through them",
                 1),
        constant("skeleton.light_page_scale", &S::light_page_scale, in.page_scale, "",
                 "second, page-scale light estimate (fraction of the shorter side) that passes over wide ink areas", 1),
        constant("skeleton.paper_contrast", &S::paper_contrast, in.paper_contrast, "",
                 "surely paper: at most this much darker (fraction) than the light at stroke scale", 1),
        constant(
            "skeleton.page_contrast", &S::page_contrast, in.page_contrast, "",
            "surely paper: at most this much darker (fraction) than the light at page scale (deeper than any shadow)",
            1),
        constant("skeleton.weak_ratio", &S::weak_ratio, in.weak_ratio, "",
                 "weak ink is at least this fraction of full ink's darkness (pencil pressure fading)", 1),
        constant("skeleton.noise_ratio", &S::noise_ratio, in.noise_ratio, "",
                 "weak ink is at least this many times the paper's noise darker than paper (grain stays paper)"),
        constant("skeleton.peak_radius_ratio", &S::peak_radius_ratio, in.peak_radius_ratio, "stroke widths",
                 "a stroke's own darkness is the darkest ink within this many stroke widths"),
        constant("skeleton.grain_holes", &S::grain_holes, in.grain_holes, "",
                 "ink whose regions leave more than this share of their inside out at half its darkness is grainy "
                 "(pencil on paper) and is smoothed before it is read",
                 1),
        constant("skeleton.grain_sigma_ratio", &S::grain_sigma_ratio, in.grain_sigma_ratio, "stroke widths",
                 "grainy ink is smoothed with a Gaussian of this many stroke widths"),
        constant("skeleton.sheet_step", &S::sheet_step, in.sheet_step, "",
                 "a photo's surroundings (a desk around the sheet of paper) are left out beyond a straight edge of the "
                 "sheet along which the level falls by this fraction within a few pixels; 0 leaves nothing out",
                 1),
        measured("skeleton.off_sheet", &S::off_sheet, "the share of the image beyond the sheet's edge, with a margin over its blur", "",
                 "share of the image off the sheet of paper, left out (0: the whole image is the sheet)", false),
        measured("skeleton.paper_level", &S::paper_level, "median gray of the paper", "gray level", "median gray (0-255) of the paper",
                 false),
        measured("skeleton.paper_noise", &S::paper_noise, "one standard deviation of the paper's normalised gray, from its darker half",
                 "gray level",
                 "spread (one standard deviation, from the darker half) of the paper's normalised gray: sensor noise "
                 "and paper grain",
                 false),
        measured("skeleton.ink_level", &S::ink_level, "a low percentile of the ink class's normalised gray", "gray level",
                 "gray of full ink on paper-normalised gray (paper = 255): a low percentile of the ink class", false),
        measured("skeleton.threshold", &S::threshold, "(255 + skeleton.ink_level) / 2", "gray level",
                 "strong ink where the paper-normalised gray is below this: midway between full ink and paper", true,
                 255),
        measured("skeleton.weak_threshold", &S::weak_threshold,
                 "max(255 - max(weak_ratio * (255 - ink_level), noise_ratio * paper_noise), threshold)", "gray level",
                 "weak ink where the paper-normalised gray is below this; it is ink only where connected to strong ink",
                 true, 255),
        measured("skeleton.ink_holes", &S::ink_holes, "measured on the ink regions", "",
                 "share of the inside of the ink regions left out at half its darkness", false),
        measured("skeleton.grain_sigma_px", &S::grain_sigma_px,
                 "clamp(grain_sigma_ratio * the ink ridge width, 0.7, 8) when ink_holes > grain_holes, else 0", "px",
                 "smoothing applied to grainy ink (0: none)", false),
        measured("skeleton.peak_radius_px", &S::peak_radius_px, "peak_radius_ratio * the ink ridge width", "px",
                 "window radius in which a stroke's own darkness is found; edges sit at half of it", false),
        from_width(
            "graph.junction_merge_px", &S::junction_merge_px, "sw", [](double w) { return 1.0 * w; }, "px",
            "junction clusters joined by a shorter skeleton path are one junction"),
        from_width(
            "graph.crossing_merge_px", &S::crossing_merge_px, "18.0 * sw", [](double w) { return 18.0 * w; }, "px",
            "two 3-way junctions joined by a shorter path are tested as one crossing: strokes crossing at 10 degrees "
            "share their ink for some 12 widths (junction drawings: X crossings within w/2 0.778 at 6 sw, 0.861 at "
            "18 sw, the 144 dev drawings unchanged; 36 sw misplaced tangent junctions)"),
        from_width(
            "graph.meeting_merge_px", &S::meeting_merge_px, "4.0 * sw", [](double w) { return 4.0 * w; }, "px",
            "two 3-way junctions joined by a shorter path, not a crossing, are one junction when the lines of their "
            "other four arms meet at one point (graph.crossing_max_offset_px): two strokes ending together on a "
            "third, a K's arms on its bar"),
        from_width(
            "graph.arm_clean_run_px", &S::arm_clean_run_px, "max(2.0, 0.5 * sw)", [](double w) { return std::max(2.0, 0.5 * w); }, "px",
            "an arm's own stroke begins where its cross-sections stay clean (graph.clean_width_ratio) for this long, "
            "and no nearer the junction than this: nearer, its ink is shared"),
        from_width(
            "graph.arm_window_px", &S::arm_window_px, "max(4.0, sw)", [](double w) { return std::max(4.0, 1.0 * w); }, "px",
            "length of arm over which its direction is measured, from where its own stroke begins; up to four times "
            "this, placing a junction, while the arm runs straight"),
        constant("graph.crossing_max_turn_deg", &S::crossing_max_turn_deg, 40, "deg",
                 "a stroke through a crossing, or into a cusp, bends at most this much between arms", 180),
        from_width(
            "graph.crossing_max_offset_px", &S::crossing_max_offset_px, "max(1.5, 0.5 * sw)", [](double w) { return std::max(1.5, 0.5 * w); }, "px",
            "every arm's line passes at most this far from the crossing point"),
        constant("graph.tangent_stem_max_deg", &S::tangent_stem_max_deg, 12, "deg",
                 "a stem whose line meets a circle at no more than this shares a long stretch of its ink: the junction "
                 "is where the line meets the circle, not where the skeleton splits (junction drawings: 10 degree stems "
                 "measure 9.8-10.3)", 90),
        constant("graph.apex_straight_widths", &S::apex_straight_widths, 8, "widths",
                 "two strokes that share their ink down to a stem (an acute Y) are carried straight to where their "
                 "lines meet when each runs straight past the shared ink for this many stroke widths, and for twice "
                 "as far as it is carried; a curve leaving tangentially does not (junction drawings: Y junctions "
                 "within w/2 0.653 -> 0.736; at 4 widths tangent branches went 0.750 -> 0.667); 0: never",
                 1000),
        constant("graph.circle_stem_offset_px", &S::circle_stem_offset_px, 1, "px",
                 "a stem that ends on a loop steeper than graph.tangent_stem_max_deg meets it where its line meets "
                 "the circle fitted to the loop away from the shared ink, the loop running on that circle, when the "
                 "loop keeps this close to it (junction drawings: stems ending on circles at 10-90 degrees counted "
                 "right 0.68 -> 1.00; at 2.5 px (the tangent bound for 10 px strokes) a hand-drawn magnifier's ring "
                 "was forced round, f1 at 1 px 0.986 -> 0.964); 0: never", 100),
        constant("graph.tangent_stem_exact_deg", &S::tangent_stem_exact_deg, 6, "deg",
                 "a stem whose line meets a circle at no more than this is its tangent, touching it at the foot of the "
                 "centre (junction drawings: tangent stems measure 0-4.7 degrees, 3 px strokes the most)", 90),
        from_width(
            "graph.tangent_circle_offset_px", &S::tangent_circle_offset_px, "max(1.5, 0.25 * sw)", [](double w) { return std::max(1.5, 0.25 * w); }, "px",
            "a loop whose trace, away from a stem's shared ink, keeps this close to one circle is that circle"),
        from_width(
            "graph.circle_touch_px", &S::circle_touch_px, "max(1.5, 0.25 * sw)", [](double w) { return std::max(1.5, 0.25 * w); }, "px",
            "two circles fitted to the parts of their loops clear of the ink they share, whose gap (or overlap) is "
            "no more than this, touch: each is drawn as one circle through the contact (junction drawings: pairs of "
            "touching circles at 3-12 px counted right 0.00 -> 0.92, clean and photographed; a tabler 18+ icon's 8 "
            "went from two arcs and two lines to one circle); 0: never"),
        from_width(
            "graph.filled_min_diameter_px", &S::filled_min_diameter_px, "3.0 * sw", [](double w) { return 3.0 * w; }, "px",
            "ink whose largest inscribed disc is at least this wide is a filled mark (strokes gone over until they "
            "filled in, a dark dot), drawn as strokes of the pen that cover its ink; the widest disc of a stroke's "
            "crossing or blot is under 2 w"),
        from_width(
            "graph.filled_core_radius_px", &S::filled_core_radius_px, "sw", [](double w) { return 1.0 * w; }, "px",
            "a filled mark is the union of its ink discs of at least this radius: strokes running into it, whose discs "
            "are about w/2, are not part of it"),
        from_width(
            "graph.filled_remnant_px", &S::filled_remnant_px, "2.0 * sw", [](double w) { return 2.0 * w; }, "px",
            "a branch left outside a filled mark, ending free or back at the mark within this length, is part of the "
            "mark's tangle (a small loop's only under w/2: what leaves it free is the stroke's tail); the mark's "
            "strokes also cover the ink this close to it that no other stroke reaches (a filled-in zig-zag's "
            "teeth), and a branch that ends free in a small blob, outside it for less than this, does not count "
            "as reaching it (graph.filled_loop_reach_px)"),
        from_width(
            "graph.filled_loop_diameter_px", &S::filled_loop_diameter_px, "1.7 * sw", [](double w) { return 1.7 * w; }, "px",
            "narrower ink whose largest disc is at least this wide is a small loop filled in, drawn as its outline "
            "inset by w/2, when strokes reach too little of it (graph.filled_loop_reach_px); crossings are at most "
            "1.41 w wide (generated scribbles, seeds 1 / 2 / 3: ink recall 0.963 / 0.964 / 0.969 -> 0.970 / 0.965 / "
            "0.980 at 1.8 w; 1.7 w with thinning's spurs into a blob not counting as reaching it, loops' tails "
            "kept and filled marks covered: 0.993 / 0.992 / 0.991, photographed 0.954 / 0.941 / 0.950 -> 0.978 / "
            "0.972 / 0.976; at 1.6 w three of the dev corpus's 25 brush characters lose f1 at 1 px); 0: never"),
        from_width(
            "graph.filled_loop_reach_px", &S::filled_loop_reach_px, "0.5 * sw + 1", [](double w) { return 0.5 * w + 1; }, "px",
            "a blob graph.filled_loop_diameter_px wide is a loop filled in when a third of its core (ink w/2 from "
            "paper) lies farther than this from every stroke but thinning's spurs ending in it, beyond the reach of "
            "the pen's own width: the stroke ran past the loop (a brush blot is crossed by its stroke)"),
        from_width(
            "graph.gap_join_px", &S::gap_join_px, "1.5 * sw + 2", [](double w) { return 1.5 * w + 2; }, "px",
            "two free ends (cap centres) at most this far apart are one broken stroke when their directions agree: a "
            "paper gap of up to half a width plus 2 px; letters 1.5 widths apart stand farther"),
        constant("graph.gap_t_join_px", &S::gap_t_join_px, 0, "px",
                 "a free end at most this far from the centreline of the stroke it points at stopped short of a T and "
                 "is joined to it (w + 2 joins paper gaps of 2 px). Off: a T join saves no pen lift (the end becomes "
                 "an odd junction), draws over paper and made every measured drawing slower; brush script ends near "
                 "other strokes by design"),
        constant("graph.gap_join_max_turn_deg", &S::gap_join_max_turn_deg, gap.max_turn_deg, "deg",
                 "ends rejoined straight across a gap continue each other's direction within this", 180),
        from_width(
            "graph.gap_join_offset_px", &S::gap_join_offset_px, "max(2.0, 0.5 * sw)", [](double w) { return std::max(2.0, 0.5 * w); }, "px",
            "... and each lies at most this far to the side of the other's line: half a width, and at least 2 px, "
            "as the last few pixels of a thin pencil stroke give its direction only to some 20 degrees (at 1.5 px "
            "two photographed 3 px rings stayed open at 5 px gaps)"),
        constant(
            "graph.gap_corner_max_turn_deg", &S::gap_corner_max_turn_deg, gap.max_corner_deg, "deg",
            "ends whose lines meet inside the gap are a corner drawn in two strokes when they turn by at most this",
            180),
        constant("graph.gap_t_min_angle_deg", &S::gap_t_min_angle_deg, gap.min_t_angle_deg, "deg",
                 "an end is joined to the stroke it points at only when it meets it this steeply", 90),
        measured("skeleton.stroke_width_px", &S::stroke_width_px,
                 "median ink width across the skeleton (the default when nothing can be measured)", "px",
                 "median ink width across the skeleton, edge to edge at 50% coverage", true, kInf, kDefaultStrokeWidth),
        from_width(
            "skeleton.min_speck_area_px", &S::min_speck_area_px, "0.3 * sw^2", [](double w) { return 0.3 * w * w; }, "px^2",
            "ink components of fewer pixels are noise (a round dot has 0.79 w^2)"),
        from_width(
            "skeleton.max_hole_area_px", &S::max_hole_area_px, "0.2 * sw^2", [](double w) { return 0.2 * w * w; }, "px^2",
            "enclosed paper regions of at most this many pixels are pinholes, filled before thinning"),
        from_width(
            "skeleton.max_sliver_width_px", &S::max_sliver_width_px, "max(1.5, 0.5 * sw)", [](double w) { return std::max(1.5, 0.5 * w); }, "px",
            "enclosed paper no wider than this and at least a stroke width long is the gap between two passes of one "
            "stroke, filled before thinning"),
        constant("graph.refine_max_shift_ratio", &S::refine_max_shift_ratio, cen.max_shift_ratio, "",
                 "sub-pixel centring moves a skeleton point at most this fraction of its cross-section's width (at "
                 "least 1 px)"),
        constant("graph.clean_width_ratio", &S::clean_width_ratio, cen.clean_ratio, "",
                 "a cross-section wider than this times its neighbours' median runs into other ink (a junction, a "
                 "corner's other leg) and is not used for centring or directions"),
        from_width(
            "graph.spur_protrusion_px", &S::spur_protrusion_px, "0.5 * sw", [](double w) { return 0.5 * w; }, "px",
            "a branch from a junction to a free end is a thinning spur when its tip reaches less than this beyond the "
            "junction's ink disc and beyond the edge of another arm it lies in"),
        from_width(
            "graph.dot_length_px", &S::dot_length_px, "0.5 * sw", [](double w) { return 0.5 * w; }, "px",
            "isolated strokes shorter than this are dots"),
        from_width(
            "graph.double_stroke_px", &S::double_stroke_px, "1.5 * sw", [](double w) { return 1.5 * w; }, "px",
            "two parallel edges whose points stay this close (centre to centre) along most of their length are two "
            "passes of one stroke, their inks at most half a width apart"),
        constant("graph.point_spacing_px", &S::point_spacing_px, 1.5, "px",
                 "largest distance between consecutive edge points: longer steps are split evenly; 1.5 keeps each "
                 "traced pixel step whole (a diagonal one is 1.41 px)",
                 kInf, 0.01),
        },
        drawing_units);
  }();
  return set;
}

// The run's parameters as resolved so far (ParamResolver: the user's value, else derived from
// the basis, else the default, each recorded in the scene's config): the basis grows as the
// trace scale and then the stroke width are measured.
struct SkeletonConfig {
  SkeletonConfig(Scene& scene, const std::map<std::string, double>& overrides)
      : resolver(skeleton_params(), overrides, &scene) {}

  double get(double S::*field) { return resolver.resolve(field, basis, p); }
  double set(double S::*field, double value, const std::string& from = "") {
    return resolver.set(field, value, basis, p, from);
  }
  std::optional<double> user(double S::*field) const { return resolver.user(field, basis); }

  ParamResolver<SkeletonParams, SkeletonBasis> resolver;
  SkeletonParams p;
  SkeletonBasis basis;
};

// Strokes this wide (px) trace as well as any wider ones: a drawing whose strokes are all at
// least twice as wide is traced at reduced resolution.
constexpr double kTraceWidth = 16;
// Only images over this many pixels are measured for it, on a copy of about kProbePixels.
constexpr double kTraceMinPixels = 4 << 20, kProbePixels = 2 << 20;

// The gray averaged over f x f pixels (area interpolation), at least 1 x 1.
cv::Mat area_averaged(const cv::Mat& gray, int f) {
  cv::Mat out;
  cv::resize(gray, out, {std::max(1, gray.cols / f), std::max(1, gray.rows / f)}, 0, 0, cv::INTER_AREA);
  return out;
}

// skeleton.trace_scale: the 10th-percentile stroke width (the thinner strokes count, not only
// the typical ones), measured on an area-averaged copy, over kTraceWidth. Strokes under 3 px
// wide on the copy are not measured well enough to decide: 1.
int trace_scale(SkeletonConfig& cfg, const cv::Mat& gray) {
  int scale = 1;
  if (static_cast<double>(gray.total()) > kTraceMinPixels) {
    const int f = std::max(2, static_cast<int>(std::sqrt(static_cast<double>(gray.total()) / kProbePixels)));
    const cv::Mat probe = area_averaged(gray, f);
    Ink ink = separate_ink(probe, InkOptions{});
    const double w = ink.uniform ? 0 : stroke_width_quantile(thin(ink.binary), ink.coverage, 0.1);
    const double full_width = w * gray.cols / probe.cols;
    if (w >= 3) scale = std::max(1, static_cast<int>(full_width / kTraceWidth));
  }
  return std::max(1, static_cast<int>(std::lround(cfg.set(&S::trace_scale, scale, "image"))));
}

Ink find_ink(SkeletonConfig& cfg, const cv::Mat& gray) {
  InkOptions io;
  io.background_cell_px = cfg.get(&S::background_cell_px);
  io.stroke_scale = cfg.get(&S::light_stroke_scale);
  io.page_scale = cfg.get(&S::light_page_scale);
  io.paper_contrast = cfg.get(&S::paper_contrast);
  io.page_contrast = cfg.get(&S::page_contrast);
  io.weak_ratio = cfg.get(&S::weak_ratio);
  io.noise_ratio = cfg.get(&S::noise_ratio);
  io.peak_radius_ratio = cfg.get(&S::peak_radius_ratio);
  io.grain_holes = cfg.get(&S::grain_holes);
  io.grain_sigma_ratio = cfg.get(&S::grain_sigma_ratio);
  io.sheet_step = cfg.get(&S::sheet_step);
  io.threshold = cfg.user(&S::threshold);
  io.weak_threshold = cfg.user(&S::weak_threshold);
  Ink ink = separate_ink(gray, io);
  cfg.set(&S::off_sheet, ink.off_sheet, "image");
  cfg.set(&S::paper_level, ink.paper_level, "image");
  cfg.set(&S::paper_noise, ink.noise, "image");
  cfg.set(&S::ink_level, ink.ink_level, "image");
  cfg.set(&S::threshold, ink.threshold, "image");
  cfg.set(&S::weak_threshold, ink.weak_threshold, "image");
  cfg.set(&S::ink_holes, ink.holes, "image");
  cfg.set(&S::grain_sigma_px, ink.grain_sigma_px, "image");
  cfg.set(&S::peak_radius_px, ink.peak_radius_px, "image");
  return ink;
}

// Refuses a skeleton beyond kMaxSkeletonPixels or kMaxJunctionPixels (skeletonize.hpp).
void check_budget(const cv::Mat& skeleton, int scale) {
  const long long pixels = cv::countNonZero(skeleton);
  const long long junctions = pixels > kMaxSkeletonPixels ? 0 : cv::countNonZero(neighbour_count(skeleton) >= 3);
  if (pixels <= kMaxSkeletonPixels && junctions <= kMaxJunctionPixels) return;
  const std::string at = scale > 1 ? " (traced at 1/" + std::to_string(scale) + " of its resolution)" : "";
  throw Error(Code::invalid_raster,
              pixels > kMaxSkeletonPixels
                  ? "the drawing is too large to trace: its skeleton" + at + " has " + std::to_string(pixels) +
                        " pixels, more than the limit of " + std::to_string(kMaxSkeletonPixels) +
                        "; trace it in parts or at a lower resolution"
                  : "the drawing is too intricate to trace: its skeleton" + at + " has " + std::to_string(junctions) +
                        " junction pixels, more than the limit of " + std::to_string(kMaxJunctionPixels) +
                        "; trace it in parts");
}

graph::JunctionOptions junction_options(SkeletonConfig& cfg, double clean_ratio) {
  graph::JunctionOptions j;
  j.merge_length = cfg.get(&S::junction_merge_px);
  j.crossing_length = cfg.get(&S::crossing_merge_px);
  j.meeting_length = cfg.get(&S::meeting_merge_px);
  j.clean_width_ratio = clean_ratio;
  j.clean_run = cfg.get(&S::arm_clean_run_px);
  j.arm_window = cfg.get(&S::arm_window_px);
  j.max_turn_deg = cfg.get(&S::crossing_max_turn_deg);
  j.max_offset = cfg.get(&S::crossing_max_offset_px);
  j.tangent_max_deg = cfg.get(&S::tangent_stem_max_deg);
  j.tangent_exact_deg = cfg.get(&S::tangent_stem_exact_deg);
  j.apex_straight_widths = cfg.get(&S::apex_straight_widths);
  j.circle_stem_offset = cfg.get(&S::circle_stem_offset_px);
  j.tangent_offset = cfg.get(&S::tangent_circle_offset_px);
  j.circle_touch = cfg.get(&S::circle_touch_px);
  return j;
}

// Filled marks (graph/filled.hpp), measured against the drawing's median stroke width: brush
// strokes are as wide as w by definition, their crossings and blots at most about 2 w.
graph::FilledOptions filled_options(SkeletonConfig& cfg, double w, double dot_length) {
  graph::FilledOptions f;
  f.stroke_width = w;
  f.dot_length = dot_length;
  f.min_diameter = cfg.get(&S::filled_min_diameter_px);
  f.core_radius = cfg.get(&S::filled_core_radius_px);
  f.remnant_length = cfg.get(&S::filled_remnant_px);
  f.loop_diameter = cfg.get(&S::filled_loop_diameter_px);
  f.loop_reach = cfg.get(&S::filled_loop_reach_px);
  return f;
}

graph::GapOptions gap_options(SkeletonConfig& cfg) {
  graph::GapOptions o;
  o.max_gap = cfg.get(&S::gap_join_px);
  o.max_t_reach = cfg.get(&S::gap_t_join_px);
  o.max_turn_deg = cfg.get(&S::gap_join_max_turn_deg);
  o.max_offset = cfg.get(&S::gap_join_offset_px);
  o.max_corner_deg = cfg.get(&S::gap_corner_max_turn_deg);
  o.min_t_angle_deg = cfg.get(&S::gap_t_min_angle_deg);
  return o;
}

}  // namespace

const ParamTable& skeleton_param_table() { return skeleton_params().table(); }

void skeletonize(Scene& scene, const cv::Mat& gray, const SkeletonOptions& opt,
                 const std::function<void(const char*)>& on_stage) {
  if (gray.empty() || gray.type() != CV_8UC1) throw Error(Code::invalid_raster, "skeletonize needs a non-empty gray image");
  raster_threads_for(gray.total());
  SkeletonConfig cfg(scene, opt.overrides);
  auto starting = [&](const char* what) {
    if (on_stage) on_stage(what);
  };
  starting("1/3 ink");
  // Wide strokes are traced on an area-averaged copy, each traced pixel the mean of about
  // scale x scale of the drawing's; sx, sy: the drawing's pixels per traced pixel, s their mean.
  const int scale = trace_scale(cfg, gray);
  const cv::Mat work = scale > 1 ? area_averaged(gray, scale) : gray;
  const double sx = static_cast<double>(gray.cols) / work.cols, sy = static_cast<double>(gray.rows) / work.rows;
  const double s = 0.5 * (sx + sy);
  cfg.basis.scale = s;

  // Stage 1: ink coverage and a binary image at 50% coverage (raster/ink.hpp).
  Ink ink = find_ink(cfg, work);
  const bool all_dark = ink.uniform && ink.coverage.at<uchar>(0, 0) == 255;

  starting("2/3 skeleton");
  // Stage 2: skeleton and stroke width, then specks and pinholes removed (raster/).
  cv::Mat skeleton = thin(ink.binary);
  check_budget(skeleton, scale);
  double measured = median_stroke_width(skeleton, ink.coverage);
  const double w = cfg.set(&S::stroke_width_px, measured > 0 ? measured : kDefaultStrokeWidth / s,
                           measured > 0 ? "image" : "default");
  cfg.basis.w = w;
  double min_speck = cfg.get(&S::min_speck_area_px);
  double max_hole = cfg.get(&S::max_hole_area_px);
  double sliver = cfg.get(&S::max_sliver_width_px);
  int specks = remove_specks(ink.binary, min_speck);
  int holes = fill_holes(ink.binary, max_hole) + graph::fill_slivers(ink.binary, sliver, w);
  if (holes > 0) skeleton = thin(ink.binary);
  else if (specks > 0) cv::bitwise_and(skeleton, ink.binary, skeleton);

  graph::CentreOptions copt;
  copt.max_shift_ratio = cfg.get(&S::refine_max_shift_ratio);
  copt.clean_ratio = cfg.get(&S::clean_width_ratio);
  double spur = cfg.get(&S::spur_protrusion_px);
  double dot = cfg.get(&S::dot_length_px);
  graph::JunctionOptions jopt = junction_options(cfg, copt.clean_ratio);
  graph::FilledOptions fopt = filled_options(cfg, w, dot);
  double doubled = cfg.get(&S::double_stroke_px);
  graph::GapOptions gopt = gap_options(cfg);
  double spacing = cfg.get(&S::point_spacing_px);

  starting("3/3 stroke graph");
  // Stage 3: the stroke graph (graph/): trace, prune, centre, resolve, finish the ends.
  graph::StrokeGraph g = graph::trace_skeleton(skeleton);
  graph::prune_spurs(g, ink.coverage, spur, w);
  graph::centre_on_ink(g, ink.coverage, w, copt);
  graph::collapse_dots(g, dot);
  graph::place_stroke_ends(g, ink.coverage, w);
  graph::resolve_junctions(g, ink.coverage, jopt);
  graph::recover_cusps(g, ink.coverage, w);
  graph::collapse_double_strokes(g, doubled);
  graph::join_gaps(g, w, gopt);
  graph::centre_dots(g, ink.coverage, w);
  graph::replace_filled_marks(g, ink.binary, fopt);
  scene.graph = graph::to_scene_graph(g, w, spacing);
  if (scale > 1) {
    // Traced pixel centre i is the centre of the drawing's pixels it averages: (i + 1/2) s - 1/2.
    auto place = [&](Vec2& p) { p = {(p.x + 0.5) * sx - 0.5, (p.y + 0.5) * sy - 0.5}; };
    for (Vertex& v : scene.graph->vertices) {
      place(v.p);
      v.meeting_link_px *= s;
      if (v.tangent) v.tangent->line_gap_px *= s, v.tangent->circle_off_px *= s;
    }
    for (Edge& e : scene.graph->edges) {
      for (Vec2& p : e.points) place(p);
      e.width_px *= s;
      if (e.mark) e.mark->diameter_px *= s, e.mark->flip_reach_px *= s;
    }
  }

  if (!scene.source) scene.source = Source{};
  scene.source->width = gray.cols;
  scene.source->height = gray.rows;
  // As the scene records it: at the drawing's resolution, rounded.
  scene.source->stroke_width_px = skeleton_params().read(scene, {}).stroke_width_px;
  // One warning, never two that contradict each other: a dark image too small to trace (1x1)
  // is not "traced as one filled shape".
  if (all_dark && scene.graph->edges.empty())
    scene.warnings.push_back("the image is uniformly dark and too small to trace: the drawing is empty");
  else if (all_dark)
    scene.warnings.push_back("the image is uniformly dark: traced as one filled shape");
  else if (scene.graph->edges.empty())
    scene.warnings.push_back("no ink found: the drawing is empty");
}

}  // namespace sv
