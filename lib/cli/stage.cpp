#include "cli/stage.hpp"

#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <iterator>
#include <new>
#include <vector>

#include "cli/progress.hpp"
#include "cli/shell.hpp"
#include "cli/values.hpp"
#include "core/error.hpp"
#include "core/file.hpp"
#include "core/hash.hpp"
#include "core/messages.hpp"
#include "core/scene_check.hpp"
#include "store/store.hpp"

namespace sv {

namespace {

// Options that say where things go, not what is computed: left out of revision.args, with the
// input paths, so the same work gives the same revision id wherever it runs and whether one
// drawing or a batch is processed. Sets `takes_value` for one that is.
bool is_location_option(const Stage& stage, const std::string& a, bool& takes_value) {
  if (auto it = stage.location_options.find(a); it != stage.location_options.end()) {
    takes_value = it->second;
    return true;
  }
  takes_value = a != "--no-store" && a != "-q" && a != "--quiet";
  return a == "--store" || a == "--no-store" || a == "-o" || a == "--output" || a == "--output-dir" ||
         a == "--timings" || a == "-q" || a == "--quiet";
}

json recorded_args(const Stage& stage, int argc, char** argv, const std::vector<std::string>& inputs) {
  json args = json::array();
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    std::string flag = a.substr(0, a.find('='));
    bool takes_value = false;
    if (is_location_option(stage, flag, takes_value)) {
      if (takes_value && a.find('=') == std::string::npos) ++i;
      continue;
    }
    if (std::find(inputs.begin(), inputs.end(), a) != inputs.end()) continue;
    args.push_back(a);
  }
  return args;
}

}  // namespace

std::map<std::string, double> parse_settings(const std::vector<std::string>& settings) {
  std::map<std::string, double> out;
  for (const auto& s : settings) {
    auto eq = s.find('=');
    if (eq == std::string::npos || eq == 0)
      throw Error(Code::invalid_selection, fmt::format("--set expects KEY=VALUE, got '{}'", s));
    std::string key = s.substr(0, eq), val = s.substr(eq + 1);
    // A length in its key's unit (fit.tolerance_px=2px, a *_mm key in mm, cm or in).
    out[key] = parse_number(val, length_unit_of(key), "--set " + key);
  }
  return out;
}

int guarded(const std::string& prog, const bool& envelope_on_stdout, const std::function<int()>& body) {
  auto fail = [&](const Error& e) {
    std::string msg = e.what();
    for (char& c : msg)
      if (c == '\n') c = ' ';
    std::fprintf(stderr, "%s: %s: %s\n", prog.c_str(), code_name(e.code()), msg.c_str());
    if (envelope_on_stdout) std::printf("%s\n", e.envelope().dump().c_str());
    std::fflush(stdout);
    return exit_status(e.code());
  };
  try {
    return body();
  } catch (const Error& e) {
    return fail(e);
  } catch (const std::bad_alloc&) {
    return fail(Error(Code::internal, "out of memory"));
  } catch (const std::exception& e) {
    return fail(Error(Code::internal, e.what()));
  }
}

