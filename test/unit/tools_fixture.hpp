// Scenes built by hand for the tool tests: each shape becomes a graph edge (its own samples,
// or the source points given), a primitive fitted to all of it, a tour step in order, and the
// command stream the router emits for that tour.
#pragma once
#include <catch2/catch.hpp>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <opencv2/imgproc.hpp>
#include <string>
#include <vector>

#include "core/file.hpp"
#include "core/hash.hpp"
#include "raster/png.hpp"

#include "core/scene.hpp"
#include "robot/simulate.hpp"
#include "route/route.hpp"
#include "core/error.hpp"
#include "tools/edit_session.hpp"
#include "tools/tool.hpp"

namespace svtest {

using namespace sv;

class SceneBuilder {
 public:
  SceneBuilder(int width, int height, double stroke_width) {
    s_.source = Source{"fixture.png", std::string(64, 'a'), width, height, stroke_width};
    s_.graph = Graph{};
    s_.primitives = std::vector<Primitive>{};
    set_config(s_, "fit.tolerance_px", 0.25 * stroke_width, "stroke_width", "largest distance of a source point from its primitive");
    set_config(s_, "fit.max_sweep_deg", 350, "default", "arcs sweeping more are split");
    set_config(s_, "fit.min_arc_sagitta_px", 0.5, "default", "arcs flatter than this are lines");
    set_config(s_, "fit.corner_angle_deg", 50, "default", "turns sharper than this split an edge");
  }

  // Adds a primitive fitted to `source` (default: the shape's own samples); returns its id.
  std::string add(const Shape& shape, Polyline source = {}) {
    if (source.empty()) source = shape.sample(1.0);
    const bool closed = shape.type == PrimType::circle;
    Edge e;
    e.id = id('e', ++edges_);
    e.points = source;
    e.closed = closed;
    e.v0 = vertex(source.front(), closed);
    e.v1 = closed ? e.v0 : vertex(source.back(), false);
    s_.graph->edges.push_back(e);
    Primitive p;
    p.id = id('p', ++prims_);
    p.shape = shape;
    p.edge = e.id;
    p.span0 = 0;
    p.span1 = static_cast<int>(source.size()) - 1;
    double ss = 0, mx = 0;
    for (Vec2 q : source) {
      double d = shape.distance_to(q);
      ss += d * d, mx = std::max(mx, d);
    }
    p.fit_rms_px = std::sqrt(ss / source.size());
    p.fit_max_px = mx;
    s_.primitives->push_back(p);
    return p.id;
  }

  // Several primitives along one edge (a chain fitted piecewise to `source`).
  std::vector<std::string> add_chain(const std::vector<Shape>& shapes, const Polyline& source,
                                     const std::vector<std::pair<int, int>>& spans) {
    Edge e;
    e.id = id('e', ++edges_);
    e.points = source;
    e.v0 = vertex(source.front(), false);
    e.v1 = vertex(source.back(), false);
    s_.graph->edges.push_back(e);
    std::vector<std::string> ids;
    for (size_t i = 0; i < shapes.size(); ++i) {
      Primitive p;
      p.id = id('p', ++prims_);
      p.shape = shapes[i];
      p.edge = e.id;
      p.span0 = spans[i].first, p.span1 = spans[i].second;
      s_.primitives->push_back(p);
      ids.push_back(p.id);
    }
    return ids;
  }

  Scene& scene() { return s_; }

  // Tour in id order (forward unless listed in `reversed`; circles entered at `entry_deg`) and
  // the router's command stream for it. The source raster (the graph's edges inked at the
  // stroke width) is written beside the test's scratch files, where source.path names it.
  Scene routed(const std::vector<std::string>& reversed = {}, double entry_deg = 0) {
    Scene out = s_;
    write_source(out);
    out.tour = std::vector<TourStep>{};
    for (const auto& p : *out.primitives) {
      bool rev = std::find(reversed.begin(), reversed.end(), p.id) != reversed.end();
      out.tour->push_back({p.id, rev, p.shape.type == PrimType::circle ? entry_deg : 0});
    }
    RouteOptions o;
    o.ppi = 100;
    emit_tour(out, o);
    return out;
  }

