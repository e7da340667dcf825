#include <fmt/format.h>

#include <algorithm>

#include "edit/edit.hpp"

namespace sv {

std::vector<std::string> resolve_relations(Scene& s, const std::set<std::string>& touched) {
  std::vector<std::string> warnings;
  json kept = json::array();
  for (const auto& r : s.relations) {
    bool complete = true;
    for (const auto& id : r.value("primitives", json::array()))
      complete = complete && s.primitive(id.get<std::string>()) != nullptr;
    if (complete) {
      kept.push_back(r);
      continue;
    }
    warnings.push_back(fmt::format("relation {} of {} dropped: a primitive is gone", r.value("kind", "?"),
                                   r.value("primitives", json::array()).dump()));
  }
  s.relations = kept;
  (void)touched;
  return warnings;
}

}  // namespace sv
