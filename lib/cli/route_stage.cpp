#include "cli/stages.hpp"

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <memory>

#include "cli/stage_util.hpp"
#include "cli/values.hpp"
#include "core/error.hpp"
#include "route/route.hpp"

namespace sv {

Stage route_stage() {
  struct Opts {
    double ppi = 0, footprint_mm = kDefaultFootprintMm, pen_time_s = -1;
    std::string robot;
    double draw_speed_mm_s = 0, travel_speed_mm_s = 0, accel_mm_s2 = 0;
    std::string start;
    std::vector<std::string> settings;
  };
  auto o = std::make_shared<Opts>();
  Stage st;
  st.name = "sv-route";
  st.batch = true;
  st.params = &route_param_table();
  st.summary = "Order and orient the primitives into the robot's fastest command stream";
  st.add_options = [o](CLI::App& app) {
    check_number(app.add_option("--ppi", o->ppi, "pixels per inch on paper (default: from --footprint-mm)"), positive());
    check_number(app.add_option("--footprint-mm", o->footprint_mm,
                                "longest side of the drawing on paper: mm, or with its unit (100mm, 10cm, 4in)")
                     ->capture_default_str()
                     ->type_name("LENGTH"),
                 positive());
    check_number(app.add_option("--pen-time", o->pen_time_s,
                                "seconds per pen lift or drop (default: the robot's: doodlebot 0, plotter 0.15)"),
                 at_least(0));
    check_choice(app.add_option("--robot", o->robot,
                                "the motion model the route minimizes and the scene records: doodlebot (the "
                                "differential-drive robot) or plotter (an XY pen plotter: pen-up travel and pen "
                                "changes cost, turning does not) (default: the scene's own robot when it was routed "
                                "for a plotter, else doodlebot)"),
                 {"doodlebot", "plotter"});
    check_number(app.add_option("--draw-speed", o->draw_speed_mm_s, "plotter: pen-down speed, mm/s (default: 50)"),
                 positive());
    check_number(app.add_option("--travel-speed", o->travel_speed_mm_s, "plotter: pen-up travel speed, mm/s (default: 150)"),
                 positive());
    check_number(app.add_option("--accel", o->accel_mm_s2, "plotter: acceleration of every move, mm/s² (default: 1000)"),
                 positive());
    app.add_option("--start", o->start,
                   "X,Y,HEADING_DEG: the robot starts there, and the route prices getting to the first stroke; "
                   "free: the route places it at the first stroke, facing along it (default: the scene's own start "
                   "when it was fixed, else free)");
    add_settings_option(app, o->settings, "route");
  };
  st.run = [o](StageInput&, Scene& out) -> json {
    if (!out.primitives) throw Error(Code::invalid_scene, "the scene has no primitives (run sv-fit first)");
    RouteOptions ro;
    ro.ppi = o->ppi;
    ro.footprint_mm = o->footprint_mm;
    ro.pen_time_s = o->pen_time_s;
    ro.model = o->robot;
    ro.draw_speed_mm_s = o->draw_speed_mm_s;
    ro.travel_speed_mm_s = o->travel_speed_mm_s;
    ro.accel_mm_s2 = o->accel_mm_s2;
    // A scene routed for a plotter stays a plotter's, with its speeds and pen time, unless told.
    if (o->robot.empty() && out.robot && out.robot->plotter()) keep_plotter(*out.robot, ro);
    if (!o->start.empty()) ro.start = parse_start(o->start);
    else if (out.robot && out.robot->start_fixed) ro.start = out.robot->start;
    ro.overrides = parse_settings(o->settings);
    drop_downstream_of_route(out);
    route(out, ro);
    int pen_ups = 0;
    for (const auto& c : *out.commands) pen_ups += c.kind != Command::Kind::spin && !c.pen_down;
    const StartCost start = start_cost(out);
    return {{"llm_text", fmt::format("route: {} primitives in {} steps, {} commands, {} pen-up moves; {}",
                                     out.primitives->size(), out.tour->size(), out.commands->size(), pen_ups,
                                     start_text(start))},
            {"commands", out.commands->size()},
            {"pen_up_moves", pen_ups},
            {"start", start_json(start)}};
  };
  return st;
}

}  // namespace sv
