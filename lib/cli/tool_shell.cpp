#include "cli/tool_shell.hpp"

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <algorithm>
#include <cstdio>
#include <deque>

#include "cli/tool_command.hpp"
#include "cli/values.hpp"
#include "core/error.hpp"

namespace sv {
namespace {

unsigned common_of(const Tool& t) {
  const unsigned oracle = t.asks_oracle ? opt::oracle : 0u;
  switch (t.kind) {
    case ToolKind::read: return opt::store | opt::rev | opt::png | opt::embed | oracle;
    case ToolKind::edit: return opt::store | opt::rev | opt::note | opt::output;
    case ToolKind::store: return opt::store | opt::note | opt::png | opt::embed;
  }
  return 0;
}

std::string kebab(std::string s) {
  std::replace(s.begin(), s.end(), '_', '-');
  return s;
}

bool is_boolean(const json& f) {
  if (!f.contains("type")) return false;
  if (f["type"].is_string()) return f["type"] == "boolean";
  return std::find(f["type"].begin(), f["type"].end(), "boolean") != f["type"].end();
}

bool has_fields(const json& f) {
  // A region is one value (its shorthand or JSON), not fields of its own.
  const bool region = f.contains("properties") && f["properties"].contains("vertex_id");
  return f.contains("properties") && !region;
}

// One request field as options: --FIELD VALUE (also spelled --FIELD_NAME and --FIELD=VALUE);
// booleans as flags (--FIELD, --FIELD=false, --no-FIELD); object fields also field by field
// (--filter.type line).
struct FieldOption {
  std::vector<std::string> path;
  json schema;
  std::string text;
  bool on = false, off = false;
  CLI::Option *value = nullptr, *negation = nullptr;
};

struct ToolCommand {
  ToolInvocation inv;
  CLI::App* app = nullptr;
  std::deque<FieldOption> fields;  // stable addresses: CLI11 writes into them
  bool schema = false;
  std::string revision;  // a store tool's revision field given positionally
  std::string revision_field;
  CLI::Option* scene = nullptr;
};

void add_field_options(ToolCommand& tc, const json& props, const std::vector<std::string>& path) {
  for (auto it = props.begin(); it != props.end(); ++it) {
    const std::string& key = it.key();
    const json& f = it.value();
    if (path.empty() && key == "note") continue;  // the shared --note
    std::vector<std::string> p = path;
    p.push_back(key);
    std::string dotted;
    for (const auto& k : p) dotted += (dotted.empty() ? "" : ".") + k;
    std::string names = "--" + kebab(dotted) + (kebab(dotted) != dotted ? ",--" + dotted : "");
    std::string doc = f.value("description", "");
    if (f.contains("$comment")) doc += ". " + f["$comment"].get<std::string>();  // what the command line adds
    if (f.contains("default")) doc += fmt::format(" (default {})", f["default"].dump());
    FieldOption& fo = tc.fields.emplace_back();
    fo.path = p;
    fo.schema = f;
    if (is_boolean(f)) {
      fo.value = tc.app->add_flag(names, fo.on, doc);
      fo.negation = tc.app->add_flag("--no-" + kebab(dotted), fo.off, "sets " + dotted + " to false");
      fo.negation->excludes(fo.value);
    } else {
      const std::string type = field_type_name(f);
      fo.value = tc.app->add_option(names, fo.text, doc)->type_name(type);
      if (type == "number" || type == "integer") accept_length_units(fo.value);  // --tolerance-px 2px
    }
    if (has_fields(f)) add_field_options(tc, f["properties"], p);
  }
}

// The field a store tool takes positionally: its first required revision (checkout REV).
std::string positional_revision_field(const Tool& t) {
  if (t.kind != ToolKind::store || !t.request.contains("required")) return "";
  for (const auto& r : t.request["required"]) {
    const std::string name = r.get<std::string>();
    if (name.size() >= 11 && name.compare(name.size() - 11, 11, "revision_id") == 0) return name;
  }
  return "";
}

void add_tool_subcommand(CLI::App& app, const Tool& t, CommonOptions& common, std::deque<ToolCommand>& out) {
  ToolCommand& tc = out.emplace_back();
  tc.inv.tool = &t;
  tc.app = app.add_subcommand(t.subcommand, t.summary);
  if (t.subcommand != t.name) tc.app->alias(t.name);
  tc.app->footer(fmt::format("Catalog name: {}. The fields may also come as one JSON object (--request, "
                             "--request-file); options override its fields.{}",
                             t.name,
                             t.kind == ToolKind::edit
                                 ? "\nStore mode (--rev) edits that revision, which must be the one HEAD names "
                                   "(else conflict, exit 5), records the new revision and moves HEAD; the "
                                   "envelope goes to stdout. Filter mode prints the new scene."
                                 : ""));
  add_common_options(*tc.app, common, common_of(t));
  tc.app->add_option("--request", tc.inv.request_text,
                     t.kind == ToolKind::edit ? "the request as JSON; a list of them is one atomic batch (elements "
                                                "may name another \"tool\")"
                                              : "the request as one JSON object")
      ->type_name("JSON");
  tc.app->add_option("--request-file", tc.inv.request_file, "read the request from this file")->type_name("FILE");
  tc.app->add_flag("--schema", tc.schema, "print the request and result JSON Schemas");
  if (t.kind == ToolKind::edit)
    tc.app->add_option("--result", tc.inv.result_file, "filter mode: write the result envelope here")->type_name("FILE");
  add_field_options(tc, request_schema(t)["properties"], {});
  tc.revision_field = positional_revision_field(t);
  if (!tc.revision_field.empty())
    tc.app->add_option("revision", tc.revision, "the same as --" + kebab(tc.revision_field))->type_name("REV");
  else if (t.kind != ToolKind::store)
    tc.scene = tc.app->add_option("scene", tc.inv.input, "the scene file, or - for standard input (default)")->type_name("SCENE");
}

// The fields the options set, converted by their schemas.
void collect_fields(ToolCommand& tc, const CommonOptions& common) {
  json& fields = tc.inv.fields;
  for (const auto& fo : tc.fields) {
    json v;
    if (fo.negation && fo.negation->count()) v = false;
    else if (fo.negation && fo.value->count()) v = fo.on;
    else if (!fo.negation && fo.value->count()) {
      std::string dotted;
      for (const auto& k : fo.path) dotted += (dotted.empty() ? "" : ".") + k;
      v = value_from_text(fo.schema, fo.text, kebab(dotted));
    } else continue;
    json* target = &fields;
    for (size_t i = 0; i + 1 < fo.path.size(); ++i) {
      if (!target->contains(fo.path[i]) || !(*target)[fo.path[i]].is_object()) (*target)[fo.path[i]] = json::object();
      target = &(*target)[fo.path[i]];
    }
    (*target)[fo.path.back()] = v;
  }
  if (!tc.revision.empty()) {
    if (fields.contains(tc.revision_field))
      throw Error(Code::invalid_selection,
                  fmt::format("the revision is given twice (positionally and as --{})", kebab(tc.revision_field)));
    fields[tc.revision_field] = tc.revision;
  }
  if (!common.note.empty()) fields["note"] = common.note;
  tc.inv.input_given = tc.scene && tc.scene->count() > 0;
}

std::string schemas_text(const Tool& t) {
  json s = {{"name", t.name}, {"subcommand", t.subcommand}, {"executable", t.executable},
            {"request", request_schema(t)},
            {"result", {{"title", t.name + "Envelope"},
                        {"description", "the result on success, the error envelope on failure"},
                        {"oneOf", {result_schema(t), error_envelope_schema()}}}}};
  return s.dump(2) + "\n";
}

class CatalogTools final : public ToolShell {
 public:
  explicit CatalogTools(std::string executable) : executable_(std::move(executable)) {}

