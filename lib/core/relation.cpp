#include "core/relation.hpp"

#include <array>
#include <utility>

namespace sv {

namespace {

// The one table of kinds and their names.
constexpr std::array<std::pair<RelationKind, const char*>, 10> kKinds = {{
    {RelationKind::parallel, "parallel"},
    {RelationKind::perpendicular, "perpendicular"},
    {RelationKind::horizontal, "horizontal"},
    {RelationKind::vertical, "vertical"},
    {RelationKind::collinear, "collinear"},
    {RelationKind::tangent_continuity, "tangent_continuity"},
    {RelationKind::equal_radius, "equal_radius"},
    {RelationKind::concentric, "concentric"},
    {RelationKind::coincident, "coincident"},
    {RelationKind::mirror, "mirror"},
}};

}  // namespace

const char* relation_kind_name(RelationKind k) {
  for (const auto& [kind, name] : kKinds)
    if (kind == k) return name;
  return "?";
}

std::optional<RelationKind> relation_kind_of(const std::string& name) {
  for (const auto& [kind, n] : kKinds)
    if (name == n) return kind;
  return std::nullopt;
}

bool is_direction(RelationKind k) {
  return k == RelationKind::parallel || k == RelationKind::perpendicular || k == RelationKind::horizontal ||
         k == RelationKind::vertical;
}

bool is_angular(RelationKind k) { return is_direction(k) || k == RelationKind::tangent_continuity; }

}  // namespace sv
