#include "tools/edit_session.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cctype>
#include <functional>
#include <optional>
#include <regex>
#include <set>

#include "core/cancel.hpp"
#include "core/error.hpp"
#include "core/hash.hpp"
#include "core/messages.hpp"
#include "edit/edit.hpp"
#include "core/scene_check.hpp"
#include "route/route.hpp"
#include "store/store.hpp"
#include "tools/common.hpp"

namespace sv {

json edit_metrics(const Scene& s, const std::vector<Polyline>& reference) {
  if (!s.primitives) return json::object();
  Scores sc = score(s, reference, default_tolerance(stroke_width_of(s)), Scope{});
  json m = metrics_json(sc, {"primitive_count", "pen_up_count", "precision", "recall", "f1", "f1_1px", "chamfer"});
  if (sc.timed) m["draw_time_s"] = round3(sc.draw_time_s);
  // What cannot be measured (fidelity without anything to measure against) is left out.
  for (auto it = m.begin(); it != m.end();) it = it->is_number() && std::isfinite(it->get<double>()) ? std::next(it) : m.erase(it);
  return m;
}

EditBaseline edit_baseline(const ToolContext& ctx) {
  EditBaseline b;
  b.reference = fidelity_reference(ctx, ctx.scene, b.warnings);
  b.before = edit_metrics(ctx.scene, b.reference.paths);
  return b;
}

namespace {

// A batch element's reference to an id an earlier element added: "$N.added[K]".
struct IdReference {
  size_t element, k;
};

// Reads a string that starts as a reference ("$" and a digit); anything else starting so is refused.
std::optional<IdReference> batch_reference(const std::string& s, size_t index) {
  if (s.size() < 2 || s[0] != '$' || !std::isdigit(static_cast<unsigned char>(s[1]))) return std::nullopt;
  static const std::regex form(R"(\$([0-9]{1,6})\.added\[([0-9]{1,6})\])");
  std::smatch m;
  if (!std::regex_match(s, m, form))
    throw Error(Code::invalid_selection, fmt::format("edit {}: '{}' is not a reference (the form is $N.added[K])", index, s),
                {{"index", index}, {"reference", s}});
  const IdReference r{std::stoul(m[1]), std::stoul(m[2])};
  if (r.element >= index)
    throw Error(Code::invalid_selection,
                fmt::format("edit {}: '{}' refers to edit {}, which does not run before it", index, s, r.element),
                {{"index", index}, {"reference", s}});
  return r;
}

// Replaces each reference in `v` by what `resolve` gives; returns whether any was found. The note
// is text, and a nested batch (ApplyEdits' edits) resolves its own references.
bool map_references(json& v, size_t index, const std::function<std::string(const IdReference&, const std::string&)>& resolve,
                    bool top = true) {
  bool any = false;
  if (v.is_string()) {
    if (auto r = batch_reference(v.get<std::string>(), index)) {
      v = resolve(*r, v.get<std::string>());
      any = true;
    }
  } else if (v.is_object()) {
    for (auto it = v.begin(); it != v.end(); ++it)
      if (!(top && (it.key() == "note" || it.key() == "edits"))) any = map_references(it.value(), index, resolve, false) || any;
  } else if (v.is_array()) {
    for (auto& x : v) any = map_references(x, index, resolve, false) || any;
  }
  return any;
}

// A batch element's refusal, naming the element and its tool (a single edit's stays as it is).
Error in_batch(const Error& e, size_t index, const Tool& t) {
  json details = e.details().is_object() ? e.details() : json::object();
  details["index"] = index;
  details["tool"] = t.name;
  return Error(e.code(), fmt::format("edit {} ({}): {}", index, t.name, e.what()), details);
}

std::set<std::string> ids_of(const Scene& s) {
  std::set<std::string> ids;
  if (s.primitives)
    for (const auto& p : *s.primitives) ids.insert(p.id);
  return ids;
}

}  // namespace

EditSession apply_edits(const ToolContext& ctx, const std::vector<EditStep>& steps, const EditBaseline* base) {
  if (steps.empty()) throw Error(Code::invalid_selection, "no edits to apply");
  EditSession out;
  out.scene = ctx.scene;
  if (ctx.store) {
    // An id is never reused within a history: the scene's own marks go back with a revert, the
    // store's do not, so fresh ids start after the highest any revision has used.
    for (const char* kind : {"primitive", "region"})
      if (int mark = ctx.store->id_mark(kind); mark > id_high_mark(out.scene, kind)) out.scene.extra["id_marks"][kind] = mark;
  }
  std::vector<std::vector<std::string>> added;  // by each step, in id order
  for (size_t i = 0; i < steps.size(); ++i) {
    const EditStep& step = steps[i];
    stop_if_cancelled();  // between edits: a dry run of many (suggestions, alternatives) stops within one
    ToolContext c{out.scene, ctx.store, ctx.revision_id};
    const std::set<std::string> had = ids_of(out.scene);
    ToolResult r;
    try {
      json request = step.request;
      map_references(request, i, [&](const IdReference& ref, const std::string& text) {
        if (ref.k >= added[ref.element].size())
          throw Error(Code::invalid_selection, fmt::format("'{}': edit {} added {} primitive(s)", text, ref.element,
                                                           added[ref.element].size()),
                      {{"reference", text}});
        return added[ref.element][ref.k];
      });
      r = step.tool->run(c, normalize_request(*step.tool, request));  // as run_tool does
      if (r.scene && !r.settled) settle(out.scene, *r.scene, r.touched, r.reroute, r.warnings);
    } catch (const Error& e) {
      if (steps.size() == 1) throw;
      throw in_batch(e, i, *step.tool);
    }
    if (r.scene) out.scene = std::move(*r.scene);
    std::vector<std::string> fresh;
    for (const auto& id : ids_of(out.scene))
      if (!had.count(id)) fresh.push_back(id);
    json fields = r.fields;
    fields["tool"] = step.tool->name;
    if (steps.size() > 1) fields["added_primitive_ids"] = fresh;  // what "$i.added[K]" names
    added.push_back(std::move(fresh));
    out.results.push_back(fields);
    out.llm_text += (out.llm_text.empty() ? "" : "\n") + r.llm_text;
    out.warnings.insert(out.warnings.end(), r.warnings.begin(), r.warnings.end());
  }
  // An edit that changes which stroke is drawn first says where the robot now starts (the tools
  // that set the order or the start say so themselves).
  const bool stated = std::any_of(out.results.begin(), out.results.end(), [](const json& f) { return f.contains("start"); });
  if (!stated && ctx.scene.commands && out.scene.commands) {
    const StartCost was = start_cost(ctx.scene), now = start_cost(out.scene);
    if (!now.first_primitive.empty() && start_moved(was, now))
      out.llm_text += (out.llm_text.empty() ? "" : "\n") + start_text(now) +
                      (!was.first_primitive.empty() && was.first_primitive != now.first_primitive
                           ? " (first was " + was.first_primitive + ")"
                           : "");
  }
  std::map<std::string, const Primitive*> old_ids, new_ids;
  if (ctx.scene.primitives)
    for (const auto& p : *ctx.scene.primitives) old_ids[p.id] = &p;
  if (out.scene.primitives)
    for (const auto& p : *out.scene.primitives) new_ids[p.id] = &p;
  for (const auto& [id, p] : new_ids) {
    auto it = old_ids.find(id);
    if (it == old_ids.end()) out.added.push_back(id);
    else if ((!same_shape(it->second->shape, p->shape) || it->second->semantic_role != p->semantic_role)) out.changed.push_back(id);
  }
  for (const auto& [id, p] : old_ids)
    if (!new_ids.count(id)) out.removed.push_back(id);
  // Edits keep the source, so both sides are measured against its ink.
  const EditBaseline own = base ? EditBaseline{} : edit_baseline(ctx);
  const EditBaseline& b = base ? *base : own;
  out.warnings.insert(out.warnings.end(), b.warnings.begin(), b.warnings.end());
  out.before = b.before;
  out.after = edit_metrics(out.scene, b.reference.paths);
  return out;
}

namespace {

// The catalog's edit kinds (OptimizationCandidate.edit_kind) that are not a tool's own name in
// snake case: the tool that carries each out, and what it adds to the payload.
struct EditKind {
  const char* kind;
  const char* tool;
  const char* target_kind;  // MergePrimitives' target_kind, or nullptr
};
const EditKind kEditKinds[] = {
    {"reverse_primitive_direction", "ReverseDirection", nullptr},
    {"replace_with_line", "MergePrimitives", "line"},
    {"replace_with_arc", "MergePrimitives", "arc"},
    {"replace_with_circle", "MergePrimitives", "circle"},
    {"merge_arc_chain_to_circle", "MergePrimitives", "circle"},
};

}  // namespace

std::vector<EditStep> parse_batch(const json& list) {
  if (!list.is_array() || list.empty())
    throw Error(Code::invalid_selection, "a batch is a non-empty list of edits");
  std::vector<EditStep> steps;
  for (size_t i = 0; i < list.size(); ++i) {
    const json& e = list[i];
    if (!e.is_object()) throw Error(Code::invalid_selection, fmt::format("edit {} is not an object", i));
    std::string name;
    json request = e;
    if (e.contains("kind") && e.contains("payload")) {  // the catalog's EditSpec
      name = e["kind"].is_string() ? e["kind"].get<std::string>() : "";
      request = e["payload"];
      for (const auto& k : kEditKinds)
        if (name == k.kind) {
          name = k.tool;
          if (k.target_kind && request.is_object()) request["target_kind"] = k.target_kind;
        }
    } else if (e.contains("tool") && e["tool"].is_string()) {
      name = e["tool"];
      request.erase("tool");
    }
    std::replace(name.begin(), name.end(), '_', '-');
    const Tool* t = find_tool(name);
    if (!t || t->kind != ToolKind::edit) {
      std::vector<std::string> names;
      for (const Tool& other : registry())
        if (other.kind == ToolKind::edit) names.insert(names.end(), {other.name, other.subcommand});
      const std::string hint = did_you_mean(closest_names(name, names));
      throw Error(Code::invalid_selection,
                  fmt::format("edit {}: '{}' is not an edit tool{}", i, name, hint.empty() ? "" : ": " + hint),
                  {{"index", i}});
    }
    // An element with references is checked with each standing for an id of the right form; it
    // is completed once they are resolved (apply_edits).
    try {
      json probe = request;
      const bool refers = map_references(probe, i, [](const IdReference&, const std::string&) { return std::string("p_0000"); });
      json normalized = normalize_request(*t, probe);
      steps.push_back({t, refers ? request : std::move(normalized)});
    } catch (const Error& err) {
      if (list.size() == 1) throw;
      throw in_batch(err, i, *t);
    }
  }
  return steps;
}

json batch_json(const std::vector<EditStep>& steps) {
  json out = json::array();
  for (const auto& s : steps) {
    json e = s.request;
    e.erase("dry_run");
    e.erase("note");
    e["tool"] = s.tool->name;
    out.push_back(std::move(e));
  }
  return out;
}

namespace {

// Every number as a double: 2 and 2.0 are one number to a JSON client (JavaScript has no other
// kind, so an MCP host sends back 2.0 as 2), and the apply id names the batch, not its spelling.
json numbers_as_doubles(json j) {
  std::vector<json*> todo{&j};
  while (!todo.empty()) {
    json* v = todo.back();
    todo.pop_back();
    if (v->is_number()) *v = v->get<double>();
    else if (v->is_structured())
      for (auto& child : *v) todo.push_back(&child);
  }
  return j;
}

}  // namespace

std::string apply_id(const std::string& revision_id, const std::vector<EditStep>& steps) {
  const std::string batch = numbers_as_doubles(batch_json(steps)).dump();
  return revision_id.substr(0, 12) + "." + sha256_hex(revision_id + "\n" + batch).substr(0, 12);
}

json apply_request(const ToolContext& ctx, const std::vector<EditStep>& steps) {
  return {{"apply_id", apply_id(ctx.revision_id, steps)}, {"edits", batch_json(steps)}};
}

namespace {

std::string shell_quoted(const std::string& s) {
  std::string out = "'";
  for (char c : s) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

}  // namespace

std::string apply_command(const ToolContext& ctx, const json& apply) {
  const Tool* t = find_tool("ApplyEdits");
  // The revision measured: HEAD while it is HEAD, else by its id (applying there is a conflict, as
  // the one recording rule says); a scene that is no revision of the store comes on standard input.
  std::string where;
  if (ctx.store && ctx.store->has_object(ctx.revision_id))
    where = (ctx.store_option.empty() ? "" : " --store " + shell_quoted(ctx.store_option)) + " --rev " +
            (ctx.store->head_id() == ctx.revision_id ? std::string("HEAD") : ctx.revision_id);
  return fmt::format("{} {}{} --request {}", t->executable, t->subcommand, where, shell_quoted(apply.dump()));
}

std::string edit_summary(const EditSession& s) {
  std::string out = "metric          before     after\n";
  for (auto it = s.after.begin(); it != s.after.end(); ++it) {
    std::string b = s.before.contains(it.key()) ? s.before[it.key()].dump() : "-";
    out += fmt::format("{:<15} {:>9} {:>9}\n", it.key(), b, it.value().dump());
  }
  auto ids = [](const std::vector<std::string>& v) {
    std::string o;
    for (size_t i = 0; i < v.size() && i < 12; ++i) o += (o.empty() ? "" : ",") + v[i];
    if (v.size() > 12) o += fmt::format(",... ({} in all)", v.size());
    return o.empty() ? std::string("-") : o;
  };
  out += fmt::format("added {}; removed {}; changed {}", ids(s.added), ids(s.removed), ids(s.changed));
  return out;
}

}  // namespace sv
