// Relationships a drawing implies between its forms — mirror pairs about an axis, repetition of
// one shape (translated along a line or rotated about a centre), alignment, a shared baseline,
// containment, tangency, and near-mirror pairs that differ beyond tolerance (intentional
// asymmetry) — each with the axis or anchor, a confidence and the measured values against their
// thresholds in stroke widths. A reported mirror lists its primitives as EnforceRelation's mirror
// takes them: pairs a0, b0, a1, b1, ... about the axis line.
#pragma once
#include <string>
#include <vector>

#include "semantic/forms.hpp"

namespace sv::semantic {

struct Relationship {
  std::string kind;  // mirror, repetition, alignment, shared_baseline, containment, tangency, intentional_asymmetry
  std::vector<std::string> primitive_ids;
  std::vector<int> forms;  // form numbers (tangency: the forms of its primitives)
  json axis_or_anchor;     // a line [[x0, y0], [x1, y1]], a point [x, y] or a coordinate
  double confidence = 0;
  std::string rationale;
  std::vector<Evidence> evidence;
  BBox box;  // where it is
};

struct RelationParams {
  double mirror_sw = 0.5;        // mean distance of a reflected form from its partner
  double asymmetry_sw = 3.0;     // beyond mirror_sw and up to this, with alike sizes: intentional asymmetry
  double axis_reach_sw = 1.0;    // the axis passes this near the centre of the forms' container
  double size_ratio = 1.25;      // partners' lengths at most this apart (asymmetry: 1.5)
  double repeat_sw = 1.0;        // repeated forms: length and spread alike within this (or 10 %)
  int repeat_min = 3;
  double align_sw = 0.5;         // aligned coordinates within this
  int align_min = 3;
  double tangency_sw = 0.25;     // gap between touching curves (their tangents then agree)
};

// `scene`: the scene whose drawing `a` analyses (its primitives give the mirror pairs and
// tangency), or nullptr for ink alone. A mirror pair EnforceRelation would refuse (a primitive
// leaving its source points' tolerance) is reported as intentional asymmetry, with the refusal.
std::vector<Relationship> implied_relationships(const Analysis& a, const Scene* scene,
                                                const RelationParams& params = {});

// A point reflected across the line through c with unit normal n.
inline Vec2 reflect(Vec2 p, Vec2 c, Vec2 n) { return p - n * (2 * dot(p - c, n)); }

}  // namespace sv::semantic
