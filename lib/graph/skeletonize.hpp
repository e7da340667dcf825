// The sv-skeleton stage: a gray raster to the scene's source, config and stroke graph.
#pragma once
#include <functional>
#include <map>
#include <opencv2/core.hpp>
#include <string>

#include "core/params.hpp"
#include "core/scene.hpp"

namespace sv {

// The skeleton's budget, checked as soon as the ink is thinned, before the stroke graph is built:
// the graph's work grows with the skeleton's pixels and faster than linearly with its junctions
// (a 2000x2000 grid of 2 px lines every 16 px, 484k pixels and 77k junction pixels: 14.7 s and
// 761 MB; 1000x1000, 122k and 19k: 1.25 s and 114 MB), so a drawing beyond either is refused as
// invalid_raster rather than traced for minutes in gigabytes. Counted at the traced resolution
// (skeleton.trace_scale). The 164 test and corpus drawings have at most 1,654 skeleton pixels and
// 63 junction pixels (a skeleton pixel with three or more skeleton neighbours).
constexpr long long kMaxSkeletonPixels = 2'000'000;
constexpr long long kMaxJunctionPixels = 20'000;

struct SkeletonOptions {
  // User values by config key ("skeleton.threshold", "graph.spur_length_px", ...); they take
  // the place of the computed value and are recorded with from = "user".
  std::map<std::string, double> overrides;
};

// The skeleton.* and graph.* parameters, in the order skeletonize records them.
const ParamTable& skeleton_param_table();

// Separates ink from paper, thins it, traces the skeleton into a stroke graph, and resolves
// spurs, dots, junctions and crossings (see raster/ and graph/). Fills scene.source (width,
// height, stroke_width_px; creates it if absent, leaving path and sha256 to the caller),
// records every threshold in scene.config with its provenance, replaces scene.graph, and
// adds a warning for an empty or uniformly dark image; Error(invalid_selection) for an override
// skeleton_param_table() refuses, Error(invalid_raster) for a skeleton beyond the budget above. gray: CV_8UC1 (decode_image's output).
// Deterministic: the same pixels and options give the same scene. `on_stage`, when given, is
// told as each of the three stages starts ("2/3 skeleton"), for a progress line.
void skeletonize(Scene& scene, const cv::Mat& gray, const SkeletonOptions& opt = {},
                 const std::function<void(const char*)>& on_stage = {});

}  // namespace sv
