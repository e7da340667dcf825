// sv-commit: the revision store's history commands.
#include <CLI/CLI.hpp>
#include <cstdio>

#include "cli/stage.hpp"
#include "core/error.hpp"
#include "store/history.hpp"

int main(int argc, char** argv) {
  using namespace sv;
  CLI::App app{"Create the revision store and move between revisions", "sv-commit"};
  app.set_version_flag("--version", std::string(SV_VERSION));
  app.require_subcommand(1);
  std::optional<std::string> store_flag;
  bool as_json = false;
  app.add_option("--store", store_flag, "revision store (default: $SV_STORE, else the nearest .svrev upward)");
  app.add_flag("--json", as_json, "print the result as one JSON object");

  std::string init_dir = ".", rev = "HEAD", name;
  size_t limit = 1000;
  auto* init = app.add_subcommand("init", "create .svrev in DIR (default: the working directory)");
  init->add_option("dir", init_dir, "directory to hold .svrev");
  auto* log = app.add_subcommand("log", "list revisions from REV back through their parents");
  log->add_option("rev", rev, "start revision (default HEAD)");
  log->add_option("-n,--max-count", limit, "at most this many revisions");
  auto* show = app.add_subcommand("show", "print a revision's scene document");
  show->add_option("rev", rev, "revision (default HEAD)");
  auto* status = app.add_subcommand("status", "print the current branch and revision");
  auto* checkout = app.add_subcommand("checkout", "point HEAD at a branch or a revision");
  checkout->add_option("rev", rev, "branch, revision id or unique prefix")->required();
  auto* branch = app.add_subcommand("branch", "create branch NAME at REV (default HEAD)");
  branch->add_option("name", name, "branch name")->required();
  branch->add_option("rev", rev, "revision (default HEAD)");

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
    json result = log->parsed()        ? history_log(store, rev, limit)
                  : status->parsed()   ? history_status(store)
                  : checkout->parsed() ? history_checkout(store, rev)
                                       : history_branch(store, name, rev);
    std::string text = as_json ? result.dump() + "\n" : result.value("llm_text", "");
    if (!text.empty() && text.back() != '\n') text += '\n';
    std::fputs(text.c_str(), stdout);
    return 0;
  });
}
