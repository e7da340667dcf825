#include "cli/stages.hpp"

#include <fmt/format.h>

#include <memory>

#include "core/error.hpp"
#include "core/hash.hpp"
#include "fit/fit.hpp"
#include "graph/skeletonize.hpp"
#include "raster/png.hpp"
#include "robot/simulate.hpp"
#include "render/view.hpp"
#include "route/route.hpp"
#include "store/store.hpp"

namespace sv {

namespace {

std::map<std::string, int> count_by_type(const Scene& s) {
  std::map<std::string, int> n{{"line", 0}, {"arc", 0}, {"circle", 0}};
  if (s.primitives)
    for (const auto& p : *s.primitives) ++n[prim_type_name(p.shape.type)];
  return n;
}

void add_settings_option(CLI::App& app, std::vector<std::string>& settings, const char* stage) {
  app.add_option("--set", settings,
                 fmt::format("override a threshold, KEY=VALUE (the {}.* keys of the scene's config)", stage));
}

// A stage replaces its own sections; whatever later stages derived from the old ones is stale.
void drop_downstream_of_fit(Scene& s) {
  s.tour.reset();
  s.robot.reset();
  s.commands.reset();
  s.simulation = nullptr;
  s.metrics = nullptr;
}

void drop_downstream_of_route(Scene& s) {
  s.simulation = nullptr;
  s.metrics = nullptr;
}

void write_file(const std::string& path, const std::string& bytes) {
  FILE* f = std::fopen(path.c_str(), "wb");
  if (!f) throw Error(Code::io_error, "cannot write " + path);
  bool ok = std::fwrite(bytes.data(), 1, bytes.size(), f) == bytes.size();
  ok = std::fclose(f) == 0 && ok;
  if (!ok) throw Error(Code::io_error, "cannot write " + path);
}

// --start X,Y,DEG
std::optional<Pose> parse_pose(const std::string& text) {
  if (text.empty()) return std::nullopt;
  Pose p;
  char extra = 0;
  if (std::sscanf(text.c_str(), "%lf,%lf,%lf%c", &p.x, &p.y, &p.heading_deg, &extra) != 3 ||
      !std::isfinite(p.x) || !std::isfinite(p.y) || !std::isfinite(p.heading_deg))
    throw Error(Code::invalid_selection, fmt::format("--start expects X,Y,HEADING_DEG, got '{}'", text));
  return p;
}

}  // namespace

Stage skeleton_stage() {
  auto settings = std::make_shared<std::vector<std::string>>();
  Stage st;
  st.name = "sv-skeleton";
  st.summary = "Trace a PNG line drawing into a scene's stroke graph";
  st.reads_png = true;
  st.add_options = [settings](CLI::App& app) { add_settings_option(app, *settings, "skeleton/graph"); };
  st.run = [settings](StageInput& in, Scene& out) -> json {
    SkeletonOptions opt{parse_settings(*settings)};
    cv::Mat gray = decode_png(in.bytes);
    out = Scene{};
    out.source = Source{in.path, sha256_hex(in.bytes), gray.cols, gray.rows, 0};
    skeletonize(out, gray, opt);
    const Graph& g = *out.graph;
    return {{"llm_text", fmt::format("skeleton: {}x{} px, stroke width {:.2f} px, {} vertices, {} edges",
                                     out.source->width, out.source->height, out.source->stroke_width_px,
                                     g.vertices.size(), g.edges.size())},
            {"vertices", g.vertices.size()},
            {"edges", g.edges.size()}};
  };
  return st;
}

Stage fit_stage() {
  auto settings = std::make_shared<std::vector<std::string>>();
  Stage st;
  st.name = "sv-fit";
  st.summary = "Fit each stroke of the graph with the fewest lines, arcs and circles";
  st.add_options = [settings](CLI::App& app) { add_settings_option(app, *settings, "fit"); };
  st.run = [settings](StageInput&, Scene& out) -> json {
    if (!out.graph) throw Error(Code::invalid_scene, "the scene has no graph (run sv-skeleton first)");
    drop_downstream_of_fit(out);
    fit(out, FitOptions{parse_settings(*settings)});
    auto n = count_by_type(out);
    double worst = 0;
    for (const auto& p : *out.primitives) worst = std::max(worst, p.fit_max_px);
    return {{"llm_text", fmt::format("fit: {} primitives ({} line, {} arc, {} circle), worst deviation {:.2f} px",
                                     out.primitives->size(), n["line"], n["arc"], n["circle"], worst)},
            {"primitive_count", out.primitives->size()},
            {"by_type", n}};
  };
  return st;
}

Stage route_stage() {
  struct Opts {
    double ppi = 0, footprint_mm = 200, pen_time_s = -1;
    std::string start;
    std::vector<std::string> settings;
  };
  auto o = std::make_shared<Opts>();
  Stage st;
  st.name = "sv-route";
  st.summary = "Order and orient the primitives into the robot's fastest command stream";
  st.add_options = [o](CLI::App& app) {
    app.add_option("--ppi", o->ppi, "pixels per inch on paper (default: from --footprint-mm)")->check(CLI::PositiveNumber);
    app.add_option("--footprint-mm", o->footprint_mm, "longest side of the drawing on paper, mm")
        ->capture_default_str()->check(CLI::PositiveNumber);
    app.add_option("--pen-time", o->pen_time_s, "seconds per pen lift or drop (default: the robot's)")
        ->check(CLI::NonNegativeNumber);
    app.add_option("--start", o->start, "start pose X,Y,HEADING_DEG (default: at the first stroke, facing along it)");
    add_settings_option(app, o->settings, "route");
  };
  st.run = [o](StageInput&, Scene& out) -> json {
    if (!out.primitives) throw Error(Code::invalid_scene, "the scene has no primitives (run sv-fit first)");
    RouteOptions ro;
    ro.ppi = o->ppi;
    ro.footprint_mm = o->footprint_mm;
    ro.pen_time_s = o->pen_time_s;
    ro.start = parse_pose(o->start);
    ro.overrides = parse_settings(o->settings);
    drop_downstream_of_route(out);
    route(out, ro);
    int pen_ups = 0;
    for (const auto& c : *out.commands) pen_ups += c.kind == Command::Kind::line && !c.pen_down;
    return {{"llm_text", fmt::format("route: {} primitives in {} steps, {} commands, {} pen-up moves",
                                     out.primitives->size(), out.tour->size(), out.commands->size(), pen_ups)},
            {"commands", out.commands->size()},
            {"pen_up_moves", pen_ups}};
  };
  return st;
}

std::string scene_report(const Scene& s) {
  auto n = count_by_type(s);
  const json& m = s.metrics;
  auto num = [&](const char* k) { return m.is_object() && m.contains(k) ? m[k].get<double>() : 0.0; };
  std::string out;
  out += fmt::format("drawing      {}  {}x{} px, stroke width {:.1f} px\n", s.source ? s.source->path : "-",
                     s.source ? s.source->width : 0, s.source ? s.source->height : 0,
                     s.source ? s.source->stroke_width_px : 0.0);
  out += fmt::format("primitives   {} ({} lines, {} arcs, {} circles)\n",
                     s.primitives ? s.primitives->size() : 0, n["line"], n["arc"], n["circle"]);
  out += fmt::format("strokes      {} pen-down strokes, {} pen-up moves\n", static_cast<int>(num("strokes")),
                     static_cast<int>(num("pen_up_moves")));
  out += fmt::format("robot        {:.1f} s to draw at {:.0f} mm ({:.1f} s drawing, {:.1f} s travel, {:.1f} s turning)\n",
                     num("draw_time_s"), s.robot ? s.robot->footprint_mm : 0.0, num("pen_down_time_s"),
                     num("pen_up_travel_time_s"), num("spin_time_s"));
  out += fmt::format("commands     {}\n", s.commands ? s.commands->size() : 0);
  out += fmt::format("revision     {}\n", s.revision.id.empty() ? "-" : s.revision.id.substr(0, 12));
  return out;
}

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
  return decode_png(bytes);
}

Stage simulate_stage() {
  struct Opts {
    bool trace = false, report = false, pen_up = false, ids = false, no_source = false;
    std::string png, svg, color_by = "type";
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
  };
  st.run = [o](StageInput& in, Scene& out) -> json {
    if (!out.commands) throw Error(Code::invalid_scene, "the scene has no commands (run sv-route first)");
    drop_downstream_of_route(out);
    simulate(out, SimulateOptions{o->trace});
    json images = json::object();
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
