#include "core/scene_check.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <set>
#include <utility>
#include <vector>

#include "core/error.hpp"
#include "core/hash.hpp"
#include "core/schema.hpp"

namespace sv {

BBox page_with_margin(const Scene& s, double reach) {
  if (!s.source) return {-reach, -reach, reach, reach};
  const double m = std::max(s.source->width, s.source->height);
  return {-m, -m, s.source->width + m, s.source->height + m};
}

std::string check_scene_extent(const Scene& s) {
  auto beyond = [](double v, double limit) { return !(std::abs(v) <= limit); };  // NaN too
  const BBox b = page_with_margin(s, kMaxCoordinatePx);
  const std::string page = fmt::format("({:g},{:g})-({:g},{:g})", b.x0, b.y0, b.x1, b.y1);
  auto off_page = [&](Vec2 lo, Vec2 hi) { return !(lo.x >= b.x0 && lo.y >= b.y0 && hi.x <= b.x1 && hi.y <= b.y1); };
  double length = 0;
  if (s.primitives)
    for (const auto& p : *s.primitives) {
      const Shape& sh = p.shape;
      // Where the shape can reach: a circle's box; an arc stays within its chord's box grown by
      // its sagitta (|bulge| <= 1) or by its diameter (radius = chord (1 + b^2) / 4|b|).
      Vec2 lo, hi;
      if (sh.type == PrimType::circle) {
        const Vec2 r{std::abs(sh.radius), std::abs(sh.radius)};
        lo = sh.center - r, hi = sh.center + r;
      } else {
        const double chord = dist(sh.p0, sh.p1), b = std::abs(sh.bulge);
        const double grow = sh.type == PrimType::line ? 0 : b <= 1 ? b * chord / 2 : chord * (1 + b * b) / (2 * b);
        lo = Vec2{std::min(sh.p0.x, sh.p1.x) - grow, std::min(sh.p0.y, sh.p1.y) - grow};
        hi = Vec2{std::max(sh.p0.x, sh.p1.x) + grow, std::max(sh.p0.y, sh.p1.y) + grow};
      }
      if (off_page(lo, hi))
        return fmt::format("primitive {} reaches {} to {}, beyond the page and its margin {}", p.id, pt_text(lo),
                           pt_text(hi), page);
      length += sh.length();
    }
  // Each tool samples the primitives every pixel or so.
  if (length > kMaxStrokeLengthPx)
    return fmt::format("the primitives are {:.0f} px long together, more than the {:g} px the tools take", length,
                       kMaxStrokeLengthPx);
  if (s.graph)
    for (const auto& e : s.graph->edges)
      for (Vec2 q : e.points)
        if (off_page(q, q))
          return fmt::format("edge {}: point {} is beyond the page and its margin {}", e.id, pt_text(q), page);
  if (s.robot) {
    const Pose& p = s.robot->start;
    if (off_page({p.x, p.y}, {p.x, p.y}) || beyond(p.heading_deg, kMaxCommandValue))
      return fmt::format("the robot's start {} heading {:g} is beyond the page and its margin {} or turned beyond {:g} degrees",
                         pt_text({p.x, p.y}), p.heading_deg, page, kMaxCommandValue);
  }
  if (s.commands)
    for (size_t i = 0; i < s.commands->size(); ++i) {
      const Command& c = (*s.commands)[i];
      for (auto [name, v] : {std::pair{"distance", c.distance}, {"radius", c.radius}, {"degrees", c.degrees}})
        if (beyond(v, kMaxCommandValue))
          return fmt::format("command {}: {} {:g} is beyond {:g}", i, name, v, kMaxCommandValue);
    }
  return "";
}

std::string check_scene_invariants(const Scene& s) {
  if (std::string why = check_scene_extent(s); !why.empty()) return why;
  // Two primitives with one id make every edit by id ambiguous (a replace naming 12 ids removed
  // 19): refused here whatever produced them.
  auto duplicate = [](std::set<std::string>& seen, const std::string& id) { return !seen.insert(id).second; };
  std::set<std::string> prims, vertices, edges, regions;
  if (s.primitives)
    for (const auto& p : *s.primitives)
      if (duplicate(prims, p.id)) return fmt::format("two primitives have the id {}", p.id);
  if (s.graph) {
    for (const auto& v : s.graph->vertices)
      if (duplicate(vertices, v.id)) return fmt::format("two graph vertices have the id {}", v.id);
    for (const auto& e : s.graph->edges) {
      if (duplicate(edges, e.id)) return fmt::format("two graph edges have the id {}", e.id);
      for (const std::string* v : {&e.v0, &e.v1})
        if (!vertices.count(*v)) return fmt::format("graph edge {} names vertex {}, which is not in the graph", e.id, *v);
    }
  }
  for (const auto& r : s.regions)
    if (r.is_object() && r.contains("id") && r["id"].is_string() && duplicate(regions, r["id"].get<std::string>()))
      return fmt::format("two regions have the id {}", r["id"].get<std::string>());
  if (s.tour)
    for (size_t i = 0; i < s.tour->size(); ++i)
      if (!prims.count((*s.tour)[i].primitive))
        return fmt::format("tour step {} names primitive {}, which is not in the scene", i, (*s.tour)[i].primitive);
  for (size_t i = 0; i < s.relations.size(); ++i) {
    const json& r = s.relations[i];
    if (!r.is_object() || !r.contains("primitives") || !r["primitives"].is_array()) continue;
    for (const auto& id : r["primitives"])
      if (!id.is_string() || !prims.count(id.get<std::string>()))
        return fmt::format("relation {} ({}) names primitive {}, which is not in the scene", i, r.value("kind", "?"),
                           id.is_string() ? id.get<std::string>() : id.dump());
  }
  return "";
}

void require_writable_scene(const Scene& s, const json& doc) {
  std::string why = scene_schema().first_error(doc);
  if (!why.empty()) why = "it fails the scene schema: " + why;
  else why = check_scene_invariants(s);
  if (!why.empty())
    throw Error(Code::invalid_scene, fmt::format("refusing to record an invalid scene ({}); nothing was written", why),
                {{"reason", why}});
}

std::string sealed_scene_text(Scene& s) {
  json doc = to_json(s, false);
  require_writable_scene(s, doc);
  // The text hashed (without the id) and the text written (with it) differ only in the
  // revision: every other top-level member is serialised once.
  auto members = scene_members(s, doc);
  json rev = std::move(doc["revision"]);
  doc = nullptr;  // gone before the texts are joined
  auto revision = std::find_if(members.members.begin(), members.members.end(),
                               [](const auto& m) { return m.first == "revision"; });
  s.revision.id = sha256_hex(join_members(members));
  rev["id"] = s.revision.id;
  revision->second = rev.dump();
  return join_members(members) + "\n";
}

std::string revision_id_of(const Scene& s, const std::string& text) {
  const std::string& id = s.revision.id;
  const std::string member = "\"id\":\"" + id + "\"";
  const size_t at = id.size() == 64 ? text.find(member) : std::string::npos;
  if (at != std::string::npos && text.find(member, at + 1) == std::string::npos) {
    // The member and the comma that joins it to its neighbour, as sealed_scene_text added them.
    size_t from = at, to = at + member.size();
    if (from > 0 && text[from - 1] == ',') --from;
    else if (to < text.size() && text[to] == ',') ++to;
    std::string hashed = text.substr(0, from);
    hashed.append(text, to, text.size() - to - (text.back() == '\n' ? 1 : 0));
    if (sha256_hex(hashed) == id) return id;
  }
  return sha256_hex(canonical_bytes(s));
}

int id_number(const std::string& id) {
  if (id.size() < 3 || id[1] != '_') return 0;
  return std::atoi(id.c_str() + 2);
}

int id_high_mark(const Scene& s, const std::string& kind) {
  int high = 0;
  if (auto m = s.extra.find("id_marks"); m != s.extra.end() && m->is_object())
    if (auto k = m->find(kind); k != m->end() && k->is_number_integer()) high = k->get<int>();
  if (kind == "primitive" && s.primitives)
    for (const auto& p : *s.primitives) high = std::max(high, id_number(p.id));
  if (kind == "region")
    for (const auto& r : s.regions)
      if (r.is_object() && r.contains("id") && r["id"].is_string()) high = std::max(high, id_number(r["id"]));
  return high;
}

}  // namespace sv
