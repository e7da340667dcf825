#include "route/route.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <functional>
#include <limits>
#include <map>
#include <optional>
#include <set>
#include <tuple>

#include "core/error.hpp"
#include "core/scene_check.hpp"
#include "robot/motion.hpp"
#include "route/emit.hpp"
#include "route/grid.hpp"
#include "route/order.hpp"

namespace sv {

namespace {

constexpr double kUnseenDeviationPx = 0.9;  // route.deviation_px's largest derived value

ParamSpec tuning(const char* key, double value, double min, ParamType type, const char* unit, const char* doc,
                 double max = std::numeric_limits<double>::infinity()) {
  ParamSpec s;
  s.key = key;
  s.value = value;
  s.min = min;
  s.max = type == ParamType::flag ? 1 : max;
  s.type = type;
  s.unit = unit;
  s.doc = doc;
  return s;
}

// A value derived by `rule` (recorded with provenance `from`); without a default it always is.
ParamSpec derived(ParamSpec s, const char* from, const char* rule, bool has_default) {
  s.from = from;
  s.derivation = rule;
  if (!has_default) s.value.reset();
  return s;
}

// Set by another option of sv-route (or by none: ""), not by --set.
ParamSpec set_by(ParamSpec s, const char* option) {
  s.set_by = option;
  return s;
}

// route.deviation_px by default: the fit's own bound, when the scene records it, at most
// 0.9 px. A redrawn path a pixel off the fit is a shift people see at the image's scale.
// A fit merged for speed has chosen its own bound.
std::optional<double> fit_deviation(const Scene& s, const RouteParams&) {
  const double bound = config_value(s, "fit.merge_tolerance_px", NAN);
  if (!std::isfinite(bound)) return std::nullopt;
  return config_value(s, "fit.merge_width_ratio", 0) > 0 ? bound : std::min(bound, kUnseenDeviationPx);
}

const ParamSet<RouteParams, Scene>& route_params() {
  using T = ParamType;
  using R = RouteParams;
  static const ParamSet<RouteParams, Scene> set{
      "sv-route",
      {{tuning("route.snap_px", 0.75, 1e-6, T::number, "px",
              "primitive ends closer than this are one vertex of the endpoint graph"), &R::snap_px},
       {tuning("route.min_spin_deg", 0.01, 0, T::number, "deg",
              "turns below this are skipped when they move the next move's end by at most drift_px"), &R::min_spin_deg},
       {tuning("route.drift_px", 0.005, 0, T::number, "px",
              "largest displacement a skipped turn or a flattened arc may cause"), &R::drift_px},
       // The derivation is an earlier stage's key: its value, when the scene records it.
       {derived(tuning("route.deviation_px", 0.25, 0, T::number, "px",
                      "largest distance the drawn path may leave the primitives' path when consecutive pieces are "
                      "redrawn as one line or arc (0: every primitive is its own command); by default the fit's "
                      "own bound, fit.merge_tolerance_px, when the scene records it, at most 0.9 px unless the fit "
                      "merged for the robot (sv-fit --fast)"),
               "fit", "fit.merge_tolerance_px", true), &R::deviation_px, fit_deviation},
       {tuning("route.merge_window", 24, 1, T::integer, "primitives", "primitives one redrawn command may replace"), &R::merge_window},
       {tuning("route.reverse_drive", 1, 0, T::flag, "",
              "1: straight moves (drawn lines, pen-up travel) may run backwards when that turns less"), &R::reverse_drive},
       {tuning("route.travel_arcs", 1, 0, T::flag, "",
              "1: pen-up travel may be an arc that does one of its turns on the way, when that is faster"),
        &R::travel_arcs},
       {tuning("route.circle_entries", 24, 1, T::integer, "angles",
              "entry angles tried per free circle while ordering (then refined continuously)"), &R::circle_entries},
       {tuning("route.closed_starts", 16, 1, T::integer, "vertices", "start vertices tried per closed trail"), &R::closed_starts},
       {tuning("route.max_passes", 50, 0, T::integer, "passes",
              "improvement passes (2-opt, or-opt, re-orientation) over the tour"), &R::max_passes},
       {tuning("route.exact_matching_max", 1000, 0, T::integer, "vertices",
              "odd vertices per component paired exactly (Edmonds' blossom algorithm: 1.5 s and 60 MB at "
              "1000); more are paired greedily",
              2000), &R::exact_matching_max},
       {tuning("route.redraw_lines", 1, 0, T::flag, "",
              "1: odd vertices of the endpoint graph that a line joins may be paired by drawing that line again "
              "instead of a pen-up trip; the tour is searched both ways and the faster kept"),
        &R::redraw_lines},
       {set_by(derived(tuning("route.ppi", 0, 0, T::number, "ppi",
                             "pixels per inch the times are computed at: the longest side of the primitives "
                             "measures route.footprint_mm on paper"),
                      "image", "the longest side of the primitives, at route.footprint_mm on paper", false),
              "--ppi"), &R::ppi},
       {set_by(tuning("route.footprint_mm", kDefaultFootprintMm, 0, T::number, "mm",
                     "length of the drawing's longest side on paper (0 when the ppi was given)"),
              "--footprint-mm"), &R::footprint_mm},
       {set_by(tuning("route.pen_time_s", kDefaultPenTimeS, 0, T::number, "s", "time of one pen lift or drop"),
              "--pen-time"), &R::pen_time_s},
       {set_by(tuning("route.draw_speed_mm_s", kDefaultPlotterDrawMmS, 0.001, T::number, "mm/s",
                     "--robot plotter: speed of pen-down moves (AxiDraw's default: 25 % of its 8.6979 in/s over 110)"),
              "--draw-speed"), &R::draw_speed_mm_s},
       {set_by(tuning("route.travel_speed_mm_s", kDefaultPlotterTravelMmS, 0.001, T::number, "mm/s",
                     "--robot plotter: speed of pen-up travel (AxiDraw's default: 75 % of its 8.6979 in/s over 110)"),
              "--travel-speed"), &R::travel_speed_mm_s},
       {set_by(tuning("route.accel_mm_s2", kDefaultPlotterAccelMmS2, 0.001, T::number, "mm/s2",
                     "--robot plotter: acceleration and deceleration of every move (AxiDraw's defaults: 762 "
                     "pen-down, 1143 pen-up)"),
              "--accel"), &R::accel_mm_s2},
       {set_by(derived(tuning("route.join_px", 0, 0, T::number, "px",
                             "2 x route.snap_px: gaps up to this are drawn across without lifting the pen"),
                      "default", "2 * route.snap_px", false),
              ""), &R::join_px}}};
  return set;
}

}  // namespace

const ParamTable& route_param_table() { return route_params().table(); }

RouteParams route_params_of(const Scene& s) {
  RouteParams p;
  ParamResolver<RouteParams, Scene> r(route_params(), {});
  r.resolve_all(s, p);  // what sv-route resolves where the scene records nothing
  return route_params().read(s, p);
}

namespace {

constexpr double kSceneQuantum = 1e-4;       // the scene's rounding of coordinates and degrees (core/scene.cpp),
constexpr double kScenePartQuantum = 1e-6;   // of a tour step's t0 and t1
constexpr double kSceneEntryQuantum = 1e-12; // and of a circle's entry_deg

// A circle's entry angle as the scene records it (degrees in (-180, 180], rounded): routing
// emits from that angle, so the tour the scene holds draws exactly the stream it holds.
double entry_deg_of(double rad) {
  double d = round_to(wrap_deg(rad2deg(rad)), kSceneEntryQuantum);
  return d <= -180 ? d + 360 : d;
}
double entry_rad_of(double rad) { return deg2rad(entry_deg_of(rad)); }

// What routing draws: pieces of the primitives (shapes[i] is the part t0..t1 of primitive ids[i]).
struct Setup {
  std::vector<Shape> shapes;
  std::vector<std::string> ids;
  std::vector<std::pair<double, double>> parts;
  std::optional<Pose> start;  // fixed, at the scene's precision; none: free
  CostModel cost;
  EmitParams emit;
  TrailParams trails;
  OrderParams order;
};

// The part of a line or arc from arc-length fraction t0 to t1 (its own ends exactly at 0 and 1).
Shape part_of(const Shape& s, double t0, double t1) {
  if (s.type == PrimType::circle || (t0 == 0 && t1 == 1)) return s;
  Vec2 a = t0 == 0 ? s.p0 : s.at(t0), b = t1 == 1 ? s.p1 : s.at(t1);
  if (s.type == PrimType::arc && std::isfinite(s.radius)) return Shape::arc(a, b, std::tan(s.sweep_rad() * (t1 - t0) / 4));
  return Shape::line(a, b);
}

// Arc-length fraction of the point of a line or arc nearest q.
double fraction_of(const Shape& s, Vec2 q) {
  if (s.type == PrimType::arc && std::isfinite(s.radius)) {
    double sw = s.sweep_rad();
    if (std::abs(sw) < 1e-12) return 0;
    double a = angle_of(q - s.center) - angle_of(s.p0 - s.center);
    if (sw < 0) a = -a;
    a = std::fmod(a + 4 * kPi, 2 * kPi);
    return std::clamp(a / std::abs(sw), 0.0, 1.0);
  }
  Vec2 d = s.p1 - s.p0;
  double L2 = dot(d, d);
  return L2 > 0 ? std::clamp(dot(q - s.p0, d) / L2, 0.0, 1.0) : 0.0;
}

// Splits every line and arc where another primitive's end touches its interior (within
// snap_px, farther than snap_px from its own ends): a line through a T is drawn as two pieces
// so the stem meets it at a vertex of the endpoint graph and joins the trail without a lift.
void split_at_contacts(const std::vector<Primitive>& prims, double snap, Setup& su) {
  // The ends of the lines and arcs, listed in the grid cells they fall in: each primitive looks
  // only at the cells around its box (all the ends, when its box covers more cells than that).
  struct End {
    Vec2 q;
    size_t prim;
  };
  std::vector<End> ends;
  BBox all;
  for (size_t i = 0; i < prims.size(); ++i)
    if (prims[i].shape.type != PrimType::circle)
      for (Vec2 q : {prims[i].shape.p0, prims[i].shape.p1}) {
        ends.push_back({q, i});
        all.add(q);
      }
  const Grid grid(all, ends.size());
  std::vector<std::vector<int>> cells(static_cast<size_t>(grid.w) * grid.h);
  for (size_t k = 0; k < ends.size(); ++k)
    cells[static_cast<size_t>(grid.cy(ends[k].q.y)) * grid.w + grid.cx(ends[k].q.x)].push_back(static_cast<int>(k));
  std::vector<int> near;
  for (size_t i = 0; i < prims.size(); ++i) {
    const Shape& s = prims[i].shape;
    std::vector<double> cuts;
    double len = s.length();
    if (s.type != PrimType::circle && len > 4 * snap) {
      BBox box;
      for (Vec2 q : s.sample(std::max(len / 8, 1.0))) box.add(q);
      const int x0 = grid.cx(box.x0 - snap), x1 = grid.cx(box.x1 + snap), y0 = grid.cy(box.y0 - snap),
                y1 = grid.cy(box.y1 + snap);
      near.clear();
      if (static_cast<double>(x1 - x0 + 1) * (y1 - y0 + 1) > static_cast<double>(ends.size())) {
        for (size_t k = 0; k < ends.size(); ++k) near.push_back(static_cast<int>(k));
      } else {
        for (int y = y0; y <= y1; ++y)
          for (int x = x0; x <= x1; ++x) {
            const auto& c = cells[static_cast<size_t>(y) * grid.w + x];
            near.insert(near.end(), c.begin(), c.end());
          }
      }
      for (int k : near) {
        Vec2 q = ends[k].q;
        if (ends[k].prim == i || q.x < box.x0 - snap || q.x > box.x1 + snap || q.y < box.y0 - snap || q.y > box.y1 + snap)
          continue;
        if (dist(q, s.p0) <= snap || dist(q, s.p1) <= snap || s.distance_to(q) > snap) continue;
        double t = fraction_of(s, q);
        if (t * len > snap && (1 - t) * len > snap) cuts.push_back(t);
      }
    }
    std::sort(cuts.begin(), cuts.end());
    std::vector<double> at{0};
    for (double t : cuts)
      if ((t - at.back()) * len > snap) at.push_back(t);
    if (at.size() > 1 && (1 - at.back()) * len <= snap) at.pop_back();
    at.push_back(1);
    for (size_t k = 0; k + 1 < at.size(); ++k) {
      su.shapes.push_back(part_of(s, at[k], at[k + 1]));
      su.ids.push_back(prims[i].id);
      su.parts.emplace_back(at[k], at[k + 1]);
    }
  }
}

double longest_side_px(const std::vector<Shape>& shapes) {
  BBox box;
  for (const Shape& s : shapes)
    for (Vec2 p : s.sample(1.0)) box.add(p);
  return std::max(box.width(), box.height());
}

// Resolves every option, records it in the config with its provenance and sets scene.robot.
// With `split`, the pieces are the primitives split at contacts (split_at_contacts), else the
// whole primitives.
Setup setup(Scene& scene, const RouteOptions& options, bool split) {
  Setup su;
  if (!scene.primitives) throw Error(Code::invalid_scene, "route: the scene has no primitives; run sv-fit first");
  for (const Primitive& p : *scene.primitives) {
    su.shapes.push_back(p.shape);
    su.ids.push_back(p.id);
    su.parts.emplace_back(0.0, 1.0);
  }
  // Keys with or without the "route." prefix.
  std::map<std::string, double> given;
  for (const auto& [k, v] : options.overrides) given[k.rfind("route.", 0) == 0 ? k : "route." + k] = v;
  ParamResolver<RouteParams, Scene> resolver(route_params(), given, &scene);
  RouteParams rp;
  resolver.resolve_all(scene, rp);

  Robot robot;
  if (options.ppi > 0) {
    robot.ppi = options.ppi;
    robot.footprint_mm = 0;
  } else {
    if (!(options.footprint_mm > 0))
      throw Error(Code::invalid_selection, "route: footprint_mm must be positive", {{"option", "footprint_mm"}});
    double side = longest_side_px(su.shapes);
    if (side <= 0 && scene.source) side = std::max(scene.source->width, scene.source->height);
    robot.footprint_mm = options.footprint_mm;
    robot.ppi = side > 0 ? ppi_for_footprint(side, options.footprint_mm) : 1.0;
  }
  // The scale the scene records, exactly: an edit re-routes at the scene's ppi (route_options_of)
  // and must price every move as this routing did.
  robot.ppi = std::max(round_to(robot.ppi, kSceneQuantum), kSceneQuantum);
  if (!options.model.empty() && options.model != "doodlebot" && options.model != "plotter")
    throw Error(Code::invalid_selection,
                fmt::format("route: the robot is 'doodlebot' or 'plotter', got '{}'", options.model),
                {{"option", "robot"}});
  if (!options.model.empty()) robot.model = options.model;
  const bool plotter = robot.plotter();
  robot.pen_time_s = options.pen_time_s >= 0 ? options.pen_time_s : plotter ? kDefaultPlotterPenTimeS : kDefaultPenTimeS;
  for (auto [given, field, option] : {std::tuple{options.draw_speed_mm_s, &robot.draw_speed_mm_s, "draw_speed_mm_s"},
                                      std::tuple{options.travel_speed_mm_s, &robot.travel_speed_mm_s, "travel_speed_mm_s"},
                                      std::tuple{options.accel_mm_s2, &robot.accel_mm_s2, "accel_mm_s2"}}) {
    if (given > 0 && !plotter)
      throw Error(Code::invalid_selection, fmt::format("route: {} is a plotter's (--robot plotter)", option),
                  {{"option", option}});
    if (given > 0) *field = round_to(std::max(given, 1e-3), kSceneQuantum);
  }
  if (options.start) {
    // Where the scene will say the robot starts, exactly: a re-run from the scene starts there too.
    const Pose g = *options.start;
    const Pose p{round_to(g.x, kSceneQuantum), round_to(g.y, kSceneQuantum), round_to(g.heading_deg, kSceneQuantum)};
    const BBox page = page_with_margin(scene, kMaxCoordinatePx);
    if (!(p.x >= page.x0 && p.x <= page.x1 && p.y >= page.y0 && p.y <= page.y1) ||
        !(std::abs(p.heading_deg) <= kMaxCommandValue))
      throw Error(Code::invalid_selection,
                  fmt::format("route: the start ({:g}, {:g}) heading {:g} lies beyond the page and its margin "
                              "({:g},{:g})-({:g},{:g}) or turns beyond {:g} degrees",
                              g.x, g.y, g.heading_deg, page.x0, page.y0, page.x1, page.y1, kMaxCommandValue),
                  {{"option", "start"}});
    su.start = p;
  }
  robot.start_fixed = su.start.has_value();
  resolver.set(&RouteParams::ppi, robot.ppi, scene, rp, options.ppi > 0 ? "user" : "image");
  resolver.set(&RouteParams::footprint_mm, robot.footprint_mm, scene, rp,
               options.footprint_mm == kDefaultFootprintMm && options.ppi <= 0 ? "default" : "user");
  resolver.set(&RouteParams::pen_time_s, robot.pen_time_s, scene, rp, options.pen_time_s >= 0 ? "user" : "default");
  if (plotter) {
    resolver.set(&RouteParams::draw_speed_mm_s, robot.draw_speed_mm_s, scene, rp,
                 options.draw_speed_mm_s > 0 ? "user" : "default");
    resolver.set(&RouteParams::travel_speed_mm_s, robot.travel_speed_mm_s, scene, rp,
                 options.travel_speed_mm_s > 0 ? "user" : "default");
    resolver.set(&RouteParams::accel_mm_s2, robot.accel_mm_s2, scene, rp, options.accel_mm_s2 > 0 ? "user" : "default");
  }
  resolver.set(&RouteParams::join_px, 2 * rp.snap_px, scene, rp, resolver.from(&RouteParams::snap_px));
  scene.robot = robot;

  // A plotter moves on two axes: which way it "faces" is no cost, so driving backwards or along
  // an arc to save a turn means nothing and stays off.
  su.cost = {motion_of(robot), 2 * rp.snap_px, rp.drift_px, rp.reverse_drive != 0 && !plotter,
             rp.travel_arcs != 0 && !plotter};
  su.emit = {rp.min_spin_deg, rp.drift_px, rp.deviation_px, static_cast<int>(rp.merge_window), {}};
  for (const Primitive& p : *scene.primitives)
    if (p.route_deviation_px) su.emit.primitive_deviation_px[p.id] = *p.route_deviation_px;
  su.trails = {rp.snap_px, static_cast<int>(rp.exact_matching_max), rp.redraw_lines > 0};
  su.order = {static_cast<int>(rp.circle_entries), static_cast<int>(rp.closed_starts),
              static_cast<int>(rp.max_passes)};
  if (split) {
    su.shapes.clear();
    su.ids.clear();
    su.parts.clear();
    split_at_contacts(*scene.primitives, rp.snap_px, su);
  }
  return su;
}

void store(Scene& scene, const Setup& su, const std::vector<Traversal>& steps, Emission em) {
  std::vector<TourStep> tour;
  for (const Traversal& s : steps) {
    bool circle = su.shapes[s.prim].type == PrimType::circle;
    tour.push_back({su.ids[s.prim], s.reverse, circle ? entry_deg_of(s.entry_rad) : 0.0, su.parts[s.prim].first,
                    su.parts[s.prim].second});
  }
  scene.tour = std::move(tour);
  scene.commands = std::move(em.commands);
  scene.robot->start = em.start;
}

}  // namespace

namespace {

// A tour, judged by the time of the stream it emits.
struct Candidate {
  std::vector<Traversal> steps;
  double time_s = INFINITY;
};

// Emits `steps` over su's pieces with `judge`'s pen-up travel and keeps them in `best` when
// their stream is faster (a tie keeps what `best` has). Circles' entries are first rounded as
// the scene records them.
bool offer(Candidate& best, const Setup& su, const CostModel& judge, std::vector<Traversal> steps) {
  for (Traversal& t : steps)
    if (su.shapes[t.prim].type == PrimType::circle) t.entry_rad = entry_rad_of(t.entry_rad);
  const double time = su.cost.motion.stream_s(emit_commands(su.shapes, su.ids, steps, judge, su.emit, su.start).commands);
  if (!(time < best.time_s - 1e-9)) return false;
  best = {std::move(steps), time};
  return true;
}

// The scene's tour as steps over su's pieces: a step that draws one of su's pieces (as route()
// wrote it) is that piece, any other step a piece of its own appended to su. Empty when the tour
// does not draw every primitive whole, each part once or a part again as it was (a primitive
// left out, drawn in part, or drawn twice over different parts).
std::vector<Traversal> tour_as_is(Setup& su, const std::vector<TourStep>& tour, const std::vector<Primitive>& prims) {
  std::map<std::string, std::vector<int>> pieces;  // per primitive id, su's pieces
  for (size_t i = 0; i < su.ids.size(); ++i) pieces[su.ids[i]].push_back(static_cast<int>(i));
  std::map<std::string, const Primitive*> by_id;
  for (const Primitive& p : prims) by_id[p.id] = &p;
  std::map<std::string, std::vector<std::pair<double, double>>> drawn;
  std::vector<Traversal> steps;
  for (const TourStep& t : tour) {
    auto it = by_id.find(t.primitive);
    if (it == by_id.end() || !(t.t0 >= 0 && t.t0 < t.t1 && t.t1 <= 1)) return {};
    drawn[t.primitive].emplace_back(t.t0, t.t1);
    int piece = -1;
    for (int k : pieces[t.primitive])
      if (std::abs(su.parts[k].first - t.t0) <= kScenePartQuantum && std::abs(su.parts[k].second - t.t1) <= kScenePartQuantum)
        piece = k;
    if (piece < 0) {
      piece = static_cast<int>(su.shapes.size());
      su.shapes.push_back(part_of(it->second->shape, t.t0, t.t1));
      su.ids.push_back(t.primitive);
      su.parts.emplace_back(t.t0, t.t1);
    }
    steps.push_back({piece, t.reverse, entry_rad_of(deg2rad(t.entry_deg))});
  }
  for (const Primitive& p : prims) {
    auto& parts = drawn[p.id];
    std::sort(parts.begin(), parts.end());
    double at = 0;
    for (size_t k = 0; k < parts.size(); ++k) {
      auto [t0, t1] = parts[k];
      // A part drawn again (a line redrawn instead of a pen-up trip, route/trails.hpp).
      if (k > 0 && std::abs(t0 - parts[k - 1].first) <= kScenePartQuantum &&
          std::abs(t1 - parts[k - 1].second) <= kScenePartQuantum)
        continue;
      if (std::abs(t0 - at) > kScenePartQuantum) return {};
      at = t1;
    }
    if (std::abs(at - 1) > kScenePartQuantum) return {};
  }
  return steps;
}

// The scene's tour over su's own pieces (those of route()'s split): each step draws the pieces
// of its primitive within its part, in its direction; pieces no step draws follow at the end.
std::vector<Traversal> tour_over_pieces(const Setup& su, size_t pieces, const std::vector<TourStep>& tour) {
  std::map<std::string, std::vector<int>> of;
  for (size_t i = 0; i < pieces; ++i) of[su.ids[i]].push_back(static_cast<int>(i));
  std::vector<bool> used(pieces, false);
  std::vector<Traversal> steps;
  for (const TourStep& t : tour) {
    std::vector<int> in;
    for (int k : of[t.primitive]) {
      const double mid = (su.parts[k].first + su.parts[k].second) / 2;
      if (!used[k] && mid >= t.t0 && mid <= t.t1) in.push_back(k);
    }
    if (t.reverse) std::reverse(in.begin(), in.end());
    for (int k : in) {
      used[k] = true;
      steps.push_back({k, t.reverse, entry_rad_of(deg2rad(t.entry_deg))});
    }
  }
  for (size_t k = 0; k < pieces; ++k)
    if (!used[k]) steps.push_back({static_cast<int>(k), false, 0});
  return steps;
}

// `steps` cut into their pen-down runs (pieces drawn one after the other without lifting the
// pen), those re-ordered and re-oriented by the planner's local search from the order and
// directions they have: the search started from a given tour.
std::vector<Traversal> improve_runs(const Setup& su, const CostModel& pricing, const std::vector<Traversal>& steps) {
  if (steps.empty()) return {};
  TrailSet runs;
  std::optional<Vec2> end;
  for (const Traversal& t : steps) {
    const Leg l = make_leg(su.shapes[t.prim], t.reverse, t.entry_rad, su.cost.flat_px);
    if (!end || dist(*end, l.start) > su.cost.join_px) runs.trails.push_back({Trail::Kind::open, {}});
    runs.trails.back().steps.push_back(t);
    end = l.end;
  }
  for (Trail& r : runs.trails) {
    if (r.steps.size() != 1) continue;
    const Leg l = make_leg(su.shapes[r.steps[0].prim], false, 0, su.cost.flat_px);
    if (l.dot) r.kind = Trail::Kind::dot;
    else if (l.circle) r.kind = Trail::Kind::circle;
  }
  TourPlanner planner(runs, su.shapes, pricing, su.order, su.start);
  std::vector<int> order(runs.trails.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = static_cast<int>(i);
  Tour tour = planner.as_listed(order);
  planner.improve(tour);
  planner.refine_circles(tour);
  planner.improve(tour);
  return planner.expand(tour);
}

// Pieces up to which route() runs both searches (see there).
constexpr size_t kBothSearchesMax = 2000;

// Rounds of improve_runs on the best tour, each faster than the one before, at most.
constexpr int kMaxRounds = 16;

// Rounds of improve_runs from `best`, pen-up trips priced by each of `pricings` in turn and every
// result judged by `judge`, while one finds a faster tour.
void improve_rounds(Candidate& best, const Setup& su, const std::vector<CostModel>& pricings, const CostModel& judge) {
  for (int round = 0; round < kMaxRounds; ++round) {
    bool faster = false;
    for (const CostModel& pricing : pricings) faster = offer(best, su, judge, improve_runs(su, pricing, best.steps)) || faster;
    if (!faster) return;
  }
}

// The search with pen-up trips priced, and every candidate judged, by `pricing`: the scene's own
// tour as it stands first (`as_is`, when `tour` is given; a tie keeps it), the planner's seeds,
// the scene's tour improved from its own strokes (its first `pieces` are the split's), then
// rounds from the best. `explore` adds a few rounds of iterated local search from the better
// improved seed, which find what 2-opt and or-opt stop short of.
Candidate search(const Setup& su, const std::vector<TourStep>* tour, size_t pieces, const std::vector<Traversal>& as_is,
                 const CostModel& pricing, bool explore) {
  Candidate best;
  bool kept = tour && !as_is.empty() && offer(best, su, pricing, as_is);
  // Trails that pair odd vertices by pen-up trips only, and trails that may draw a line again
  // instead (route/trails.hpp): which is faster shows only once the tour is ordered and emitted.
  for (const bool redraw : {false, true}) {
    if (redraw && !su.trails.redraw_lines) break;
    TrailParams tp = su.trails;
    tp.redraw_lines = redraw;
    const TrailSet trails = build_trails(su.shapes, su.cost, tp);
    if (redraw && trails.redrawn == 0) break;
    TourPlanner planner(trails, su.shapes, pricing, su.order, su.start);
    // The nearest-neighbour tour as it is (the floor), and improved from two seeds.
    Tour nn = planner.nearest_neighbour();
    std::vector<Tour> seeds = {nn, planner.circuit_order(), nn};
    for (size_t i = 1; i < seeds.size(); ++i) {
      planner.improve(seeds[i]);
      planner.refine_circles(seeds[i]);
      planner.improve(seeds[i]);
    }
    if (explore && trails.trails.size() >= 5) {
      Tour t = planner.cost(seeds[1]) < planner.cost(seeds[2]) ? seeds[1] : seeds[2];
      // A plotter's time is its pen-up travel alone, a travelling-salesman objective where more
      // rounds keep paying. On the Doodlebot's 144 dev drawings 30 rounds come within 0.02 s a
      // drawing of 1000; 300 saved 0.01 s more and routed the unit tests' scenes 3.5 times slower.
      const size_t n = trails.trails.size();
      planner.explore(t, static_cast<int>(su.cost.motion.plotter ? std::clamp<size_t>(100000 / n, 20, 300)
                                                                 : std::clamp<size_t>(3000 / n, 5, 30)));
      planner.refine_circles(t);
      planner.improve(t);
      seeds.push_back(std::move(t));
    }
    for (const Tour& t : seeds)
      if (offer(best, su, pricing, planner.expand(t))) kept = false;
  }
  // (When the scene's tour is still the best, the rounds start from it.)
  if (tour && !kept) offer(best, su, pricing, improve_runs(su, pricing, tour_over_pieces(su, pieces, *tour)));
  improve_rounds(best, su, {pricing}, pricing);
  return best;
}

}  // namespace

void route(Scene& scene, const RouteOptions& options) {
  Setup su = setup(scene, options, true);
  const size_t pieces = su.shapes.size();
  const std::vector<TourStep>* tour = scene.tour && !scene.tour->empty() ? &*scene.tour : nullptr;
  const std::vector<Traversal> as_is = tour ? tour_as_is(su, *tour, *scene.primitives) : std::vector<Traversal>{};
  // The search prices each pen-up trip as the stream draws it, travel arcs included, and
  // explores. Priced and judged as straight lines instead (sv's search before travel arcs were
  // priced), it reaches other local optima: that search's best, emitted with the arcs, wins
  // when its stream is faster, so no drawing is slower than that search made it. It reads the
  // primitives only, not the scene's tour, so routing a routed scene again finds the same.
  // Beyond kBothSearchesMax pieces (generated scenes, not drawings) only the straight-priced
  // search runs: both took 3.3 times its time on a scene of 10k lines (28.8 s against 8.8 s).
  CostModel straight = su.cost;
  straight.travel_arcs = false;
  const bool both = su.cost.travel_arcs && pieces <= kBothSearchesMax;
  std::vector<CostModel> pricings = {straight};
  if (both) pricings.insert(pricings.begin(), su.cost);
  Candidate best = search(su, tour, pieces, as_is, pricings.front(), both || su.cost.motion.plotter);
  if (both) offer(best, su, su.cost, search(su, nullptr, pieces, {}, straight, false).steps);
  // The winner improved from its own strokes, either way priced, while that finds a faster one:
  // routing the result again starts where this stops and changes nothing.
  improve_rounds(best, su, pricings, su.cost);
  store(scene, su, best.steps, emit_commands(su.shapes, su.ids, best.steps, su.cost, su.emit, su.start));
}

namespace {

// The tour's steps as pieces of su's primitives (one per step: the part it draws), leaving out
// the steps `skip` names; a step of an unknown primitive throws Error(not_found).
Setup tour_pieces(const Setup& su, const std::vector<TourStep>& tour, const std::function<bool(const std::string&)>& skip,
                  std::vector<Traversal>& steps) {
  std::map<std::string, int> index;
  for (size_t i = 0; i < su.ids.size(); ++i) index[su.ids[i]] = static_cast<int>(i);
  Setup drawn = su;
  drawn.shapes.clear();
  drawn.ids.clear();
  drawn.parts.clear();
  for (const TourStep& t : tour) {
    if (skip(t.primitive)) continue;
    auto it = index.find(t.primitive);
    if (it == index.end())
      throw Error(Code::not_found, fmt::format("emit: tour names unknown primitive {}", t.primitive),
                  {{"primitive", t.primitive}});
    double t0 = std::clamp(t.t0, 0.0, 1.0), t1 = std::clamp(t.t1, t0, 1.0);
    steps.push_back({static_cast<int>(drawn.shapes.size()), t.reverse, deg2rad(t.entry_deg)});
    drawn.shapes.push_back(part_of(su.shapes[it->second], t0, t1));
    drawn.ids.push_back(t.primitive);
    drawn.parts.emplace_back(t0, t1);
  }
  return drawn;
}

}  // namespace

void emit_tour(Scene& scene, const RouteOptions& options) {
  if (!scene.tour) throw Error(Code::invalid_scene, "emit: the scene has no tour; run sv-route first");
  std::vector<Traversal> steps;
  Setup drawn = tour_pieces(setup(scene, options, false), *scene.tour, [](const std::string&) { return false; }, steps);
  store(scene, drawn, steps, emit_commands(drawn.shapes, drawn.ids, steps, drawn.cost, drawn.emit, drawn.start));
}

void route_keeping(Scene& scene, const RouteOptions& options, const std::set<std::string>& place) {
  if (!scene.tour) throw Error(Code::invalid_scene, "emit: the scene has no tour; run sv-route first");
  Setup su = setup(scene, options, false);
  std::set<std::string> known(su.ids.begin(), su.ids.end()), kept;
  std::vector<Traversal> steps;
  Setup drawn = tour_pieces(su, *scene.tour, [&](const std::string& id) { return !known.count(id) || place.count(id); }, steps);
  kept.insert(drawn.ids.begin(), drawn.ids.end());
  if (steps.empty()) {
    route(scene, options);
    return;
  }
  const CostModel& cost = su.cost;
  auto leg_of = [&](const Traversal& t) { return make_leg(drawn.shapes[t.prim], t.reverse, t.entry_rad, cost.flat_px); };
  auto between = [&](const Leg& a, const Leg& b) {
    return cost.transition(a.end, a.dot ? NAN : a.h_out, b.start, b.dot ? NAN : b.h_in);
  };
  auto enter = [&](const Leg& b) {
    if (!su.start) return 0.0;
    return cost.transition({su.start->x, su.start->y}, su.start->heading_deg, b.start, b.dot ? NAN : b.h_in);
  };
  std::vector<Leg> legs;
  for (const Traversal& t : steps) legs.push_back(leg_of(t));
  for (size_t i = 0; i < su.ids.size(); ++i) {
    if (kept.count(su.ids[i])) continue;
    const int piece = static_cast<int>(drawn.shapes.size());
    drawn.shapes.push_back(su.shapes[i]);
    drawn.ids.push_back(su.ids[i]);
    drawn.parts.emplace_back(0.0, 1.0);
    // Cheapest insertion: the transitions it adds less the one it replaces.
    double best = INFINITY;
    size_t best_at = 0;
    Traversal best_t;
    for (bool reverse : {false, true}) {
      const Traversal t{piece, reverse, 0};
      const Leg x = leg_of(t);
      for (size_t at = 0; at <= legs.size(); ++at) {
        double delta = at > 0 ? between(legs[at - 1], x) : enter(x);
        if (at < legs.size()) delta += between(x, legs[at]) - (at > 0 ? between(legs[at - 1], legs[at]) : enter(legs[at]));
        if (delta < best - 1e-12) best = delta, best_at = at, best_t = t;
      }
    }
    steps.insert(steps.begin() + static_cast<long>(best_at), best_t);
    legs.insert(legs.begin() + static_cast<long>(best_at), leg_of(best_t));
  }
  store(scene, drawn, steps, emit_commands(drawn.shapes, drawn.ids, steps, drawn.cost, drawn.emit, drawn.start));
}

void route_with_pins(Scene& scene, const RouteOptions& options, const std::vector<PinnedStep>& pins,
                     bool optimize) {
  // Pins name whole primitives at positions of a tour of whole primitives.
  Setup su = setup(scene, options, false);
  const size_t n = su.ids.size();
  std::map<std::string, int> index;
  for (size_t i = 0; i < n; ++i) index[su.ids[i]] = static_cast<int>(i);
  std::vector<std::optional<Traversal>> slot(n);
  std::set<int> pinned;
  for (const PinnedStep& p : pins) {
    auto it = index.find(p.primitive);
    if (it == index.end()) throw Error(Code::not_found, "no primitive " + p.primitive, {{"id", p.primitive}});
    if (p.position >= n)
      throw Error(Code::invalid_selection, fmt::format("position {} is outside the tour (0..{})", p.position, n - 1));
    if (slot[p.position] || !pinned.insert(it->second).second)
      throw Error(Code::invalid_selection, fmt::format("position {} or {} pinned twice", p.position, p.primitive));
    double entry = 0;  // a pinned circle keeps the entry it had
    if (scene.tour)
      for (const TourStep& t : *scene.tour)
        if (t.primitive == p.primitive) entry = deg2rad(t.entry_deg);
    slot[p.position] = Traversal{it->second, p.reverse, entry};
  }
  // The free primitives in the scene's current order (then any it does not name), as they are drawn.
  std::vector<Traversal> free;
  std::set<int> seen;
  if (scene.tour)
    for (const TourStep& t : *scene.tour)
      if (auto it = index.find(t.primitive); it != index.end() && !pinned.count(it->second) && seen.insert(it->second).second)
        free.push_back({it->second, t.reverse, deg2rad(t.entry_deg)});
  for (size_t i = 0; i < n; ++i)
    if (!pinned.count(static_cast<int>(i)) && !seen.count(static_cast<int>(i))) free.push_back({static_cast<int>(i), false, 0});

  auto assemble = [&](const std::vector<Traversal>& f) {
    std::vector<Traversal> steps;
    size_t k = 0;
    for (size_t i = 0; i < n; ++i) steps.push_back(slot[i] ? *slot[i] : f[k++]);
    return steps;
  };
  // Turns and travel between the legs; drawing time does not depend on the order.
  auto cost = [&](const std::vector<Traversal>& f) {
    std::vector<Leg> legs;
    for (const Traversal& t : assemble(f)) legs.push_back(make_leg(su.shapes[t.prim], t.reverse, t.entry_rad, su.cost.flat_px));
    return choose_bits(legs, su.cost, su.start, -1, -1, nullptr);
  };
  double best = cost(free);
  const bool moves = free.size() <= 150;  // moving every step to every slot is quadratic
  for (int pass = 0, improved = optimize; improved && pass < su.order.max_passes; ++pass) {
    improved = 0;
    for (size_t i = 0; i < free.size(); ++i) {
      free[i].reverse = !free[i].reverse;
      if (double c = cost(free); c < best - 1e-9) {
        best = c;
        improved = 1;
      } else {
        free[i].reverse = !free[i].reverse;
      }
      for (size_t j = 0; moves && j < free.size(); ++j) {
        if (j == i) continue;
        std::vector<Traversal> f = free;
        Traversal t = f[i];
        f.erase(f.begin() + i);
        f.insert(f.begin() + j, t);
        if (double c = cost(f); c < best - 1e-9) {
          best = c;
          free = std::move(f);
          improved = 1;
        }
      }
    }
  }
  std::vector<Traversal> steps = assemble(free);
  store(scene, su, steps, emit_commands(su.shapes, su.ids, steps, su.cost, su.emit, su.start));
}

void keep_plotter(const Robot& robot, RouteOptions& options) {
  if (!robot.plotter()) return;
  options.model = robot.model;
  if (options.pen_time_s < 0) options.pen_time_s = robot.pen_time_s;
  if (!(options.draw_speed_mm_s > 0)) options.draw_speed_mm_s = robot.draw_speed_mm_s;
  if (!(options.travel_speed_mm_s > 0)) options.travel_speed_mm_s = robot.travel_speed_mm_s;
  if (!(options.accel_mm_s2 > 0)) options.accel_mm_s2 = robot.accel_mm_s2;
}

std::optional<Pose> parse_start(const std::string& text) {
  if (text == "free") return std::nullopt;
  Pose p;
  char extra = 0;
  if (std::sscanf(text.c_str(), "%lf,%lf,%lf%c", &p.x, &p.y, &p.heading_deg, &extra) != 3 || !std::isfinite(p.x) ||
      !std::isfinite(p.y) || !std::isfinite(p.heading_deg))
    throw Error(Code::invalid_selection, fmt::format("a start is 'free' or X,Y,HEADING_DEG, got '{}'", text),
                {{"option", "start"}});
  return p;
}

StartCost start_cost(const Scene& scene) {
  StartCost c;
  if (!scene.robot) return c;
  c.fixed = scene.robot->start_fixed;
  c.pose = scene.robot->start;
  if (scene.tour && !scene.tour->empty()) c.first_primitive = scene.tour->front().primitive;
  if (scene.commands)
    for (const Command& k : *scene.commands) {
      if (k.kind != Command::Kind::spin && k.pen_down) break;
      c.to_first_stroke_s += command_time_s(k, *scene.robot);
    }
  return c;
}

bool start_moved(const StartCost& a, const StartCost& b) {
  return a.fixed != b.fixed || a.first_primitive != b.first_primitive || a.pose.x != b.pose.x || a.pose.y != b.pose.y ||
         a.pose.heading_deg != b.pose.heading_deg || std::abs(a.to_first_stroke_s - b.to_first_stroke_s) > 1e-6;
}

json start_json(const StartCost& c) {
  auto r = [](double v) { return round_to(v, 1e-4); };
  return {{"mode", c.fixed ? "fixed" : "free"},  {"x", r(c.pose.x)},
          {"y", r(c.pose.y)},                    {"heading_deg", r(c.pose.heading_deg)},
          {"first_primitive", c.first_primitive}, {"to_first_stroke_s", round_to(c.to_first_stroke_s, 1e-6)}};
}

std::string start_text(const StartCost& c) {
  const std::string first = c.first_primitive.empty() ? "" : " " + c.first_primitive;
  if (!c.fixed)
    return fmt::format("start free: the robot is placed at the first stroke{} at ({:.1f}, {:.1f}) facing {:.1f} deg", first,
                       c.pose.x, c.pose.y, c.pose.heading_deg);
  return fmt::format("start fixed at ({:.1f}, {:.1f}) facing {:.1f} deg: {:.2f} s of turns and pen-up travel to the first stroke{}",
                     c.pose.x, c.pose.y, c.pose.heading_deg, c.to_first_stroke_s, first);
}

}  // namespace sv
