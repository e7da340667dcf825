#include "edit/edit.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "core/error.hpp"
#include "core/scene_check.hpp"
#include "robot/simulate.hpp"

namespace sv {

namespace {

std::string fresh_id(Scene& s, const char* kind, char prefix) {
  int next = id_high_mark(s, kind) + 1;
  s.extra["id_marks"][kind] = next;
  return fmt::format("{}_{:04d}", prefix, next);
}

}  // namespace

std::string fresh_primitive_id(Scene& s) { return fresh_id(s, "primitive", 'p'); }
std::string fresh_region_id(Scene& s) { return fresh_id(s, "region", 'r'); }

void carry_id_marks(const Scene& before, Scene& after) {
  for (const char* kind : {"primitive", "region"}) {
    int mark = std::max(id_high_mark(before, kind), id_high_mark(after, kind));
    if (mark > 0) after.extra["id_marks"][kind] = mark;
  }
}

RouteOptions route_options_of(const Scene& s) {
  RouteOptions o;
  if (s.robot) {
    o.ppi = s.robot->ppi;  // fixed: an edit must not rescale the drawing
    o.start = s.robot->start;
    o.pen_time_s = s.robot->pen_time_s;
  }
  for (const RouteOptionDoc& d : route_option_docs()) {
    const std::string key = std::string("route.") + d.key;
    if (s.config.contains(key) && s.config[key].value("from", "") == "user" && s.config[key]["value"].is_number())
      o.overrides[key] = s.config[key]["value"].get<double>();
  }
  return o;
}

void check_shape(const Shape& s, const std::string& what) {
  auto finite = [](Vec2 p) { return std::isfinite(p.x) && std::isfinite(p.y); };
  bool ok = false;
  switch (s.type) {
    case PrimType::line: ok = finite(s.p0) && finite(s.p1) && dist(s.p0, s.p1) > 1e-6; break;
    case PrimType::arc:
      ok = finite(s.p0) && finite(s.p1) && dist(s.p0, s.p1) > 1e-6 && std::isfinite(s.bulge) && std::isfinite(s.radius);
      break;
    case PrimType::circle: ok = finite(s.center) && std::isfinite(s.radius) && s.radius > 1e-6; break;
  }
  if (!ok) throw Error(Code::invalid_selection, what + ": not a drawable shape (non-finite or zero size)");
}

void check_on_page(const Shape& s, const Scene& scene, const std::string& what) {
  // The page extended by its own size on every side (100000 px without a source): anything
  // farther is a typo, and would only cost the router time.
  double w = scene.source ? scene.source->width : 0, h = scene.source ? scene.source->height : 0;
  double reach = std::max(w, h) > 0 ? std::max(w, h) : 1e5;
  BBox page{-reach, -reach, w + reach, h + reach};
  auto inside = [&](Vec2 p) { return p.x >= page.x0 && p.x <= page.x1 && p.y >= page.y0 && p.y <= page.y1; };
  bool ok = s.type == PrimType::circle
                ? inside(s.center - Vec2{s.radius, s.radius}) && inside(s.center + Vec2{s.radius, s.radius})
                : inside(s.p0) && inside(s.p1) &&
                      (s.type == PrimType::line || (inside(s.at(0.25)) && inside(s.at(0.5)) && inside(s.at(0.75))));
  if (!ok)
    throw Error(Code::invalid_selection,
                fmt::format("{}: lies outside the page ({:g} x {:g} px, extended by {:g} px on every side)", what, w, h,
                            reach),
                {{"id", what}});
}

void settle(const Scene& before, Scene& after, const std::set<std::string>& touched, bool reroute,
            std::vector<std::string>& warnings) {
  carry_id_marks(before, after);
  if (after.primitives)
    for (const auto& p : *after.primitives) {
      check_shape(p.shape, p.id);
      check_on_page(p.shape, after, p.id);
    }
  // Always: an edit that only removes primitives (DeletePrimitive) touches nothing, yet the
  // relations naming them must go.
  auto w = resolve_relations(after, touched);
  warnings.insert(warnings.end(), w.begin(), w.end());
  // Downstream sections follow the edited primitives: a scene that had a route gets a new one.
  if (before.tour && after.primitives) {
    if (after.primitives->empty()) {
      after.tour = std::vector<TourStep>{};
      after.commands = std::vector<Command>{};
    } else if (reroute || !after.tour) {
      route(after, route_options_of(after));
    } else {
      emit_tour(after, route_options_of(after));
    }
    // The scale stays the one the drawing was routed at, and so does its description.
    if (before.robot && after.robot) after.robot->footprint_mm = before.robot->footprint_mm;
  }
  after.simulation = nullptr;
  after.metrics = nullptr;
  if (!before.simulation.is_null() && after.commands && !after.commands->empty() && after.robot)
    simulate(after, SimulateOptions{});
}

}  // namespace sv
