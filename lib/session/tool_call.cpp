#include "session/tool_call.hpp"

#include <fmt/format.h>
#include <opencv2/imgproc.hpp>
#include <nettle/base64.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>

#include "core/error.hpp"
#include "core/file.hpp"
#include "core/hash.hpp"
#include "core/messages.hpp"
#include "core/schema.hpp"
#include "core/scene_check.hpp"
#include "raster/png.hpp"
#include "session/output.hpp"
#include "store/store.hpp"

namespace sv {

namespace {

[[noreturn]] void usage(const std::string& why) { throw Error(Code::invalid_selection, why); }

std::string base64(const std::string& bytes) {
  std::string out(BASE64_ENCODE_RAW_LENGTH(bytes.size()), '\0');
  base64_encode_raw(out.data(), bytes.size(), reinterpret_cast<const uint8_t*>(bytes.data()));
  return out;
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
    if (c.embed_images && (!c.embed_model_views_only || inv.tool->views_for_model)) {
      // Inline, a view counts against the client's context: past the limit it goes at half the
      // size, and half again, until it fits (the file keeps it whole).
      std::string inline_bytes = bytes;
      int scale = 1;
      while (c.embed_max_bytes && inline_bytes.size() > c.embed_max_bytes && std::min(img.cols, img.rows) / scale >= 64) {
        scale *= 2;
        cv::Mat small;
        cv::resize(img, small, cv::Size(std::max(1, img.cols / scale), std::max(1, img.rows / scale)), 0, 0, cv::INTER_AREA);
        inline_bytes = encode_png_rgb(small);
      }
      if (scale > 1)
        warnings.push_back(fmt::format("view '{}' sent at 1/{} of its size ({} KB inline at most)", name, scale,
                                       c.embed_max_bytes / 1024));
      embedded[name] = base64(inline_bytes);
    }
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

void merge_into(json& base, const json& over) {
  for (auto it = over.begin(); it != over.end(); ++it) {
    if (it.value().is_object() && !it.value().contains("kind") && base.contains(it.key()) && base[it.key()].is_object())
      merge_into(base[it.key()], it.value());
    else
      base[it.key()] = it.value();
  }
}

std::string read_scene_input(const std::string& input, const CommonOptions& c, std::optional<Store>& store, Scene& scene,
                             const std::string& command) {
  if (!c.rev.empty()) {
    std::string rid = store->resolve(c.rev);
    scene = store->read_scene(rid);
    return rid;
  }
  const std::string text = read_input(input, kMaxSceneBytes);
  // Nothing on standard input while a store is at hand: most likely its HEAD was meant.
  if (store && input == "-" && text.find_first_not_of(" \t\r\n") == std::string::npos)
    throw Error(Code::invalid_scene,
                fmt::format("empty input: expected a scene document on standard input; to work on the store's HEAD, "
                            "pass --rev HEAD ({} --rev HEAD ...)", command),
                {{"hint", "--rev HEAD"}});
  refuse_image_as_scene(text, input, command);
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

// In store mode the edited revision must still be HEAD when the new one is recorded
// (Store::record), else conflict.
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
  std::string rid = read_scene_input(inv.input, c, store, scene, tool.executable + " " + tool.subcommand);
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
    rid = read_scene_input(inv.input, c, store, scene, tool.executable + " " + tool.subcommand);
  }
  ToolContext ctx{scene, store ? &*store : nullptr, rid, c.oracle, c.store.value_or("")};
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

json call_tool_in_store(const Tool& tool, const CommonOptions& options, const json& request) {
  if (!request.is_object()) usage("the request must be a JSON object");
  CommonOptions c;
  c.store = options.store;
  c.no_store = options.no_store;
  c.oracle = options.oracle;
  c.embed_images = options.embed_images;
  c.embed_model_views_only = options.embed_model_views_only;
  c.embed_max_bytes = options.embed_max_bytes;
  std::optional<Store> store = open_store(c);
  if (!store) throw Error(Code::not_found, tool.name + " needs a store and none was found (sv-commit init)");
  if (tool.kind != ToolKind::store) c.rev = "HEAD";
  ToolInvocation inv;
  inv.tool = &tool;
  if (tool.kind != ToolKind::edit) return tool_envelope(inv, c, store, request);
  Scene edited;
  return edit_envelope(inv, c, store, json::array({request}), edited);
}

}  // namespace sv
