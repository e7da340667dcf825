// Candidate edits of a scene, each the exact request of the catalog tool that carries it out:
// where the robot's time goes (a spin at a nearly smooth joint, a run of pieces one command
// could draw, a pen-up across a near-miss gap, a stroke driven the way that forces a turn),
// what the drawing carries that the ink does not (a doubled stroke, a stroke with no ink under
// it), and the escalation to a looser stage threshold. Proposing is geometry only; what a
// candidate does to draw time and fidelity is measured by applying it (the caller's settle).
#pragma once
#include <string>
#include <vector>

#include "core/scene.hpp"
#include "edit/geometry.hpp"
#include "eval/scope.hpp"

namespace sv::suggest {

struct Candidate {
  std::string edit_kind;   // the catalog's OptimizationCandidate.edit_kind
  std::string merge_kind;  // fuse_collinear_lines, fuse_co_arc, rebuild_circle_from_arcs,
                           // deduplicate_overlap for a merge group; "" otherwise
  std::string tool;        // catalog name of the tool that applies it
  json request;            // its request fields
  std::vector<std::string> targets;
  std::string description, rationale;
};

// Groups whose merge should be considered together (MergeSimilarElements): collinear lines end
// to end, arcs of one circle end to end (all of it: a circle rebuilt), a stroke lying along
// another. `aggressive` doubles the angle and offset allowances.
struct MergeGroup {
  Candidate edit;                 // the merge (or, for a duplicate, the deletion) as a request
  std::optional<Shape> replacement;  // what the group becomes (the kept stroke for a duplicate)
  double fit_rms_px = 0, fit_max_px = 0;  // of the replacement against the group's source points
  double tolerance_px = 0;        // the coverage tolerance it is held to
};
std::vector<MergeGroup> similar_groups(const Scene& s, const Scope& scope, bool aggressive);

// Every candidate touching the scope: the merge groups first, then the joints, pen-ups and
// turns of the command stream, strokes without ink under them (against `reference`), tremor,
// and the stage escalations.
std::vector<Candidate> propose(const Scene& s, const std::vector<Polyline>& reference, const Scope& scope);

}  // namespace sv::suggest
