// Routes the evaluation corpus's ground truth: every CASE.gt.json of a directory becomes a
// scene whose primitives are the GT's own (its `primitives` when present, else each GT
// polyline as a chain of lines simplified by Douglas-Peucker), is routed and simulated, and is
// written as OUT/CASE.json — a prediction the scorer reads (top-level commands, robot.start,
// primitives). One summary line per case goes to stdout as JSON.
//
//   sv-route-corpus [--gt-ppi] [--dp PX] [--views DIR] [--baseline] [--set KEY=VALUE]... GT_DIR OUT_DIR
//
// --gt-ppi times the route at the scorer's scale (the GT polylines' bounding box at 200 mm)
// instead of the primitives' own, so simulate's motion_time_s can be compared with the
// scorer's est_time_s. --views writes each routed drawing as DIR/CASE.png (draw order, pen-up
// travel dashed) and DIR/CASE.svg. --baseline skips the planning: the primitives are drawn in
// the GT's order and direction, driving forwards only, to measure what routing gains. --set
// passes a route.* option.
#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <iostream>

#include "raster/png.hpp"
#include "core/hash.hpp"
#include "core/scene.hpp"
#include "render/view.hpp"
#include "robot/motion.hpp"
#include "robot/simulate.hpp"
#include "route/route.hpp"

using namespace sv;
namespace fs = std::filesystem;

namespace {

Vec2 point(const json& p) { return {p.at(0).get<double>(), p.at(1).get<double>()}; }

// Douglas-Peucker: keeps the points farther than tol from the chord of their span.
void simplify(const Polyline& p, size_t a, size_t b, double tol, std::vector<bool>& keep) {
  double worst = -1;
  size_t at = a;
  for (size_t i = a + 1; i < b; ++i) {
    double d = point_segment_distance(p[i], p[a], p[b]);
    if (d > worst) {
      worst = d;
      at = i;
    }
  }
  if (worst <= tol) return;
  keep[at] = true;
  simplify(p, a, at, tol, keep);
  simplify(p, at, b, tol, keep);
}

std::vector<Shape> shapes_from_gt(const json& gt, double dp_tol) {
  std::vector<Shape> out;
  if (gt.contains("primitives") && !gt["primitives"].empty()) {
    for (const json& q : gt["primitives"]) {
      std::string type = q["type"];
      if (type == "line") {
        out.push_back(Shape::line(point(q["p0"]), point(q["p1"])));
      } else if (type == "circle") {
        out.push_back(Shape::circle(point(q["center"]), q["radius"].get<double>()));
      } else {
        Vec2 c = point(q["center"]);
        double r = q["radius"], a0 = deg2rad(q["start_deg"].get<double>());
        double sweep = deg2rad(q.contains("sweep_deg") ? q["sweep_deg"].get<double>()
                                                       : q["end_deg"].get<double>() - q["start_deg"].get<double>());
        out.push_back(Shape::arc(c + from_angle(a0) * r, c + from_angle(a0 + sweep) * r, std::tan(sweep / 4)));
      }
    }
    return out;
  }
  for (const json& pl : gt["polylines"]) {
    Polyline p;
    for (const json& q : pl) p.push_back(point(q));
    if (p.empty()) continue;
    if (polyline_length(p) < 1e-6 || p.size() == 1) {
      out.push_back(Shape::line(p.front(), p.front()));  // a dot
      continue;
    }
    std::vector<bool> keep(p.size(), false);
    keep.front() = keep.back() = true;
    simplify(p, 0, p.size() - 1, dp_tol, keep);
    size_t last = 0;
    for (size_t i = 1; i < p.size(); ++i)
      if (keep[i]) {
        out.push_back(Shape::line(p[last], p[i]));
        last = i;
      }
  }
  return out;
}

double gt_ppi(const json& gt) {
  BBox box;
  for (const json& pl : gt["polylines"])
    for (const json& q : pl) box.add(point(q));
  return ppi_for_footprint(std::max(box.width(), box.height()));
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"Route the evaluation corpus's ground truth and write scorer predictions."};
  std::string gt_dir, out_dir, views_dir;
  std::vector<std::string> sets;
  bool use_gt_ppi = false, baseline = false;
  double dp_tol = 0.5;
  app.add_option("GT_DIR", gt_dir, "directory of CASE.gt.json")->required();
  app.add_option("OUT_DIR", out_dir, "where CASE.json predictions go")->required();
  app.add_flag("--gt-ppi", use_gt_ppi, "time at the scorer's scale (GT bounding box, 200 mm)");
  app.add_option("--dp", dp_tol, "Douglas-Peucker tolerance (px) for GT polylines")->capture_default_str();
  app.add_option("--views", views_dir, "write CASE.png and CASE.svg views here");
  app.add_flag("--baseline", baseline, "GT order and direction, forwards only, instead of route()");
  app.add_option("--set", sets, "route option KEY=VALUE (repeatable)");
  CLI11_PARSE(app, argc, argv);

