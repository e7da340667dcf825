#include "store/maintenance.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <optional>

#include "core/error.hpp"
#include "core/file.hpp"
#include "core/scene_check.hpp"

namespace sv {

namespace {

// Every entry of the store's real folders (never through a symlink), as paths relative to
// .svrev, with its kind.
std::vector<std::pair<std::string, EntryKind>> walk_store(const Store& store, const std::string& from = "") {
  std::vector<std::pair<std::string, EntryKind>> out;
  std::vector<std::pair<std::string, int>> todo = {{from, 0}};
  while (!todo.empty()) {
    auto [folder, depth] = todo.back();
    todo.pop_back();
    for (const auto& [name, kind] : store.list(folder)) {
      const std::string rel = folder.empty() ? name : folder + "/" + name;
      out.emplace_back(rel, kind);
      if (kind == EntryKind::directory && depth < 32) todo.emplace_back(rel, depth + 1);
    }
  }
  return out;
}

bool is_temp_entry(const std::string& rel) {
  const std::string name = rel.substr(rel.rfind('/') + 1);
  return is_temp_file_name(name) || (name.size() > 4 && name.compare(name.size() - 4, 4, ".tmp") == 0);
}

const char* kind_text(EntryKind k) {
  switch (k) {
    case EntryKind::symlink: return "a symlink";
    case EntryKind::directory: return "a folder";
    case EntryKind::other: return "a FIFO, device or socket";
    default: return "not a regular file";
  }
}

}  // namespace

// ---------------------------------------------------------------- fsck

json FsckReport::to_json() const {
  json probs = json::array();
  for (const auto& p : problems) probs.push_back({{"kind", p.what}, {"name", p.name}, {"problem", p.problem}});
  json j = {{"ok", clean()}, {"tool", "fsck"}, {"objects", objects}, {"scenes", scenes}, {"blobs", blobs},
            {"refs", refs}, {"log_entries", log_entries}, {"temp_files", temp_files}, {"unreferenced", unreferenced},
            {"problems", probs}, {"warnings", warnings}, {"llm_text", text()}};
  if (!clean())
    j["error"] = {{"code", "corrupt_object"},
                  {"message", fmt::format("{} problem(s) in the store", problems.size())},
                  {"details", {{"problems", probs}}}};
  return j;
}

std::string FsckReport::text() const {
  std::string out = fmt::format("{} objects ({} scenes, {} blobs; {} unreferenced), {} refs, {} log entries, {} temporary "
                                "files: {}\n",
                                objects, scenes, blobs, unreferenced, refs, log_entries, temp_files,
                                clean() ? "clean" : fmt::format("{} problem(s)", problems.size()));
  for (const auto& p : problems) out += fmt::format("bad {} {}: {}\n", p.what, p.name, p.problem);
  for (const auto& w : warnings) out += "warning: " + w + "\n";
  return out;
}

FsckReport fsck(const Store& store) {
  FsckReport r;
  // What names revisions, first (see maintenance.hpp): refs, HEAD, the log.
  std::vector<std::string> damaged;
  const auto refs = store.refs(&damaged);
  for (const auto& why : damaged) r.problems.push_back({"ref", why.substr(0, why.find(' ')), why});
  std::string head;
  bool head_readable = true;
  try {
    head = store.head_text();
  } catch (const Error& e) {
    head_readable = false;
    r.problems.push_back({"HEAD", "HEAD", e.what()});
  }
  size_t torn = 0;
  std::string log_problem;
  const auto entries = store.log(&torn, &log_problem);
  if (!log_problem.empty()) r.problems.push_back({"log", "logs/HEAD", log_problem});

  // Then the objects.
  std::map<std::string, Scene> scenes;         // valid scenes by id
  std::unordered_set<std::string> present;     // every object with an id-shaped name
  std::unordered_set<std::string> bad;         // present but not a valid object (reported)
  auto examine = [&](const std::string& id) {  // reads one object; false when it is not there
    std::string bytes;
    try {
      bytes = store.read_object(id);
    } catch (const Error& e) {
      if (e.code() == Code::not_found) return false;  // collected or renamed meanwhile
      present.insert(id);
      ++r.objects;
      bad.insert(id);
      r.problems.push_back({"object", id, e.code() == Code::corrupt_object && std::string(e.what()).find("does not match") != std::string::npos
                                              ? "content does not match its name (SHA-256)"
                                              : e.what()});
      return true;
    }
    present.insert(id);
    ++r.objects;
    if (!bytes.empty() && bytes[0] == '{') {
      try {
        Scene s = parse_scene(bytes);
        s.revision.id = id;
        // Parsing checks the schema, not what ties the sections together: two primitives with
        // one id once passed as clean.
        if (std::string why = check_scene_invariants(s); !why.empty())
          r.problems.push_back({"object", id, "scene invariant broken: " + why});
        scenes.emplace(id, std::move(s));
        ++r.scenes;
      } catch (const Error& e) {
        bad.insert(id);
        r.problems.push_back({"object", id, fmt::format("not a valid scene: {}", e.what())});
      }
    } else {
      ++r.blobs;
    }
    return true;
  };
  for (const auto& [fan, fan_kind] : store.list("objects")) {
    if (fan_kind != EntryKind::directory || fan.size() != 2 || !is_object_id(fan + std::string(62, '0'))) {
      if (fan_kind == EntryKind::symlink) r.problems.push_back({"object", "objects/" + fan, "a symlink, not part of the store"});
      else if (!is_temp_file_name(fan)) r.warnings.push_back("stray entry objects/" + fan);
      continue;
    }
    for (const auto& [name, kind] : store.list("objects/" + fan)) {
      if (is_temp_file_name(name)) continue;  // counted with the others below
      const std::string id = fan + name;
      if (!is_object_id(id)) {
        r.warnings.push_back(fmt::format("stray entry objects/{}/{}", fan, name));
        continue;
      }
      if (kind != EntryKind::file) {  // never opened: its place is taken
        present.insert(id);
        bad.insert(id);
        ++r.objects;
        r.problems.push_back({"object", id, fmt::format("{}, not an object", kind_text(kind))});
        continue;
      }
      examine(id);
    }
  }

  for (const auto& [id, s] : scenes) {
    if (!s.revision.parent.empty() && !present.count(s.revision.parent))
      r.warnings.push_back(fmt::format("revision {}: parent {} is not in the store (recorded from a scene outside it)",
                                       id.substr(0, 12), s.revision.parent.substr(0, 12)));
    if (s.source && !s.source->sha256.empty() && !present.count(s.source->sha256))
      r.warnings.push_back(fmt::format("revision {}: source blob {} is not in the store", id.substr(0, 12),
                                       s.source->sha256.substr(0, 12)));
  }

  // A ref must name a valid revision; "why" names what is wrong with `value` otherwise. One not
  // listed is read directly: written since the listing, by a writer whose ref move came after.
  auto check_revision = [&](const std::string& value) -> std::string {
    if (!is_object_id(value)) return fmt::format("'{}' is not a revision id", value.substr(0, 80));
    if (!present.count(value)) examine(value);
    if (scenes.count(value)) return "";
    if (!present.count(value)) return fmt::format("names {}, which is not in the store", value.substr(0, 12));
    return fmt::format("names {}, which is not a valid revision", value.substr(0, 12));
  };
  // A ref that seems wrong is read again: one that moved meanwhile is judged by where it is now.
  auto confirmed = [&](const std::string& ref, std::string value) -> std::string {
    std::string why = check_revision(value);
    for (int again = 0; !why.empty() && again < 3; ++again) {
      std::string now;
      try {
        now = store.ref_value(ref);
      } catch (const Error& e) {
        return e.what();
      }
      if (now == value) break;
      value = now;
      why = now.empty() && ref != "HEAD" ? "" : check_revision(value);  // deleted meanwhile: no longer a ref
    }
    return why;
  };
  for (const auto& [ref, value] : refs) {
    ++r.refs;
    if (ref.rfind("refs/heads/", 0) == 0 && !is_valid_branch_name(ref.substr(11)))
      r.warnings.push_back(fmt::format("{}: not a valid branch name (ignored by sv)", ref));
    if (std::string why = confirmed(ref, value); !why.empty()) r.problems.push_back({"ref", ref, why});
  }
  if (head_readable && head.rfind("ref: refs/heads/", 0) == 0) {
    std::string branch = head.substr(16);
    if (!is_valid_branch_name(branch)) r.problems.push_back({"HEAD", "HEAD", fmt::format("names an invalid branch '{}'", branch)});
    else {
      std::string tip;
      try {
        tip = store.branch_id(branch);
      } catch (const Error&) {  // a damaged ref, reported with the refs
        tip = "?";
      }
      if (tip.empty() && !scenes.empty())
        r.warnings.push_back(fmt::format("HEAD is on branch {}, which has no revision yet", branch));
    }
  } else if (head_readable) {
    if (std::string why = confirmed("HEAD", head); !why.empty()) r.problems.push_back({"HEAD", "HEAD", why});
  }

  r.log_entries = entries.size();
  if (torn) r.warnings.push_back(fmt::format("{} log line(s) do not parse (a writer interrupted mid-append)", torn));
  std::unordered_set<std::string> missing;
  for (const auto& e : entries)
    for (const auto* id : {&e.old_id, &e.new_id})
      if (!id->empty() && !missing.count(*id) && !check_revision(*id).empty()) {
        missing.insert(*id);
        r.problems.push_back({"log", id->substr(0, 12),
                              present.count(*id) ? "the log names a revision that is not valid"
                                                 : "the log names a revision that is not in the store"});
      }
  for (const auto& [rel, kind] : walk_store(store))
    if (kind != EntryKind::directory && is_temp_entry(rel)) ++r.temp_files;

  // What nothing names (the revision of a writer that lost a conflict or was killed before its
  // ref moved) is allowed, and left to gc: what refs, HEAD and the log name, and their parents
  // and source blobs, is referenced.
  std::vector<std::string> todo;
  for (const auto& [ref, value] : refs) todo.push_back(value);
  todo.push_back(head);
  for (const auto& e : entries) {
    todo.push_back(e.old_id);
    todo.push_back(e.new_id);
  }
  std::unordered_set<std::string> named;
  while (!todo.empty()) {
    std::string id = std::move(todo.back());
    todo.pop_back();
    if (!present.count(id) || !named.insert(id).second) continue;
    if (auto it = scenes.find(id); it != scenes.end()) {
      todo.push_back(it->second.revision.parent);
      if (it->second.source) todo.push_back(it->second.source->sha256);
    }
  }
  r.unreferenced = present.size() - named.size();
  return r;
}

// ---------------------------------------------------------------- gc

std::unordered_set<std::string> reachable_objects(const Store& store) {
  std::vector<std::string> todo;
  for (const auto& [ref, value] : store.refs()) todo.push_back(value);  // a damaged ref: corrupt_object
  todo.push_back(store.head_id());
  for (const auto& e : store.log()) {  // an unreadable log: corrupt_object
    todo.push_back(e.old_id);
    todo.push_back(e.new_id);
  }
  std::unordered_set<std::string> seen;
  while (!todo.empty()) {
    std::string id = std::move(todo.back());
    todo.pop_back();
    if (!is_object_id(id) || seen.count(id) || !store.has_object(id)) continue;
    seen.insert(id);
    std::string bytes = store.read_object(id);  // corrupt_object when it does not match its name
    if (bytes.empty() || bytes[0] != '{') continue;  // a blob
    Scene s;
    try {
      s = parse_scene(bytes);
    } catch (const Error& e) {
      throw Error(Code::corrupt_object, fmt::format("object {} is not a valid scene: {}", id.substr(0, 12), e.what()),
                  {{"object", id}});
    }
    todo.push_back(s.revision.parent);
    if (s.source) todo.push_back(s.source->sha256);
  }
  return seen;
}

json GcReport::to_json() const {
  return {{"ok", true}, {"tool", "gc"}, {"objects", objects}, {"reachable", reachable}, {"removed", removed},
          {"kept_recent", kept_recent}, {"temp_files_removed", temp_removed}, {"cache_removed", cache_removed},
          {"views_removed", views_removed}, {"bytes_freed", bytes_freed}, {"removed_ids", removed_ids},
          {"llm_text", text()}};
}

std::string GcReport::text() const {
  return fmt::format("{} objects: {} reachable, {} removed, {} unreachable kept (recent); {} temporary files, {} views "
                     "and {} cache entries removed; {} bytes freed\n",
                     objects, reachable, removed, kept_recent, temp_removed, views_removed, cache_removed, bytes_freed);
}

GcReport gc(Store& store, long long expire_s) {
  StoreLock lock(store);  // no ref moves while the reachable set is computed and used
  GcReport r;
  const double age = std::max(static_cast<double>(expire_s), kGcGraceSeconds);
  const auto keep = reachable_objects(store);
  for (const auto& id : store.object_ids()) {
    ++r.objects;
    if (keep.count(id)) {
      ++r.reachable;
      continue;
    }
    if (auto freed = store.remove_if_older("objects/" + id.substr(0, 2) + "/" + id.substr(2), age)) {
      ++r.removed;
      r.bytes_freed += *freed;
      r.removed_ids.push_back(id);
    } else if (store.has_object(id)) {
      ++r.kept_recent;
    }
  }
  // Derived data: views once old; a cache entry named after an object once its object is gone,
  // any other once old. Temporary files of interrupted writes, once no writer can own them.
  for (const auto& [rel, kind] : walk_store(store)) {
    if (kind == EntryKind::directory) continue;
    const bool temp = is_temp_entry(rel);
    const bool view = rel.rfind("views/", 0) == 0, cache = rel.rfind("cache/", 0) == 0;
    double min_age = age;
    if (temp) {
      min_age = kGcGraceSeconds;
    } else if (cache) {
      const std::string name = rel.substr(rel.rfind('/') + 1);
      for (size_t at = 0; at + 64 <= name.size(); ++at)
        if (is_object_id(name.substr(at, 64))) {
          min_age = store.has_object(name.substr(at, 64)) ? -1 : kGcGraceSeconds;
          break;
        }
      if (min_age < 0) continue;
    } else if (!view) {
      continue;
    }
    if (auto freed = store.remove_if_older(rel, min_age)) {
      r.bytes_freed += *freed;
      ++(temp ? r.temp_removed : view ? r.views_removed : r.cache_removed);
    }
  }
  return r;
}

}  // namespace sv
