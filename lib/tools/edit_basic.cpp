// sv-edit's small edits: DeletePrimitive, AddPrimitive, ReverseDirection, DefineRegion and
// LabelSemanticRoles (the semantic group's, served by sv-edit). Each tool's registry entry stands
// right after its handler.
#include <fmt/format.h>

#include <algorithm>
#include <map>

#include "core/error.hpp"
#include "edit/edit.hpp"
#include "edit/joints.hpp"
#include "semantic/forms.hpp"
#include "tools/common.hpp"
#include "tools/edit_common.hpp"
#include "tools/request.hpp"
#include "tools/schema_parts.hpp"

namespace sv {

namespace {

namespace S = schema;

using edit::join_px;

// ---------------------------------------------------------------- DeletePrimitive

struct DeleteRequest {
  std::vector<std::string> primitive_ids;
  bool confirm_no_topology_break;
};

ToolResult delete_primitive(const ToolContext& ctx, const DeleteRequest& req) {
  Scene out = editable(ctx.scene);
  std::set<std::string> gone;
  for (const auto& id : req.primitive_ids) gone.insert(primitive_or_throw(ctx.scene, id).id);
  auto& prims = *out.primitives;
  if (req.confirm_no_topology_break) {
    // Refuse when a remaining part of the drawing would fall apart: the kept primitives of one
    // component before must stay one component after.
    std::vector<int> before, after;
    connected_components(prims, join_px(ctx.scene), before);
    std::vector<Primitive> kept;
    std::vector<int> kept_before;
    for (size_t i = 0; i < prims.size(); ++i)
      if (!gone.count(prims[i].id)) kept.push_back(prims[i]), kept_before.push_back(before[i]);
    connected_components(kept, join_px(ctx.scene), after);
    std::map<int, int> first_after;
    for (size_t i = 0; i < kept.size(); ++i) {
      auto [it, fresh] = first_after.emplace(kept_before[i], after[i]);
      if (!fresh && it->second != after[i])
        throw Error(Code::no_result,
                    fmt::format("deleting {} would disconnect the drawing (e.g. {} from the rest); pass "
                                "confirm_no_topology_break=false to delete anyway",
                                id_list({gone.begin(), gone.end()}), kept[i].id),
                    {{"reason", "disconnects"}, {"separated_primitive_id", kept[i].id}});
    }
  }
  ToolResult r;
  const std::vector<Polyline> ref = fidelity_reference(ctx, ctx.scene, r.warnings).paths;
  const double covered = covered_length_px(ctx.scene, ref);
  std::erase_if(prims, [&](const Primitive& p) { return gone.count(p.id) > 0; });
  if (out.tour) std::erase_if(*out.tour, [&](const TourStep& t) { return gone.count(t.primitive) > 0; });
  const double loss = std::max(0.0, covered - covered_length_px(out, ref));
  r.fields = {{"coverage_loss_px", static_cast<int>(std::lround(loss))}};
  r.llm_text = fmt::format("deleted {}: {:.0f} px of source centreline no longer covered", id_list({gone.begin(), gone.end()}), loss);
  r.scene = std::move(out);
  return r;
}

Tool delete_primitive_entry() {
  using R = DeleteRequest;
  return typed_tool<R>(
      25, "DeletePrimitive", "mutation",
      "Delete primitives; refuses to split the drawing into more pieces unless told, and reports the "
      "source ink left uncovered.",
      {{field("primitive_ids", &R::primitive_ids, primitive_ids_schema("the primitives to delete")),
        field("confirm_no_topology_break", &R::confirm_no_topology_break,
              S::with_default(S::boolean("refuse when the deletion disconnects the drawing"), true))},
       {"primitive_ids"}},
      S::object({{"coverage_loss_px", S::integer("length of the source image's ink centrelines no longer covered")}}),
      delete_primitive, ToolKind::edit);
}

// ---------------------------------------------------------------- AddPrimitive

struct AddRequest {
  json spec;  // replacement_spec_schema's shape
  std::optional<std::string> insert_after_primitive_id;
};

ToolResult add_primitive(const ToolContext& ctx, const AddRequest& req) {
  Scene out = editable(ctx.scene);
  Primitive p;
  p.shape = shape_from_spec(req.spec);
  p.id = fresh_primitive_id(out);
  p.semantic_role = "unknown";
  p.route_deviation_px = 0;  // drawn as given
  ToolResult r;
  r.touched = {p.id};
  if (req.insert_after_primitive_id) {
    const std::string& after = *req.insert_after_primitive_id;
    primitive_or_throw(ctx.scene, after);
    if (out.tour) {
      auto it = std::find_if(out.tour->begin(), out.tour->end(), [&](const TourStep& t) { return t.primitive == after; });
      out.tour->insert(it == out.tour->end() ? it : it + 1, TourStep{p.id, false, 0});
      r.reroute = false;  // the caller placed it: keep the order as given
    }
    out.primitives->insert(out.primitives->begin() + primitive_index(out, after) + 1, p);
  } else {
    out.primitives->push_back(p);
  }
  r.fields = {{"new_primitive_id", p.id}};
  r.llm_text = fmt::format("added {} {} ({:.1f} px)", p.id, prim_type_name(p.shape.type), p.shape.length());
  r.scene = std::move(out);
  return r;
}

Tool add_primitive_entry() {
  using R = AddRequest;
  return typed_tool<R>(
      31, "AddPrimitive", "mutation",
      "Insert a primitive the fitter never produced (missed ink, an implied stroke); the route takes it in.",
      {{field("spec", &R::spec, replacement_spec_schema("the new primitive")),
        field("insert_after_primitive_id", &R::insert_after_primitive_id,
              S::nullable(S::id("draw it right after this primitive (default: the route decides)")))},
       {"spec"}},
      S::object({{"new_primitive_id", S::string("the primitive added")}}), add_primitive, ToolKind::edit);
}

// ---------------------------------------------------------------- ReverseDirection

double draw_time_s(const Scene& s) { return drawing_of(s).total_s; }

struct ReverseRequest {
  std::vector<std::string> primitive_ids;
};

ToolResult reverse_direction(const ToolContext& ctx, const ReverseRequest& req) {
  Scene out = editable(ctx.scene);
  std::vector<std::string> ids;
  for (const auto& id : req.primitive_ids) ids.push_back(primitive_or_throw(ctx.scene, id).id);
  ToolResult r;
  r.reroute = false;
  double delta_ms = 0;
  if (out.tour) {
    for (const auto& id : ids) {
      // A primitive drawn in parts (a line through a T) turns round in every part.
      bool found = false;
      for (TourStep& t : *out.tour)
        if (t.primitive == id) {
          t.reverse = !t.reverse;
          found = true;
        }
      if (!found) throw Error(Code::not_found, id + " is not in the tour", {{"id", id}});
    }
    emit_tour(out, route_options_of(ctx.scene));
    delta_ms = 1000 * (draw_time_s(out) - draw_time_s(ctx.scene));
  } else {
    // No tour yet: the direction is the shape's own.
    for (const auto& id : ids) {
      Primitive& p = (*out.primitives)[primitive_index(out, id)];
      p.shape = p.shape.reversed();
      r.touched.insert(id);
    }
  }
  r.fields = {{"draw_time_delta_ms", round3(delta_ms)}};
  r.llm_text = fmt::format("reversed {}: draw time {:+.0f} ms", id_list(ids), delta_ms);
  r.scene = std::move(out);
  return r;
}

Tool reverse_direction_entry() {
  using R = ReverseRequest;
  return typed_tool<R>(32, "ReverseDirection", "mutation",
                       "Flip primitives' draw direction in the tour (cheap; can remove a spin at a border).",
                       {{field("primitive_ids", &R::primitive_ids, primitive_ids_schema("the primitives to draw the other way"))}, {"primitive_ids"}},
                       S::object({{"draw_time_delta_ms", S::number("negative is faster")}}), reverse_direction,
                       ToolKind::edit);
}

// ---------------------------------------------------------------- DefineRegion

struct DefineRegionRequest : RegionRequest, NoteRequest {
  std::string name;
  bool replace;
};

ToolResult define_region(const ToolContext& ctx, const DefineRegionRequest& req) {
  Scene out = ctx.scene;
  out.warnings.clear();
  const std::string& name = req.name;
  if (name.empty() || name.rfind("r_", 0) == 0)
    throw Error(Code::invalid_selection, "a region name must be non-empty and not look like a region id (r_NNNN)");
  if (req.region.value("kind", "") == "named" && req.region.value("name", "") == name)
    throw Error(Code::invalid_selection, "a region cannot be defined as itself");
  Region resolved = resolve_region(ctx.scene, req.region);
  json entry = {{"name", name}, {"region", req.region}};
  if (req.note) entry["note"] = *req.note;
  auto it = std::find_if(out.regions.begin(), out.regions.end(), [&](const json& e) { return e.value("name", "") == name; });
  std::string id;
  if (it != out.regions.end()) {
    if (!req.replace)
      throw Error(Code::invalid_selection,
                  fmt::format("a region named '{}' exists already ({}); pass replace=true to redefine it", name,
                              (*it)["id"].get<std::string>()),
                  {{"reason", "name taken"}, {"name", name}, {"region_id", (*it)["id"]}});
    id = (*it)["id"];
    entry["id"] = id;
    *it = entry;
  } else {
    id = fresh_region_id(out);
    entry["id"] = id;
    out.regions.push_back(entry);
  }
  ToolResult r;
  r.reroute = false;
  r.fields = {{"region_id", id}, {"name", name}};
  r.llm_text = fmt::format("region {} '{}' = {}", id, name, resolved.label);
  r.scene = std::move(out);
  return r;
}

Tool define_region_entry() {
  using R = DefineRegionRequest;
  return typed_tool<R>(
      35, "DefineRegion", "mutation",
      "Name an area of interest (rect, polygon, primitive set, vertex neighbourhood) that later calls "
      "can scope to with {\"kind\": \"named\", \"name\": NAME}.",
      {{field<R, json>("region", &R::region, S::region("the area")), field("name", &R::name, S::string("its name")),
        field("replace", &R::replace,
              S::with_default(S::boolean("redefine an existing region of this name (else that is refused)"), false))},
       {"region", "name"}},
      S::object({{"region_id", S::string("the stored region's id")}, {"name", S::string("its name")}}), define_region, ToolKind::edit);
}

// ---------------------------------------------------------------- LabelSemanticRoles

struct LabelRolesRequest {
  json assignments;  // [[primitive_id, role], ...]
  bool from_forms;
  std::optional<std::string> rationale;  // kept in the request for the audit trail only
};

ToolResult label_semantic_roles(const ToolContext& ctx, const LabelRolesRequest& req) {
  Scene out = editable(ctx.scene);
  int updated = 0;
  std::string text;
  json assignments = json::array();
  // IdentifyVisualForms' roles first, so the explicit assignments after them win.
  if (req.from_forms)
    for (const auto& pr : semantic::primitive_roles(semantic::scene_forms(ctx.scene))) assignments.push_back({pr.id, pr.role});
  for (const auto& a : req.assignments) assignments.push_back(a);
  for (const auto& a : assignments) {
    if (!a.is_array() || a.size() != 2 || !a[0].is_string() || !a[1].is_string())
      throw Error(Code::invalid_selection, "an assignment is [primitive_id, role]");
    Primitive& p = (*out.primitives)[primitive_index(out, a[0])];
    if (p.semantic_role != a[1].get<std::string>()) ++updated;
    p.semantic_role = a[1];
    text += fmt::format("{}{}={}", text.empty() ? "" : " ", p.id, p.semantic_role);
  }
  ToolResult r;
  r.reroute = false;
  r.fields = {{"updated_count", updated}};
  r.llm_text = fmt::format("labelled {} primitives ({} changed): {}", assignments.size(), updated, text);
  r.scene = std::move(out);
  return r;
}

Tool label_semantic_roles_entry() {
  using R = LabelRolesRequest;
  return typed_tool<R>(
      17, "LabelSemanticRoles", "semantic",
      "Label primitives with semantic roles so later filters and edits can target them.",
      {{field("assignments", &R::assignments,
              S::with_default(S::array(S::tuple({S::id("primitive id"), S::semantic_role()}, "[primitive_id, role]"),
                                       "applied after from_forms"),
                              json::array())),
        field("from_forms", &R::from_forms,
              S::with_default(S::boolean("first give every primitive its role from IdentifyVisualForms (per primitive)"),
                              false)),
        field("rationale", &R::rationale, S::nullable(S::string("for the audit trail")))}},
      S::object({{"updated_count", S::integer("primitives whose role changed")}}), label_semantic_roles, ToolKind::edit, "sv-edit");
}

}  // namespace

// The entries defined above, each after its handler (the catalog number, not this list, orders them).
void add_edit_tools(std::vector<Tool>& out) {
  for (auto entry : {delete_primitive_entry, add_primitive_entry, reverse_direction_entry, define_region_entry,
                     label_semantic_roles_entry})
    out.push_back(entry());
}

}  // namespace sv
