#include "graph/skeletonize.hpp"

#include <optional>
#include <set>

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
#include "raster/thin.hpp"

namespace sv {
namespace {

// Stroke width assumed when none can be measured (only dots, or a uniform image).
constexpr double kDefaultStrokeWidth = 3;

// Records each configuration value with its provenance; a user override replaces the
// computed value.
class Config {
 public:
  Config(Scene& scene, const std::map<std::string, double>& overrides) : scene_(scene), overrides_(overrides) {}

  double set(const std::string& key, double value, const std::string& from, const std::string& doc) {
    used_.insert(key);
    auto it = overrides_.find(key);
    if (it != overrides_.end()) {
      set_config(scene_, key, it->second, "user", doc);
      return it->second;
    }
    set_config(scene_, key, value, from, doc);
    return value;
  }

  std::optional<double> user(const std::string& key) const {
    auto it = overrides_.find(key);
    return it == overrides_.end() ? std::nullopt : std::optional<double>(it->second);
  }

  void warn_unknown() {
    for (const auto& [key, value] : overrides_)
      if (!used_.count(key)) scene_.warnings.push_back("unknown config key " + key + " ignored");
  }

 private:
  Scene& scene_;
  const std::map<std::string, double>& overrides_;
  std::set<std::string> used_;
};

Ink find_ink(Config& cfg, const cv::Mat& gray) {
  InkOptions io;
  io.background_cell_px = cfg.set("skeleton.background_cell_px", io.background_cell_px, "default",
                                  "cell size (px) of the local paper-level map that evens out tinted, blotchy paper and uneven light");
  io.stroke_scale = cfg.set("skeleton.light_stroke_scale", io.stroke_scale, "default",
                            "the light is estimated around dark structures narrower than this fraction of the image's "
                            "shorter side (strokes), through them");
  io.page_scale = cfg.set("skeleton.light_page_scale", io.page_scale, "default",
                          "second, page-scale light estimate (fraction of the shorter side) that passes over wide ink areas");
  io.paper_contrast = cfg.set("skeleton.paper_contrast", io.paper_contrast, "default",
                              "surely paper: at most this much darker (fraction) than the light at stroke scale");
  io.page_contrast = cfg.set("skeleton.page_contrast", io.page_contrast, "default",
                             "surely paper: at most this much darker (fraction) than the light at page scale "
                             "(deeper than any shadow)");
  io.weak_ratio = cfg.set("skeleton.weak_ratio", io.weak_ratio, "default",
                          "weak ink is at least this fraction of full ink's darkness (pencil pressure fading)");
  io.noise_ratio = cfg.set("skeleton.noise_ratio", io.noise_ratio, "default",
                           "weak ink is at least this many times the paper's noise darker than paper (grain stays paper)");
  io.peak_radius_ratio = cfg.set("skeleton.peak_radius_ratio", io.peak_radius_ratio, "default",
                                 "a stroke's own darkness is the darkest ink within this many stroke widths");
  io.grain_holes = cfg.set("skeleton.grain_holes", io.grain_holes, "default",
                           "ink whose regions leave more than this share of their inside out at half its darkness "
                           "is grainy (pencil on paper) and is smoothed before it is read");
  io.grain_sigma_ratio = cfg.set("skeleton.grain_sigma_ratio", io.grain_sigma_ratio, "default",
                                 "grainy ink is smoothed with a Gaussian of this many stroke widths");
  io.threshold = cfg.user("skeleton.threshold");
  io.weak_threshold = cfg.user("skeleton.weak_threshold");
  Ink ink = separate_ink(gray, io);
  cfg.set("skeleton.paper_level", ink.paper_level, "image", "median gray (0-255) of the paper");
  cfg.set("skeleton.paper_noise", ink.noise, "image",
          "spread (one standard deviation, from the darker half) of the paper's normalised gray: sensor noise and paper grain");
  cfg.set("skeleton.ink_level", ink.ink_level, "image",
          "gray of full ink on paper-normalised gray (paper = 255): a low percentile of the ink class");
  cfg.set("skeleton.threshold", ink.threshold, "image",
          "strong ink where the paper-normalised gray is below this: midway between full ink and paper");
  cfg.set("skeleton.weak_threshold", ink.weak_threshold, "image",
          "weak ink where the paper-normalised gray is below this; it is ink only where connected to strong ink");
  cfg.set("skeleton.ink_holes", ink.holes, "image", "share of the inside of the ink regions left out at half its darkness");
  cfg.set("skeleton.grain_sigma_px", ink.grain_sigma_px, "image", "smoothing applied to grainy ink (0: none)");
  cfg.set("skeleton.peak_radius_px", ink.peak_radius_px, "image",
          "window radius in which a stroke's own darkness is found; edges sit at half of it");
  return ink;
}

graph::JunctionOptions junction_options(Config& cfg, double w, double clean_ratio) {
  graph::JunctionOptions j;
  j.merge_length = cfg.set("graph.junction_merge_px", 1.0 * w, "stroke_width",
                           "junction clusters joined by a shorter skeleton path are one junction");
  j.crossing_length = cfg.set("graph.crossing_merge_px", 6.0 * w, "stroke_width",
                              "two 3-way junctions joined by a shorter path are tested as one crossing");
  j.clean_width_ratio = clean_ratio;
  j.clean_run = cfg.set("graph.arm_clean_run_px", std::max(2.0, 0.5 * w), "stroke_width",
                        "an arm's own stroke begins where its cross-sections stay clean (graph.clean_width_ratio) "
                        "for this long; nearer the junction its ink is shared");
  j.arm_window = cfg.set("graph.arm_window_px", std::max(4.0, 1.0 * w), "stroke_width",
                         "length of arm over which its direction is measured, from where its own stroke begins");
  j.max_turn_deg = cfg.set("graph.crossing_max_turn_deg", 40, "default",
                           "a stroke through a crossing, or into a cusp, bends at most this much between arms");
  j.max_offset = cfg.set("graph.crossing_max_offset_px", std::max(1.5, 0.5 * w), "stroke_width",
                         "every arm's line passes at most this far from the crossing point");
  return j;
}

// Filled marks (graph/filled.hpp), measured against the drawing's median stroke width: brush
// strokes are as wide as w by definition, their crossings and blots at most about 2 w.
graph::FilledOptions filled_options(Config& cfg, double w, double dot_length) {
  graph::FilledOptions f;
  f.stroke_width = w;
  f.dot_length = dot_length;
  f.min_diameter = cfg.set("graph.filled_min_diameter_px", 3.0 * w, "stroke_width",
                           "ink whose largest inscribed disc is at least this wide is a filled mark (an eye, a dot, an "
                           "arrowhead), drawn as one stroke; the widest disc of a stroke's crossing or blot is under 2 w");
  f.core_radius = cfg.set("graph.filled_core_radius_px", 1.0 * w, "stroke_width",
                          "a filled mark is the union of its ink discs of at least this radius: strokes running into "
                          "it, whose discs are about w/2, are not part of it");
  f.outline_diameter = cfg.set("graph.filled_outline_diameter_px", 6.0 * w, "stroke_width",
                               "filled marks at least this wide are drawn as their outline inset by w/2, narrower "
                               "ones as their main medial path (a dot when round)");
  f.remnant_length = cfg.set("graph.filled_remnant_px", 2.0 * w, "stroke_width",
                             "a branch left outside a filled mark, ending free or back at the mark within this length, "
                             "is part of the mark's tangle");
  return f;
}

graph::GapOptions gap_options(Config& cfg, double w) {
  graph::GapOptions o;
  o.max_gap = cfg.set("graph.gap_join_px", 1.5 * w + 2, "stroke_width",
                      "two free ends (cap centres) at most this far apart are one broken stroke when their "
                      "directions agree: a paper gap of up to half a width plus 2 px; letters 1.5 widths apart "
                      "stand farther");
  o.max_t_reach = cfg.set("graph.gap_t_join_px", 0, "default",
                          "a free end at most this far from the centreline of the stroke it points at stopped "
                          "short of a T and is joined to it (w + 2 joins paper gaps of 2 px). Off: a T join "
                          "saves no pen lift (the end becomes an odd junction), draws over paper and made every "
                          "measured drawing slower; brush script ends near other strokes by design");
  o.max_turn_deg = cfg.set("graph.gap_join_max_turn_deg", o.max_turn_deg, "default",
                           "ends rejoined straight across a gap continue each other's direction within this");
  o.max_offset = cfg.set("graph.gap_join_offset_px", std::max(1.5, 0.5 * w), "stroke_width",
                         "... and each lies at most this far to the side of the other's line");
  o.max_corner_deg = cfg.set("graph.gap_corner_max_turn_deg", o.max_corner_deg, "default",
                             "ends whose lines meet inside the gap are a corner drawn in two strokes when they "
                             "turn by at most this");
  o.min_t_angle_deg = cfg.set("graph.gap_t_min_angle_deg", o.min_t_angle_deg, "default",
                              "an end is joined to the stroke it points at only when it meets it this steeply");
  return o;
}

}  // namespace

void skeletonize(Scene& scene, const cv::Mat& gray, const SkeletonOptions& opt) {
  if (gray.empty() || gray.type() != CV_8UC1) throw Error(Code::invalid_raster, "skeletonize needs a non-empty gray image");
  Config cfg(scene, opt.overrides);
  // Stage 1: ink coverage and a binary image at 50% coverage (raster/ink.hpp).
  Ink ink = find_ink(cfg, gray);
  const bool all_dark = ink.uniform && ink.coverage.at<uchar>(0, 0) == 255;

  // Stage 2: skeleton and stroke width, then specks and pinholes removed (raster/).
  cv::Mat skeleton = thin(ink.binary);
  double measured = median_stroke_width(skeleton, ink.coverage);
  const double w = cfg.set("skeleton.stroke_width_px", measured > 0 ? measured : kDefaultStrokeWidth,
                           measured > 0 ? "image" : "default",
                           "median ink width across the skeleton, edge to edge at 50% coverage");
  double min_speck = cfg.set("skeleton.min_speck_area_px", 0.3 * w * w, "stroke_width",
                             "ink components of fewer pixels are noise (a round dot has 0.79 w^2)");
  double max_hole = cfg.set("skeleton.max_hole_area_px", 0.2 * w * w, "stroke_width",
                            "enclosed paper regions of at most this many pixels are pinholes, filled before thinning");
  double sliver = cfg.set("skeleton.max_sliver_width_px", std::max(1.5, 0.5 * w), "stroke_width",
                          "enclosed paper no wider than this and at least a stroke width long is the gap "
                          "between two passes of one stroke, filled before thinning");
  int specks = remove_specks(ink.binary, min_speck);
  int holes = fill_holes(ink.binary, max_hole) + graph::fill_slivers(ink.binary, sliver, w);
  if (holes > 0) skeleton = thin(ink.binary);
  else if (specks > 0) cv::bitwise_and(skeleton, ink.binary, skeleton);

  graph::CentreOptions copt;
  copt.max_shift_ratio = cfg.set("graph.refine_max_shift_ratio", copt.max_shift_ratio, "default",
                                 "sub-pixel centring moves a skeleton point at most this fraction of its "
                                 "cross-section's width (at least 1 px)");
  copt.clean_ratio = cfg.set("graph.clean_width_ratio", copt.clean_ratio, "default",
                             "a cross-section wider than this times its neighbours' median runs into other ink "
                             "(a junction, a corner's other leg) and is not used for centring or directions");
  double spur = cfg.set("graph.spur_protrusion_px", 0.5 * w, "stroke_width",
                        "a branch from a junction to a free end is a thinning spur when its tip reaches less than "
                        "this beyond the junction's ink disc and beyond the edge of another arm it lies in");
  double dot = cfg.set("graph.dot_length_px", 0.5 * w, "stroke_width", "isolated strokes shorter than this are dots");
  graph::JunctionOptions jopt = junction_options(cfg, w, copt.clean_ratio);
  graph::FilledOptions fopt = filled_options(cfg, w, dot);
  double doubled = cfg.set("graph.double_stroke_px", 1.5 * w, "stroke_width",
                           "two parallel edges whose points stay this close (centre to centre) along most of "
                           "their length are two passes of one stroke, their inks at most half a width apart");
  graph::GapOptions gopt = gap_options(cfg, w);
  double spacing = cfg.set("graph.point_spacing_px", 1.0, "default", "largest distance between consecutive edge points");
  cfg.warn_unknown();

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

  if (!scene.source) scene.source = Source{};
  scene.source->width = gray.cols;
  scene.source->height = gray.rows;
  scene.source->stroke_width_px = w;
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
