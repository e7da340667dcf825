#include "cli/tool_command.hpp"

#include <fmt/format.h>
#include <nettle/base64.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <optional>
#include <algorithm>

#include "cli/stage.hpp"
#include "raster/png.hpp"
#include "core/error.hpp"
#include "core/file.hpp"
#include "core/hash.hpp"
#include "core/scene_check.hpp"
#include "store/store.hpp"
#include "core/schema.hpp"
#include "tools/edit_session.hpp"
#include "tools/region.hpp"
#include "render/figure.hpp"

namespace sv {

namespace {

[[noreturn]] void usage(const std::string& why) { throw Error(Code::invalid_selection, why); }

std::string base64(const std::string& bytes) {
  std::string out(BASE64_ENCODE_RAW_LENGTH(bytes.size()), '\0');
  base64_encode_raw(out.data(), bytes.size(), reinterpret_cast<const uint8_t*>(bytes.data()));
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

// Where each view goes; returns {name: path} of the files written.
json write_views(const ToolInvocation& inv, const CommonOptions& c, const ToolResult& r, Store* store, const std::string& rid, const json& request,
                 json& embedded, std::vector<std::string>& warnings) {
  json written = json::object();
  size_t i = 0;
  // The tool's main view takes --png FILE; a sheet of findings tiles goes beside it.
  std::vector<std::pair<std::string, cv::Mat>> views(r.images.begin(), r.images.end());
  std::stable_partition(views.begin(), views.end(), [](const auto& v) { return v.first != "findings"; });
  for (const auto& [name, img] : views) {
    std::string bytes = encode_png_rgb(img);
    if (c.embed_images) embedded[name] = base64(bytes);
    std::filesystem::path path;
    if (!c.png.empty()) {
      std::filesystem::path p(c.png);
      path = i == 0 ? p : p.parent_path() / (p.stem().string() + "-" + name + p.extension().string());
      write_output(path.string(), bytes);
    } else if (store) {
      // The store's view folder is a convenience: a read-only or full store still answers (the
      // view inline with --embed-images, or not at all), with a warning.
      std::string key = sha256_hex(request.dump()).substr(0, 8), why;
      auto at = store->write_view(fmt::format("{}-{}-{}-{}.png", rid.substr(0, 12), inv.tool->subcommand, key, name),
                                  bytes, why);
      if (!at) {
        warnings.push_back("view '" + name + "' not written into the store: " + why);
        ++i;
        continue;
      }
      path = *at;
    } else {
      if (!c.embed_images) warnings.push_back("view '" + name + "' not written: pass --png FILE or --embed-images, or use a store");
      ++i;
      continue;
    }
    written[name] = path.string();
    ++i;
  }
  return written;
}



// What a person reviewing the edit reads besides the compact text: every id with its geometry
// before and after, and where the result went.
std::string edit_details(const Scene& before, const EditSession& session, const json& revision, const std::string& parent) {
  std::string out;
  auto line = [&](const char* what, const std::string& id, const Scene& s) {
    if (const Primitive* p = s.primitive(id)) out += fmt::format("{} {}: {}\n", what, id, shape_text(p->shape));
  };
  for (const auto& id : session.removed) line("removed", id, before);
  for (const auto& id : session.changed) {
    line("changed", id, before);
    line("     to", id, session.scene);
  }
  for (const auto& id : session.added) line("added", id, session.scene);
  for (const auto& w : session.warnings) out += "warning: " + w + "\n";
  out += revision.is_string() ? fmt::format("recorded as revision {} (parent {})", revision.get<std::string>(), parent)
                              : fmt::format("nothing recorded; the edit was measured on {}", parent);
  return out;
}

}  // namespace

std::string read_scene_input(const std::string& input, const CommonOptions& c, std::optional<Store>& store, Scene& scene) {
  if (!c.rev.empty()) {
    std::string rid = store->resolve(c.rev);
    scene = store->read_scene(rid);
    return rid;
  }
  const std::string text = read_input(input, kMaxSceneBytes);
  scene = parse_scene(text);
  return revision_id_of(scene, text);
}

void record_edit(Scene& out, const std::vector<EditStep>& steps, const std::string& tool, const std::string& note,
                 const std::string& parent, Store* store, const std::string& head_seen) {
  out.revision = RevisionInfo{};
  out.revision.parent = parent;
  out.revision.tool = steps.size() == 1 ? tool : "batch";
  for (const auto& s : steps) {
    json args = s.request;
    args.erase("dry_run");
    args.erase("note");
    out.revision.args.push_back(s.tool->name + " " + args.dump());
  }
  out.revision.note = note;
  if (store) {
    store->record(out, head_seen, out.revision.tool + (note.empty() ? "" : ": " + note));
  } else {
    require_writable_scene(out, to_json(out, false));  // what put_scene checks, for stdout too
    assign_revision_id(out);
  }
}

namespace {

// A mutation (one edit, or a list of them as one batch): the edits run on the scene, then either
// nothing is written (dry run: not even a view into the store) or the result becomes a revision,
// left in `edited`. In store mode the edited revision must still be HEAD when the new one is
// recorded (compare-and-set under the store's lock), else conflict. Returns the envelope.
json edit_envelope(const ToolInvocation& inv, const CommonOptions& c, std::optional<Store>& store, const json& list,
                   Scene& edited) {
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
  std::string rid = read_scene_input(inv.input, c, store, scene);
  const bool store_mode = !c.rev.empty();
  const std::string head_seen = store && !store_mode ? store->head_id() : rid;
  if (store && !dry_run) store->require_head(head_seen);
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
    record_edit(out, steps, tool.name, note, rid, store ? &*store : nullptr, head_seen);
    env["revision_id"] = out.revision.id;
    if (store)
      for (auto& w : store->take_warnings()) session.warnings.push_back(std::move(w));
    env["warnings"] = session.warnings;
  }
  env["llm_text"] = text;
  env["human_text"] = text + "\n" + edit_details(ctx.scene, session, env["revision_id"], rid);
  if (std::string err = Schema(result_schema(tool)).first_error(env); !err.empty() && steps.size() == 1)
    throw Error(Code::internal, fmt::format("{} produced a result outside its schema: {}", tool.name, err));
  for (const auto& w : session.warnings) std::fprintf(stderr, "%s: warning: %s\n", tool.executable.c_str(), w.c_str());
  edited = std::move(out);
  return env;
}

// Prints what edit_envelope made: the envelope (dry run, store mode) and the new scene.
int run_edit(const ToolInvocation& inv, const CommonOptions& c, std::optional<Store>& store, const json& list) {
  Scene out;
  json env = edit_envelope(inv, c, store, list, out);
  const bool dry_run = env["dry_run"].get<bool>();
  if (dry_run) {
    write_output("-", env.dump() + "\n");
  } else if (!c.rev.empty()) {
    if (!c.output.empty()) write_after_commit(c.output, dump_scene(out), out.revision.id);
    write_output("-", env.dump() + "\n");
  } else if (store) {  // recorded too: a failed output says so
    if (!inv.result_file.empty()) write_after_commit(inv.result_file, env.dump() + "\n", out.revision.id);
    write_after_commit(c.output, dump_scene(out), out.revision.id);
  } else {
    if (!inv.result_file.empty()) write_output(inv.result_file, env.dump() + "\n");
    write_output(c.output, dump_scene(out));
  }
  return 0;
}

// A read or store tool on its scene (the store's revision, or the scene file) or on the store:
// the envelope, with the views written (and inline with --embed-images).
json tool_envelope(const ToolInvocation& inv, const CommonOptions& c, std::optional<Store>& store, json request) {
  const Tool& tool = *inv.tool;
  request = normalize_request(tool, request);
  Scene scene;
  std::string rid;
  if (tool.kind == ToolKind::store) {
    if (!store) throw Error(Code::not_found, tool.name + " needs a store and none was found (sv-commit init)");
    rid = store->head_id();  // history tools work on the store, not on HEAD's scene: a damaged
                             // HEAD object must not block the checkout that recovers from it
  } else {
    rid = read_scene_input(inv.input, c, store, scene);
  }
  ToolContext ctx{scene, store ? &*store : nullptr, rid, c.oracle};
  ToolResult result;
  json env = run_tool(tool, ctx, request, result);
  json embedded = json::object();
  std::vector<std::string> warnings = result.warnings;
  if (ctx.store)  // e.g. a history tool's ref moved but its log entry could not be appended
    for (auto& w : ctx.store->take_warnings()) warnings.push_back(std::move(w));
  env["images"] = write_views(inv, c, result, ctx.store, rid, request, embedded, warnings);
  env["warnings"] = warnings;
  // A person also reads where the pictures are and what the tool could not do.
  std::string human = env["human_text"];
  for (auto it = env["images"].begin(); it != env["images"].end(); ++it)
    human += fmt::format("\n{} view: {}", it.key(), it.value().get<std::string>());
  for (const auto& w : warnings) human += "\nwarning: " + w;
  env["human_text"] = human;
  if (c.embed_images) env["images_png_base64"] = embedded;
  for (const auto& w : warnings) std::fprintf(stderr, "%s: warning: %s\n", tool.executable.c_str(), w.c_str());
  return env;
}

}  // namespace

int run_tool_invocation(const ToolInvocation& inv, const CommonOptions& c) {
  const Tool& tool = *inv.tool;
  if (!c.rev.empty() && inv.input_given) usage("--rev reads the scene from the store; an input file contradicts it");
  if (tool.kind == ToolKind::store && inv.input_given) usage(tool.name + " works on the store; it reads no scene file");
  if (tool.kind == ToolKind::store && !c.rev.empty())
    usage(tool.name + " names its revisions in its own fields, not with --rev");
  std::optional<Store> store = open_store(c);

  json request = json::object();
  if (!inv.request_text.empty()) request = parse_json_value(inv.request_text, "request");
  if (!inv.request_file.empty()) request = parse_json_value(read_input(inv.request_file, kMaxRequestBytes), "request-file");
  if (tool.kind == ToolKind::edit && request.is_array()) return run_edit(inv, c, store, request);
  if (!request.is_object()) usage("the request must be a JSON object");
  merge_into(request, inv.fields);
  if (tool.kind == ToolKind::edit) return run_edit(inv, c, store, json::array({request}));
  std::string text = tool_envelope(inv, c, store, request).dump() + "\n";
  std::fwrite(text.data(), 1, text.size(), stdout);
  if (std::fflush(stdout) != 0) throw Error(Code::io_error, "cannot write to standard output");
  return 0;
}

json call_tool_in_store(const Tool& tool, const CommonOptions& options, const json& request) {
  if (!request.is_object()) usage("the request must be a JSON object");
  CommonOptions c;
  c.store = options.store;
  c.no_store = options.no_store;
  c.oracle = options.oracle;
  std::optional<Store> store = open_store(c);
  if (!store) throw Error(Code::not_found, tool.name + " needs a store and none was found (sv-commit init)");
  if (tool.kind != ToolKind::store) c.rev = "HEAD";
  c.embed_images = true;
  ToolInvocation inv;
  inv.tool = &tool;
  if (tool.kind != ToolKind::edit) return tool_envelope(inv, c, store, request);
  Scene edited;
  return edit_envelope(inv, c, store, json::array({request}), edited);
}

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
      // A tuple ("items" a list of schemas) converts each position by its own schema.
      const json items = s.value("items", json::object());
      const json& item = items.is_array() ? (out.size() < items.size() ? items[out.size()] : json::object()) : items;
      if (!part.empty()) out.push_back(value_from_text(item, part, field));
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
  // Several forms (a point or a parameter): the first the text reads as and that form accepts.
  for (const char* any : {"oneOf", "anyOf"})
    if (s.contains(any)) {
      for (const auto& form : s[any]) {
        try {
          json v = value_from_text(form, text, field);
          if (Schema(form).first_error(v).empty()) return v;
        } catch (const Error&) {
        }
      }
      usage(fmt::format("--{}: '{}' is none of the forms the field takes", field, text));
    }
  // Untyped (any JSON value): JSON when it parses (accept builds nothing), else the text itself.
  if (!json::accept(text)) return text;
  return parse_json_value(text, field);
}


std::string field_type_name(const json& f) {
  if (f.contains("enum")) return f["enum"].dump();
  if (f.contains("oneOf") || f.contains("anyOf")) {
    std::string out;
    for (const auto& form : f.contains("oneOf") ? f["oneOf"] : f["anyOf"])
      out += (out.empty() ? "" : " | ") + field_type_name(form);
    return out;
  }
  const json type = first_type(f);
  return type.is_string() ? type.get<std::string>() : "json";
}

}  // namespace sv
