// sv-fit-corpus: measures the fit stage on the evaluation corpus without the skeleton stage.
// Each ground-truth centreline of CASE.gt.json becomes a graph edge (closed when it ends where
// it starts), perturbed like a traced skeleton (points rounded to a grid, plus uniform noise),
// is fitted, and the result is written as a scorer prediction OUT/CASE.json: the chains as
// sampled polylines and the primitives in p0/p1/bulge form. One line per case to stdout.
//
//   sv-fit-corpus --out DIR [--quantum 0.5] [--noise 0.3] [--seed 1] [--set fit.KEY=V]... GT...
#include <fmt/format.h>

#include <cstdint>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <random>

#include "core/error.hpp"
#include "core/scene.hpp"
#include "fit/fit.hpp"

namespace fs = std::filesystem;
using namespace sv;

namespace {

struct Args {
  fs::path out;
  double quantum = 0.5, noise = 0.3;
  uint64_t seed = 1;
  bool issues = false;  // list the primitives that exceed the tolerance
  FitOptions fit;
  std::vector<fs::path> inputs;
};

Args parse(int argc, char** argv) {
  Args a;
  for (int i = 1; i < argc; ++i) {
    std::string s = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) throw std::runtime_error("missing value after " + s);
      return argv[++i];
    };
    if (s == "--out")
      a.out = value();
    else if (s == "--quantum")
      a.quantum = std::stod(value());
    else if (s == "--noise")
      a.noise = std::stod(value());
    else if (s == "--seed")
      a.seed = std::stoull(value());
    else if (s == "--issues")
      a.issues = true;
    else if (s == "--set") {
      std::string kv = value();
      auto eq = kv.find('=');
      if (eq == std::string::npos) throw std::runtime_error("--set needs KEY=VALUE");
      a.fit.overrides[kv.substr(0, eq)] = std::stod(kv.substr(eq + 1));
    } else if (fs::is_directory(s)) {
      for (const auto& e : fs::directory_iterator(s))
        if (e.path().string().ends_with(".gt.json")) a.inputs.push_back(e.path());
    } else {
      a.inputs.push_back(s);
    }
  }
  if (a.out.empty() || a.inputs.empty())
    throw std::runtime_error("usage: sv-fit-corpus --out DIR GT...");
  std::sort(a.inputs.begin(), a.inputs.end());
  return a;
}

uint64_t fnv1a(const std::string& s) {
  uint64_t h = 1469598103934665603ull;
  for (unsigned char c : s) h = (h ^ c) * 1099511628211ull;
  return h;
}

// Uniform in [-1, 1] from the generator's raw bits (portable, unlike the distributions).
double symmetric_unit(std::mt19937_64& rng) { return (rng() >> 11) * 0x1.0p-53 * 2.0 - 1.0; }

Polyline perturbed(const Polyline& gt, const Args& a, std::mt19937_64& rng) {
  Polyline out;
  for (Vec2 p : gt) {
    if (a.quantum > 0)
      p = {std::round(p.x / a.quantum) * a.quantum, std::round(p.y / a.quantum) * a.quantum};
    p = p + Vec2{symmetric_unit(rng), symmetric_unit(rng)} * a.noise;
    out.push_back(p);
  }
  return out;
}

Scene scene_of(const json& gt, const Args& a) {
  Scene s;
  s.source = Source{gt.value("case", std::string()), "", gt.value("width", 0),
                    gt.value("height", 0), gt.value("stroke_width_px", 0.0)};
  std::mt19937_64 rng(a.seed ^ fnv1a(s.source->path));
  Graph g;
  for (const auto& pl : gt["polylines"]) {
    Polyline pts;
    for (const auto& q : pl) pts.push_back({q[0].get<double>(), q[1].get<double>()});
    if (pts.empty()) continue;
    bool closed = pts.size() > 2 && pts.front() == pts.back();
    pts = perturbed(pts, a, rng);
    if (closed) pts.back() = pts.front();
    Edge e;
    e.id = fmt::format("e_{:04d}", g.edges.size() + 1);
    std::string v0 = fmt::format("v_{:04d}", g.vertices.size() + 1);
    g.vertices.push_back({v0, pts.front(), closed ? 2 : 1, closed ? "loop" : "end"});
    std::string v1 = v0;
    if (!closed) {
      v1 = fmt::format("v_{:04d}", g.vertices.size() + 1);
      g.vertices.push_back({v1, pts.back(), 1, "end"});
    }
    e.v0 = v0;
    e.v1 = v1;
    e.points = std::move(pts);
    e.closed = closed;
    g.edges.push_back(std::move(e));
  }
  s.graph = std::move(g);
  return s;
}

