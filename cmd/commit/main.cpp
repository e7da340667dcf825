// sv-commit: the revision store's history. The catalog's history tools (list-revisions, checkout,
// revert, branch-revision, commit, done) are registered tools; init, log, show, status, branch,
// fsck and gc are store housekeeping, commands of the same shell.
#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <cstdio>
#include <string>

#include "cli/shell.hpp"
#include "cli/tool_shell.hpp"
#include "cli/values.hpp"
#include "cli/stage.hpp"
#include "core/error.hpp"
#include "store/maintenance.hpp"
#include "tools/history_tools.hpp"

namespace {

using namespace sv;

Store open_required(const CommonOptions& o) {
  auto root = Store::locate(o.store);
  if (!root) throw Error(Code::not_found, "no store found (run sv-commit init)");
  return Store(*root);
}

// A housekeeping result: its text, or the JSON object with --json; its warnings on stderr.
int print(const CommonOptions& o, const json& result) {
  std::string text = o.json ? result.dump() + "\n" : result.value("llm_text", "");
  if (!text.empty() && text.back() != '\n') text += '\n';
  std::fputs(text.c_str(), stdout);
  for (const auto& w : result.value("warnings", json::array()))
    std::fprintf(stderr, "sv-commit: warning: %s\n", w.get<std::string>().c_str());
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  std::string dir = ".", rev = "HEAD", name;
  size_t limit = 1000;
  long long expire_s = 3600;
  auto rev_arg = [&rev](CLI::App& a) { a.add_option("rev", rev, "revision (default HEAD)"); };
  Executable exe{"sv-commit", "Create the revision store, move between revisions, check and collect it"};
  exe.common = opt::store | opt::json;
  exe.tools = catalog_tools;
  exe.commands = {
      {"init", "create .svrev in DIR (default: the working directory)",
       [&](CLI::App& a) { a.add_option("dir", dir, "directory to hold .svrev"); },
       [&](const CommonOptions& o) {
         Store s = Store::init(dir);
         return print(o, {{"ok", true}, {"tool", "init"}, {"store", s.root().string()},
                          {"llm_text", "initialized " + s.root().string()}});
       }},
      {"log", "list revisions from REV back through their parents",
       [&](CLI::App& a) {
         a.add_option("rev", rev, "start revision (default HEAD)");
         check_number(a.add_option("-n,--max-count", limit, "at most this many revisions"), at_least(0), true);
       },
       [&](const CommonOptions& o) {
         Store s = open_required(o);
         return print(o, history_log(s, rev, limit));
       }},
      {"show", "print a revision's scene document", rev_arg,
       [&](const CommonOptions& o) {
         Store s = open_required(o);
         std::fputs(dump_scene(s.read_scene(s.resolve(rev))).c_str(), stdout);
         return 0;
       }},
      {"status", "print the current branch and revision", nullptr,
       [&](const CommonOptions& o) {
         Store s = open_required(o);
         return print(o, history_status(s));
       }},
      {"branch", "create branch NAME at REV (default HEAD); HEAD stays",
       [&](CLI::App& a) {
         a.add_option("name", name, "branch name")->required();
         rev_arg(a);
       },
       [&](const CommonOptions& o) {
         Store s = open_required(o);
         return print(o, history_branch(s, name, rev));
       }},
      {"fsck", "verify every object, ref, HEAD and the log; exit 3 when anything is wrong", nullptr,
       [&](const CommonOptions& o) {
         Store s = open_required(o);
         FsckReport r = fsck(s);
         std::fputs(o.json ? (r.to_json().dump() + "\n").c_str() : r.text().c_str(), stdout);
         if (r.clean()) return 0;
         std::string names;
         for (size_t k = 0; k < r.problems.size() && k < 5; ++k)
           names += (k ? ", " : "") + r.problems[k].what + " " + r.problems[k].name;
         std::fprintf(stderr, "sv-commit: corrupt_object: %zu problem(s): %s%s\n", r.problems.size(), names.c_str(),
                      r.problems.size() > 5 ? ", …" : "");
         return exit_status(Code::corrupt_object);
       }},
      {"gc", "remove objects nothing ever named (refs, HEAD, the log) and stale temporary files",
       [&](CLI::App& a) {
         check_number(
             a.add_option("--expire", expire_s, "keep unreachable objects younger than this many seconds (default 3600)"),
             at_least(0), true);
       },
       [&](const CommonOptions& o) {
         Store s = open_required(o);
         return print(o, gc(s, expire_s).to_json());
       }},
  };
  return run_main(argc, argv, exe);
}
