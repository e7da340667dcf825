// Fidelity of drawn paths against reference centrelines, as the evaluation corpus's scorer
// measures it: both sides sampled every 0.25 px with length weights; precision = share of
// drawn length within `tol` of the reference, recall = share of reference length within `tol`
// of the drawing; chamfer = mean of the two mean distances; Hausdorff = the worst distance.
#pragma once
#include <nlohmann/json.hpp>
#include <vector>

#include "core/geometry.hpp"

namespace sv {

struct Coverage {
  double precision = 0, recall = 0, f1 = 0;
  double precision_tol1 = 0, recall_tol1 = 0, f1_tol1 = 0;  // at a fixed 1 px
  double chamfer_px = 0, hausdorff_px = 0;
  double drawn_length_px = 0, reference_length_px = 0;
  double covered_px = 0;  // reference length within tol of the drawing (a dot counts 1 px): recall's numerator
  nlohmann::json to_json() const;
};

// Reference polylines shorter than 1 px (dots) count as one sample of weight 1 px.
Coverage measure_coverage(const std::vector<Polyline>& drawn, const std::vector<Polyline>& reference,
                          double tol, double image_diagonal);

// The default tolerance of the corpus: max(2, stroke_width / 2).
inline double default_tolerance(double stroke_width_px) { return std::max(2.0, 0.5 * stroke_width_px); }

// Reads the centrelines of a ground-truth file of the corpus (CASE.gt.json: "polylines").
std::vector<Polyline> ground_truth_polylines(const nlohmann::json& gt);

}  // namespace sv
