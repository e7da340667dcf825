// The one command-line shell of every sv executable (CLI11). The options executables share are
// declared here once, with one name and one meaning everywhere; an executable is its stage (the
// top level of sv-skeleton, sv-fit, sv-route, sv-simulate), its registered tools (one subcommand
// each, options generated from the request schema: cli/tool_shell.hpp) and its housekeeping
// commands (sv-commit init, log, ...), all in one app: one --help, one usage error format, one
// error contract.
#pragma once
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "session/options.hpp"

// CLI11 only by name: its header costs a file that includes it 10 s of -O3 code generation.
namespace CLI {
class App;
class ParseError;
}

namespace sv {

struct Stage;

// The shared options (CommonOptions, session/options.hpp). Which of them a command offers is a
// set of flags.
namespace opt {
enum : unsigned {
  store = 1u << 0,     // --store, --no-store
  rev = 1u << 1,       // --rev
  note = 1u << 2,      // --note
  output = 1u << 3,    // -o, --output
  png = 1u << 4,       // --png
  embed = 1u << 5,     // --embed-images
  json = 1u << 6,      // --json
  oracle = 1u << 7,    // --oracle
  quiet = 1u << 8,     // -q, --quiet
};
}

// Declares the options named by `which` on `app`, bound to `o`.
void add_common_options(CLI::App& app, CommonOptions& o, unsigned which);

// A housekeeping subcommand: its options are declared on its own CLI11 subcommand.
struct ShellCommand {
  std::string name, summary;
  std::function<void(CLI::App&)> add_options;
  std::function<int(const CommonOptions&)> run;
  unsigned common = 0;  // which shared options it takes besides the executable's own
};

class ToolShell;

struct Executable {
  Executable(std::string n, std::string s, const Stage* st = nullptr)
      : name(std::move(n)), summary(std::move(s)), stage(st) {}
  std::string name, summary;
  const Stage* stage = nullptr;  // the top level runs this stage when no subcommand is named
  std::vector<ShellCommand> commands;
  unsigned common = 0;  // shared options of the top level (before any subcommand)
  // The tools it serves as subcommands: catalog_tools (cli/tool_shell.hpp), or none.
  std::unique_ptr<ToolShell> (*tools)(const std::string& executable) = nullptr;
};

// A command line CLI11 refused, as the contract's usage error (invalid_selection): a name that is
// not one of the command's — a subcommand, an option — with the closest ones suggested ("'lgo'
// is not an sv-commit command: did you mean log?"), else CLI11's own message; "(see PROG --help)".
[[noreturn]] void throw_usage_error(const CLI::App& app, const CLI::ParseError& e, int argc, char** argv);

// Parses argv against the executable (its stage, its tools, its commands) and runs what it
// names under the error contract; returns the exit status.
int run_main(int argc, char** argv, const Executable& exe);

// What --params prints for an executable without a stage: the shape a stage prints, with no
// parameters of its own, the executable's options and each of its commands'.
nlohmann::ordered_json commands_params_json(const CLI::App& app, const std::string& name);

}  // namespace sv
