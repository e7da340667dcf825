#include "cli/stages.hpp"

#include <fmt/format.h>

#include <memory>

#include "cli/stage_util.hpp"
#include "core/error.hpp"
#include "core/hash.hpp"
#include "export/export.hpp"
#include "raster/image.hpp"
#include "raster/png.hpp"
#include "render/view.hpp"
#include "robot/simulate.hpp"
#include "store/store.hpp"

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
  out += fmt::format("robot        {:.1f} s to draw at {:.0f} mm ({:.1f} s drawing, {:.1f} s travel, {:.1f} s turning)\n",
                     num("draw_time_s"), s.robot ? s.robot->footprint_mm : 0.0, num("pen_down_time_s"),
                     num("pen_up_travel_time_s"), num("spin_time_s"));
  out += fmt::format("commands     {}\n", s.commands ? s.commands->size() : 0);
  out += fmt::format("revision     {}\n", s.revision.id.empty() ? "-" : s.revision.id.substr(0, 12));
  return out;
}

namespace {

// The source image for a view's underlay: the store's blob, else the file at source.path when
// its hash still matches; an empty Mat when neither is at hand.
cv::Mat source_underlay(const Scene& s, Store* store) {
  if (!s.source) return {};
  std::string bytes;
  if (store && store->has_object(s.source->sha256)) {
    bytes = store->read_object(s.source->sha256);
  } else if (s.source->path != "-" && fs::is_regular_file(s.source->path)) {
    bytes = read_input(s.source->path, size_t(1) << 28);
    if (sha256_hex(bytes) != s.source->sha256) return {};
  } else {
    return {};
  }
  return decode_image(bytes);
}

}  // namespace

Stage simulate_stage() {
  struct Opts {
    bool trace = false, report = false, pen_up = false, ids = false, no_source = false;
    std::string png, svg, color_by = "type";
    double pen_time_s = -1;
    std::string commands, gcode, gcode_units = "mm";
    GcodeOptions g;
    bool gcode_no_flip = false;
  };
  auto o = std::make_shared<Opts>();
  Stage st;
  st.name = "sv-simulate";
  st.summary = "Replay the command stream through the robot's motion model; time it and draw it";
  st.add_options = [o](CLI::App& app) {
    app.add_flag("--trace", o->trace, "add each step's pose samples to the simulation");
    app.add_flag("--report", o->report, "print a one-screen summary on standard error");
    app.add_option("--png", o->png, "write a view of what the robot draws (labelled grid) to this PNG file");
    app.add_option("--svg", o->svg, "write the drawing as SVG with true arcs to this file");
    app.add_option("--color-by", o->color_by, "colour of the PNG view's strokes")
        ->check(CLI::IsMember({"type", "order", "none"}))->capture_default_str();
    app.add_flag("--pen-up", o->pen_up, "draw pen-up travel, dashed, in the PNG view");
    app.add_flag("--ids", o->ids, "write primitive ids beside the primitives in the PNG view");
    app.add_flag("--no-source", o->no_source, "do not draw the source image under the PNG view");
    app.add_option("--pen-time", o->pen_time_s, "seconds per pen lift or drop (default: robot.pen_time_s of the scene)")
        ->check(CLI::NonNegativeNumber);
    app.add_option("--commands", o->commands,
                   "write the Doodlebot command stream {start, commands} (as the robot and the scorer read it) to this file");
    app.add_option("--gcode", o->gcode, "write the drawing as G-code for pen plotters to this file");
    app.add_option("--gcode-units", o->gcode_units, "G-code units: mm at the robot's scale, or px")
        ->check(CLI::IsMember({"mm", "px"}))->capture_default_str();
    app.add_option("--gcode-pen-up", o->g.pen_up, "G-code line that lifts the pen (e.g. \"G0 Z5\")")->capture_default_str();
    app.add_option("--gcode-pen-down", o->g.pen_down, "G-code line that lowers the pen (e.g. \"G1 Z0 F500\")")
        ->capture_default_str();
    app.add_option("--gcode-feed", o->g.feed, "G-code drawing feed rate, units per minute")
        ->capture_default_str()->check(CLI::PositiveNumber);
    app.add_flag("--gcode-no-flip", o->gcode_no_flip, "keep the image's y-down axis (the plot comes out mirrored)");
  };
  st.run = [o](StageInput& in, Scene& out) -> json {
    if (!out.commands) throw Error(Code::invalid_scene, "the scene has no commands (run sv-route first)");
    drop_downstream_of_route(out);
    if (o->pen_time_s >= 0 && out.robot) out.robot->pen_time_s = o->pen_time_s;
    simulate(out, SimulateOptions{o->trace});
    json images = json::object();
    if (!o->commands.empty()) {
      write_file(o->commands, doodlebot_stream_text(out));
      images["commands"] = o->commands;
    }
    if (!o->gcode.empty()) {
      GcodeOptions g = o->g;
      g.units = o->gcode_units == "px" ? GcodeOptions::Units::px : GcodeOptions::Units::mm;
      g.flip_y = !o->gcode_no_flip;
      write_file(o->gcode, gcode(out, g));
      images["gcode"] = o->gcode;
    }
    if (!o->png.empty()) {
      ViewOptions vo;
      vo.color_by = o->color_by == "order" ? ColorBy::draw_order
                    : o->color_by == "none" ? ColorBy::none
                                            : ColorBy::primitive_type;
      vo.pen_up = o->pen_up;
      vo.ids = o->ids;
      if (!o->no_source) vo.source = source_underlay(out, in.store);
      write_file(o->png, encode_png_rgb(render_view(out, vo)));
      images["view"] = o->png;
    }
    if (!o->svg.empty()) {
      write_file(o->svg, render_svg(out));
      images["svg"] = o->svg;
    }
    return {{"llm_text", fmt::format("simulate: {:.1f} s, {} pen-up moves", out.metrics.value("draw_time_s", 0.0),
                                     out.metrics.value("pen_up_moves", 0))},
            {"metrics", out.metrics},
            {"images", images}};
  };
  st.finish = [o](const Scene& s) {
    if (o->report) std::fputs(scene_report(s).c_str(), stderr);
  };
  return st;
}

}  // namespace sv