namespace {

// The stage's work on one input: the new scene, its revision fields filled but not its id.
Scene transform(const Stage& stage, StageInput& in, const std::string& parent, const json& args,
                const std::string& note, json& result) {
  Scene out = in.scene;
  out.warnings.clear();
  result = stage.run(in, out);
  out.revision = RevisionInfo{};
  out.revision.parent = parent;
  out.revision.tool = stage.name;
  out.revision.args = args;
  out.revision.note = note;
  return out;
}

// Reads a file (or stdin) as the stage's input; returns the parent revision id of a scene.
std::string read_stage_input(const Stage& stage, const std::string& path, StageInput& in) {
  in.path = path;
  in.bytes = read_input(path, stage.reads_image ? kMaxImageFileBytes : kMaxSceneBytes);
  if (stage.reads_image) return "";
  refuse_image_as_scene(in.bytes, path, stage.name);
  in.scene = parse_scene(in.bytes);
  return revision_id_of(in.scene, in.bytes);
}

void print_warnings(const Stage& stage, const std::string& where, const Scene& s) {
  for (const auto& w : s.warnings) std::fprintf(stderr, "%s: %swarning: %s\n", stage.name.c_str(), where.c_str(), w.c_str());
}

// DIR/NAME.json for input NAME.png, NAME.jpg (any extension) or NAME.json (or NAME).
std::string batch_output(const std::string& dir, const std::string& input) {
  std::string name = input.substr(input.find_last_of('/') + 1);
  auto dot = name.find_last_of('.');
  if (dot != std::string::npos && dot > 0) name.resize(dot);
  return dir + "/" + name + ".json";
}

// Batch mode: every input in turn, in one process. A failing input is reported (its path in
// the message) and skipped; the exit status is that of the first failure reported. The count of
// inputs done is the progress line; with `timings`, each input's wall time goes to that file.
int run_batch(const Stage& stage, const StageArgs& batch, const json& args, const std::string& note, bool quiet) {
  const std::vector<std::string>& inputs = batch.inputs;
  const std::string& dir = batch.output_dir;
  std::map<std::string, std::string> outputs;
  for (const auto& path : inputs) {
    if (path == "-") throw Error(Code::invalid_selection, "batch mode reads files, not standard input");
    auto [it, fresh] = outputs.emplace(batch_output(dir, path), path);
    if (!fresh)
      throw Error(Code::invalid_selection, fmt::format("{} and {} would both write {}", it->second, path, it->first),
                  {{"output", it->first}});
  }
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) throw Error(Code::io_error, fmt::format("cannot create {}: {}", dir, ec.message()));
  int status = 0;
  Progress progress(stage.name, quiet);
  struct Row {
    double seconds;
    bool ok;
  };
  std::vector<Row> rows;
  // A scene's file is written while the next input is worked on; a write that failed is
  // reported, by its input's name, once it is known.
  BackgroundWriter writer;
  auto report_writes = [&](bool wait) {
    for (const auto& [i, failure] : writer.failures(wait)) {
      rows[i].ok = false;
      progress.clear();
      int s = guarded(stage.name, false, [&, failure = failure, i = i]() -> int {
        try {
          std::rethrow_exception(failure);
        } catch (const Error& e) {
          throw Error(e.code(), inputs[i] + ": " + e.what(), e.details());
        } catch (const std::exception& e) {
          throw Error(Code::internal, inputs[i] + ": " + e.what());
        }
      });
      if (status == 0) status = s;
    }
  };
  for (size_t i = 0; i < inputs.size(); ++i) {
    const std::string& path = inputs[i];
    const auto t0 = std::chrono::steady_clock::now();
    int s = guarded(stage.name, false, [&]() -> int {
      try {
        StageInput in;
        std::string parent = read_stage_input(stage, path, in);
        json result;
        Scene out = transform(stage, in, parent, args, note, result);
        writer.put(i, batch_output(dir, path), sealed_scene_text(out), NameSync::by_caller);
        if (!out.warnings.empty()) progress.clear();
        print_warnings(stage, path + ": ", out);
      } catch (const Error& e) {
        progress.clear();
        throw Error(e.code(), path + ": " + e.what(), e.details());
      } catch (...) {
        progress.clear();
        throw;
      }
      return 0;
    });
    if (s != 0 && status == 0) status = s;
    const std::chrono::duration<double> took = std::chrono::steady_clock::now() - t0;
    rows.push_back({took.count(), s == 0});
    report_writes(false);
    progress.update(fmt::format("{}/{} drawings", i + 1, inputs.size()));
  }
  report_writes(true);
  fsync_directory(dir);  // every scene's name at once (NameSync::by_caller)
  if (!batch.timings.empty()) {
    std::string timings = "input\tseconds\tstatus\n";
    for (size_t i = 0; i < rows.size(); ++i)
      timings += fmt::format("{}\t{:.6f}\t{}\n", inputs[i], rows[i].seconds, rows[i].ok ? "ok" : "failed");
    write_output_file(batch.timings, timings);
  }
  return status;
}

}  // namespace

void add_stage_options(CLI::App& app, const Stage& stage, CommonOptions& common, StageArgs& args) {
  std::string what = stage.reads_image ? "image file" : "scene file";
  std::string kinds = stage.reads_image ? "PNG, JPEG, TIFF, BMP, WebP" : "";
  std::string sep = kinds.empty() ? "" : "; ";
  app.add_option("input", args.inputs,
                 stage.batch ? what + "s (" + kinds + sep + "several with --output-dir), or - for standard input"
                             : what + (kinds.empty() ? "" : " (" + kinds + ")") + ", or - for standard input");
  if (stage.batch)
    app.add_option("--output-dir", args.output_dir,
                   "batch mode: process every input in one run, writing DIR/NAME.json for NAME.png, "
                   "NAME.jpg (any image) or NAME.json; records nothing in a store");
  if (stage.batch)
    app.add_option("--timings", args.timings,
                   "batch mode: write each input's wall time to FILE (tab-separated: input, seconds, ok or failed)");
  add_common_options(app, common, opt::store | opt::rev | opt::note | opt::output | opt::quiet);
  app.add_flag("--params", args.print_params, "print the stage's parameters (key, type, default or derivation, "
                                              "limits, unit, doc) and its options as JSON and exit");
  if (stage.add_options) stage.add_options(app);
  args.app = &app;
}

nlohmann::ordered_json options_json(const CLI::App& app) {
  nlohmann::ordered_json out = nlohmann::ordered_json::array();
  for (const CLI::Option* o : app.get_options()) {
    const std::string name = o->get_name();
    if (name == "--help" || name == "--version" || name == "--params") continue;
    const bool flag = o->get_expected_min() == 0;
    const std::string def = o->get_default_str();
    out.push_back({{"name", name},
                   {"type", flag ? "flag" : o->get_type_name()},
                   {"default", def.empty() ? nlohmann::ordered_json(nullptr) : nlohmann::ordered_json(def)},
                   {"doc", o->get_description()}});
  }
  return out;
}

