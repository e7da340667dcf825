// sv-commit: the revision store's history commands. The catalog's history tools (list-revisions,
// checkout, revert, branch-revision, commit, done) are registered tools run by the shared tool
// runner; init, log, show, status, branch, fsck and gc are store housekeeping.
#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <algorithm>
#include <cstdio>
#include <string>
#include <vector>

#include "cli/stage.hpp"
#include "core/error.hpp"
#include "store/maintenance.hpp"
#include "tools/history_tools.hpp"
#include "tools/tool.hpp"

namespace {

// Rewrites `sv-commit [--store DIR] [--json] TOOL ARGS…` into the runner's `sv-commit TOOL ARGS…
// [--store DIR]` (tool results are always JSON). `checkout REV` keeps its positional form: the
// word becomes --revision_id. Returns false when the subcommand is not a registered tool.
bool tool_argv(int argc, char** argv, std::vector<std::string>& out) {
  std::vector<std::string> store;
  int i = 1;
  for (; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--json") continue;
    if (a == "--store" && i + 1 < argc) {
      store = {a, argv[++i]};
      continue;
    }
    if (a.rfind("--store=", 0) == 0) {
      store = {a};
      continue;
    }
    break;
  }
  if (i >= argc || !sv::is_tool_subcommand(argv[i], "sv-commit")) return false;
  const sv::Tool* tool = sv::find_tool(argv[i]);
  const bool positional_rev = tool && tool->name == "Checkout";
  out = {argv[0], argv[i]};
  for (int k = i + 1; k < argc; ++k) {
    std::string a = argv[k];
    static const std::vector<std::string> takes_value = {"--store", "--request", "--request-file", "--png",
                                                         "--revision_id", "--revision-id"};
    if (std::find(takes_value.begin(), takes_value.end(), a) != takes_value.end() && k + 1 < argc) {
      out.push_back(a);
      out.push_back(argv[++k]);
    } else if (positional_rev && !a.empty() && a[0] != '-') {
      out.push_back("--revision_id=" + a);
    } else {
      out.push_back(a);
    }
  }
  out.insert(out.end(), store.begin(), store.end());
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  using namespace sv;
  if (std::vector<std::string> args; tool_argv(argc, argv, args)) {
    std::vector<char*> ptrs;
    for (auto& a : args) ptrs.push_back(a.data());
    ptrs.push_back(nullptr);
    return run_tool_subcommand(static_cast<int>(args.size()), ptrs.data(), "sv-commit");
  }

  CLI::App app{"Create the revision store, move between revisions, check and collect it", "sv-commit"};
  app.set_version_flag("--version", std::string(SV_VERSION));
  app.require_subcommand(1);
  std::string footer = "History tools (`sv-commit TOOL --help`; results are JSON envelopes):\n";
  for (const Tool* t : tools_of("sv-commit")) footer += fmt::format("  {:<17} {}\n", t->subcommand, t->summary);
  footer += fmt::format("  {:<17} {}", "tools", "the catalog of these tools with their JSON Schemas");
  app.footer(footer);
  std::optional<std::string> store_flag;
  bool as_json = false;
  app.add_option("--store", store_flag, "revision store (default: $SV_STORE, else the nearest .svrev upward)");
  app.add_flag("--json", as_json, "print the result as one JSON object");

  std::string init_dir = ".", rev = "HEAD", name;
  size_t limit = 1000;
  long long expire_s = 3600;
  auto* init = app.add_subcommand("init", "create .svrev in DIR (default: the working directory)");
  init->add_option("dir", init_dir, "directory to hold .svrev");
  auto* log = app.add_subcommand("log", "list revisions from REV back through their parents");
  log->add_option("rev", rev, "start revision (default HEAD)");
  log->add_option("-n,--max-count", limit, "at most this many revisions");
  auto* show = app.add_subcommand("show", "print a revision's scene document");
  show->add_option("rev", rev, "revision (default HEAD)");
  auto* status = app.add_subcommand("status", "print the current branch and revision");
  auto* branch = app.add_subcommand("branch", "create branch NAME at REV (default HEAD); HEAD stays");
  branch->add_option("name", name, "branch name")->required();
  branch->add_option("rev", rev, "revision (default HEAD)");
  auto* fsck_cmd = app.add_subcommand("fsck", "verify every object, ref, HEAD and the log; exit 3 when anything is wrong");
  auto* gc_cmd = app.add_subcommand("gc", "remove objects nothing ever named (refs, HEAD, the log) and stale temporary files");
  gc_cmd->add_option("--expire", expire_s, "keep unreachable objects younger than this many seconds (default 3600)")
      ->check(CLI::NonNegativeNumber);

  if (auto status = parse_command_line(app, argc, argv)) return *status;
  return guarded("sv-commit", as_json, [&]() -> int {
    if (init->parsed()) {
      Store s = Store::init(init_dir);
      std::printf("%s\n", as_json ? json({{"ok", true}, {"tool", "init"}, {"store", s.root().string()}}).dump().c_str()
                                  : ("initialized " + s.root().string()).c_str());
      return 0;
    }
    auto root = Store::locate(store_flag);
    if (!root) throw Error(Code::not_found, "no store found (run sv-commit init)");
    Store store(*root);
    if (show->parsed()) {
      std::fputs(dump_scene(store.read_scene(store.resolve(rev))).c_str(), stdout);
      return 0;
    }
    if (fsck_cmd->parsed()) {
      FsckReport r = fsck(store);
      std::fputs(as_json ? (r.to_json().dump() + "\n").c_str() : r.text().c_str(), stdout);
      if (r.clean()) return 0;
      std::string names;
      for (size_t k = 0; k < r.problems.size() && k < 5; ++k)
        names += (k ? ", " : "") + r.problems[k].what + " " + r.problems[k].name;
      std::fprintf(stderr, "sv-commit: corrupt_object: %zu problem(s): %s%s\n", r.problems.size(), names.c_str(),
                   r.problems.size() > 5 ? ", …" : "");
      return exit_status(Code::corrupt_object);
    }
    json result = gc_cmd->parsed()   ? gc(store, expire_s).to_json()
                  : log->parsed()    ? history_log(store, rev, limit)
                  : status->parsed() ? history_status(store)
                                     : history_branch(store, name, rev);
    std::string text = as_json ? result.dump() + "\n" : result.value("llm_text", "");
    if (!text.empty() && text.back() != '\n') text += '\n';
    std::fputs(text.c_str(), stdout);
    for (const auto& w : result.value("warnings", json::array()))
      std::fprintf(stderr, "sv-commit: warning: %s\n", w.get<std::string>().c_str());
    return 0;
  });
}
