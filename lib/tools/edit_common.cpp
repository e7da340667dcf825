#include "tools/edit_common.hpp"

#include <fmt/format.h>

#include <boost/graph/adjacency_list.hpp>
#include <boost/graph/connected_components.hpp>
#include <cmath>

#include "core/error.hpp"
#include "edit/edit.hpp"
#include "tools/common.hpp"
#include "tools/schema_parts.hpp"

namespace sv {

json primitive_ids_schema(const std::string& doc) { return schema::array(schema::id("primitive id"), doc); }

json replacement_spec_schema(const std::string& doc) {
  namespace S = schema;
  return S::object({{"type", S::primitive_type()},
                    {"p0", S::point("start (line, arc)")},
                    {"p1", S::point("end (line, arc)")},
                    {"bulge", S::number("arc: tan(sweep/4), positive turning counter-clockwise in the y-down frame")},
                    {"center", S::point("circle centre")},
                    {"radius", S::number("circle radius, px", 0)}},
                   {"type"}, doc);
}

Shape shape_from_spec(const json& spec) {
  auto pt = [&](const char* k) -> Vec2 {
    if (!spec.contains(k) || spec[k].is_null())
      throw Error(Code::invalid_selection, fmt::format("a {} needs '{}'", spec.value("type", "shape"), k));
    return {spec[k].at(0).get<double>(), spec[k].at(1).get<double>()};
  };
  auto num = [&](const char* k) -> double {
    if (!spec.contains(k) || !spec[k].is_number())
      throw Error(Code::invalid_selection, fmt::format("a {} needs '{}'", spec.value("type", "shape"), k));
    return spec[k].get<double>();
  };
  const std::string type = spec.value("type", "");
  Shape s;
  if (type == "line") s = Shape::line(pt("p0"), pt("p1"));
  else if (type == "arc") s = Shape::arc(pt("p0"), pt("p1"), num("bulge"));
  else if (type == "circle") s = Shape::circle(pt("center"), num("radius"));
  else throw Error(Code::invalid_selection, "unknown primitive type '" + type + "'");
  if (s.type == PrimType::arc && std::abs(s.bulge) < 1e-9) s = Shape::line(s.p0, s.p1);
  check_shape(s, "the " + type);
  return s;
}

int connected_components(const std::vector<Primitive>& prims, double join_px, std::vector<int>& component) {
  // Vertices: the primitives; an edge joins two whose ends (or, for circles, any samples) meet.
  using G = boost::adjacency_list<boost::vecS, boost::vecS, boost::undirectedS>;
  G g(prims.size());
  std::vector<Polyline> touch(prims.size());
  for (size_t i = 0; i < prims.size(); ++i) {
    const Shape& s = prims[i].shape;
    touch[i] = s.type == PrimType::circle ? s.sample(2.0) : Polyline{s.p0, s.p1};
  }
  for (size_t i = 0; i < prims.size(); ++i)
    for (size_t j = i + 1; j < prims.size(); ++j) {
      bool meet = false;
      // Ends meet ends, and an end meets the body of the other (a T junction).
      for (Vec2 p : touch[i]) meet = meet || (prims[j].shape.distance_to(p) <= join_px);
      for (Vec2 p : touch[j]) meet = meet || (prims[i].shape.distance_to(p) <= join_px);
      if (meet) boost::add_edge(i, j, g);
    }
  component.assign(prims.size(), 0);
  return prims.empty() ? 0 : static_cast<int>(boost::connected_components(g, component.data()));
}

double covered_length_px(const Scene& s, const std::vector<Polyline>& reference) {
  // The primitives themselves, not a command stream that may predate the edit.
  Scene laid_out = s;
  laid_out.commands.reset();
  return measure_coverage(drawing_of(laid_out).strokes, reference, default_tolerance(stroke_width_of(s)), image_diagonal(s))
      .covered_px;
}

}  // namespace sv
