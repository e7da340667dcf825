// The scope of a tool call: every tool accepts `region` (and the catalog's own in_region /
// crop_region / filter.in_region), resolved into a Scope (eval/scope.hpp).
#pragma once
#include <string>

#include "eval/scope.hpp"

namespace sv {

// Parses the command-line shorthand: "x0,y0,x1,y1", "p_0001,p_0002", "v_0003[:radius]", NAME.
json region_from_shorthand(const std::string& text);

// The scope of a request: `region` plus any of the catalog's aliases present in it.
Scope scope_of(const Scene& scene, const json& request);
// The scope of the regions a typed request holds (its `region` and any of the catalog's aliases,
// in the order scope_of takes them); a null one, a region not given, adds nothing.
Scope scope_of_regions(const Scene& scene, const std::vector<json>& regions);

}  // namespace sv
