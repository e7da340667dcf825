#include "cli/shell.hpp"

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <deque>
#include <string_view>

#include "cli/completion.hpp"
#include "cli/stage.hpp"
#include "cli/tool_shell.hpp"
#include "cli/version.hpp"
#include "core/error.hpp"

namespace sv {

// One name and one meaning per shared option; its text is what --help and the man pages show.
void add_common_options(CLI::App& app, CommonOptions& o, unsigned which) {
  if (which & opt::store) {
    app.add_option("--store", o.store, "the revision store (default: $SV_STORE, else the nearest .svrev upward)")
        ->type_name("DIR");
    app.add_flag("--no-store", o.no_store, "use no store: nothing is recorded or read from one");
  }
  if (which & opt::rev)
    app.add_option("--rev", o.rev,
                   "store mode: work on this revision (HEAD, a branch, final, an id or a unique prefix) and print the "
                   "envelope; a result is recorded only on the revision HEAD names (else conflict)")
        ->type_name("REV");
  if (which & opt::note)
    app.add_option("--note", o.note, "a note kept with the new revision (or the log entry), for the audit trail")
        ->type_name("TEXT");
  if (which & opt::output)
    app.add_option("-o,--output", o.output,
                   "write the new scene here instead of standard output (a device or a pipe written through)")
        ->type_name("FILE");
  if (which & opt::png)
    app.add_option("--png", o.png, "write the view here (else into the store's view cache .svrev/views/)")
        ->type_name("FILE");
  if (which & opt::embed) app.add_flag("--embed-images", o.embed_images, "also put the views inline in the envelope as base64");
  if (which & opt::json) app.add_flag("--json", o.json, "print the result as one JSON object");
  if (which & opt::oracle)
    app.add_option("--oracle", o.oracle,
                   "the oracle to ask: a command run through sh with the request directory appended (default: "
                   "$SV_ORACLE; none: the tool answers not_configured)")
        ->type_name("CMD")
        ->envname("SV_ORACLE");
  if (which & opt::quiet)
    app.add_flag("-q,--quiet", o.quiet,
                 "no progress line on standard error (it is shown only when standard error is a terminal)");
}

namespace {

// The envelope of a failure goes to stdout in store mode only (--rev, and the store tools): in
// filter mode stdout is the scene stream the next stage reads. Known before parsing, so that a
// usage error is reported the same way.
bool envelope_mode(int argc, char** argv, const ToolShell* tools) {
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--rev" || a.rfind("--rev=", 0) == 0) return true;
  }
  return tools && tools->names_store_tool(argc, argv);
}

// Whether the command line may name a subcommand (a lowercase word) or ask for the help that lists
// them. A stage that also serves tools (sv-simulate) builds the catalog, 1.5 ms of its start, only
// then; every other run is the stage.
bool may_name_subcommand(int argc, char** argv) {
  for (int i = 1; i < argc; ++i) {
    const std::string_view a = argv[i];
    if (a == "-h" || a.rfind("--help", 0) == 0) return true;
    if (!a.empty() && a[0] >= 'a' && a[0] <= 'z' &&
        a.find_first_not_of("abcdefghijklmnopqrstuvwxyz0123456789-") == std::string_view::npos)
      return true;
  }
  return false;
}

}  // namespace

int run_main(int argc, char** argv, const Executable& exe) {
  std::unique_ptr<ToolShell> tools =
      exe.tools && (!exe.stage || may_name_subcommand(argc, argv) || wants_completion(argc, argv)) ? exe.tools(exe.name)
                                                                                                : nullptr;
  bool envelope_on_stdout = envelope_mode(argc, argv, tools.get());
  CLI::App app{exe.summary, exe.name};
  app.set_version_flag("--version", [&exe] { return version_text(exe.name); },
                       "print the version, the commit built from and the libraries loaded, and exit");
  // The executable's own options (sv-commit --store) may follow the subcommand; set before the
  // subcommands are added, which inherit it.
  if (!exe.stage) app.fallthrough();
  CommonOptions common;
  add_common_options(app, common, exe.common);
  StageArgs stage_args;
  if (exe.stage) add_stage_options(app, *exe.stage, common, stage_args);

  if (tools) tools->add_to(app, common);
  std::deque<std::pair<const ShellCommand*, CLI::App*>> commands;
  for (const ShellCommand& c : exe.commands) {
    CLI::App* sub = app.add_subcommand(c.name, c.summary);
    add_common_options(*sub, common, c.common);
    if (c.add_options) c.add_options(*sub);
    commands.emplace_back(&c, sub);
  }
  if (!exe.stage) app.require_subcommand(1);
  // `--completion bash`: the completion script of this very command line (not in --help).
  if (wants_completion(argc, argv)) return print_completion(app, argc, argv);

  return guarded(exe.name, envelope_on_stdout, [&]() -> int {
    try {
      app.parse(argc, argv);
    } catch (const CLI::CallForHelp& e) {
      return app.exit(e);
    } catch (const CLI::CallForAllHelp& e) {
      return app.exit(e);
    } catch (const CLI::CallForVersion& e) {
      return app.exit(e);
    } catch (const CLI::ParseError& e) {
      throw Error(Code::invalid_selection, fmt::format("{} (see {} --help)", e.what(), exe.name));
    }
    int status = -1;
    for (auto& [c, sub] : commands)
      if (status < 0 && sub->parsed()) status = c->run(common);
    if (status < 0 && tools)
      if (std::optional<int> done = tools->run(common, envelope_on_stdout)) status = *done;
    if (status < 0) status = run_stage(*exe.stage, stage_args, common, argc, argv);
    // What is still buffered for standard output, and any write that failed on the way (a full
    // device, a closed pipe): a result that did not arrive is no success.
    errno = 0;
    if (std::fflush(stdout) != 0 || std::ferror(stdout))
      throw Error(Code::io_error, errno ? fmt::format("cannot write to standard output: {}", std::strerror(errno))
                                        : std::string("cannot write to standard output"));
    return status;
  });
}

}  // namespace sv
