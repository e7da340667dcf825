// sv-commit's history tools: list, check out, revert, branch, commit, done. They work on the
// store itself (ToolKind::store): the context's scene is HEAD's and the store is always there.
// Each tool's registry entry (catalog number, name, group, schemas) stands right after its handler.
//
// The final mark is the ref refs/tags/final: Commit and Done point it at the chosen revision and
// log the rationale or the summary, so the harness reads the answer with `sv-commit show final`.
#include "tools/history_tools.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <opencv2/imgproc.hpp>
#include <set>

#include "core/error.hpp"
#include "eval/ink_reference.hpp"
#include "store/history.hpp"
#include "store/store.hpp"
#include "tools/edit_session.hpp"
#include "tools/request.hpp"
#include "tools/schema_parts.hpp"
#include "tools/tool.hpp"
#include "render/figure.hpp"

namespace sv {

namespace {

namespace S = schema;

std::string short_id(const std::string& id) { return id.substr(0, 12); }

// edit_metrics of a revision, cached by id in .svrev/cache/metrics/ID.json (a revision's content
// never changes, so neither do its metrics; the version guards against a changed definition).
constexpr int kMetricsVersion = 2;  // 2: fidelity against the source's ink, not the stroke graph

json revision_metrics(Store& store, const std::string& id, const Scene& scene, std::vector<std::string>& warnings) {
  const std::string key = "metrics/" + id + ".json";
  if (auto cached = store.read_cache(key)) {
    try {
      json j = json::parse(*cached);
      if (j.is_object() && j.value("version", 0) == kMetricsVersion && j["metrics"].is_object()) return j["metrics"];
    } catch (const json::exception&) {
    }
  }
  const FidelityReference ref = fidelity_reference(scene, &store);
  json m = edit_metrics(scene, ref.paths);
  // Metrics against the stroke graph stand in only until the source image is back.
  if (ref.from_ink) store.write_cache(key, json{{"version", kMetricsVersion}, {"metrics", m}}.dump());
  else if (std::find(warnings.begin(), warnings.end(), ref.warning) == warnings.end()) warnings.push_back(ref.warning);
  return m;
}

std::string metrics_line(const json& m) {
  if (m.empty()) return "(no primitives)";
  std::string out;
  auto add = [&](const char* key, const char* label, const char* unit) {
    if (!m.contains(key)) return;
    double v = m[key].get<double>();
    out += fmt::format("{}{}={}{}", out.empty() ? "" : " ", label, fmt::format("{:.4g}", v), unit);
  };
  add("draw_time_s", "t", "s");
  add("primitive_count", "prims", "");
  add("pen_up_count", "pen_ups", "");
  add("f1", "f1", "");
  add("chamfer_px", "chamfer", "px");
  return out;
}

const json kMetricsSchema = {{"type", {"object", "null"}},
                             {"additionalProperties", {{"type", "number"}}},
                             {"description", "draw_time_s, primitive_count, pen_up_count, precision, recall, f1, chamfer_px"}};

// ---------------------------------------------------------------- ListRevisions

struct Node {
  std::string id, parent, tool, note, timestamp;
  long long time = 0;
  json metrics;
  std::vector<std::string> labels;  // branches, "final", "HEAD"
  std::vector<std::string> children;
  std::string problem;  // why it cannot be read ("" when it can)
};

struct ListRevisionsRequest {
  bool include_metrics;
};

ToolResult list_revisions(const ToolContext& ctx, const ListRevisionsRequest& req) {
  Store& st = *ctx.store;
  const bool with_metrics = req.include_metrics;
  const std::string head = st.head_id(), head_branch = st.head_branch(), final_id = st.final_id();
  std::map<std::string, std::vector<std::string>> labels;
  std::vector<std::string> todo;
  ToolResult r;
  std::vector<std::string> damaged;
  const auto refs = st.refs(&damaged);
  for (const auto& why : damaged) r.warnings.push_back(why + " (sv-commit fsck)");
  for (const auto& [ref, value] : refs) {
    if (ref.rfind("refs/heads/", 0) == 0) labels[value].push_back(ref.substr(11));
    else if (ref == "refs/tags/final") labels[value].push_back("final");
    else continue;
    todo.push_back(value);
  }
  if (!head.empty()) {
    labels[head].push_back(head_branch.empty() ? "HEAD (detached)" : "HEAD");
    todo.push_back(head);
  }
  // Every revision the log names is listed, not only those a ref still reaches: re-running the
  // pipeline into a store starts a new chain, and the earlier one (and its edits) stays in view.
  std::map<std::string, long long> first_seen;
  std::string unreadable;
  const std::vector<LogEntry> entries = st.log(nullptr, &unreadable);
  if (!unreadable.empty()) r.warnings.push_back("the store's log cannot be read (sv-commit fsck): " + unreadable);
  for (const auto& e : entries) {
    if (!e.new_id.empty()) first_seen.emplace(e.new_id, e.time);
    for (const std::string* id : {&e.old_id, &e.new_id})
      if (!id->empty() && st.has_object(*id)) todo.push_back(*id);
  }

  std::map<std::string, Node> nodes;
  while (!todo.empty()) {
    std::string id = std::move(todo.back());
    todo.pop_back();
    if (id.empty() || nodes.count(id)) continue;
    if (!st.has_object(id)) {
      r.warnings.push_back(fmt::format("a ref names {}, which is not in the store (sv-commit fsck)", short_id(id)));
      continue;
    }
    // One unreadable revision must not hide the rest of the history: it is listed with its
    // problem, and the walk goes on through the parent its object still names, if any.
    std::string problem;
    const Scene s = read_scene_leniently(st, id, problem);
    if (!problem.empty())
      r.warnings.push_back(fmt::format("revision {} cannot be read (sv-commit fsck): {}", short_id(id), problem));
    Node n{id, s.revision.parent, s.revision.tool, s.revision.note, "", 0, nullptr, labels[id], {}, problem};
    if (auto it = first_seen.find(id); it != first_seen.end()) n.time = it->second;
    n.timestamp = format_time_utc(n.time);
    if (with_metrics && problem.empty()) n.metrics = revision_metrics(st, id, s, r.warnings);
    if (st.has_object(n.parent)) todo.push_back(n.parent);
    nodes.emplace(id, std::move(n));
  }
  std::vector<std::string> roots;
  for (auto& [id, n] : nodes) {
    if (auto p = nodes.find(n.parent); p != nodes.end()) p->second.children.push_back(id);
    else roots.push_back(id);
  }
  auto by_time = [&](const std::string& a, const std::string& b) {
    return std::tie(nodes[a].time, a) < std::tie(nodes[b].time, b);
  };
  std::sort(roots.begin(), roots.end(), by_time);
  for (auto& [id, n] : nodes) std::sort(n.children.begin(), n.children.end(), by_time);

  // Depth-first, oldest child first: a straight chain stays at one indentation, each child of a
  // fork is indented one step further; "(from X)" names the parent when it is not the line above.
  json records = json::array();
  std::string text, previous;
  // The picture: one row per revision in the same order, indented like the text, each joined
  // to its parent; HEAD red, the final mark green, other branch tips blue.
  constexpr int kRowPx = 24, kIndentPx = 22, kMaxRows = 120;
  const int rows = std::min<int>(static_cast<int>(nodes.size()), kMaxRows);
  cv::Mat dag(24 + kRowPx * std::max(rows, 1), 900, CV_8UC3, cv::Scalar(255, 255, 255));
  std::map<std::string, cv::Point> at;
  std::vector<std::pair<std::string, int>> stack;
  for (auto it = roots.rbegin(); it != roots.rend(); ++it) stack.emplace_back(*it, 0);
  while (!stack.empty()) {
    auto [id, depth] = stack.back();
    stack.pop_back();
    const Node& n = nodes[id];
    json rec = {{"revision_id", id},
                {"parent_revision_id", n.parent.empty() ? json(nullptr) : json(n.parent)},
                {"created_by_tool", n.tool},
                {"note", n.note.empty() ? json(nullptr) : json(n.note)},
                {"timestamp", n.timestamp},
                {"metrics", n.metrics},
                {"labels", n.labels},
                {"children", n.children}};
    if (!n.problem.empty()) rec["problem"] = n.problem;
    records.push_back(rec);
    std::string from = !n.parent.empty() && n.parent != previous && nodes.count(n.parent)
                           ? fmt::format(" (from {})", n.parent.substr(0, 8))
                           : "";
    std::string label_text;
    for (const auto& l : n.labels) label_text += (label_text.empty() ? "" : ", ") + l;
    const std::string row = fmt::format("{} {}{}{}{}{}", short_id(id),
                                        !n.problem.empty() ? "UNREADABLE" : n.tool.empty() ? "?" : n.tool, from,
                                        n.note.empty() ? "" : " \"" + n.note + "\"",
                                        with_metrics ? "  " + metrics_line(n.metrics) : "",
                                        label_text.empty() ? "" : "  [" + label_text + "]");
    text += std::string(2 * depth, ' ') + row + "\n";
    if (static_cast<int>(at.size()) < rows) {
      cv::Point c(16 + kIndentPx * depth, 20 + kRowPx * static_cast<int>(at.size()));
      if (auto p = at.find(n.parent); p != at.end()) {
        cv::line(dag, p->second, {p->second.x, c.y}, color::faded, 2, cv::LINE_AA);
        cv::line(dag, {p->second.x, c.y}, c, color::faded, 2, cv::LINE_AA);
      }
      cv::Scalar col = id == head ? color::missed : id == final_id ? color::spurious : n.labels.empty() ? color::ink : color::line;
      cv::circle(dag, c, 6, col, cv::FILLED, cv::LINE_AA);
      cv::putText(dag, row, c + cv::Point(12, 5), cv::FONT_HERSHEY_SIMPLEX, 0.42, col, 1, cv::LINE_AA);
      at[id] = c;
    }
    previous = id;
    const int child_depth = n.children.size() > 1 ? depth + 1 : depth;
    for (auto c = n.children.rbegin(); c != n.children.rend(); ++c) stack.emplace_back(*c, child_depth);
  }
  r.fields = {{"revisions", records}, {"current_revision_id", head.empty() ? json(nullptr) : json(head)},
              {"current_branch", head_branch.empty() ? json(nullptr) : json(head_branch)},
              {"final_revision_id", final_id.empty() ? json(nullptr) : json(final_id)}};
  if (!nodes.empty()) r.images["history"] = dag;
  if (static_cast<int>(nodes.size()) > rows)
    r.warnings.push_back(fmt::format("the history picture shows the first {} of {} revisions", rows, nodes.size()));
  r.llm_text = nodes.empty() ? "no revisions yet" : fmt::format("{} revisions, HEAD {}{}\n{}", nodes.size(),
                                                                head.empty() ? "(none)" : short_id(head),
                                                                head_branch.empty() ? " (detached)" : " on " + head_branch, text);
  return r;
}

json record_schema() {
  return S::object({{"revision_id", S::string("the revision")},
                    {"parent_revision_id", S::nullable(S::string("the revision it was made from"))},
                    {"created_by_tool", S::string("the tool or stage that made it")},
                    {"note", S::nullable(S::string("the note it was recorded with"))},
                    {"timestamp", S::string("when a ref first moved to it, ISO-8601 UTC ('-' if never)")},
                    {"metrics", kMetricsSchema},
                    {"labels", S::array(S::string("a label"), "branches, final, HEAD naming it")},
                    {"children", S::array(S::string("a revision id"), "revisions made from it")},
                    {"problem", S::string("present when the revision cannot be read (e.g. corrupt_object): "
                                          "why (sv-commit fsck); its parent is the one its object "
                                          "still names, if any")}},
                   {"revision_id", "parent_revision_id", "created_by_tool", "timestamp"}, "one revision");
}

Tool list_revisions_entry() {
  using R = ListRevisionsRequest;
  Tool t = typed_tool<R>(
      41, "ListRevisions", "history",
      "Every revision a branch, the final mark, HEAD or the log names, as trees (parent links) with "
      "per-revision metrics and the branches naming it, and as a picture of that tree.",
      {{field("include_metrics", &R::include_metrics,
              S::with_default(S::boolean("measure each revision (cached by id)"), true))}},
      S::object({{"revisions", S::array(record_schema(), "depth-first from the oldest root, oldest child first")},
                 {"current_revision_id", S::nullable(S::string("HEAD's revision (null while unborn)"))},
                 {"current_branch", S::nullable(S::string("HEAD's branch (null when detached)"))},
                 {"final_revision_id", S::nullable(S::string("the revision marked final"))}},
                {"revisions", "current_revision_id"}),
      list_revisions, ToolKind::store);
  t.changes_nothing = true;
  return t;
}

// ---------------------------------------------------------------- Checkout

struct CheckoutRequest {
  std::string revision_id;
};

ToolResult checkout(const ToolContext& ctx, const CheckoutRequest& req) {
  json res = history_checkout(*ctx.store, req.revision_id);
  ToolResult r;
  r.fields = {{"previous_revision_id", res["previous_revision_id"]}, {"current_revision_id", res["current_revision_id"]},
              {"revision_id", res["current_revision_id"]}, {"branch", res["branch"]}};
  r.llm_text = res["llm_text"];
  return r;
}

json rev_schema() {
  return S::string("a revision: HEAD, a branch, a full id or a unique prefix of at least 4 hex digits");
}

Tool checkout_entry() {
  using R = CheckoutRequest;
  return typed_tool<R>(
      42, "Checkout", "history",
      "Switch the working revision: HEAD follows a branch, or is detached at a revision, so later tools "
      "(--rev HEAD) work on it.",
      {{field("revision_id", &R::revision_id, rev_schema())}, {"revision_id"}},
      S::object({{"previous_revision_id", S::nullable(S::string("HEAD's revision before"))},
                 {"current_revision_id", S::string("HEAD's revision now")},
                 {"branch", S::nullable(S::string("the branch HEAD follows (null when detached)"))}},
                {"previous_revision_id", "current_revision_id"}),
      checkout, ToolKind::store);
}

// The log's reason for a step, with the request's note (--note) when it has one.
std::string with_note(const std::string& why, const NoteRequest& req) {
  return req.note ? why + " — " + *req.note : why;
}

// ---------------------------------------------------------------- Revert

struct RevertRequest : NoteRequest {
  std::string to_revision_id;
  bool keep_branch;
};

ToolResult revert(const ToolContext& ctx, const RevertRequest& req) {
  Store& st = *ctx.store;
  const std::string target = st.resolve(req.to_revision_id);
  Scene scene = st.read_scene(target);
  const std::string head = st.head_id();
  ToolResult r;
  if (target == head) {
    r.fields = {{"revision_id", head}, {"previous_revision_id", head}, {"backup_branch", nullptr}};
    r.llm_text = fmt::format("HEAD is already {}; nothing to revert", short_id(head));
    r.warnings.push_back("the target is HEAD: nothing changed");
    return r;
  }
  if (req.keep_branch) {
    // Like git revert to a snapshot: a new revision on top of HEAD whose content is the target's.
    scene.revision = RevisionInfo{};
    scene.revision.parent = head;
    scene.revision.tool = "Revert";
    scene.revision.args.push_back("Revert " + json{{"to_revision_id", target}, {"keep_branch", true}}.dump());
    scene.revision.note = "revert to " + short_id(target);
    std::string id = st.record(scene, head, with_note("Revert: content of " + short_id(target), req));
    r.fields = {{"revision_id", id}, {"previous_revision_id", head.empty() ? json(nullptr) : json(head)},
                {"backup_branch", nullptr}};
    r.llm_text = fmt::format("new revision {} (parent {}) has the content of {}", short_id(id),
                             head.empty() ? "(none)" : short_id(head), short_id(target));
    return r;
  }
  // Move the branch back; the revisions left behind stay reachable from a backup branch.
  std::string backup;
  if (!head.empty()) {
    bool ancestor = false;  // moving forward along the chain loses nothing
    for (const auto& rec : revision_chain(st, target, SIZE_MAX))
      if (rec.id == head) ancestor = true;
    if (!ancestor) backup = "reverted/" + short_id(head);
  }
  std::string kept = st.reset_head(head, target, backup, with_note("Revert (discard): back to " + short_id(target), req));
  r.fields = {{"revision_id", target}, {"previous_revision_id", head.empty() ? json(nullptr) : json(head)},
              {"backup_branch", kept.empty() ? json(nullptr) : json(kept)}};
  std::string where = st.head_branch().empty() ? "HEAD (detached)" : "branch " + st.head_branch();
  r.llm_text = fmt::format("{} moved back to {}{}", where, short_id(target),
                           kept.empty() ? "" : fmt::format("; the revisions left behind stay on branch {}", kept));
  return r;
}

Tool revert_entry() {
  using R = RevertRequest;
  return typed_tool<R>(
      43, "Revert", "history",
      "Go back to an earlier revision. keep_branch (default): a new revision on top of HEAD with the "
      "target's content, history kept. Otherwise the branch moves back and what it leaves behind is kept "
      "on a branch reverted/<id>.",
      {{field("to_revision_id", &R::to_revision_id, rev_schema()),
        field("keep_branch", &R::keep_branch, S::with_default(S::boolean("record the revert as a new revision"), true))},
       {"to_revision_id"}},
      S::object({{"revision_id", S::string("HEAD's revision after the revert")},
                 {"previous_revision_id", S::nullable(S::string("HEAD's revision before"))},
                 {"backup_branch", S::nullable(S::string("where the revisions left behind stay"))}},
                {"revision_id"}),
      revert, ToolKind::store);
}

// ---------------------------------------------------------------- BranchRevision

struct BranchRequest {
  std::optional<std::string> from_revision_id;  // none: HEAD
  std::optional<std::string> name;              // none: named after the revision
};

ToolResult branch_revision(const ToolContext& ctx, const BranchRequest& req) {
  Store& st = *ctx.store;
  const std::string id = st.resolve(req.from_revision_id.value_or("HEAD"));
  st.read_scene(id);  // only a valid revision can start a branch
  std::string name;
  if (req.name) {
    name = *req.name;
  } else {
    // branch-<short id>, or the first of branch-<short id>-2, -3… not taken yet.
    for (int k = 1; name.empty() || !st.branch_id(name).empty(); ++k)
      name = k == 1 ? "branch-" + id.substr(0, 8) : fmt::format("branch-{}-{}", id.substr(0, 8), k);
  }
  json res = history_branch(st, name, id, true);
  ToolResult r;
  r.fields = {{"revision_id", id}, {"branch", name}};
  r.llm_text = res["llm_text"];
  return r;
}

Tool branch_revision_entry() {
  using R = BranchRequest;
  return typed_tool<R>(
      44, "BranchRevision", "history",
      "Start a branch to try a competing strategy: create it at a revision (default HEAD) and switch HEAD "
      "to it. An existing name is a conflict.",
      {{field("from_revision_id", &R::from_revision_id, S::nullable(rev_schema())),
        field("name", &R::name,
              S::nullable(S::string("branch name (default branch-<id>); components of [A-Za-z0-9._-] separated by '/'")))}},
      S::object({{"revision_id", S::string("the revision the branch starts at")}, {"branch", S::string("the branch, HEAD follows it")}},
                {"revision_id", "branch"}),
      branch_revision, ToolKind::store);
}

// ---------------------------------------------------------------- Commit and Done

size_t commands_of(const Scene& s) { return s.commands ? s.commands->size() : 0; }

struct CommitRequest : NoteRequest {
  std::string revision_id;
  std::optional<std::string> rationale;
};

ToolResult commit(const ToolContext& ctx, const CommitRequest& req) {
  Store& st = *ctx.store;
  const std::string id = st.resolve(req.revision_id);
  Scene s = st.read_scene(id);
  if (commands_of(s) == 0)
    throw Error(Code::no_result,
                fmt::format("revision {} has no robot commands to commit (run sv-route on it first)", short_id(id)),
                {{"revision_id", id}, {"reason", s.primitives ? "no command stream (not routed)" : "no primitives (not fitted)"}});
  ToolResult r;
  json m = revision_metrics(st, id, s, r.warnings);
  const std::string rationale = req.rationale.value_or("");
  st.mark_final(id, with_note("Commit" + (rationale.empty() ? std::string() : ": " + rationale), req));
  double time_ms = m.contains("draw_time_s") ? m["draw_time_s"].get<double>() * 1000.0 : 0.0;
  r.fields = {{"revision_id", id}, {"commands_count", commands_of(s)}, {"estimated_time_ms", time_ms}, {"final_metrics", m}};
  r.llm_text = fmt::format("final: {} ({} commands, {:.1f} s; {})", short_id(id), commands_of(s), time_ms / 1000.0,
                           metrics_line(m));
  return r;
}

Tool commit_entry() {
  using R = CommitRequest;
  return typed_tool<R>(
      45, "Commit", "history",
      "Mark a revision as the answer (refs/tags/final): its command count, estimated draw time and "
      "metrics. A revision without robot commands is refused (no_result).",
      {{field("revision_id", &R::revision_id, rev_schema()),
        field("rationale", &R::rationale, S::nullable(S::string("why, kept in the log")))},
       {"revision_id"}},
      S::object({{"commands_count", S::integer("robot commands of the final revision")},
                 {"estimated_time_ms", S::number("its draw time", 0)},
                 {"final_metrics", kMetricsSchema}},
                {"commands_count", "estimated_time_ms", "final_metrics"}),
      commit, ToolKind::store);
}

struct DoneRequest : NoteRequest {
  std::string final_revision_id;
  std::string summary;
};

ToolResult done(const ToolContext& ctx, const DoneRequest& req) {
  Store& st = *ctx.store;
  const std::string id = st.resolve(req.final_revision_id);
  Scene s = st.read_scene(id);
  ToolResult r;
  // The harness reads the answer's command stream: a revision without one is no answer.
  if (commands_of(s) == 0)
    throw Error(Code::no_result,
                fmt::format("revision {} has no robot commands to hand in (run sv-route on it first)", short_id(id)),
                {{"revision_id", id}, {"reason", s.primitives ? "no command stream (not routed)" : "no primitives (not fitted)"}});
  st.mark_final(id, with_note("Done: " + req.summary, req));
  r.fields = {{"accepted", true}, {"revision_id", id}, {"final_revision_id", id}, {"commands_count", commands_of(s)}};
  r.llm_text = fmt::format("done: {} is final ({} commands)", short_id(id), commands_of(s));
  return r;
}

Tool done_entry() {
  using R = DoneRequest;
  return typed_tool<R>(
      46, "Done", "history",
      "End the session: mark the final revision (it may be the original pipeline output) and record the "
      "summary in the log.",
      {{field("final_revision_id", &R::final_revision_id, rev_schema()),
        field("summary", &R::summary, S::string("what was done and why, kept in the log"))},
       {"final_revision_id", "summary"}},
      S::object({{"accepted", S::boolean("the session was closed on it")}, {"final_revision_id", S::string("the final revision")},
                 {"commands_count", S::integer("its robot commands")}},
                {"accepted"}),
      done, ToolKind::store);
}

}  // namespace

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
  const HeadState h = head_state(store);
  std::string text = fmt::format("HEAD {} {}", h.branch.empty() ? "detached at" : "on branch " + h.branch,
                                 h.revision.empty() ? "(no revisions yet)" : h.revision.substr(0, 12));
  return {{"ok", true}, {"tool", "status"}, {"branch", h.branch.empty() ? json(nullptr) : json(h.branch)},
          {"current_revision_id", h.revision.empty() ? json(nullptr) : json(h.revision)}, {"branches", h.branches},
          {"llm_text", text}};
}

json history_checkout(Store& store, const std::string& rev) {
  const HeadMove m = checkout_head(store, rev);
  return {{"ok", true}, {"tool", "checkout"}, {"previous_revision_id", m.previous.empty() ? json(nullptr) : json(m.previous)},
          {"current_revision_id", m.current}, {"branch", m.branch.empty() ? json(nullptr) : json(m.branch)},
          {"llm_text", fmt::format("HEAD now {} ({})", m.current.substr(0, 12),
                                   m.branch.empty() ? "detached" : "on branch " + m.branch)}};
}

json history_branch(Store& store, const std::string& name, const std::string& rev, bool switch_head) {
  const std::string id = create_branch(store, name, rev, switch_head);
  return {{"ok", true}, {"tool", "branch"}, {"branch", name}, {"revision_id", id},
          {"llm_text", fmt::format("branch {} at {}{}", name, id.substr(0, 12), switch_head ? "; HEAD follows it" : "")}};
}

// The entries defined above, each after its handler (the catalog number, not this list, orders them).
void add_history_tools(std::vector<Tool>& out) {
  for (auto entry : {list_revisions_entry, checkout_entry, revert_entry, branch_revision_entry, commit_entry,
                     done_entry})
    out.push_back(entry());
}

}  // namespace sv
