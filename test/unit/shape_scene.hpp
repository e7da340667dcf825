// Test scenes built from shapes: a square source image of the given size and stroke width,
// and one primitive per shape with ids p_0001, p_0002, ... in order.
#pragma once
#include <fmt/format.h>

#include <vector>

#include "core/scene.hpp"

inline sv::Scene scene_of_shapes(const std::vector<sv::Shape>& shapes, int size_px, double stroke_width_px) {
  sv::Scene s;
  s.source = sv::Source{"t.png", std::string(64, '0'), size_px, size_px, stroke_width_px};
  std::vector<sv::Primitive> ps;
  for (const sv::Shape& sh : shapes) {
    sv::Primitive p;
    p.id = fmt::format("p_{:04d}", ps.size() + 1);
    p.shape = sh;
    ps.push_back(p);
  }
  s.primitives = ps;
  return s;
}
