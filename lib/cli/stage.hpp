// The pipeline stages. A stage is one registered entry — name, one-line description, its
// options, its handler — and run_stage, called by the shell (cli/shell.hpp), gives it the rest:
// filter mode (scene on stdin, scene on stdout, revision recorded when a store is present),
// store mode (--rev REV: scene from the store, result envelope on stdout), common options,
// batch mode for stages that offer it, --help, --params (its parameter table as JSON), and the
// error contract (one line on stderr, exit status from the code).
#pragma once
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "core/params.hpp"
#include "core/scene.hpp"
#include "session/output.hpp"

namespace CLI {
class App;  // by name only, as in cli/shell.hpp
}

namespace sv {

struct StageInput {
  std::string bytes;       // the raw input (image bytes for sv-skeleton), empty in store mode
  std::string path = "-";  // as given on the command line
  Scene scene;             // the parsed input scene (or the stored revision)
  class Store* store = nullptr;  // the store, when one is in use
  // No progress line of the stage's own: -q, or batch mode, whose line counts the inputs.
  bool quiet = true;
};

struct Stage {
  std::string name;     // executable name, e.g. "sv-fit"
  std::string summary;  // one line for --help and the man page
  bool reads_image = false;  // the input is a raster (decode_image), not a scene
  // Offers batch mode (--output-dir DIR, any number of inputs): one process for many drawings,
  // each written to DIR/NAME.json, nothing recorded in a store.
  bool batch = false;
  // Its parameters (--set keys and recorded settings), printed by --params; none when null.
  const ParamTable* params = nullptr;
  // Its options that say where side outputs go and how they are written, not what is computed
  // (flag -> takes a value): left out of revision.args like --output.
  std::map<std::string, bool> location_options;
  // Declares the stage's own options on the app (values captured by the closures).
  std::function<void(CLI::App&)> add_options;
  // Produces the new scene from the input; returns the tool result's typed fields, including
  // "llm_text" (one compact line).
  std::function<json(StageInput&, Scene&)> run;
  // Optional: runs once the new revision is recorded (side outputs that name the revision).
  std::function<void(const Scene&)> finish;
  // Optional: refuses, before any input is read, the options batch mode cannot honour.
  std::function<void()> check_batch;
  // Optional: whether what was asked goes elsewhere (an export, a report). Then, as gzip will not
  // write to a terminal, a scene bound for a terminal is replaced by a one-line summary there.
  std::function<bool()> side_outputs;
};

// Parses "KEY=VALUE" settings (--set) into user overrides; refuses non-numeric values.
std::map<std::string, double> parse_settings(const std::vector<std::string>& settings);

struct CommonOptions;

// What the stage's own command line gives besides the shared options.
struct StageArgs {
  std::vector<std::string> inputs;
  std::string output_dir;
  std::string timings;        // --timings FILE (batch mode)
  bool print_params = false;  // --params
  const CLI::App* app = nullptr;  // where the options are declared (what --params lists)
};
// Declares the stage's input, its batch option, the shared options a stage takes and its own.
void add_stage_options(CLI::App& app, const Stage& stage, CommonOptions& common, StageArgs& args);
// What --params lists of a command line: each option of `app` (not --help, --version, --params)
// with its type, default and doc, as --help declares them.
nlohmann::ordered_json options_json(const CLI::App& app);
// Runs the parsed stage (argv: for the revision's recorded arguments); 0 or throws sv::Error.
int run_stage(const Stage& stage, const StageArgs& args, const CommonOptions& common, int argc, char** argv);

// Runs `body` under the error contract: sv::Error -> its exit status, std::bad_alloc and other
// exceptions -> internal (6); prints "PROG: CODE: message" on stderr, and the JSON envelope on
// stdout when `envelope_on_stdout` is set. The flag is read when the failure happens, so `body`
// may set it once it knows the mode (store mode prints the envelope; in filter mode stdout is
// the next stage's input and stays empty).
int guarded(const std::string& prog, const bool& envelope_on_stdout, const std::function<int()>& body);

}  // namespace sv
