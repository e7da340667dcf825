// The command line of the tool executables: one subcommand per registered tool, its options
// generated from the request schema, the scene from the store (--rev) or from a file / stdin,
// the envelope on stdout, views as PNG files.
#include <fmt/format.h>
#include <openssl/evp.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <optional>
#include <algorithm>

#include "raster/png.hpp"
#include "cli/stage.hpp"
#include "core/error.hpp"
#include "core/hash.hpp"
#include "core/scene_check.hpp"
#include "store/store.hpp"
#include "core/schema.hpp"
#include "tools/edit_session.hpp"
#include "tools/region.hpp"
#include "tools/tool.hpp"
#include "tools/view.hpp"

namespace sv {

namespace {

struct Invocation {
  const Tool* tool = nullptr;
  std::string input = "-", rev, png, request_text, request_file, output, result_file;
  std::optional<std::string> store_flag;
  bool no_store = false, embed = false, schema = false, help = false;
  json fields = json::object();  // from --FIELD options
};

[[noreturn]] void usage(const std::string& why) { throw Error(Code::invalid_selection, why); }

std::string base64(const std::string& bytes) {
  std::string out(4 * ((bytes.size() + 2) / 3), '\0');
  int n = EVP_EncodeBlock(reinterpret_cast<unsigned char*>(out.data()),
                          reinterpret_cast<const unsigned char*>(bytes.data()), static_cast<int>(bytes.size()));
  out.resize(n);
  return out;
}

json first_type(const json& s) {
  if (!s.contains("type")) return nullptr;
  if (!s["type"].is_array()) return s["type"];
  for (const auto& t : s["type"])
    if (t != "null") return t;
  return nullptr;
}

bool is_region_schema(const json& s) {
  return s.contains("properties") && s["properties"].contains("vertex_id") && s["properties"].contains("primitive_ids");
}

// Under the same limits as scenes (depth, string and array sizes), checked while parsing.
json parse_json_value(const std::string& text, const std::string& field) {
  return parse_json_limited(text, Code::invalid_selection, "--" + field);
}

// Converts an option's text to the JSON its schema asks for.
json value_from_text(const json& s, const std::string& text, const std::string& field) {
  const json type = first_type(s);
  if (type == "integer" || type == "number") {
    char* end = nullptr;
    double v = std::strtod(text.c_str(), &end);
    if (text.empty() || *end != '\0' || !std::isfinite(v)) usage(fmt::format("--{}: '{}' is not a number", field, text));
    if (type == "integer") {
      if (v != std::floor(v)) usage(fmt::format("--{}: '{}' is not an integer", field, text));
      // Beyond 2^53 a double no longer holds every integer (and the conversion below overflows).
      if (std::abs(v) > 9007199254740992.0) usage(fmt::format("--{}: '{}' is out of range", field, text));
      return static_cast<long long>(v);
    }
    return v;
  }
  if (type == "boolean") {
    if (text == "true" || text == "1") return true;
    if (text == "false" || text == "0") return false;
    usage(fmt::format("--{}: '{}' is not true or false", field, text));
  }
  if (type == "string") return text;
  if (type == "array") {
    if (!text.empty() && text[0] == '[') return parse_json_value(text, field);
    json out = json::array();
    size_t start = 0;
    while (start <= text.size()) {
      size_t comma = text.find(',', start);
      std::string part = text.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
      if (!part.empty()) out.push_back(value_from_text(s.value("items", json::object()), part, field));
      if (comma == std::string::npos) break;
      start = comma + 1;
    }
    return out;
  }
  if (type == "object") {
    if (!text.empty() && text[0] == '{') return parse_json_value(text, field);
    if (is_region_schema(s)) return region_from_shorthand(text);
    usage(fmt::format("--{}: expects a JSON object", field));
  }
  // Untyped (any JSON value): JSON when it parses (accept builds nothing), else the text itself.
  if (!json::accept(text)) return text;
  return parse_json_value(text, field);
}

std::string fields_of(const json& schema) {
  std::string out;
  for (auto it = schema["properties"].begin(); it != schema["properties"].end(); ++it)
    out += (out.empty() ? "" : ", ") + it.key();
  return out;
}

// --FIELD[=VALUE] [VALUE], --no-FIELD, --FIELD.SUBFIELD: sets the field in inv.fields.
int take_field_option(Invocation& inv, const json& schema, int argc, char** argv, int i) {
  std::string arg = argv[i] + 2;
  std::optional<std::string> value;
  if (auto eq = arg.find('='); eq != std::string::npos) {
    value = arg.substr(eq + 1);
    arg = arg.substr(0, eq);
  }
  for (char& c : arg)
    if (c == '-') c = '_';
  bool negated = false;
  if (arg.rfind("no_", 0) == 0 && !schema["properties"].contains(arg)) {
    negated = true;
    arg = arg.substr(3);
  }
  // Walk dotted paths through nested object schemas.
  const json* s = &schema;
  json* target = &inv.fields;
  std::string key, walked;
  size_t start = 0;
  while (true) {
    size_t dot = arg.find('.', start);
    key = arg.substr(start, dot == std::string::npos ? std::string::npos : dot - start);
    walked += (walked.empty() ? "" : ".") + key;
    if (!(*s).contains("properties") || !(*s)["properties"].contains(key))
      usage(fmt::format("{} has no field '{}' (fields: {})", inv.tool->name, walked, fields_of(*s)));
    if (dot == std::string::npos) break;
    s = &(*s)["properties"][key];
    if (!target->contains(key)) (*target)[key] = json::object();
    target = &(*target)[key];
    start = dot + 1;
  }
  const json& fs = (*s)["properties"][key];
  if (first_type(fs) == "boolean" && !value) {
    (*target)[key] = !negated;
    return i;
  }
  if (negated) usage(fmt::format("--no-{}: only true/false fields can be negated", walked));
  if (!value) {
    if (i + 1 >= argc) usage(fmt::format("--{} needs a value", walked));
    value = argv[++i];
  }
  (*target)[key] = value_from_text(fs, *value, walked);
  return i;
}

Invocation parse_invocation(const Tool& tool, int argc, char** argv) {
  Invocation inv;
  inv.tool = &tool;
  const json schema = request_schema(tool);
  bool positional_seen = false;
  auto next = [&](int& i, const char* opt) -> std::string {
    if (i + 1 >= argc) usage(fmt::format("{} needs a value", opt));
    return argv[++i];
  };
  for (int i = 2; i < argc; ++i) {
    std::string a = argv[i];
    std::string flag = a.substr(0, a.find('='));
    auto val = [&](const char* opt) { return a.find('=') != std::string::npos ? a.substr(a.find('=') + 1) : next(i, opt); };
    if (flag == "--rev") inv.rev = val("--rev");
    else if (flag == "--store") inv.store_flag = val("--store");
    else if (a == "--no-store") inv.no_store = true;
    else if (flag == "--png") inv.png = val("--png");
    else if (a == "--embed-images") inv.embed = true;
    else if (flag == "--request") inv.request_text = val("--request");
    else if (flag == "--request-file") inv.request_file = val("--request-file");
    else if (tool.kind == ToolKind::edit && (flag == "--output" || a == "-o")) inv.output = val("--output");
    else if (tool.kind == ToolKind::edit && flag == "--result") inv.result_file = val("--result");
    else if (a == "--schema") inv.schema = true;
    else if (a == "--help" || a == "-h") inv.help = true;
    else if (a.rfind("--", 0) == 0 && a.size() > 2) i = take_field_option(inv, schema, argc, argv, i);
    else if (a == "-" || a[0] != '-') {
      if (positional_seen) usage("more than one input file: " + a);
      inv.input = a;
      positional_seen = true;
    } else {
      usage("unknown option " + a);
    }
  }
  if (!inv.rev.empty() && positional_seen) usage("--rev reads the scene from the store; an input file contradicts it");
  if (tool.kind == ToolKind::store && positional_seen) usage(tool.name + " works on the store; it reads no scene file");
  if (tool.kind == ToolKind::store && !inv.rev.empty())
    usage(tool.name + " names its revisions in its own fields, not with --rev");
  return inv;
}

// Merges option fields over the --request object: nested objects (filter) field by field,
// regions (objects with a "kind") as a whole.
void merge_into(json& base, const json& over) {
  for (auto it = over.begin(); it != over.end(); ++it) {
    if (it.value().is_object() && !it.value().contains("kind") && base.contains(it.key()) && base[it.key()].is_object())
      merge_into(base[it.key()], it.value());
    else
      base[it.key()] = it.value();
  }
}

std::string help_text(const Tool& t) {
  std::string out = fmt::format("{} {} — {}\n\nCatalog name: {}. Request fields (also as one JSON object with "
                                "--request or --request-file):\n",
                                t.executable, t.subcommand, t.summary, t.name);
  json s = request_schema(t);
  for (auto it = s["properties"].begin(); it != s["properties"].end(); ++it) {
    const json& f = it.value();
    std::string type = f.contains("type") ? (f["type"].is_string() ? f["type"].get<std::string>() : f["type"].dump()) : "json";
    if (f.contains("enum")) type = f["enum"].dump();
    std::string option = it.key();
    std::replace(option.begin(), option.end(), '_', '-');
    out += fmt::format("  --{:<22} {}{}\n    {}\n", option, type,
                       f.contains("default") ? " (default " + f["default"].dump() + ")" : "", f.value("description", ""));
  }
  if (t.kind == ToolKind::store)
    return out + "\nCommon options:\n"
                 "  --store DIR        the store (default: $SV_STORE, else the nearest .svrev upward)\n"
                 "  --png FILE         write the view here (else into the store's view cache .svrev/views/)\n"
                 "  --embed-images     also put the views inline as base64\n"
                 "  --schema           print the request and result JSON Schemas\n"
                 "A revision is HEAD, a branch, final, a full id or a unique prefix of at least 4 hex digits.\n";
  out += "\nCommon options:\n"
         "  --rev REV          read the scene from the store (HEAD, a branch, an id or a prefix)\n"
         "  FILE | -           otherwise the scene file (default: standard input)\n"
         "  --store DIR        the store (default: $SV_STORE, else the nearest .svrev upward); --no-store ignores it\n"
         "  --png FILE         write the view here (else into the store's view cache .svrev/views/)\n"
         "  --embed-images     also put the views inline as base64\n"
         "  --schema           print the request and result JSON Schemas\n";
  if (t.kind == ToolKind::edit)
    out += "  --request '[...]'  several edits as one atomic batch (elements may name another \"tool\")\n"
           "  -o, --output FILE  write the new scene here (store mode; filter mode prints it on stdout)\n"
           "  --result FILE      filter mode: write the result envelope here\n"
           "Store mode (--rev) edits that revision, which must be the one HEAD names (else conflict, exit 5),\n"
           "records the new revision and moves HEAD; the envelope goes to stdout.\n";
  return out;
}

std::string usage_text(const std::string& exe) {
  std::string out = fmt::format("usage: {} SUBCOMMAND [options] [SCENE]\n       {} tools [--man]\n\nSubcommands:\n", exe, exe);
  for (const Tool* t : tools_of(exe)) out += fmt::format("  {:<32} {}\n", t->subcommand, t->summary);
  out += fmt::format("\n`{} SUBCOMMAND --help` for its fields.\n", exe);
  return out;
}

// Where each view goes; returns {name: path} of the files written.
json write_views(const Invocation& inv, const ToolResult& r, Store* store, const std::string& rid, const json& request,
                 json& embedded, std::vector<std::string>& warnings) {
  json written = json::object();
  size_t i = 0;
  // The tool's main view takes --png FILE; a sheet of findings tiles goes beside it.
  std::vector<std::pair<std::string, cv::Mat>> views(r.images.begin(), r.images.end());
  std::stable_partition(views.begin(), views.end(), [](const auto& v) { return v.first != "findings"; });
  for (const auto& [name, img] : views) {
    std::string bytes = encode_png_rgb(img);
    if (inv.embed) embedded[name] = base64(bytes);
    std::filesystem::path path;
    if (!inv.png.empty()) {
      std::filesystem::path p(inv.png);
      path = i == 0 ? p : p.parent_path() / (p.stem().string() + "-" + name + p.extension().string());
    } else if (store) {
      std::string key = sha256_hex(request.dump()).substr(0, 8);
      path = store->root() / "views" / fmt::format("{}-{}-{}-{}.png", rid.substr(0, 12), inv.tool->subcommand, key, name);
      std::filesystem::create_directories(path.parent_path());
    } else {
      if (!inv.embed) warnings.push_back("view '" + name + "' not written: pass --png FILE or --embed-images, or use a store");
      ++i;
      continue;
    }
    write_output(path.string(), bytes);
    written[name] = path.string();
    ++i;
  }
  return written;
}

// The scene a tool runs on: the store's revision (--rev) or the scene file; returns its id.
std::string read_scene_input(const Invocation& inv, std::optional<Store>& store, Scene& scene) {
  if (!inv.rev.empty()) {
    std::string rid = store->resolve(inv.rev);
    scene = store->read_scene(rid);
    return rid;
  }
  scene = parse_scene(read_input(inv.input, kMaxSceneBytes));
  return sha256_hex(canonical_bytes(scene));
}


// A mutation (one edit, or a list of them as one batch): the edits run on the scene, then either
// the report is printed (dry run: nothing written anywhere, not even a view into the store) or
// the result becomes a revision. In store mode the edited revision must still be HEAD when the
// new one is recorded (compare-and-set under the store's lock), else conflict.
int run_edit(const Invocation& inv, std::optional<Store>& store, const json& list) {
  const Tool& tool = *inv.tool;
  json items = json::array();
  for (json e : list) {
    if (!e.is_object()) usage("every edit of a batch must be a JSON object");
    if (!e.contains("tool") && !e.contains("kind")) e["tool"] = tool.name;
    merge_into(e, inv.fields);
    items.push_back(e);
  }
  std::vector<EditStep> steps = parse_batch(items);
  bool dry_run = false;
  std::string note;
  for (const auto& s : steps) {
    dry_run = dry_run || s.request.value("dry_run", false);
    if (s.request.contains("note") && s.request["note"].is_string() && note.find(s.request["note"].get<std::string>()) == std::string::npos)
      note += (note.empty() ? "" : "; ") + s.request["note"].get<std::string>();
  }
  Scene scene;
  std::string rid = read_scene_input(inv, store, scene);
  if (store) {
    // An id is never reused within a history: the scene's own marks go back with a revert, the
    // store's do not, so fresh ids start after the highest any revision has used.
    for (const char* kind : {"primitive", "region"})
      if (int mark = store->id_mark(kind); mark > id_high_mark(scene, kind)) scene.extra["id_marks"][kind] = mark;
  }
  const bool store_mode = !inv.rev.empty();
  const std::string head_seen = store && !store_mode ? store->head_id() : rid;
  ToolContext ctx{scene, store ? &*store : nullptr, rid};
  EditSession session = apply_edits(ctx, steps);

  json env = {{"ok", true}, {"tool", tool.name}, {"dry_run", dry_run}, {"parent_revision_id", rid},
              {"before", session.before}, {"after", session.after}, {"added_primitive_ids", session.added},
              {"removed_primitive_ids", session.removed}, {"changed_primitive_ids", session.changed},
              {"images", json::object()}, {"warnings", session.warnings}};
  if (steps.size() == 1) {
    for (auto it = session.results[0].begin(); it != session.results[0].end(); ++it)
      if (it.key() != "tool") env[it.key()] = it.value();
  } else {
    env["edits"] = session.results;
  }
  env["tool"] = tool.name;
  std::string text = session.llm_text + "\n" + edit_summary(session);
  Scene& out = session.scene;
  if (dry_run) {
    env["revision_id"] = nullptr;
    text = "dry run (nothing changed): " + text;
  } else {
    out.revision = RevisionInfo{};
    out.revision.parent = rid;
    out.revision.tool = steps.size() == 1 ? tool.name : "batch";
    for (const auto& s : steps) {
      json args = s.request;
      args.erase("dry_run");
      args.erase("note");
      out.revision.args.push_back(s.tool->name + " " + args.dump());
    }
    out.revision.note = note;
    if (store) {
      // A stale edit is refused before anything is written; a writer that loses the race
      // below leaves only an unreferenced object, which gc removes.
      if (store_mode && store->head_id() != head_seen)
        throw Error(Code::conflict, fmt::format("HEAD is at {}, not at the edited revision {}: check it out or edit HEAD",
                                                store->head_id().substr(0, 12), head_seen.substr(0, 12)),
                    {{"head", store->head_id()}, {"edited", head_seen}});
      std::string id = store->put_scene(out);
      store->advance_head(head_seen, id, out.revision.tool + (note.empty() ? "" : ": " + note));
    } else {
      require_writable_scene(out, to_json(out, false));  // what put_scene checks, for stdout too
      assign_revision_id(out);
    }
    env["revision_id"] = out.revision.id;
  }
  env["llm_text"] = text;
  env["human_text"] = text;
  if (std::string err = Schema(result_schema(tool)).first_error(env); !err.empty() && steps.size() == 1)
    throw Error(Code::internal, fmt::format("{} produced a result outside its schema: {}", tool.name, err));
  for (const auto& w : session.warnings) std::fprintf(stderr, "%s: warning: %s\n", tool.executable.c_str(), w.c_str());
  if (dry_run) {
    write_output("-", env.dump() + "\n");
  } else if (store_mode) {
    if (!inv.output.empty()) write_output(inv.output, dump_scene(out));
    write_output("-", env.dump() + "\n");
  } else {
    if (!inv.result_file.empty()) write_output(inv.result_file, env.dump() + "\n");
    write_output(inv.output, dump_scene(out));
  }
  return 0;
}

int run_invocation(const Invocation& inv) {
  const Tool& tool = *inv.tool;
  std::optional<Store> store;
  if (!inv.no_store)
    if (auto root = Store::locate(inv.store_flag)) store.emplace(*root);
  if (!inv.rev.empty() && inv.no_store) usage("--rev needs a store; --no-store contradicts it");
  if (!inv.rev.empty() && !store) throw Error(Code::not_found, "--rev needs a store and none was found (sv-commit init)");

  json request = json::object();
  if (!inv.request_text.empty()) request = parse_json_value(inv.request_text, "request");
  if (!inv.request_file.empty()) request = parse_json_value(read_input(inv.request_file, kMaxRequestBytes), "request-file");
  if (tool.kind == ToolKind::edit && request.is_array()) return run_edit(inv, store, request);
  if (!request.is_object()) usage("the request must be a JSON object");
  merge_into(request, inv.fields);
  if (tool.kind == ToolKind::edit) return run_edit(inv, store, json::array({request}));
  request = normalize_request(tool, request);

  Scene scene;
  std::string rid;
  if (tool.kind == ToolKind::store) {
    if (!store) throw Error(Code::not_found, tool.name + " needs a store and none was found (sv-commit init)");
    rid = store->head_id();  // history tools work on the store, not on HEAD's scene: a damaged
                             // HEAD object must not block the checkout that recovers from it
  } else {
    rid = read_scene_input(inv, store, scene);
  }
  ToolContext ctx{scene, store ? &*store : nullptr, rid};
  ToolResult result;
  json env = run_tool(tool, ctx, request, result);
  json embedded = json::object();
  std::vector<std::string> warnings = result.warnings;
  env["images"] = write_views(inv, result, ctx.store, rid, request, embedded, warnings);
  env["warnings"] = warnings;
  if (inv.embed) env["images_png_base64"] = embedded;
  std::string text = env.dump() + "\n";
  std::fwrite(text.data(), 1, text.size(), stdout);
  if (std::fflush(stdout) != 0) throw Error(Code::io_error, "cannot write to standard output");
  for (const auto& w : warnings) std::fprintf(stderr, "%s: warning: %s\n", tool.executable.c_str(), w.c_str());
  return 0;
}

}  // namespace

bool is_tool_subcommand(const std::string& word, const std::string& executable) {
  const Tool* t = find_tool(word);
  return (t && t->executable == executable) || word == "tools";
}

int run_tool_subcommand(int argc, char** argv, const std::string& executable) {
  // The error envelope goes to stdout in store mode (--rev, and the store tools) only: in filter
  // mode stdout is the scene stream the next stage reads.
  bool envelope_on_stdout = false;
  return guarded(executable, envelope_on_stdout, [&]() -> int {
    std::string first = argc > 1 ? argv[1] : "";
    if (first.empty() || first == "--help" || first == "-h") {
      std::fputs(usage_text(executable).c_str(), first.empty() ? stderr : stdout);
      return first.empty() ? 2 : 0;
    }
    if (first == "--version") {
      std::printf("%s %s\n", executable.c_str(), SV_VERSION);
      return 0;
    }
    if (first == "tools") {
      bool man = false, all = false;
      for (int i = 2; i < argc; ++i) {
        std::string a = argv[i];
        if (a == "--man") man = true;
        else if (a == "--all") all = true;
        else usage("tools takes --man and --all; got " + a);
      }
      std::string exe = all ? "" : executable;
      std::string text = man ? man_table(exe) : tools_listing(exe).dump(2) + "\n";
      std::fputs(text.c_str(), stdout);
      return 0;
    }
    const Tool* tool = find_tool(first);
    if (!tool) usage(fmt::format("unknown subcommand '{}' (`{} tools` lists them)", first, executable));
    if (tool->executable != executable)
      usage(fmt::format("{} is a subcommand of {}, not {}", tool->name, tool->executable, executable));
    envelope_on_stdout = tool->kind == ToolKind::store ||
                         std::any_of(argv + 2, argv + argc, [](const char* a) {
                           const std::string s = a;
                           return s == "--rev" || s.rfind("--rev=", 0) == 0;
                         });
    Invocation inv = parse_invocation(*tool, argc, argv);
    envelope_on_stdout = tool->kind == ToolKind::store || !inv.rev.empty();
    if (inv.help) {
      std::fputs(help_text(*tool).c_str(), stdout);
      return 0;
    }
    if (inv.schema) {
      json s = {{"name", tool->name}, {"subcommand", tool->subcommand}, {"executable", tool->executable},
                {"request", request_schema(*tool)}, {"result", result_schema(*tool)}};
      std::fputs((s.dump(2) + "\n").c_str(), stdout);
      return 0;
    }
    return run_invocation(inv);
  });
}

}  // namespace sv
