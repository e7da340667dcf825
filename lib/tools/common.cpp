#include "tools/common.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "core/error.hpp"
#include "store/store.hpp"

namespace sv {

const Scene& revision_scene(const ToolContext& ctx, const json& ref, Scene& holder, std::string* id) {
  if (ref.is_null() || (ref.is_string() && ref.get<std::string>().empty())) {
    if (id) *id = ctx.revision_id;
    return ctx.scene;
  }
  // A revision name, never a path: a request cannot make sv open a file of its choosing (nor
  // learn whether one exists).
  const std::string name = ref.get<std::string>();
  if (ctx.store) {
    std::string rid = ctx.store->resolve(name);
    holder = ctx.store->read_scene(rid);
    if (id) *id = rid;
    return holder;
  }
  // Without a store only the scene at hand has a name: its id, or a unique prefix of it.
  if (name.size() >= 4 && ctx.revision_id.rfind(name, 0) == 0) {
    if (id) *id = ctx.revision_id;
    return ctx.scene;
  }
  throw Error(Code::not_found, fmt::format("unknown revision '{}' (without a store, only the input scene's own id names a revision)",
                                          name.substr(0, 80)),
              {{"revision", name.substr(0, 200)}});
}

cv::Mat source_raster(const ToolContext& ctx, const Scene& s, std::string* why) {
  return source_image(s, ctx.store, why);
}

FidelityReference fidelity_reference(const ToolContext& ctx, const Scene& s, std::vector<std::string>& warnings) {
  FidelityReference ref = fidelity_reference(s, ctx.store);
  if (!ref.warning.empty() && std::find(warnings.begin(), warnings.end(), ref.warning) == warnings.end())
    warnings.push_back(ref.warning);
  return ref;
}

json rect_json(const BBox& b) {
  return {{"kind", "rect"}, {"rect", {round3(b.x0), round3(b.y0), round3(b.x1), round3(b.y1)}}};
}

Vec2 shape_mid(const Shape& s) { return s.at(0.5); }

json shape_json(const Shape& sh) {
  json o = {{"type", prim_type_name(sh.type)}};
  if (sh.type != PrimType::circle) {
    o["p0"] = point_json(sh.p0);
    o["p1"] = point_json(sh.p1);
  }
  if (sh.type == PrimType::arc) o["bulge"] = round_to(sh.bulge, 1e-6);
  if (sh.type != PrimType::line && std::isfinite(sh.radius)) {
    o["center"] = point_json(sh.center);
    o["radius"] = round3(sh.radius);
  }
  return o;
}

json primitive_summary(const Primitive& p, const Drawing& d) {
  const Shape& sh = p.shape;
  json o = {{"id", p.id}};
  o.update(shape_json(sh));
  o["length_px"] = round3(sh.length());
  auto t = d.primitive_s.find(p.id);
  o["est_draw_time_ms"] = round3(t == d.primitive_s.end() ? 0 : 1000 * t->second);
  o["semantic_role"] = p.semantic_role;
  o["issues"] = p.issues;
  auto i = d.draw_index.find(p.id);
  o["draw_index"] = i == d.draw_index.end() ? json(nullptr) : json(i->second);
  return o;
}

bool wants_issues(const json& filter) { return filter.is_object() && filter.contains("has_issue"); }

std::vector<const Primitive*> filtered_primitives(const Scene& s, const Drawing& d, const json& filter,
                                                  const Scope& scope) {
  std::vector<const Primitive*> out;
  auto listed = [](const json& f, const char* key, const std::string& v) {
    if (!f.contains(key)) return true;
    for (const auto& x : f[key])
      if (x == v) return true;
    return false;
  };
  for (const auto& id : draw_order(s)) {
    const Primitive& p = *s.primitive(id);
    double len = p.shape.length();
    if (!listed(filter, "types", prim_type_name(p.shape.type))) continue;
    if (!listed(filter, "semantic_roles", p.semantic_role)) continue;
    if (filter.contains("has_issue")) {
      bool any = false;
      for (const auto& i : p.issues) any = any || listed(filter, "has_issue", i);
      if (!any) continue;
    }
    if (filter.contains("min_length_px") && len < filter["min_length_px"].get<double>()) continue;
    if (filter.contains("max_length_px") && len > filter["max_length_px"].get<double>()) continue;
    if (filter.contains("draw_time_above_ms")) {
      auto t = d.primitive_s.find(p.id);
      if (t == d.primitive_s.end() || 1000 * t->second <= filter["draw_time_above_ms"].get<double>()) continue;
    }
    if (!scope.touches(p)) continue;
    out.push_back(&p);
  }
  return out;
}

View scene_view(const ToolContext& ctx, const Scene& s, const Scope& scope, const std::string& title, bool with_source,
                int target_px) {
  View v(view_area(s, scope.bounds(), 2 * stroke_width_of(s)), title, target_px);
  if (with_source) {
    std::string why;
    v.underlay(source_raster(ctx, s, &why));
  }
  return v;
}

View crop_view(const ToolContext& ctx, const Scene& s, const BBox& focus, double pad, const std::string& title,
               int target_px) {
  View v(view_area(s, focus, pad), title, target_px);
  std::string why;
  v.underlay(source_raster(ctx, s, &why));
  return v;
}

cv::Mat findings_sheet(const ToolContext& ctx, const Scene& s, const std::vector<BBox>& boxes,
                       const std::vector<std::string>& titles, const std::function<void(View&, size_t)>& draw) {
  std::vector<cv::Mat> tiles;
  const double pad = 4 * stroke_width_of(s);
  for (size_t i = 0; i < boxes.size() && i < 9; ++i) {
    View v = crop_view(ctx, s, boxes[i], pad, titles[i], 300);
    if (s.primitives)
      for (const auto& p : *s.primitives) v.shape(p.shape, color::faded, 2);
    draw(v, i);
    tiles.push_back(v.finish());
  }
  return sheet(tiles);
}

cv::Mat change_sheet(const Scene& a, const Scene& b, const std::string& title_a, const std::string& title_b,
                     const std::vector<std::string>& added, const std::vector<std::string>& removed,
                     const std::vector<std::string>& changed) {
  const BBox area = view_area(b, BBox{}, 0);
  View va(area, title_a, 480), vb(area, title_b, 480), vd(area, "change: removed red, added green, changed orange", 480);
  for (const auto& [id, path] : drawing_of(a).pieces) va.polyline(path, color::ink, 2);
  for (const auto& [id, path] : drawing_of(b).pieces) vb.polyline(path, color::ink, 2);
  if (b.primitives)
    for (const auto& p : *b.primitives) vd.shape(p.shape, color::faded, 2);
  for (const auto& id : removed) vd.shape(a.primitive(id)->shape, color::missed, 2);
  for (const auto& id : changed) {
    vd.shape(a.primitive(id)->shape, color::faded, 1);
    vd.shape(b.primitive(id)->shape, color::arc, 2);
  }
  for (const auto& id : added) vd.shape(b.primitive(id)->shape, color::spurious, 2);
  for (const auto* ids : {&removed, &changed, &added})
    for (const auto& id : *ids) {
      const Primitive* p = b.primitive(id) ? b.primitive(id) : a.primitive(id);
      vd.label_shape(p->shape, id, color::ink);
    }
  vd.legend({{"removed", color::missed}, {"added", color::spurious}, {"changed (new)", color::arc}, {"unchanged", color::faded}});
  return sheet({va.finish(), vb.finish(), vd.finish()});
}

}  // namespace sv
