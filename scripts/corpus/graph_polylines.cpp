// Prints the stroke graph's edges of a drawing as {"polylines": [[[x, y], ...], ...]}, the
// prediction format of the evaluation scorer, so the skeleton stage can be measured alone.
//
//   graph_polylines DRAWING.png                      JSON on stdout
//   graph_polylines --out DIR A.png B.png ...        DIR/A.json, DIR/B.json, ...
//   options: --set KEY=VALUE (config override), --set-w KEY=FACTOR (override by FACTOR times
//            the drawing's measured stroke width), --time (wall and CPU milliseconds per drawing on stderr),
//            --repeat N (run the stage N times, for timing)
#include <chrono>
#include <ctime>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "core/error.hpp"
#include "core/scene.hpp"
#include "graph/skeletonize.hpp"
#include "raster/image.hpp"

namespace {

std::string read_file(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  if (!f) throw sv::Error(sv::Code::io_error, "cannot read " + path);
  std::ostringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

sv::json polylines(const sv::Scene& scene) {
  sv::json lines = sv::json::array();
  for (const auto& e : scene.graph->edges) {
    sv::json pts = sv::json::array();
    for (auto p : e.points) pts.push_back({sv::round_to(p.x, 1e-3), sv::round_to(p.y, 1e-3)});
    lines.push_back(std::move(pts));
  }
  return {{"polylines", std::move(lines)}, {"stroke_width_px", scene.source->stroke_width_px}};
}

}  // namespace

int main(int argc, char** argv) {
  std::string out_dir;
  bool timing = false;
  int repeat = 1;
  sv::SkeletonOptions opt;
  std::map<std::string, double> width_factors;
  std::vector<std::string> files;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--out" && i + 1 < argc) out_dir = argv[++i];
    else if (a == "--time") timing = true;
    else if (a == "--repeat" && i + 1 < argc) repeat = std::max(1, std::stoi(argv[++i]));
    else if ((a == "--set" || a == "--set-w") && i + 1 < argc) {
      std::string kv = argv[++i];
      auto eq = kv.find('=');
      if (eq == std::string::npos) return std::fprintf(stderr, "%s needs KEY=VALUE\n", a.c_str()), 2;
      (a == "--set" ? opt.overrides : width_factors)[kv.substr(0, eq)] = std::stod(kv.substr(eq + 1));
    } else files.push_back(a);
  }
  if (files.empty() || (files.size() > 1 && out_dir.empty())) {
    std::fprintf(stderr, "usage: graph_polylines [--out DIR] [--set KEY=VALUE] [--set-w KEY=FACTOR] [--time] [--repeat N] DRAWING.png...\n");
    return 2;
  }
  try {
    for (const auto& file : files) {
      cv::Mat gray = sv::decode_image(read_file(file));
      sv::SkeletonOptions run = opt;
      if (!width_factors.empty()) {
        sv::Scene probe;
        sv::skeletonize(probe, gray, opt);
        for (const auto& [key, factor] : width_factors) run.overrides[key] = factor * probe.source->stroke_width_px;
      }
      sv::Scene scene;
      auto t0 = std::chrono::steady_clock::now();
      std::clock_t c0 = std::clock();
      for (int r = 0; r < repeat; ++r) {
        scene = sv::Scene{};
        sv::skeletonize(scene, gray, run);
      }
      double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count() / repeat;
      double cpu_ms = 1000.0 * double(std::clock() - c0) / CLOCKS_PER_SEC / repeat;
      if (timing) std::fprintf(stderr, "%s %.2f ms wall %.2f ms cpu\n", file.c_str(), ms, cpu_ms);
      std::string text = polylines(scene).dump() + "\n";
      if (out_dir.empty()) {
        std::cout << text;
      } else {
        std::ofstream(std::filesystem::path(out_dir) / (std::filesystem::path(file).stem().string() + ".json")) << text;
      }
    }
  } catch (const sv::Error& e) {
    std::fprintf(stderr, "graph_polylines: %s\n", e.what());
    return sv::exit_status(e.code());
  }
  return 0;
}