  bool names_store_tool(int argc, char** argv) const override {
    for (int i = 1; i < argc; ++i)
      if (const Tool* t = find_tool(argv[i]); t && t->executable == executable_ && t->kind == ToolKind::store) return true;
    return false;
  }

  void add_to(CLI::App& app, CommonOptions& common) override {
    for (const Tool* t : tools_of(executable_)) add_tool_subcommand(app, *t, common, tools_);
    if (tools_.empty()) return;
    listing_ = app.add_subcommand("tools", "the catalog of these tools with their JSON Schemas");
    listing_->add_flag("--man", man_, "as the man page's roff table");
    listing_->add_flag("--all", all_, "every executable's tools");
  }

  std::optional<int> run(const CommonOptions& common, bool& envelope_on_stdout) override {
    if (listing_ && listing_->parsed()) {
      const std::string which = all_ ? "" : executable_;
      std::fputs((man_ ? man_common_options(which) + man_table(which) : tools_listing(which).dump(2) + "\n").c_str(),
                 stdout);
      return 0;
    }
    for (auto& tc : tools_) {
      if (!tc.app->parsed()) continue;
      envelope_on_stdout = tc.inv.tool->kind == ToolKind::store || !common.rev.empty();
      if (tc.schema) {
        std::fputs(schemas_text(*tc.inv.tool).c_str(), stdout);
        return 0;
      }
      collect_fields(tc, common);
      return run_tool_invocation(tc.inv, common);
    }
    return std::nullopt;
  }

 private:
  std::string executable_;
  std::deque<ToolCommand> tools_;  // stable addresses: CLI11 writes into them
  CLI::App* listing_ = nullptr;
  bool man_ = false, all_ = false;
};

}  // namespace

std::unique_ptr<ToolShell> catalog_tools(const std::string& executable) {
  return std::make_unique<CatalogTools>(executable);
}

std::string man_common_options(const std::string& executable) {
  unsigned which = 0;
  for (const Tool* t : tools_of(executable)) which |= common_of(*t);
  // The table shows the options as the shell declares them.
  CLI::App app;
  app.set_help_flag();
  CommonOptions unused;
  add_common_options(app, unused, which);
  auto roff = [](const std::string& text) {
    std::string out;
    for (char ch : text) out += ch == '-' ? std::string("\\-") : std::string(1, ch);
    return out;
  };
  std::string out = ".TS\nallbox tab(|);\nlb lb\nl lx.\noption|meaning\n";
  for (const CLI::Option* o : app.get_options()) {
    std::string names;
    for (const auto& n : o->get_snames()) names += (names.empty() ? "-" : " -") + n;
    for (const auto& n : o->get_lnames()) names += (names.empty() ? "--" : " --") + n;
    if (!o->get_type_name().empty()) names += " " + o->get_type_name();
    out += fmt::format("{}|T{{\n{}\nT}}\n", roff(names), o->get_description());
  }
  return out + ".TE\n";
}

}  // namespace sv
