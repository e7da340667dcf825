// What the edit tools share: the catalog's ReplacementSpec and the id-list schema, the
// connectivity of the drawing, and the source ink an edit uncovers.
#pragma once
#include <string>
#include <vector>

#include "tools/tool.hpp"

namespace sv {

// JSON Schema of the catalog's ReplacementSpec: {type, p0, p1, bulge, center, radius}.
json replacement_spec_schema(const std::string& doc);
// JSON Schema of a list of primitive ids, as the edits take them.
json primitive_ids_schema(const std::string& doc);
// The shape a ReplacementSpec describes (a line needs p0, p1; an arc p0, p1, bulge; a circle
// center, radius). Throws Error(invalid_selection) for a missing field or an undrawable shape.
Shape shape_from_spec(const json& spec);

// Connected components of the drawing: primitives are joined where their ends meet (within
// `join_px`); a primitive's component index, by position in s.primitives, skipping `without`.
// Returns the number of components.
int connected_components(const std::vector<Primitive>& prims, double join_px, std::vector<int>& component);

// Length (px) of the reference centrelines (eval/ink_reference.hpp) the scene's primitives
// cover at the default tolerance: the numerator of its recall.
double covered_length_px(const Scene& s, const std::vector<Polyline>& reference);

}  // namespace sv
