#include "store/maintenance.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <map>

#include "core/error.hpp"
#include "core/file.hpp"
#include "core/hash.hpp"
#include "core/scene_check.hpp"

namespace sv {

namespace {

// Seconds since the file was last modified (0 when unknown).
double age_s(const fs::path& p) {
  std::error_code ec;
  auto t = fs::last_write_time(p, ec);
  if (ec) return 0;
  return std::chrono::duration<double>(fs::file_time_type::clock::now() - t).count();
}

// The temporary files of writes under way or interrupted, anywhere in the store (the atomic
// writer puts them beside their target: objects, refs, logs, cache).
std::vector<fs::path> temp_files(const fs::path& root) {
  std::vector<fs::path> out;
  std::error_code ec;
  for (auto it = fs::recursive_directory_iterator(root, ec); !ec && it != fs::recursive_directory_iterator();
       it.increment(ec)) {
    std::string name = it->path().filename().string();
    if (it->is_regular_file() && (is_temp_file_name(name) || it->path().extension() == ".tmp")) out.push_back(it->path());
  }
  return out;
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
  const fs::path objects = store.root() / "objects";
  std::map<std::string, Scene> scenes;         // valid scenes by id
  std::unordered_set<std::string> present;     // every object file with an id-shaped name
  std::error_code ec;
  for (const auto& fan : fs::directory_iterator(objects, ec)) {
    std::string fname = fan.path().filename().string();
    if (!fan.is_directory() || fname.size() != 2 || !is_object_id(fname + std::string(62, '0'))) {
      if (!is_temp_file_name(fname)) r.warnings.push_back("stray entry objects/" + fname);
      continue;
    }
    for (const auto& f : fs::directory_iterator(fan.path(), ec)) {
      std::string name = f.path().filename().string();
      if (is_temp_file_name(name)) continue;  // counted with the others below
      std::string id = fname + name;
      if (!f.is_regular_file() || !is_object_id(id)) {
        r.warnings.push_back(fmt::format("stray entry objects/{}/{}", fname, name));
        continue;
      }
      ++r.objects;
      present.insert(id);
      std::string bytes;
      try {
        bytes = read_file(f.path());
      } catch (const Error& e) {
        r.problems.push_back({"object", id, e.what()});
        continue;
      }
      if (sha256_hex(bytes) != id) {
        r.problems.push_back({"object", id, "content does not match its name (SHA-256)"});
        continue;
      }
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
          r.problems.push_back({"object", id, fmt::format("not a valid scene: {}", e.what())});
        }
      } else {
        ++r.blobs;
      }
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

  // A ref must name a valid revision; "why" names what is wrong with `value` otherwise.
  auto check_revision = [&](const std::string& value) -> std::string {
    if (!is_object_id(value)) return fmt::format("'{}' is not a revision id", value.substr(0, 80));
    if (scenes.count(value)) return "";
    if (!present.count(value)) return fmt::format("names {}, which is not in the store", value.substr(0, 12));
    return fmt::format("names {}, which is not a valid revision", value.substr(0, 12));
  };
  for (const auto& [ref, value] : store.refs()) {
    ++r.refs;
    if (ref.rfind("refs/heads/", 0) == 0 && !is_valid_branch_name(ref.substr(11)))
      r.warnings.push_back(fmt::format("{}: not a valid branch name (ignored by sv)", ref));
    if (std::string why = check_revision(value); !why.empty()) r.problems.push_back({"ref", ref, why});
  }
  std::string head = store.head_text();
  if (head.rfind("ref: refs/heads/", 0) == 0) {
    std::string branch = head.substr(16);
    if (!is_valid_branch_name(branch)) r.problems.push_back({"HEAD", "HEAD", fmt::format("names an invalid branch '{}'", branch)});
    else if (store.branch_id(branch).empty() && !scenes.empty())
      r.warnings.push_back(fmt::format("HEAD is on branch {}, which has no revision yet", branch));
  } else if (std::string why = check_revision(head); !why.empty()) {
    r.problems.push_back({"HEAD", "HEAD", why});
  }

  size_t torn = 0;
  auto entries = store.log(&torn);
  r.log_entries = entries.size();
  if (torn) r.warnings.push_back(fmt::format("{} log line(s) do not parse (a writer interrupted mid-append)", torn));
  std::unordered_set<std::string> missing;
  for (const auto& e : entries)
    for (const auto* id : {&e.old_id, &e.new_id})
      if (!id->empty() && !scenes.count(*id) && !missing.count(*id)) {
        missing.insert(*id);
        r.problems.push_back({"log", id->substr(0, 12),
                              present.count(*id) ? "the log names a revision that is not valid"
                                                 : "the log names a revision that is not in the store"});
      }
  r.temp_files = temp_files(store.root()).size();

  // What nothing names (the revision of a writer that lost a conflict or was killed before its
  // ref moved) is allowed, and left to gc: what refs, HEAD and the log name, and their parents
  // and source blobs, is referenced.
  std::vector<std::string> todo;
  for (const auto& [ref, value] : store.refs()) todo.push_back(value);
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
  for (const auto& [ref, value] : store.refs()) todo.push_back(value);
  todo.push_back(store.head_id());
  for (const auto& e : store.log()) {
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
          {"removed_ids", removed_ids}, {"llm_text", text()}};
}

std::string GcReport::text() const {
  return fmt::format("{} objects: {} reachable, {} removed, {} unreachable kept (recent); {} temporary files and {} "
                     "cache entries removed\n",
                     objects, reachable, removed, kept_recent, temp_removed, cache_removed);
}

GcReport gc(Store& store, long long expire_s) {
  StoreLock lock(store.root());  // no ref moves while the reachable set is computed and used
  GcReport r;
  const auto keep = reachable_objects(store);
  for (const auto& id : store.object_ids()) {
    ++r.objects;
    if (keep.count(id)) {
      ++r.reachable;
      continue;
    }
    fs::path p = store.root() / "objects" / id.substr(0, 2) / id.substr(2);
    if (age_s(p) < static_cast<double>(expire_s)) {
      ++r.kept_recent;
      continue;
    }
    std::error_code ec;
    if (fs::remove(p, ec)) {
      ++r.removed;
      r.removed_ids.push_back(id);
      if (fs::remove(store.root() / "cache" / "metrics" / (id + ".json"), ec)) ++r.cache_removed;
    }
  }
  // Temporary files of interrupted writes, once no writer can own them.
  std::error_code ec;
  for (const auto& p : temp_files(store.root()))
    if (age_s(p) > 60 && fs::remove(p, ec)) ++r.temp_removed;
  return r;
}

}  // namespace sv
