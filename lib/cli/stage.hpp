// The shared shell of the pipeline executables. A stage is one registered entry — name,
// one-line description, its options, its handler — and run_stage_main gives it the rest:
// filter mode (scene on stdin, scene on stdout, revision recorded when a store is present),
// store mode (--rev REV: scene from the store, result envelope on stdout), common options,
// batch mode for stages that offer it, --help, --params (its parameter table as JSON), and the
// error contract (one line on stderr, exit status from the code).
#pragma once
#include <CLI/CLI.hpp>
#include <functional>
#include <map>
#include <optional>
#include <string>

#include "core/params.hpp"
#include "core/scene.hpp"

namespace sv {

struct StageInput {
  std::string bytes;       // the raw input (image bytes for sv-skeleton), empty in store mode
  std::string path = "-";  // as given on the command line
  Scene scene;             // the parsed input scene (or the stored revision)
  class Store* store = nullptr;  // the store, when one is in use
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
};

// Parses "KEY=VALUE" settings (--set) into user overrides; refuses non-numeric values.
std::map<std::string, double> parse_settings(const std::vector<std::string>& settings);

int run_stage_main(int argc, char** argv, const Stage& stage);

// Parses the command line; on --help/--version or a usage error returns the exit status
// (0, or 2 with one line on stderr), otherwise nullopt.
std::optional<int> parse_command_line(CLI::App& app, int argc, char** argv);

// Writes text to stdout ("" or "-") or to a file, atomically (write_file_atomic).
void write_output(const std::string& path, const std::string& text);

// Reads all of stdin or a file (refusing more than `limit` bytes) into memory.
std::string read_input(const std::string& path, size_t limit);

// Runs `body` under the error contract: sv::Error -> its exit status, std::bad_alloc and other
// exceptions -> internal (6); prints "PROG: CODE: message" on stderr, and the JSON envelope on
// stdout when `envelope_on_stdout` is set. The flag is read when the failure happens, so `body`
// may set it once it knows the mode (store mode prints the envelope; in filter mode stdout is
// the next stage's input and stays empty).
int guarded(const std::string& prog, const bool& envelope_on_stdout, const std::function<int()>& body);

}  // namespace sv
