// Semantic fidelity: does what the robot draws keep what made the source read as it does, even
// where pixels disagree? Each aspect is a score in [0, 1] measured between the source's ink
// (its centrelines) and the drawn strokes, with why, the primitives at fault and where:
//   closure         enclosed regions of the source still enclosed (matched by overlap)
//   negative_space  no region enclosed that the source left open, and gaps between forms kept
//   proportions     matched forms keep their size and place relative to what holds them
//   symmetry        mirror symmetries of the source (the drawing's axis, mirror pairs) kept
//   expressive_lines long strokes keep their turning profile (a smile stays a smile)
//   recognizability needs an oracle; not scored here, and the result says so
#pragma once
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "eval/scope.hpp"
#include "semantic/forms.hpp"

namespace sv::semantic {

struct AspectScore {
  std::string aspect;
  bool scored = true;
  double score = 1;
  std::string rationale;
  std::vector<std::string> offending_primitive_ids;
  std::vector<BBox> affected_regions;
  std::vector<Evidence> evidence;
};

struct FidelityReport {
  std::vector<AspectScore> aspects;  // in the order asked
  std::optional<double> overall;     // mean over the scored aspects; none when none was scored
  Analysis source, drawn;
};

// The aspects geometry measures, in catalog order.
const std::vector<std::string>& measured_aspects();

// `tolerance_px`: how far drawn ink may lie from the source's and still be the same stroke (the
// fidelity tolerance, eval/coverage.hpp).
FidelityReport evaluate_fidelity(const std::vector<Stroke>& source, const std::vector<Stroke>& drawn,
                                 double stroke_width_px, cv::Size image, double tolerance_px,
                                 const std::vector<std::string>& aspects);

// A scene's drawing against reference centrelines (its source's ink: eval/ink_reference.hpp), both
// cut to the scope, at the scene's stroke width and the corpus's tolerance.
FidelityReport scene_fidelity(const Scene& s, const std::vector<Polyline>& reference, const Scope& scope,
                              const std::vector<std::string>& aspects);

// Two drawings' forms and aspects side by side (CompareToReference's `semantics`): the
// reference's forms against the candidate's, and every measured aspect of the candidate against
// the reference.
struct SemanticComparison {
  int reference_forms = 0, candidate_forms = 0;
  int reference_closed_regions = 0, candidate_closed_regions = 0;
  std::map<std::string, std::pair<int, int>> roles;  // role -> (reference count, candidate count)
  FidelityReport fidelity;
  std::string summary;  // one paragraph of the differences
};
SemanticComparison compare_semantics(const std::vector<Stroke>& reference, const std::vector<Stroke>& candidate,
                                     double stroke_width_px, cv::Size image, double tolerance_px);

}  // namespace sv::semantic
