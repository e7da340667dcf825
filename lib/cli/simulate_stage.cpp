#include "cli/stages.hpp"

#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <cmath>
#include <memory>

#include "cli/stage_util.hpp"
#include "cli/values.hpp"
#include "core/error.hpp"
#include "core/file.hpp"
#include "export/export.hpp"
#include "robot/simulate.hpp"

namespace sv {

std::string scene_report(const Scene& s) {
  auto n = count_by_type(s);
  const json& m = s.metrics;
  auto num = [&](const char* k) { return m.is_object() && m.contains(k) ? m[k].get<double>() : 0.0; };
  std::string out;
  out += fmt::format("drawing      {}  {}x{} px, stroke width {:.1f} px\n", s.source ? s.source->path : "-",
                     s.source ? s.source->width : 0, s.source ? s.source->height : 0,
                     s.source ? s.source->stroke_width_px : 0.0);
  auto count = [](long k, const char* one, const char* many) {
    return fmt::format("{} {}", k, k == 1 ? one : many);
  };
  out += fmt::format("primitives   {} ({}, {}, {})\n", s.primitives ? s.primitives->size() : 0,
                     count(n["line"], "line", "lines"), count(n["arc"], "arc", "arcs"),
                     count(n["circle"], "circle", "circles"));
  out += fmt::format("strokes      {}, {}\n",
                     count(static_cast<long>(num("strokes")), "pen-down stroke", "pen-down strokes"),
                     count(static_cast<long>(num("pen_up_moves")), "pen-up move", "pen-up moves"));
  if (s.robot && s.robot->plotter())  // a plotter does not turn; its pen lifts and drops take time
    out += fmt::format("robot        plotter, {:.1f} s to draw at {:.0f} mm ({:.1f} s drawing, {:.1f} s travel, "
                       "{:.1f} s lifting and dropping the pen)\n",
                       num("draw_time_s"), s.robot->footprint_mm, num("pen_down_time_s"), num("pen_up_travel_time_s"),
                       num("pen_time_s"));
  else
    out += fmt::format("robot        {:.1f} s to draw at {:.0f} mm ({:.1f} s drawing, {:.1f} s travel, {:.1f} s turning)\n",
                       num("draw_time_s"), s.robot ? s.robot->footprint_mm : 0.0, num("pen_down_time_s"),
                       num("pen_up_travel_time_s"), num("spin_time_s"));
  out += fmt::format("commands     {}\n", s.commands ? s.commands->size() : 0);
  out += fmt::format("revision     {}\n", s.revision.id.empty() ? "-" : s.revision.id.substr(0, 12));
  return out;
}

namespace {

// A finite number, positive or at least 0, or one of `words`.
CLI::Validator number_check(bool positive, std::vector<std::string> words) {
  return CLI::Validator(
      [positive, words](std::string& value) -> std::string {
        for (const std::string& w : words)
          if (value == w) return "";
        size_t used = 0;
        double v = NAN;
        try {
          v = std::stod(value, &used);
        } catch (const std::exception&) {
        }
        const std::string or_words = words.empty() ? "" : fmt::format(" (or {})", fmt::join(words, ", "));
        if (used != value.size() || !std::isfinite(v)) return fmt::format("'{}' is not a number{}", value, or_words);
        if (positive ? v > 0 : v >= 0) return "";
        return fmt::format("{} is out of range: it must be {}{}", value, positive ? "positive" : "at least 0", or_words);
      },
      "");
}

}  // namespace

Stage simulate_stage() {
  struct Opts {
    bool trace = false, report = false;
    double pen_time_s = -1;
    std::map<std::string, std::string> paths;  // backend name -> file ("": not written)
    ExportSettings settings;                   // the backends' value options
    std::map<std::string, bool> switches;      // ... and their switches
  };
  auto o = std::make_shared<Opts>();
  Stage st;
  st.name = "sv-simulate";
  st.summary = "Replay the command stream through the robot's motion model; time it and draw it";
  // Exports say where and how side files are written, not what is computed: the same drawing
  // exported anywhere is the same revision.
  for (const ExportBackend& b : export_backends()) {
    st.location_options[b.option] = true;
    for (const ExportOption& x : b.options) st.location_options[x.flag] = !x.is_switch;
  }
  st.location_options["--report"] = false;  // what is printed, not what is simulated
  st.add_options = [o](CLI::App& app) {
    app.add_flag("--trace", o->trace, "add each step's pose samples to the simulation");
    app.add_flag("--report", o->report, "print a one-screen summary on standard error");
    check_number(app.add_option("--pen-time", o->pen_time_s,
                                "seconds per pen lift or drop (default: robot.pen_time_s of the scene)"),
                 at_least(0));
    for (const ExportBackend& b : export_backends()) {
      app.add_option(b.option, o->paths[b.name], b.help);
      for (const ExportOption& x : b.options) {
        if (x.is_switch) {
          app.add_flag(x.flag, o->switches[x.flag], x.help);
          continue;
        }
        std::string& value = o->settings[x.flag] = x.value;
        CLI::Option* opt = app.add_option(x.flag, value, x.help)->capture_default_str();
        if (x.positive_number || x.non_negative_number) {
          // A number (a length in any unit it takes, its unit in its name: --...-mm), or a number
          // or one of the words ("auto").
          if (x.choices.empty())
            check_number(opt->type_name("FLOAT"), x.positive_number ? positive() : at_least(0));
          else
            opt->type_name(fmt::format("{}|FLOAT", fmt::join(x.choices, "|")))
                ->check(number_check(x.positive_number, x.choices));
          continue;
        }
        if (!x.choices.empty()) check_choice(opt, x.choices);
        else accept_length_units(opt);
      }
    }
  };
  st.run = [o](StageInput& in, Scene& out) -> json {
    if (!out.commands) throw Error(Code::invalid_scene, "the scene has no commands (run sv-route first)");
    drop_downstream_of_route(out);
    if (o->pen_time_s >= 0 && out.robot) out.robot->pen_time_s = o->pen_time_s;
    simulate(out, SimulateOptions{o->trace});
    json images = json::object();
    ExportSettings settings = o->settings;
    for (const auto& [flag, given] : o->switches) settings[flag] = given ? "true" : "false";
    for (const ExportBackend& b : export_backends()) {
      const std::string& path = o->paths[b.name];
      if (path.empty()) continue;
      write_output_file(path, b.write(ExportInput{out, in.store}, settings));
      images[b.name] = path;
    }
    return {{"llm_text", fmt::format("simulate: {:.1f} s, {} pen-up moves", out.metrics.value("draw_time_s", 0.0),
                                     out.metrics.value("pen_up_moves", 0))},
            {"metrics", out.metrics},
            {"images", images}};
  };
  st.finish = [o](const Scene& s) {
    if (o->report) std::fputs(scene_report(s).c_str(), stderr);
  };
  st.side_outputs = [o] {
    if (o->report) return true;
    for (const auto& [name, path] : o->paths)
      if (!path.empty()) return true;
    return false;
  };
  st.batch = true;
  st.check_batch = [o] {
    for (const ExportBackend& b : export_backends())
      if (!o->paths[b.name].empty())
        throw Error(Code::invalid_selection, fmt::format("{} names one file: batch mode (--output-dir) writes scenes "
                                                         "only; export each drawing on its own",
                                                         b.option));
    if (o->report) throw Error(Code::invalid_selection, "--report summarises one drawing: not with --output-dir");
  };
  return st;
}

}  // namespace sv
