#include "tools/region.hpp"

#include <cmath>
#include <sstream>

#include "core/error.hpp"

namespace sv {

json region_from_shorthand(const std::string& text) {
  if (text.rfind("p_", 0) == 0) {
    json ids = json::array();
    std::stringstream ss(text);
    for (std::string id; std::getline(ss, id, ',');)
      if (!id.empty()) ids.push_back(id);
    return {{"kind", "primitive_set"}, {"primitive_ids", ids}};
  }
  if (text.rfind("v_", 0) == 0) {
    auto colon = text.find(':');
    json r = {{"kind", "vertex_neighborhood"}, {"vertex_id", text.substr(0, colon)}};
    if (colon != std::string::npos) {
      char* end = nullptr;
      double radius = std::strtod(text.c_str() + colon + 1, &end);
      if (*end != '\0' || !(radius > 0)) throw Error(Code::invalid_selection, "bad radius in region " + text);
      r["radius_px"] = radius;
    }
    return r;
  }
  std::vector<double> nums;
  std::stringstream ss(text);
  bool numeric = true;
  for (std::string part; std::getline(ss, part, ',');) {
    char* end = nullptr;
    double v = std::strtod(part.c_str(), &end);
    numeric = numeric && !part.empty() && *end == '\0' && std::isfinite(v);
    nums.push_back(v);
  }
  if (numeric && nums.size() == 4) return {{"kind", "rect"}, {"rect", nums}};
  if (numeric) throw Error(Code::invalid_selection, "a rect region is x0,y0,x1,y1; got " + text);
  return {{"kind", "named"}, {"name", text}};
}

Scope scope_of(const Scene& scene, const json& request) {
  std::vector<json> regions;
  for (const char* key : {"region", "in_region", "crop_region"})
    if (request.contains(key)) regions.push_back(request[key]);
  if (request.contains("filter") && request["filter"].contains("in_region")) regions.push_back(request["filter"]["in_region"]);
  return scope_of_regions(scene, regions);
}

Scope scope_of_regions(const Scene& scene, const std::vector<json>& regions) {
  Scope s;
  for (const json& r : regions)
    if (r.is_object()) s.regions.push_back(resolve_region(scene, r));
  return s;
}

}  // namespace sv