 private:
  void write_source(Scene& out) const {
    cv::Mat img(out.source->height, out.source->width, CV_8UC1, cv::Scalar(255));
    const int sub = 16;
    for (const auto& e : out.graph->edges) {
      std::vector<cv::Point> pts;
      for (Vec2 p : e.points) pts.push_back({int(std::lround(p.x * sub)), int(std::lround(p.y * sub))});
      cv::polylines(img, pts, e.closed, cv::Scalar(0), int(std::lround(out.source->stroke_width_px)), cv::LINE_8, 4);
    }
    std::string png = encode_png_gray(img);
    out.source->sha256 = sha256_hex(png);
    auto path = std::filesystem::temp_directory_path() / ("sv-fixture-" + out.source->sha256.substr(0, 16) + ".png");
    write_file_atomic(path.string(), png);  // tests running at once write the same file: whole or not at all
    out.source->path = path.string();
  }
  static std::string id(char k, int n) {
    char buf[16];
    std::snprintf(buf, sizeof buf, "%c_%04d", k, n);
    return buf;
  }
  std::string vertex(Vec2 p, bool loop) {
    for (auto& v : s_.graph->vertices)
      if (!loop && v.kind != "loop" && dist(v.p, p) < 0.5) {
        v.degree += 1;
        v.kind = "junction";
        return v.id;
      }
    Vertex v{id('v', ++vertices_), p, loop ? 2 : 1, loop ? "loop" : "end"};
    s_.graph->vertices.push_back(v);
    return v.id;
  }
  Scene s_;
  int edges_ = 0, prims_ = 0, vertices_ = 0;
};

// A small drawing with every primitive type: a square frame, a circle, an arc, two parallel
// lines. 240 x 200 px, stroke 4 px.
inline SceneBuilder dev_drawing() {
  SceneBuilder b(240, 200, 4);
  b.add(Shape::line({20, 20}, {100, 20}));
  b.add(Shape::line({100, 20}, {100, 100}));
  b.add(Shape::line({100, 100}, {20, 100}));
  b.add(Shape::line({20, 100}, {20, 20}));
  b.add(Shape::circle({170, 60}, 30));
  b.add(Shape::arc({130, 150}, {210, 150}, 0.4));
  b.add(Shape::line({20, 140}, {100, 140}));
  b.add(Shape::line({20, 170}, {100, 170}));
  return b;
}

// The scene as sv-simulate leaves it.
inline Scene simulated(Scene s) {
  simulate(s, SimulateOptions{});
  return s;
}

// Two polylines end to end, b's first point (a's last) not repeated.
inline Polyline join(const Polyline& a, const Polyline& b) {
  Polyline out = a;
  out.insert(out.end(), b.begin() + 1, b.end());
  return out;
}

// The read-only tools on a scene: sv-diagnose's and sv-simulate's.
inline std::vector<const Tool*> scene_tools() {
  std::vector<const Tool*> out;
  for (const auto& t : registry())
    if (t.kind == ToolKind::read && (t.executable == "sv-diagnose" || t.executable == "sv-simulate")) out.push_back(&t);
  return out;
}

// Runs a tool in-process on a scene; throws what the tool throws.
inline json run(const std::string& name, const Scene& s, json request = json::object(), ToolResult* out = nullptr) {
  const Tool* t = find_tool(name);
  if (!t) throw std::runtime_error("no tool " + name);
  Scene copy = s;
  std::string rid = assign_revision_id(copy);
  ToolContext ctx{s, nullptr, rid};
  ToolResult r;
  json env = run_tool(*t, ctx, normalize_request(*t, request), r);
  if (out) *out = r;
  return env;
}

// One edit through the session (settle included), as sv-edit runs it.
inline EditSession edit(const Scene& s, const std::string& tool, const json& request) {
  const Tool* t = find_tool(tool);
  REQUIRE(t != nullptr);
  ToolContext ctx{s, nullptr, "0"};
  return apply_edits(ctx, {EditStep{t, normalize_request(*t, request)}});
}

// The refusal of an edit: its error (code internal when it did not refuse).
inline Error refusal(const Scene& s, const std::string& tool, const json& request) {
  try {
    edit(s, tool, request);
  } catch (const Error& e) {
    return e;
  }
  return Error(Code::internal, "no refusal");
}

}  // namespace svtest