namespace {

// --params: the stage's thresholds (its parameter table) and every option of its command line.
nlohmann::ordered_json params_json(const Stage& stage, const CLI::App* app) {
  const ParamTable none{stage.name, {}};
  nlohmann::ordered_json out = (stage.params ? *stage.params : none).to_json();
  out["options"] = app ? options_json(*app) : nlohmann::ordered_json::array();
  return out;
}

// In place of a scene bound for a terminal: what the stage did, the files it wrote, the
// revision it recorded, and how to get the scene.
std::string terminal_summary(const Stage& stage, const json& result, const Scene& out) {
  std::string files;
  const json images = result.value("images", json::object());
  for (const auto& image : images.items()) files += (files.empty() ? "; wrote " : ", ") + image.value().get<std::string>();
  return fmt::format("{}{}{}; the scene is not shown on a terminal (-o FILE or a pipe gets it)\n",
                     result.value("llm_text", stage.name), files,
                     out.revision.id.empty() ? "" : "; recorded " + out.revision.id.substr(0, 12));
}

}  // namespace

int run_stage(const Stage& stage, const StageArgs& args, const CommonOptions& common, int argc, char** argv) {
  if (args.print_params) {
    write_output("-", params_json(stage, args.app).dump(2) + "\n");
    return 0;
  }
  const std::vector<std::string>& inputs = args.inputs;
  const std::string& output = common.output;
  const std::string& note = common.note;
  const bool store_mode = !common.rev.empty();
  if (!args.timings.empty() && args.output_dir.empty())
    throw Error(Code::invalid_selection, "--timings reports a batch: it needs --output-dir");
  if (!args.output_dir.empty()) {
    if (store_mode || !output.empty())
      throw Error(Code::invalid_selection, "--output-dir writes one file per input; it excludes --rev and -o");
    if (inputs.empty()) throw Error(Code::invalid_selection, "--output-dir needs input files");
    if (stage.check_batch) stage.check_batch();
    return run_batch(stage, args, recorded_args(stage, argc, argv, inputs), note, common.quiet);
  }
  if (inputs.size() > 1)
    throw Error(Code::invalid_selection,
                stage.batch ? "several inputs need --output-dir (batch mode)" : "one input at a time");
  std::optional<Store> store = open_store(common);

  StageInput in;
  in.store = store ? &*store : nullptr;
  in.quiet = common.quiet;
  std::string expected_head, parent;
  if (store_mode) {
    parent = store->resolve(common.rev);
    expected_head = parent;
    store->require_head(parent);
    in.scene = store->read_scene(parent);
    in.path = "rev:" + parent;
    if (stage.reads_image) {
      if (!in.scene.source) throw Error(Code::invalid_scene, "revision has no source image to re-read");
      in.bytes = store->read_object(in.scene.source->sha256);
      in.path = in.scene.source->path;
    }
  } else {
    parent = read_stage_input(stage, inputs.empty() ? "-" : inputs[0], in);
    if (store) expected_head = store->head_id();  // an input file's result goes on top of HEAD
  }

  json result;
  Scene out = transform(stage, in, parent, recorded_args(stage, argc, argv, inputs), note, result);

  std::string text;  // the new scene as written
  std::vector<std::string> warnings = out.warnings;  // and the store's (not part of the scene)
  if (store) {
    if (stage.reads_image && !in.bytes.empty()) store->put_blob(in.bytes);
    store->record(out, expected_head, stage.name + (note.empty() ? "" : ": " + note));
    for (const auto& w : store->take_warnings()) {
      warnings.push_back(w);
      std::fprintf(stderr, "%s: warning: %s\n", stage.name.c_str(), w.c_str());
    }
    if (!store_mode || !output.empty()) text = dump_scene(out);  // only what is written below
  } else {
    text = sealed_scene_text(out);
  }

  if (store_mode) {
    if (!output.empty()) write_after_commit(output, text, out.revision.id);
    json env = {{"ok", true}, {"tool", stage.name}, {"revision_id", out.revision.id},
                {"parent_revision_id", parent}, {"warnings", warnings}};
    for (auto it = result.begin(); it != result.end(); ++it) env[it.key()] = it.value();
    if (!env.contains("human_text")) env["human_text"] = env.value("llm_text", "");
    write_output("-", env.dump() + "\n");
  } else if ((output.empty() || output == "-") && stage.side_outputs && stage.side_outputs() &&
             ::isatty(STDOUT_FILENO) == 1) {
    write_output("-", terminal_summary(stage, result, out));
  } else if (store) {
    write_after_commit(output, text, out.revision.id);
  } else {
    write_output(output, text);
  }
  if (stage.finish) stage.finish(out);
  print_warnings(stage, "", out);
  return 0;
}

}  // namespace sv
