#include "cli/shell.hpp"

#include <fmt/format.h>
#include <malloc.h>

#include <algorithm>
#include <cstdio>
#include <deque>

#include "cli/stage.hpp"
#include "cli/tool_command.hpp"
#include "core/error.hpp"

namespace sv {

// One name and one meaning per shared option; its text is what --help and the man pages show.
void add_common_options(CLI::App& app, CommonOptions& o, unsigned which) {
  if (which & opt::store) {
    app.add_option("--store", o.store, "the revision store (default: $SV_STORE, else the nearest .svrev upward)")
        ->type_name("DIR");
    app.add_flag("--no-store", o.no_store, "use no store: nothing is recorded or read from one");
  }
  if (which & opt::rev)
    app.add_option("--rev", o.rev,
                   "store mode: work on this revision (HEAD, a branch, final, an id or a unique prefix), record the "
                   "result and print the envelope")
        ->type_name("REV");
  if (which & opt::note)
    app.add_option("--note", o.note, "a note kept with the new revision (or the log entry), for the audit trail")
        ->type_name("TEXT");
  if (which & opt::output)
    app.add_option("-o,--output", o.output, "write the new scene here instead of standard output")->type_name("FILE");
  if (which & opt::png)
    app.add_option("--png", o.png, "write the view here (else into the store's view cache .svrev/views/)")
        ->type_name("FILE");
  if (which & opt::embed) app.add_flag("--embed-images", o.embed_images, "also put the views inline in the envelope as base64");
  if (which & opt::json) app.add_flag("--json", o.json, "print the result as one JSON object");
  if (which & opt::oracle)
    app.add_option("--oracle", o.oracle,
                   "the oracle to ask: a command run through sh with the request directory appended (default: "
                   "$SV_ORACLE; none: the tool answers not_configured)")
        ->type_name("CMD")
        ->envname("SV_ORACLE");
  if (which & opt::quiet)
    app.add_flag("-q,--quiet", o.quiet,
                 "no progress line on standard error (it is shown only when standard error is a terminal)");
}

std::optional<Store> open_store(const CommonOptions& o) {
  if (!o.rev.empty() && o.no_store) throw Error(Code::invalid_selection, "--rev needs a store; --no-store contradicts it");
  std::optional<Store> store;
  if (!o.no_store)
    if (auto root = Store::locate(o.store)) store.emplace(*root);
  if (!o.rev.empty() && !store) throw Error(Code::not_found, "--rev needs a store and none was found (sv-commit init)");
  return store;
}

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
    if (f.contains("default")) doc += fmt::format(" (default {})", f["default"].dump());
    FieldOption& fo = tc.fields.emplace_back();
    fo.path = p;
    fo.schema = f;
    if (is_boolean(f)) {
      fo.value = tc.app->add_flag(names, fo.on, doc);
      fo.negation = tc.app->add_flag("--no-" + kebab(dotted), fo.off, "sets " + dotted + " to false");
      fo.negation->excludes(fo.value);
    } else {
      fo.value = tc.app->add_option(names, fo.text, doc)->type_name(field_type_name(f));
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

// The envelope of a failure goes to stdout in store mode only (--rev, and the store tools): in
// filter mode stdout is the scene stream the next stage reads. Known before parsing, so that a
// usage error is reported the same way.
bool envelope_mode(int argc, char** argv, const std::string& executable) {
  const bool tools = !tools_of(executable).empty();
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--rev" || a.rfind("--rev=", 0) == 0) return true;
    if (!tools) continue;
    if (const Tool* t = find_tool(a); t && t->executable == executable && t->kind == ToolKind::store) return true;
  }
  return false;
}

}  // namespace

int run_main(int argc, char** argv, const Executable& exe) {
  // Every step of a stage allocates and frees image buffers of a megabyte or more. Above glibc's
  // default mmap threshold (128 KiB) each is fresh pages from the kernel, page faults and all: a
  // seventh of sv-skeleton's time on a 512x512 drawing. Kept in the heap, they are reused.
  mallopt(M_MMAP_THRESHOLD, 32 << 20);
  mallopt(M_TRIM_THRESHOLD, 512 << 20);
  bool envelope_on_stdout = envelope_mode(argc, argv, exe.name);
  CLI::App app{exe.summary, exe.name};
  app.set_version_flag("--version", std::string(SV_VERSION));
  // The executable's own options (sv-commit --store) may follow the subcommand; set before the
  // subcommands are added, which inherit it.
  if (!exe.stage) app.fallthrough();
  CommonOptions common;
  add_common_options(app, common, exe.common);
  StageArgs stage_args;
  if (exe.stage) add_stage_options(app, *exe.stage, common, stage_args);

  std::deque<ToolCommand> tools;
  for (const Tool* t : tools_of(exe.name)) add_tool_subcommand(app, *t, common, tools);
  bool man = false, all = false;
  CLI::App* listing = nullptr;
  if (!tools.empty()) {
    listing = app.add_subcommand("tools", "the catalog of these tools with their JSON Schemas");
    listing->add_flag("--man", man, "as the man page's roff table");
    listing->add_flag("--all", all, "every executable's tools");
  }
  std::deque<std::pair<const ShellCommand*, CLI::App*>> commands;
  for (const ShellCommand& c : exe.commands) {
    CLI::App* sub = app.add_subcommand(c.name, c.summary);
    add_common_options(*sub, common, c.common);
    if (c.add_options) c.add_options(*sub);
    commands.emplace_back(&c, sub);
  }
  if (!exe.stage) app.require_subcommand(1);

  return guarded(exe.name, envelope_on_stdout, [&]() -> int {
    try {
      app.parse(argc, argv);
    } catch (const CLI::CallForHelp& e) {
      return app.exit(e);
    } catch (const CLI::CallForAllHelp& e) {
      return app.exit(e);
    } catch (const CLI::CallForVersion& e) {
      return app.exit(e);
    } catch (const CLI::ParseError& e) {
      throw Error(Code::invalid_selection, fmt::format("{} (see {} --help)", e.what(), exe.name));
    }
    if (listing && listing->parsed()) {
      const std::string which = all ? "" : exe.name;
      std::fputs((man ? man_common_options(which) + man_table(which) : tools_listing(which).dump(2) + "\n").c_str(),
                 stdout);
      return 0;
    }
    for (auto& [c, sub] : commands)
      if (sub->parsed()) return c->run(common);
    for (auto& tc : tools) {
      if (!tc.app->parsed()) continue;
      envelope_on_stdout = tc.inv.tool->kind == ToolKind::store || !common.rev.empty();
      if (tc.schema) {
        std::fputs(schemas_text(*tc.inv.tool).c_str(), stdout);
        return 0;
      }
      collect_fields(tc, common);
      return run_tool_invocation(tc.inv, common);
    }
    return run_stage(*exe.stage, stage_args, common, argc, argv);
  });
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
