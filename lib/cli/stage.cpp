#include "cli/stage.hpp"

#include <fmt/format.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <iostream>
#include <iterator>
#include <new>

#include "core/error.hpp"
#include "core/hash.hpp"
#include "store/store.hpp"

namespace sv {

namespace {

constexpr size_t kMaxInputBytes = size_t(1) << 30;  // 1 GiB: far above any real scene or PNG

// Options that say where things go, not what is computed: left out of revision.args so the
// same work gives the same revision id wherever it runs.
bool is_location_option(const std::string& a) {
  return a == "--store" || a == "--no-store" || a == "-o" || a == "--output" || a == "--png" ||
         a == "--svg" || a == "-v" || a == "--verbose";
}

json recorded_args(int argc, char** argv) {
  json args = json::array();
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    std::string flag = a.substr(0, a.find('='));
    if (is_location_option(flag)) {
      bool takes_value = flag != "--no-store" && flag != "-v" && flag != "--verbose";
      if (takes_value && a.find('=') == std::string::npos) ++i;
      continue;
    }
    args.push_back(a);
  }
  return args;
}


}  // namespace

void write_output(const std::string& path, const std::string& text) {
  if (path.empty() || path == "-") {
    std::fwrite(text.data(), 1, text.size(), stdout);
    if (std::fflush(stdout) != 0) throw Error(Code::io_error, "cannot write to standard output");
    return;
  }
  std::string tmp = path + ".tmp";
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    if (!out) throw Error(Code::io_error, "cannot write " + path);
    out << text;
    if (!out.flush()) throw Error(Code::io_error, "cannot write " + path);
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) throw Error(Code::io_error, "cannot write " + path);
}

std::map<std::string, double> parse_settings(const std::vector<std::string>& settings) {
  std::map<std::string, double> out;
  for (const auto& s : settings) {
    auto eq = s.find('=');
    if (eq == std::string::npos || eq == 0)
      throw Error(Code::invalid_selection, fmt::format("--set expects KEY=VALUE, got '{}'", s));
    std::string key = s.substr(0, eq), val = s.substr(eq + 1);
    char* end = nullptr;
    double v = std::strtod(val.c_str(), &end);
    if (val.empty() || *end != '\0' || !std::isfinite(v))
      throw Error(Code::invalid_selection, fmt::format("--set {}: '{}' is not a finite number", key, val));
    out[key] = v;
  }
  return out;
}

std::string read_input(const std::string& path, size_t limit) {
  std::string data;
  FILE* f = path == "-" ? stdin : std::fopen(path.c_str(), "rb");
  if (!f) throw Error(Code::io_error, fmt::format("cannot open {}", path));
  char buf[1 << 16];
  size_t n;
  while ((n = std::fread(buf, 1, sizeof buf, f)) > 0) {
    data.append(buf, n);
    if (data.size() > limit) {
      if (f != stdin) std::fclose(f);
      throw Error(Code::io_error, fmt::format("{}: input larger than {} bytes", path, limit));
    }
  }
  bool failed = std::ferror(f);
  if (f != stdin) std::fclose(f);
  if (failed) throw Error(Code::io_error, fmt::format("cannot read {}", path));
  return data;
}

int guarded(const std::string& prog, bool envelope_on_stdout, const std::function<int()>& body) {
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

std::optional<int> parse_command_line(CLI::App& app, int argc, char** argv) {
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    std::fprintf(stderr, "%s: usage: %s (see --help)\n", app.get_name().c_str(), e.what());
    return 2;
  }
  return std::nullopt;
}

int run_stage_main(int argc, char** argv, const Stage& stage) {
  CLI::App app{stage.summary, stage.name};
  app.set_version_flag("--version", std::string(SV_VERSION));
  std::string input = "-", output, rev, note;
  std::optional<std::string> store_flag;
  bool no_store = false;
  app.add_option("input", input, stage.reads_png ? "PNG file, or - for standard input" : "scene file, or - for standard input");
  app.add_option("-o,--output", output, "write the scene here instead of standard output");
  app.add_option("--store", store_flag, "revision store (default: $SV_STORE, else the nearest .svrev upward)");
  app.add_flag("--no-store", no_store, "do not record the revision in a store");
  app.add_option("--rev", rev, "store mode: read this revision (HEAD, a branch, an id or a unique prefix), "
                               "record the result and print the tool envelope");
  app.add_option("--note", note, "a note kept with the revision");
  if (stage.add_options) stage.add_options(app);
  if (auto status = parse_command_line(app, argc, argv)) return *status;
  const bool store_mode = !rev.empty();
  return guarded(stage.name, store_mode, [&]() -> int {
    if (store_mode && no_store) throw Error(Code::invalid_selection, "--rev needs a store; --no-store contradicts it");
    std::optional<Store> store;
    if (!no_store)
      if (auto root = Store::locate(store_flag)) store.emplace(*root);
    if (store_mode && !store) throw Error(Code::not_found, "--rev needs a store and none was found (sv-commit init)");

    StageInput in;
    in.store = store ? &*store : nullptr;
    std::string expected_head, parent;
    if (store_mode) {
      expected_head = store->head_id();
      parent = store->resolve(rev);
      in.scene = store->read_scene(parent);
      in.path = "rev:" + parent;
      if (stage.reads_png) {
        if (!in.scene.source) throw Error(Code::invalid_scene, "revision has no source image to re-read");
        in.bytes = store->read_object(in.scene.source->sha256);
        in.path = in.scene.source->path;
      }
    } else {
      in.path = input;
      in.bytes = read_input(input, kMaxInputBytes);
      if (!stage.reads_png) {
        in.scene = parse_scene(in.bytes);
        parent = sha256_hex(canonical_bytes(in.scene));
      }
    }

    Scene out = in.scene;
    out.warnings.clear();
    json result = stage.run(in, out);
    out.revision = RevisionInfo{};
    out.revision.parent = parent;
    out.revision.tool = stage.name;
    out.revision.args = recorded_args(argc, argv);
    out.revision.note = note;

    if (store) {
      if (stage.reads_png && !in.bytes.empty()) store->put_blob(in.bytes);
      std::string id = store->put_scene(out);
      if (!store_mode) expected_head = store->head_id();
      std::string why = stage.name + (note.empty() ? "" : ": " + note);
      store->advance_head(expected_head, id, why);
    } else {
      assign_revision_id(out);
    }

    if (store_mode) {
      if (!output.empty()) write_output(output, dump_scene(out));
      json env = {{"ok", true}, {"tool", stage.name}, {"revision_id", out.revision.id},
                  {"parent_revision_id", parent}, {"warnings", out.warnings}};
      for (auto it = result.begin(); it != result.end(); ++it) env[it.key()] = it.value();
      if (!env.contains("human_text")) env["human_text"] = env.value("llm_text", "");
      write_output("-", env.dump() + "\n");
    } else {
      write_output(output, dump_scene(out));
    }
    if (stage.finish) stage.finish(out);
    for (const auto& w : out.warnings) std::fprintf(stderr, "%s: warning: %s\n", stage.name.c_str(), w.c_str());
    return 0;
  });
}

}  // namespace sv
