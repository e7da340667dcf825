// Regions of interest and the scope of a measurement: a scope is the intersection of its
// regions, and "everything" when it has none. Regions are the scene's own region objects
// (rect, polygon, primitive_set, vertex_neighborhood, named), resolved against a scene.
#pragma once
#include <set>
#include <string>
#include <vector>

#include "core/scene.hpp"

namespace sv {

struct Region {
  std::string kind;             // rect, polygon, primitive_set, vertex_neighborhood
  std::string label;            // how the region reads in text, e.g. "rect [10,10,80,60]"
  Polyline polygon;             // rect (as 4 corners) and polygon
  std::set<std::string> ids;    // primitive_set
  std::vector<Shape> shapes;    // primitive_set: the shapes, for point tests
  double reach_px = 0;          // primitive_set: points this close to a shape are inside
  Vec2 center;                  // vertex_neighborhood
  double radius_px = 0;
  BBox bounds;

  bool contains(Vec2 p) const;
  bool touches(const Primitive& p) const;
};

// Resolves a region object. Unknown primitive, vertex or region names throw Error(not_found);
// malformed ones Error(invalid_selection).
Region resolve_region(const Scene& scene, const json& r);

struct Scope {
  std::vector<Region> regions;
  bool everything() const { return regions.empty(); }
  bool contains(Vec2 p) const;
  bool touches(const Primitive& p) const;
  bool touches(const Polyline& pl) const;
  // The union of the regions' bounds intersected, or empty when the scope is everything.
  BBox bounds() const;
  std::string describe() const;  // "" when everything
};

// Samples of a shape along its length (about every 2 px, at least 8) — for region tests.
Polyline shape_samples(const Shape& s);

}  // namespace sv
