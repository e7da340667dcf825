#include "store/history.hpp"

#include <fmt/format.h>

#include <ctime>
#include <map>

#include "core/error.hpp"

namespace sv {

std::string format_time_utc(long long t) {
  if (t <= 0) return "-";
  std::time_t tt = static_cast<std::time_t>(t);
  std::tm tm{};
  gmtime_r(&tt, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

namespace {

std::string recorded_parent(const Store& store, const std::string& id) {
  try {
    const json doc = json::parse(store.read_object(id));
    const json* parent = doc.contains("revision") && doc["revision"].is_object() && doc["revision"].contains("parent")
                             ? &doc["revision"]["parent"]
                             : nullptr;
    if (parent && parent->is_string() && is_object_id(parent->get<std::string>())) return parent->get<std::string>();
  } catch (const std::exception&) {  // not even JSON, or not what its name says: no parent to trust
  }
  return "";
}

}  // namespace

Scene read_scene_leniently(const Store& store, const std::string& id, std::string& problem) {
  problem.clear();
  try {
    return store.read_scene(id);
  } catch (const Error& e) {
    problem = fmt::format("{}: {}", code_name(e.code()), e.what());
    Scene s;
    s.revision.parent = recorded_parent(store, id);
    return s;
  }
}

std::vector<RevisionRecord> revision_chain(const Store& store, const std::string& id, size_t limit) {
  std::map<std::string, long long> first_seen;
  for (const auto& e : store.log())
    if (!e.new_id.empty()) first_seen.emplace(e.new_id, e.time);
  std::vector<RevisionRecord> out;
  std::string cur = id;
  while (!cur.empty() && out.size() < limit) {
    std::string problem;
    const Scene s = read_scene_leniently(store, cur, problem);
    RevisionRecord r{cur, s.revision.parent, s.revision.tool, s.revision.note, s.revision.args, 0, problem};
    if (auto it = first_seen.find(cur); it != first_seen.end()) r.time = it->second;
    out.push_back(r);
    // A parent may live outside the store (a filter-mode input that was never recorded).
    cur = store.has_object(s.revision.parent) ? s.revision.parent : "";
  }
  return out;
}

json history_log(const Store& store, const std::string& rev, size_t limit) {
  std::string id = store.resolve(rev);
  json revs = json::array(), warnings = json::array();
  std::string text;
  for (const auto& r : revision_chain(store, id, limit)) {
    revs.push_back({{"revision_id", r.id}, {"parent_revision_id", r.parent.empty() ? json(nullptr) : json(r.parent)},
                    {"created_by_tool", r.tool}, {"args", r.args}, {"note", r.note},
                    {"timestamp", format_time_utc(r.time)}});
    if (!r.problem.empty()) {
      revs.back()["problem"] = r.problem;
      warnings.push_back(fmt::format("revision {} cannot be read (sv-commit fsck): {}", r.id.substr(0, 12), r.problem));
    }
    text += fmt::format("{} {} {}{}\n", r.id.substr(0, 12), format_time_utc(r.time),
                        r.problem.empty() ? r.tool : "UNREADABLE (" + r.problem + ")", r.note.empty() ? "" : "  " + r.note);
  }
  return {{"ok", true}, {"tool", "log"}, {"revisions", revs}, {"current_revision_id", store.head_id()},
          {"warnings", warnings}, {"llm_text", text}};
}

json history_status(const Store& store) {
  std::string head = store.head_id(), branch = store.head_branch();
  // A HEAD naming a branch outside refs/heads/ (ref: refs/heads/../../x) is damage, as fsck says;
  // status must not print it as the current branch.
  if (store.head_text().rfind("ref: ", 0) == 0 && !is_valid_branch_name(branch))
    throw Error(Code::corrupt_object, fmt::format("HEAD names an invalid branch '{}' (sv-commit fsck)",
                                                  store.head_text().substr(0, 80)));
  std::string text = fmt::format("HEAD {} {}", branch.empty() ? "detached at" : "on branch " + branch,
                                 head.empty() ? "(no revisions yet)" : head.substr(0, 12));
  return {{"ok", true}, {"tool", "status"}, {"branch", branch.empty() ? json(nullptr) : json(branch)},
          {"current_revision_id", head.empty() ? json(nullptr) : json(head)}, {"branches", store.branches()},
          {"llm_text", text}};
}

json history_checkout(Store& store, const std::string& rev) {
  std::string before = store.head_id();
  store.checkout(rev, "checkout " + rev);
  std::string after = store.head_id(), branch = store.head_branch();
  return {{"ok", true}, {"tool", "checkout"}, {"previous_revision_id", before.empty() ? json(nullptr) : json(before)},
          {"current_revision_id", after}, {"branch", branch.empty() ? json(nullptr) : json(branch)},
          {"llm_text", fmt::format("HEAD now {} ({})", after.substr(0, 12),
                                   branch.empty() ? "detached" : "on branch " + branch)}};
}

json history_branch(Store& store, const std::string& name, const std::string& rev, bool switch_head) {
  std::string id = store.resolve(rev);
  // Created only if absent (compare-and-set under the lock): an existing name is a conflict.
  store.set_branch(name, id, std::string(), "branch " + name + " at " + id.substr(0, 12));
  if (switch_head) store.checkout(name, "checkout " + name);
  return {{"ok", true}, {"tool", "branch"}, {"branch", name}, {"revision_id", id},
          {"llm_text", fmt::format("branch {} at {}{}", name, id.substr(0, 12), switch_head ? "; HEAD follows it" : "")}};
}

}  // namespace sv