  fs::create_directories(out_dir);
  if (!views_dir.empty()) fs::create_directories(views_dir);
  std::vector<fs::path> cases;
  for (const auto& e : fs::directory_iterator(gt_dir)) {
    std::string name = e.path().filename().string();
    if (name.size() > 8 && name.ends_with(".gt.json")) cases.push_back(e.path());
  }
  std::sort(cases.begin(), cases.end());
  for (const fs::path& path : cases) {
    std::ifstream in(path);
    json gt = json::parse(in);
    std::string name = path.filename().string();
    name = name.substr(0, name.size() - 8);

    Scene scene;
    fs::path png = path.parent_path() / (name + ".png");
    std::ifstream png_in(png, std::ios::binary);
    std::string png_bytes((std::istreambuf_iterator<char>(png_in)), {});
    scene.source = Source{png.filename().string(), sha256_hex(png_bytes), gt["width"], gt["height"],
                          gt.value("stroke_width_px", 0.0)};
    std::vector<Primitive> prims;
    for (const Shape& s : shapes_from_gt(gt, dp_tol)) {
      Primitive p;
      p.id = fmt::format("p_{:04d}", prims.size() + 1);
      p.shape = s;
      prims.push_back(p);
    }
    scene.primitives = prims;
    RouteOptions opts;
    if (use_gt_ppi) opts.ppi = gt_ppi(gt);
    for (const std::string& kv : sets) {
      size_t eq = kv.find('=');
      if (eq == std::string::npos) throw CLI::ValidationError("--set", "expected KEY=VALUE: " + kv);
      opts.overrides[kv.substr(0, eq)] = std::stod(kv.substr(eq + 1));
    }
    auto t0 = std::chrono::steady_clock::now();
    if (baseline) {
      std::vector<TourStep> tour;
      for (const Primitive& p : prims) tour.push_back({p.id, false, 0});
      scene.tour = tour;
      opts.overrides["reverse_drive"] = 0;
      emit_tour(scene, opts);
    } else {
      route(scene, opts);
    }
    double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    simulate(scene, {});
    std::ofstream(fs::path(out_dir) / (name + ".json")) << dump_scene(scene);
    if (!views_dir.empty()) {
      ViewOptions v;
      v.color_by = ColorBy::draw_order;
      v.pen_up = true;
      std::ofstream(fs::path(views_dir) / (name + ".png"), std::ios::binary) << encode_png_rgb(render_view(scene, v));
      std::ofstream(fs::path(views_dir) / (name + ".svg")) << render_svg(scene);
    }
    const json& m = scene.metrics;
    std::cout << json{{"case", name},
                      {"family", gt.value("family", "")},
                      {"primitives", prims.size()},
                      {"route_ms", round_to(ms, 1e-3)},
                      {"motion_time_s", m["motion_time_s"]},
                      {"strokes", m["strokes"]},
                      {"pen_up_moves", m["pen_up_moves"]},
                      {"spins", m["spins"]},
                      {"commands", m["commands"]},
                      {"ppi", m["ppi"]}}
                     .dump()
              << "\n";
  }
  return 0;
}
