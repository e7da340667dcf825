// Shell completion from the command line itself: the CLI11 app an executable parses with is
// walked (its subcommands, options, the choices an option takes where its type says them, and
// which values are files or directories) and written out as a bash completion script. Every
// executable prints its own with `--completion bash`; the build installs them.
#pragma once
#include <string>

namespace CLI {
class App;
}

namespace sv {

// The bash completion script for `app` (named by app.get_name()): defines _NAME and registers it
// with `complete -F` for that command.
std::string bash_completion(CLI::App& app);

// When argv is `PROGRAM --completion SHELL`: prints the script for `app` and returns the exit
// status (2 for a shell other than bash); otherwise nothing.
bool wants_completion(int argc, char** argv);
int print_completion(CLI::App& app, int argc, char** argv);

}  // namespace sv