json point(Vec2 p) { return json::array({p.x, p.y}); }

json prediction(const Scene& s) {
  json polylines = json::array(), prims = json::array();
  std::string edge;
  for (const Primitive& p : *s.primitives) {
    Polyline samples = p.shape.sample(0.5);
    if (p.edge != edge || polylines.empty()) {
      polylines.push_back(json::array());
      edge = p.edge;
    } else {
      samples.erase(samples.begin());
    }
    for (Vec2 q : samples) polylines.back().push_back(point(q));
    if (p.shape.type == PrimType::circle)
      prims.push_back(
          {{"type", "circle"}, {"center", point(p.shape.center)}, {"radius", p.shape.radius}});
    else if (p.shape.type == PrimType::arc)
      prims.push_back({{"type", "arc"},
                       {"p0", point(p.shape.p0)},
                       {"p1", point(p.shape.p1)},
                       {"bulge", p.shape.bulge}});
    else
      prims.push_back({{"type", "line"}, {"p0", point(p.shape.p0)}, {"p1", point(p.shape.p1)}});
  }
  return {{"polylines", polylines}, {"primitives", prims}};
}

}  // namespace

int main(int argc, char** argv) {
  try {
    Args a = parse(argc, argv);
    fs::create_directories(a.out);
    double total_ms = 0;
    for (const auto& path : a.inputs) {
      std::ifstream in(path);
      json gt = json::parse(in);
      Scene s = scene_of(gt, a);
      size_t points = 0;
      for (const auto& e : s.graph->edges) points += e.points.size();
      // Processor time, not wall time: the machine may be shared.
      std::clock_t t0 = std::clock();
      sv::fit(s, a.fit);
      double ms = 1000.0 * static_cast<double>(std::clock() - t0) / CLOCKS_PER_SEC;
      total_ms += ms;
      int counts[3] = {0, 0, 0}, over = 0;
      double worst = 0, tol = config_value(s, "fit.tolerance_px", 1);
      for (const auto& p : *s.primitives) {
        counts[static_cast<int>(p.shape.type)]++;
        over += !p.issues.empty();
        worst = std::max(worst, p.fit_max_px / tol);
      }
      int gt_counts[3] = {0, 0, 0};
      for (const auto& q : gt.value("primitives", json::array()))
        gt_counts[static_cast<int>(prim_type_from(q["type"]))]++;
      std::string name = gt.value("case", path.stem().stem().string());
      std::ofstream(a.out / (name + ".json")) << prediction(s).dump() << "\n";
      std::cout << fmt::format(
          "{:40s} pts {:5d} prims {:3d} (L{} A{} C{}) gt {:3d} (L{} A{} C{}) over_tol {} worst "
          "{:.2f} relations {} {:.2f} ms\n",
          name, points, s.primitives->size(), counts[0], counts[1], counts[2],
          gt_counts[0] + gt_counts[1] + gt_counts[2], gt_counts[0], gt_counts[1], gt_counts[2],
          over, worst, s.relations.size(), ms);
      if (a.issues)
        for (const auto& p : *s.primitives)
          if (!p.issues.empty())
            std::cout << fmt::format(
                "  {} {} {} span {}..{} of {} max {:.2f} p0 ({:.1f},{:.1f}) p1 ({:.1f},{:.1f}) "
                "bulge {:.3f}\n",
                p.id, prim_type_name(p.shape.type), p.edge, p.span0, p.span1,
                s.graph->edge(p.edge)->points.size(), p.fit_max_px, p.shape.p0.x, p.shape.p0.y,
                p.shape.p1.x, p.shape.p1.y, p.shape.bulge);
    }
    std::cout << fmt::format("cases {} mean {:.2f} ms (processor time) per drawing\n",
                             a.inputs.size(), total_ms / a.inputs.size());
    return 0;
  } catch (const Error& e) {
    std::cerr << "sv-fit-corpus: " << e.what() << "\n";
    return exit_status(e.code());
  } catch (const std::exception& e) {
    std::cerr << "sv-fit-corpus: " << e.what() << "\n";
    return 2;
  }
}
