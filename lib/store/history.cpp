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
  std::string unreadable;  // a damaged log (fsck says so) costs the times, not the history
  for (const auto& e : store.log(nullptr, &unreadable))
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

HeadState head_state(const Store& store) {
  HeadState h{store.head_branch(), store.head_id(), store.branches()};
  // A HEAD naming a branch outside refs/heads/ (ref: refs/heads/../../x) is damage, as fsck says;
  // status must not print it as the current branch.
  if (store.head_text().rfind("ref: ", 0) == 0 && !is_valid_branch_name(h.branch))
    throw Error(Code::corrupt_object, fmt::format("HEAD names an invalid branch '{}' (sv-commit fsck)",
                                                  store.head_text().substr(0, 80)));
  return h;
}

HeadMove checkout_head(Store& store, const std::string& rev) {
  HeadMove m;
  m.previous = store.head_id();
  store.checkout(rev, "checkout " + rev);
  m.current = store.head_id();
  m.branch = store.head_branch();
  return m;
}

std::string create_branch(Store& store, const std::string& name, const std::string& rev, bool switch_head) {
  std::string id = store.resolve(rev);
  // Created only if absent (compare-and-set under the lock): an existing name is a conflict.
  store.set_branch(name, id, std::string(), "branch " + name + " at " + id.substr(0, 12));
  if (switch_head) store.checkout(name, "checkout " + name);
  return id;
}

}  // namespace sv
