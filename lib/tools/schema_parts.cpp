#include "tools/schema_parts.hpp"

#include "core/schema.hpp"

namespace sv::schema {

json number(const std::string& doc) { return {{"type", "number"}, {"description", doc}}; }
json number(const std::string& doc, double minimum) {
  return {{"type", "number"}, {"minimum", minimum}, {"description", doc}};
}
json integer(const std::string& doc, int minimum) {
  return {{"type", "integer"}, {"minimum", minimum}, {"description", doc}};
}
json boolean(const std::string& doc) { return {{"type", "boolean"}, {"description", doc}}; }
json string(const std::string& doc) { return {{"type", "string"}, {"description", doc}}; }
json enumeration(std::initializer_list<const char*> values, const std::string& doc) {
  json e = json::array();
  for (const char* v : values) e.push_back(v);
  return {{"type", "string"}, {"enum", e}, {"description", doc}};
}
json array(json items, const std::string& doc) {
  return {{"type", "array"}, {"items", std::move(items)}, {"description", doc}};
}
json tuple(std::vector<json> items, const std::string& doc) {
  const size_t n = items.size();
  return {{"type", "array"}, {"items", std::move(items)}, {"minItems", n}, {"maxItems", n},
          {"additionalItems", false}, {"description", doc}};
}
json point(const std::string& doc) {
  return {{"type", "array"}, {"items", number("x, then y")}, {"minItems", 2}, {"maxItems", 2}, {"description", doc}};
}
json id(const std::string& doc) {
  return {{"type", "string"}, {"pattern", "^[a-z]_[0-9]{4,}$"}, {"description", doc}};
}
json object(json properties, std::initializer_list<const char*> required, const std::string& doc) {
  json o = {{"type", "object"}, {"properties", std::move(properties)}, {"additionalProperties", false}};
  if (required.size()) {
    json r = json::array();
    for (const char* k : required) r.push_back(k);
    o["required"] = r;
  }
  if (!doc.empty()) o["description"] = doc;
  return o;
}
json open_object(const std::string& doc) { return {{"type", "object"}, {"description", doc}}; }
json any(const std::string& doc) { return {{"description", doc}}; }
json with_default(json s, json value) {
  s["default"] = std::move(value);
  return s;
}
json nullable(json s) {
  json t = s["type"];
  s["type"] = json::array({t, "null"});
  if (s.contains("enum")) s["enum"].push_back(nullptr);
  // Present as null when not given, so handlers read one shape of request.
  s["default"] = nullptr;
  return s;
}

json primitive_type() { return enumeration({"line", "arc", "circle"}, "primitive type"); }
json semantic_role() {
  // The scene schema's own list: a role a request may name is one a revision may hold (a role
  // outside it once became a revision no read could parse).
  const json& roles = scene_schema().root()["definitions"]["primitive"]["properties"]["semantic_role"]["enum"];
  return {{"type", "string"}, {"enum", roles}, {"description", "what the primitive means in the drawing"}};
}
json issue_kind() {
  return enumeration({"over_smoothed", "under_smoothed", "topology_gap", "topology_overlap", "missing_stroke",
                      "spurious_stroke", "redundant_penup", "expensive_corner", "misaligned",
                      "wrong_primitive_type", "broken_loop"},
                     "what is wrong with a primitive or a region");
}

namespace {

json rect(const std::string& doc) {
  return {{"type", "array"}, {"items", number("a coordinate, px")}, {"minItems", 4}, {"maxItems", 4}, {"description", doc}};
}

}  // namespace

json region(const std::string& doc) {
  json r = object(
      {{"kind", enumeration({"rect", "polygon", "primitive_set", "vertex_neighborhood", "named"}, "region kind")},
       {"rect", rect("[x0, y0, x1, y1] in image pixels")},
       {"polygon", {{"type", "array"}, {"items", point()}, {"minItems", 3}, {"description", "vertices in image pixels"}}},
       {"primitive_ids", array(id("primitive id"), "the primitives of a primitive_set")},
       {"vertex_id", id("graph vertex of a vertex_neighborhood")},
       {"radius_px", number("radius of a vertex_neighborhood (default 3 stroke widths)", 0)},
       {"name", string("a region stored in the scene's regions")}},
      {"kind"}, doc);
  r["title"] = "Region";
  r["$comment"] = "On the command line also: x0,y0,x1,y1 (rect), p_0001,p_0002 (primitive set), "
                  "v_0003[:radius] (vertex neighbourhood), or a stored region's name";
  return r;
}

json rect_region() {
  return object({{"kind", {{"const", "rect"}, {"description", "always rect"}}}, {"rect", rect("[x0, y0, x1, y1] in image pixels")}},
                {"kind", "rect"}, "[x0, y0, x1, y1] in image pixels");
}

json primitive_filter() {
  json f = object({{"types", array(primitive_type(), "keep only these types")},
                 {"in_region", region("keep only primitives that touch this region")},
                 {"semantic_roles", array(semantic_role(), "keep only these roles")},
                 {"has_issue", array(issue_kind(), "keep only primitives with one of these issues, stored or found by the diagnostics")},
                 {"min_length_px", number("keep primitives at least this long", 0)},
                 {"max_length_px", number("keep primitives at most this long", 0)},
                 {"draw_time_above_ms", number("keep primitives whose drawing takes longer", 0)}},
                {}, "which primitives to consider");
  f["title"] = "PrimitiveFilter";
  return f;
}

}  // namespace sv::schema
