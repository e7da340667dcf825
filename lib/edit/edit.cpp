#include "edit/edit.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "core/error.hpp"
#include "core/scene_check.hpp"
#include "fit/params.hpp"
#include "graph/skeletonize.hpp"
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

Scene editable(const Scene& s) {
  if (!s.primitives) throw Error(Code::invalid_scene, "the scene has no primitives (run sv-fit first)");
  Scene out = s;
  out.warnings.clear();
  carry_id_marks(s, out);
  return out;
}

size_t primitive_index(const Scene& s, const std::string& id) {
  if (s.primitives)
    for (size_t i = 0; i < s.primitives->size(); ++i)
      if ((*s.primitives)[i].id == id) return i;
  throw Error(Code::not_found, "no primitive " + id, {{"id", id}});
}

std::string id_list(const std::vector<std::string>& ids) {
  std::string out;
  for (const auto& id : ids) out += (out.empty() ? "" : ",") + id;
  return out;
}

RouteOptions route_options_of(const Scene& s) {
  RouteOptions o;
  if (s.robot) {
    o.ppi = s.robot->ppi;  // fixed: an edit must not rescale the drawing
    // A free start is chosen again for whatever stroke the edit leaves first.
    if (s.robot->start_fixed) o.start = s.robot->start;
    o.pen_time_s = s.robot->pen_time_s;
    keep_plotter(*s.robot, o);
  }
  for (const ParamSpec& d : route_param_table().params) {
    auto it = s.config.find(d.key);
    if (d.set_by == "--set" && it != s.config.end() && it->value("from", "") == "user" && (*it)["value"].is_number())
      o.overrides[d.key] = (*it)["value"].get<double>();
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
  const BBox page = page_with_margin(scene, 1e5);
  const double w = scene.source ? scene.source->width : 0, h = scene.source ? scene.source->height : 0;
  const double reach = -page.x0;
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
  // Which joints are smooth follows the geometry the edit left.
  if (after.primitives) record_joints(*after.primitives);
  // Downstream sections follow the edited primitives: a scene that had a route gets a new one.
  if (before.tour && after.primitives) {
    if (after.primitives->empty()) {
      after.tour = std::vector<TourStep>{};
      after.commands = std::vector<Command>{};
    } else if (!after.tour) {
      route(after, route_options_of(after));
    } else {
      // The tour of what the edit did not change stays as it was (a reversal or a hand-set
      // order is the user's); only the touched primitives are placed again.
      route_keeping(after, route_options_of(after), reroute ? touched : std::set<std::string>{});
    }
    // The scale stays the one the drawing was routed at, and so does its description.
    if (before.robot && after.robot) after.robot->footprint_mm = before.robot->footprint_mm;
  }
  after.simulation.reset();
  after.metrics = nullptr;
  if (before.simulation && after.commands && !after.commands->empty() && after.robot)
    simulate(after, SimulateOptions{});
}

const ParamSpec* find_stage_param(const std::string& key) {
  for (const ParamTable* t : {&skeleton_param_table(), &fit_param_table(), &route_param_table()})
    if (const ParamSpec* p = t->find(key)) return p;
  return nullptr;
}

}  // namespace sv
