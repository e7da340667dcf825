#include "cli/shell.hpp"

#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <sys/stat.h>

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
#include "core/messages.hpp"

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

// "sv-diagnose list-primitives" for that subcommand of sv-diagnose.
std::string command_path(const CLI::App* a) {
  std::string path = a->get_name();
  for (const CLI::App* p = a->get_parent(); p; p = p->get_parent()) path = p->get_name() + " " + path;
  return path;
}

// The option `name` ("--store", "-o") means in `a`, or in the commands it falls through to.
const CLI::Option* find_option(const CLI::App* a, const std::string& name) {
  for (; a; a = a->get_fallthrough() ? a->get_parent() : nullptr)
    if (const CLI::Option* o = a->get_option_no_throw(name); o && o->nonpositional()) return o;
  return nullptr;
}

std::vector<std::string> option_names(const CLI::App* a) {
  std::vector<std::string> names;
  for (; a; a = a->get_fallthrough() ? a->get_parent() : nullptr)
    for (const CLI::Option* o : a->get_options()) {
      for (const std::string& l : o->get_lnames()) names.push_back("--" + l);
      for (const std::string& n : o->get_snames()) names.push_back("-" + n);
    }
  return names;
}

// The subcommands' names; their aliases too (the catalog's ListPrimitives) when `word` is spelled
// as those are, with a capital.
std::vector<std::string> subcommand_names(const CLI::App* a, const std::string& word) {
  const bool capitals = word.find_first_of("ABCDEFGHIJKLMNOPQRSTUVWXYZ") != std::string::npos;
  std::vector<std::string> names;
  for (const CLI::App* sub : a->get_subcommands([](const CLI::App*) { return true; })) {
    names.push_back(sub->get_name());
    if (capitals)
      for (const std::string& alias : sub->get_aliases()) names.push_back(alias);
  }
  return names;
}

const CLI::App* find_subcommand(const CLI::App* a, const std::string& word) {
  for (const CLI::App* sub : a->get_subcommands([](const CLI::App*) { return true; }))
    if (sub->check_name(word)) return sub;
  return nullptr;
}

std::string with_hint(const std::string& what, const std::vector<std::string>& suggestions) {
  const std::string hint = did_you_mean(suggestions);
  return hint.empty() ? what : what + ": " + hint;
}

// Walks the command line as CLI11 reads it and names the first word that is no name of the
// command it is given to: an option none of its options has, or a word where a subcommand
// belongs that none of its subcommands is. Nothing when every name is known.
std::optional<std::string> unknown_name(const CLI::App& root, int argc, char** argv) {
  const CLI::App* cur = &root;
  int positionals = 0;  // words the current command's positional arguments took
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--") return std::nullopt;
    const bool dashed = a.size() > 1 && a[0] == '-' && !(a[1] >= '0' && a[1] <= '9') && a[1] != '.';
    if (dashed) {
      const bool is_long = a.rfind("--", 0) == 0;
      const std::string name = is_long ? a.substr(0, a.find('=')) : a.substr(0, 2);
      const CLI::Option* o = find_option(cur, name);
      if (!o)
        return with_hint(fmt::format("unknown option {}{}", name, cur == &root ? "" : " for " + command_path(cur)),
                         closest_names(name, option_names(cur)));
      if (o->get_items_expected_min() > 0 && a.find('=') == std::string::npos && (is_long || a.size() == 2)) ++i;
      continue;
    }
    if (const CLI::App* sub = find_subcommand(cur, a)) {
      cur = sub;
      positionals = 0;
      continue;
    }
    int capacity = 0;
    for (const CLI::Option* o : cur->get_options())
      if (o->get_positional() && !o->nonpositional()) capacity += std::max(o->get_items_expected_max(), 1);
    if (positionals < capacity) {
      ++positionals;
      continue;
    }
    const std::vector<std::string> subs = subcommand_names(cur, a);
    if (subs.empty()) return std::nullopt;
    return with_hint(fmt::format("'{}' is not an {} command", a, command_path(cur)), closest_names(a, subs));
  }
  return std::nullopt;
}

// A stage that also has subcommands (sv-simulate render) takes a word that is no subcommand as
// its input file: one that is no file either, and close to a subcommand, is named as both.
void refuse_missing_command_word(const CLI::App& app, const StageArgs& args) {
  if (args.inputs.size() != 1) return;
  const std::string& word = args.inputs[0];
  if (word.empty() || word.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-") !=
                          std::string::npos)
    return;
  struct stat st {};
  if (::stat(word.c_str(), &st) == 0 || errno != ENOENT) return;
  const std::vector<std::string> near = closest_names(word, subcommand_names(&app, word));
  if (near.empty()) return;
  throw Error(Code::io_error, fmt::format("cannot open {}: {}; nor is it an {} command: {}", word, std::strerror(ENOENT),
                                          app.get_name(), did_you_mean(near)));
}

}  // namespace

void throw_usage_error(const CLI::App& app, const CLI::ParseError& e, int argc, char** argv) {
  const std::string see = fmt::format(" (see {} --help)", app.get_name());
  if (dynamic_cast<const CLI::ExtrasError*>(&e) || dynamic_cast<const CLI::RequiredError*>(&e)) {
    if (std::optional<std::string> unknown = unknown_name(app, argc, argv))
      throw Error(Code::invalid_selection, *unknown + see);
    // No subcommand at all where one is required: the commands there are.
    if (app.get_require_subcommand_min() > 0 && app.get_subcommands().empty()) {
      std::string names;
      for (const CLI::App* sub : app.get_subcommands([](const CLI::App*) { return true; }))
        names += (names.empty() ? "" : ", ") + sub->get_name();
      throw Error(Code::invalid_selection, fmt::format("{} needs a command: {}{}", app.get_name(), names, see));
    }
  }
  throw Error(Code::invalid_selection, e.what() + see);
}

namespace {

// Thrown by --params of an executable without a stage, before CLI11 asks for its command.
struct ParamsRequested {};

}  // namespace

nlohmann::ordered_json commands_params_json(const CLI::App& app, const std::string& name) {
  nlohmann::ordered_json out = ParamTable{name, {}}.to_json();
  out["options"] = options_json(app);
  out["commands"] = nlohmann::ordered_json::array();
  for (const CLI::App* sub : app.get_subcommands([](const CLI::App*) { return true; }))
    out["commands"].push_back(
        {{"name", sub->get_name()}, {"doc", sub->get_description()}, {"options", options_json(*sub)}});
  return out;
}

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
  if (!exe.stage) {
    app.require_subcommand(1);
    app.add_flag_callback("--params", [] { throw ParamsRequested{}; },
                          "print the options of the executable and of each of its commands as JSON and exit");
  }
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
      throw_usage_error(app, e, argc, argv);
    } catch (const ParamsRequested&) {
      write_output("-", commands_params_json(app, exe.name).dump(2) + "\n");
      return 0;
    }
    int status = -1;
    for (auto& [c, sub] : commands)
      if (status < 0 && sub->parsed()) status = c->run(common);
    if (status < 0 && tools)
      if (std::optional<int> done = tools->run(common, envelope_on_stdout)) status = *done;
    if (status < 0 && tools) refuse_missing_command_word(app, stage_args);
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
