#include <fmt/format.h>

#include <algorithm>
#include <cctype>

#include "core/error.hpp"
#include "core/schema.hpp"
#include "raster/threads.hpp"
#include "tools/schema_parts.hpp"
#include "tools/tool.hpp"

namespace sv {

std::string kebab_case(const std::string& name) {
  std::string out;
  for (size_t i = 0; i < name.size(); ++i) {
    char c = name[i];
    if (std::isupper(static_cast<unsigned char>(c))) {
      if (i > 0) out += '-';
      out += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    } else {
      out += c;
    }
  }
  return out;
}

namespace {

// The catalog's groups (DESIGN §5) and the executable that serves each; an entry names its own
// executable only where DESIGN makes an exception.
const struct {
  const char* group;
  const char* executable;
} kGroups[] = {{"inspection", "sv-diagnose"}, {"diagnostics", "sv-diagnose"}, {"semantic", "sv-diagnose"},
               {"suggestion", "sv-diagnose"}, {"mutation", "sv-edit"},        {"evaluation", "sv-simulate"},
               {"history", "sv-commit"}};

std::string executable_of(const std::string& group) {
  for (const auto& g : kGroups)
    if (group == g.group) return g.executable;
  throw Error(Code::internal, fmt::format("no catalog group '{}'", group));
}

}  // namespace

const std::vector<Tool>& registry() {
  static const std::vector<Tool> tools = [] {
    std::vector<Tool> t;
    add_inspection_tools(t);
    add_diagnostic_tools(t);
    add_semantic_tools(t);
    add_evaluation_tools(t);
    add_edit_tools(t);
    add_stage_edit_tools(t);
    add_suggestion_tools(t);
    add_geometry_edit_tools(t);
    add_history_tools(t);
    add_oracle_tools(t);
    add_reference_tools(t);
    add_pipeline_tools(t);
    for (auto& tool : t) {
      if (tool.executable.empty()) tool.executable = executable_of(tool.group);
      if (tool.subcommand.empty()) tool.subcommand = kebab_case(tool.name);
    }
    std::sort(t.begin(), t.end(), [](const Tool& a, const Tool& b) { return a.number < b.number; });
    return t;
  }();
  return tools;
}

const Tool* find_tool(const std::string& name) {
  for (const auto& t : registry())
    if (t.name == name || t.subcommand == name || kebab_case(t.name) == name) return &t;
  return nullptr;
}

std::vector<const Tool*> tools_of(const std::string& executable) {
  std::vector<const Tool*> out;
  for (const auto& t : registry())
    if (executable.empty() || t.executable == executable) out.push_back(&t);
  return out;
}

json request_schema(const Tool& t) {
  json s = t.request;
  s["title"] = t.name;
  s["description"] = t.summary;
  if (t.kind == ToolKind::read && !s["properties"].contains("region"))
    s["properties"]["region"] = schema::region("scope the tool to this region");
  if (t.kind == ToolKind::store && !s["properties"].contains("note"))
    s["properties"]["note"] = schema::nullable(schema::string("kept in the log with this step, for the audit trail"));
  if (t.kind == ToolKind::edit) {
    s["properties"]["dry_run"] = schema::with_default(
        schema::boolean("report the predicted metrics and id changes, change nothing (SimulateEdit)"), false);
    s["properties"]["note"] = schema::nullable(schema::string("kept with the new revision, for the audit trail"));
  }
  return s;
}

json result_schema(const Tool& t) {
  json props = {
      {"ok", {{"const", true}, {"description", "the call succeeded"}}},
      {"tool", {{"const", t.name}, {"description", "the tool that answered"}}},
      {"revision_id", schema::string("the revision the tool ran on (its content hash)")},
      {"llm_text", schema::string("compact text for a model's context")},
      {"human_text", schema::string("richer text for a person")},
      {"images", {{"type", "object"}, {"additionalProperties", {{"type", "string"}}},
                  {"description", "PNG views written: name -> path"}}},
      {"images_png_base64", {{"type", "object"}, {"additionalProperties", {{"type", "string"}}},
                             {"description", "the same views inline (only with --embed-images)"}}},
      {"warnings", schema::array(schema::string("warning"), "what the tool could not do fully")}};
  json required = {"ok", "tool", "llm_text", "human_text", "images", "warnings"};
  if (t.kind == ToolKind::edit) {
    const auto ids = [](const char* doc) { return schema::array(schema::id("primitive id"), doc); };
    const auto metrics = [](const char* doc) {
      return json{{"type", "object"}, {"additionalProperties", {{"type", "number"}}}, {"description", doc}};
    };
    props["revision_id"] = schema::nullable(schema::string("the new revision (null on a dry run)"));
    props["parent_revision_id"] = schema::string("the revision the edit was made on");
    props["dry_run"] = schema::boolean("true when nothing was changed");
    props["before"] = metrics("the scoreboard before: draw time, counts, fidelity against the ink");
    props["after"] = metrics("the scoreboard after");
    props["added_primitive_ids"] = ids("primitives the edit added");
    props["removed_primitive_ids"] = ids("primitives it removed");
    props["changed_primitive_ids"] = ids("primitives it reshaped or re-routed");
    props["edits"] = schema::array(schema::open_object("an edit's own result fields"), "each edit's own result fields, in order");
    for (const char* k : {"revision_id", "parent_revision_id", "dry_run", "before", "after", "added_primitive_ids",
                          "removed_primitive_ids", "changed_primitive_ids"})
      required.push_back(k);
  }
  for (auto it = t.result["properties"].begin(); it != t.result["properties"].end(); ++it) props[it.key()] = it.value();
  if (t.result.contains("required"))
    for (const auto& r : t.result["required"]) required.push_back(r);
  json s = {{"title", t.name + "Result"}, {"type", "object"}, {"properties", props},
            {"required", required}, {"additionalProperties", false}};
  if (t.result.contains("definitions")) s["definitions"] = t.result["definitions"];
  return s;
}

json error_envelope_schema() {
  json codes = json::array();
  for (Code c : {Code::invalid_raster, Code::invalid_scene, Code::unsupported_version, Code::not_found,
                 Code::invalid_selection, Code::unsolvable_constraint, Code::no_result, Code::conflict,
                 Code::corrupt_object, Code::io_error, Code::internal})
    codes.push_back(code_name(c));
  json error = {{"type", "object"},
                {"description", "what failed"},
                {"properties", {{"code", {{"enum", codes}, {"description", "the error contract's code"}}},
                                {"message", schema::string("what went wrong, in one line")},
                                {"details", {{"type", "object"}, {"description", "machine-readable specifics"}}}}},
                {"required", {"code", "message", "details"}},
                {"additionalProperties", false}};
  return {{"title", "ErrorEnvelope"},
          {"type", "object"},
          {"properties", {{"ok", {{"const", false}, {"description", "the call failed"}}},
                          {"error", error},
                          {"llm_text", schema::string("the code and the message, one line")},
                          {"human_text", schema::string("the same with what the code means and the details")}}},
          {"required", {"ok", "error", "llm_text", "human_text"}},
          {"additionalProperties", false}};
}

json tools_listing(const std::string& executable) {
  json list = json::array();
  for (const Tool* t : tools_of(executable))
    list.push_back({{"name", t->name},
                    {"description", t->summary},
                    {"input_schema", request_schema(*t)},
                    {"output_schema", result_schema(*t)},
                    {"executable", t->executable},
                    {"subcommand", t->subcommand},
                    {"group", t->group}});
  return {{"executable", executable.empty() ? "all" : executable}, {"count", list.size()}, {"tools", list}};
}

namespace {

// roff needs backslashes and leading dots escaped.
std::string roff(const std::string& s) {
  std::string out;
  for (char c : s) out += c == '\\' ? std::string("\\e") : std::string(1, c);
  if (!out.empty() && (out[0] == '.' || out[0] == '\'')) out = "\\&" + out;
  return out;
}

std::string field_list(const Tool& t) {
  std::string out;
  for (auto it = t.request["properties"].begin(); it != t.request["properties"].end(); ++it)
    out += (out.empty() ? "" : ", ") + it.key();
  return out.empty() ? "(none)" : out;
}

void fill_defaults(const json& schema, json& value) {
  if (!value.is_object() || !schema.contains("properties")) return;
  for (auto it = schema["properties"].begin(); it != schema["properties"].end(); ++it) {
    if (!value.contains(it.key()) && it.value().contains("default")) value[it.key()] = it.value()["default"];
    if (value.contains(it.key())) fill_defaults(it.value(), value[it.key()]);
  }
}

}  // namespace

std::string man_table(const std::string& executable) {
  std::string out = ".TS\nallbox tab(|);\nlb lb lb\nl l lx.\nsubcommand|catalog name|what it does\n";
  for (const Tool* t : tools_of(executable))
    out += fmt::format("{}|{}|T{{\n{} Fields: {}.\nT}}\n", roff(t->subcommand), roff(t->name), roff(t->summary),
                       roff(field_list(*t)));
  out += ".TE\n";
  return out;
}

json normalize_request(const Tool& t, json request) {
  if (request.is_null()) request = json::object();
  if (!request.is_object())
    throw Error(Code::invalid_selection, fmt::format("{}: the request must be a JSON object", t.name));
  json schema = request_schema(t);
  for (auto it = request.begin(); it != request.end(); ++it)
    if (!schema["properties"].contains(it.key()))
      throw Error(Code::invalid_selection,
                  fmt::format("{} has no field '{}' (fields: {}, region)", t.name, it.key(), field_list(t)),
                  {{"field", it.key()}});
  if (std::string err = Schema(schema).first_error(request); !err.empty())
    throw Error(Code::invalid_selection, fmt::format("{}: invalid request: {}", t.name, err), {{"reason", err}});
  fill_defaults(schema, request);
  return request;
}

json run_tool(const Tool& t, const ToolContext& ctx, const json& request, ToolResult& result) {
  if (t.kind == ToolKind::store && !ctx.store)
    throw Error(Code::not_found, fmt::format("{} works on a revision store and none is in use (sv-commit init)", t.name));
  // Validated here too, whoever the caller: a handler never sees a request outside its schema
  // (normalizing again is a no-op for a request that was normalized already).
  const Scene& s = ctx.scene;
  raster_threads_for(s.source ? size_t(s.source->width) * size_t(s.source->height) : 0);
  result = t.run(ctx, normalize_request(t, request));
  json env = {{"ok", true}, {"tool", t.name}, {"llm_text", result.llm_text},
              {"human_text", result.human_text.empty() ? result.llm_text : result.human_text},
              {"images", json::object()}, {"warnings", result.warnings}};
  // The revision the result is about: the one the request named, else the one the tool ran on.
  const std::string& about = result.revision_id.empty() ? ctx.revision_id : result.revision_id;
  if (!about.empty()) env["revision_id"] = about;
  for (auto it = result.fields.begin(); it != result.fields.end(); ++it) env[it.key()] = it.value();
  if (std::string err = Schema(result_schema(t)).first_error(env); !err.empty())
    throw Error(Code::internal, fmt::format("{} produced a result outside its schema: {}", t.name, err));
  return env;
}

}  // namespace sv
