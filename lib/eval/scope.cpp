#include "eval/scope.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "core/error.hpp"
#include "eval/drawing.hpp"

namespace sv {

namespace {

constexpr int kMaxNamedDepth = 16;  // named regions may name named regions; no cycles

// Even-odd rule.
bool in_polygon(const Polyline& poly, Vec2 p) {
  bool in = false;
  for (size_t i = 0, j = poly.size() - 1; i < poly.size(); j = i++) {
    const Vec2 a = poly[i], b = poly[j];
    if ((a.y > p.y) != (b.y > p.y) && p.x < (b.x - a.x) * (p.y - a.y) / (b.y - a.y) + a.x) in = !in;
  }
  return in;
}

Vec2 point_of(const json& j) { return {j.at(0).get<double>(), j.at(1).get<double>()}; }

Region resolve(const Scene& scene, const json& r, int depth) {
  if (depth > kMaxNamedDepth) throw Error(Code::invalid_selection, "named regions nest too deep (a cycle?)");
  Region out;
  const std::string kind = r.value("kind", "");
  out.kind = kind;
  auto need = [&](const char* key) -> const json& {
    if (!r.contains(key)) throw Error(Code::invalid_selection, fmt::format("a {} region needs '{}'", kind, key));
    return r[key];
  };
  if (kind == "rect") {
    const json& v = need("rect");
    double x0 = v.at(0), y0 = v.at(1), x1 = v.at(2), y1 = v.at(3);
    if (x0 > x1) std::swap(x0, x1);
    if (y0 > y1) std::swap(y0, y1);
    out.polygon = {{x0, y0}, {x1, y0}, {x1, y1}, {x0, y1}};
    out.label = fmt::format("rect [{:g},{:g},{:g},{:g}]", x0, y0, x1, y1);
  } else if (kind == "polygon") {
    for (const auto& p : need("polygon")) out.polygon.push_back(point_of(p));
    if (out.polygon.size() < 3) throw Error(Code::invalid_selection, "a polygon region needs at least 3 points");
    out.label = fmt::format("polygon of {} points", out.polygon.size());
  } else if (kind == "primitive_set") {
    out.reach_px = stroke_width_of(scene);
    std::string names;
    for (const auto& id : need("primitive_ids")) {
      const Primitive* p = scene.primitive(id.get<std::string>());
      if (!p) throw Error(Code::not_found, "no primitive " + id.get<std::string>(), {{"id", id}});
      out.ids.insert(p->id);
      out.shapes.push_back(p->shape);
      for (Vec2 q : shape_samples(p->shape)) out.bounds.add(q);
      names += (names.empty() ? "" : ",") + p->id;
    }
    out.bounds.x0 -= out.reach_px, out.bounds.y0 -= out.reach_px;
    out.bounds.x1 += out.reach_px, out.bounds.y1 += out.reach_px;
    out.label = "primitives " + names;
    return out;
  } else if (kind == "vertex_neighborhood") {
    std::string vid = need("vertex_id");
    const Vertex* v = scene.graph ? scene.graph->vertex(vid) : nullptr;
    if (!v) throw Error(Code::not_found, "no vertex " + vid, {{"id", vid}});
    out.center = v->p;
    out.radius_px = r.value("radius_px", 3 * stroke_width_of(scene));
    out.bounds.add(v->p - Vec2{out.radius_px, out.radius_px});
    out.bounds.add(v->p + Vec2{out.radius_px, out.radius_px});
    out.label = fmt::format("within {:.3g} px of {}", out.radius_px, vid);
    return out;
  } else if (kind == "named") {
    std::string name = need("name");
    for (const auto& entry : scene.regions) {
      if (entry.value("name", "") != name && entry.value("id", "") != name) continue;
      Region named = resolve(scene, entry.contains("region") ? entry["region"] : entry, depth + 1);
      named.label = name + " (" + named.label + ")";
      return named;
    }
    throw Error(Code::not_found, "no region named " + name, {{"name", name}});
  } else {
    throw Error(Code::invalid_selection, "unknown region kind '" + kind + "'");
  }
  for (Vec2 p : out.polygon) out.bounds.add(p);
  return out;
}

}  // namespace

Polyline shape_samples(const Shape& s) {
  double len = s.length();
  return s.sample(std::clamp(len / 8, 0.05, 2.0));
}

bool Region::contains(Vec2 p) const {
  if (kind == "vertex_neighborhood") return dist(p, center) <= radius_px;
  if (kind == "primitive_set") {
    for (const auto& s : shapes)
      if (s.distance_to(p) <= reach_px) return true;
    return false;
  }
  if (p.x < bounds.x0 || p.x > bounds.x1 || p.y < bounds.y0 || p.y > bounds.y1) return false;
  if (kind == "rect") return true;
  return in_polygon(polygon, p);
}

bool Region::touches(const Primitive& p) const {
  if (kind == "primitive_set") return ids.count(p.id) > 0;
  for (Vec2 q : shape_samples(p.shape))
    if (contains(q)) return true;
  return false;
}

Region resolve_region(const Scene& scene, const json& r) { return resolve(scene, r, 0); }

bool Scope::contains(Vec2 p) const {
  return std::all_of(regions.begin(), regions.end(), [&](const Region& r) { return r.contains(p); });
}

bool Scope::touches(const Primitive& p) const {
  return std::all_of(regions.begin(), regions.end(), [&](const Region& r) { return r.touches(p); });
}

bool Scope::touches(const Polyline& pl) const {
  if (everything()) return true;
  for (Vec2 q : pl)
    if (contains(q)) return true;
  return false;
}

BBox Scope::bounds() const {
  BBox b;
  if (regions.empty()) return b;
  b = regions[0].bounds;
  for (size_t i = 1; i < regions.size(); ++i) {
    b.x0 = std::max(b.x0, regions[i].bounds.x0), b.y0 = std::max(b.y0, regions[i].bounds.y0);
    b.x1 = std::min(b.x1, regions[i].bounds.x1), b.y1 = std::min(b.y1, regions[i].bounds.y1);
  }
  return b;
}

std::string Scope::describe() const {
  std::string out;
  for (const auto& r : regions) out += (out.empty() ? "" : " and ") + r.label;
  return out;
}

}  // namespace sv
