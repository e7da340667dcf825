// The kinds of relation between primitives: what beautify detects and enforces, what an edit
// may ask for, and what the scene's relation records name (by the strings of relation_kinds()).
#pragma once
#include <optional>
#include <string>

namespace sv {

enum class RelationKind {
  parallel,
  perpendicular,
  horizontal,
  vertical,
  collinear,
  tangent_continuity,
  equal_radius,
  concentric,
  coincident,  // chain ends that share one point
  mirror,      // pairs reflected about one axis (asked for in an edit, never detected)
};

// The name a scene's record carries ("tangent_continuity").
const char* relation_kind_name(RelationKind k);
// The kind of a record's name; nullopt for a name that is none.
std::optional<RelationKind> relation_kind_of(const std::string& name);

// The kinds whose residual is an angle (degrees); the others' is a distance (px).
bool is_angular(RelationKind k);
// parallel, perpendicular, horizontal, vertical: the kinds that hold a line's direction.
bool is_direction(RelationKind k);

}  // namespace sv
