// Fidelity against the source's own ink (eval/ink_reference.hpp): cleaning up what is not ink
// never costs, removing ink always does, and a scene without its image says what it measured.
#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <opencv2/imgproc.hpp>

#include "core/file.hpp"
#include "core/hash.hpp"
#include "eval/ink_reference.hpp"
#include "eval/score.hpp"
#include "raster/png.hpp"
#include "tools/edit_session.hpp"
#include "tools_fixture.hpp"

using namespace svtest;

namespace {

// Makes `polys`, inked at the scene's stroke width, the scene's source image (a file beside the
// test's scratch files).
void set_source(Scene& s, const std::vector<Polyline>& polys) {
  cv::Mat img(s.source->height, s.source->width, CV_8UC1, cv::Scalar(255));
  const int sub = 16;
  for (const auto& pl : polys) {
    std::vector<cv::Point> pts;
    for (Vec2 p : pl) pts.push_back({int(std::lround(p.x * sub)), int(std::lround(p.y * sub))});
    cv::polylines(img, pts, false, cv::Scalar(0), int(std::lround(s.source->stroke_width_px)), cv::LINE_8, 4);
  }
  std::string png = encode_png_gray(img);
  s.source->sha256 = sha256_hex(png);
  auto path = std::filesystem::temp_directory_path() / ("sv-ink-" + s.source->sha256.substr(0, 16) + ".png");
  write_file_atomic(path.string(), png);  // tests running at once write the same file: whole or not at all
  s.source->path = path.string();
}

double total_length(const std::vector<Polyline>& polys) {
  double t = 0;
  for (const auto& pl : polys) t += polyline_length(pl);
  return t;
}

}  // namespace

TEST_CASE("planted: replacing a spur tangle by one arc along the ink does not lower f1", "[tools][planted][fidelity]") {
  // One arc stroke; the stroke graph split it at its middle, where two thinning spurs leave it
  // (one out of the ink, one into the bend), and the fit drew each piece.
  SceneBuilder b(200, 160, 6);
  Shape arc = Shape::arc({30, 120}, {170, 120}, 0.4);
  if (arc.at(0.5).y > 120) arc = Shape::arc({30, 120}, {170, 120}, -0.4);
  const Vec2 mid = arc.at(0.5), out = unit(mid - (arc.p0 + arc.p1) / 2);  // away from the centre
  const double half = std::tan(std::atan(arc.bulge) / 2);
  const Polyline along = arc.sample(1.0);
  const int m = static_cast<int>(along.size() / 2);
  b.add_chain({Shape::arc(arc.p0, along[m], half), Shape::arc(along[m], arc.p1, half)}, along,
              {{0, m}, {m, static_cast<int>(along.size()) - 1}});
  b.add(Shape::line(along[m], along[m] + out * 9));
  b.add(Shape::line(along[m + 4], along[m + 4] - out * 8));
  Scene s = b.routed();
  set_source(s, {along});
  const json metrics = {"f1", "precision", "recall"};
  json before = run("EvaluateRevision", s, {{"metrics", metrics}});
  CHECK(before["reference"] == "the source image's ink centrelines");
  CHECK(before["warnings"].empty());
  json spec = {{"type", "arc"}, {"p0", {arc.p0.x, arc.p0.y}}, {"p1", {arc.p1.x, arc.p1.y}}, {"bulge", arc.bulge}};
  EditSession e = edit(s, "ReplacePrimitive", {{"primitive_ids", {"p_0001", "p_0002", "p_0003", "p_0004"}}, {"replacement", spec}});
  REQUIRE(e.scene.primitives->size() == 1);
  json after = run("EvaluateRevision", e.scene, {{"metrics", metrics}});
  CHECK(after["metrics"]["f1"].get<double>() >= before["metrics"]["f1"].get<double>());
  CHECK(after["metrics"]["recall"].get<double>() >= before["metrics"]["recall"].get<double>() - 0.002);
  CHECK(e.after["f1"].get<double>() >= e.before["f1"].get<double>());
  // Against the stroke graph, the same clean-up cost f1: the spurs are edges there.
  CHECK(after["graph_f1"].get<double>() < before["graph_f1"].get<double>() - 0.01);
}

TEST_CASE("planted: DeletePrimitive's coverage loss is the recall it costs against the ink", "[tools][planted][fidelity]") {
  // The line at y = 140 is ink the stroke graph lost (a re-trace dropped it) and a primitive
  // drew back: deleting it uncovers 80 px of ink.
  SceneBuilder b = dev_drawing();
  Scene s = b.routed();
  auto& edges = s.graph->edges;
  edges.erase(std::remove_if(edges.begin(), edges.end(), [&](const Edge& e) { return e.id == s.primitive("p_0007")->edge; }),
              edges.end());
  EditSession e = edit(s, "DeletePrimitive", {{"primitive_ids", {"p_0007"}}, {"confirm_no_topology_break", false}});
  const double loss = e.results[0]["coverage_loss_px"].get<double>();
  const FidelityReference ref = fidelity_reference(s, nullptr);
  REQUIRE(ref.from_ink);
  const double tol = default_tolerance(stroke_width_of(s));
  const double drop = score(s, ref.paths, tol, Scope{}).recall - score(e.scene, ref.paths, tol, Scope{}).recall;
  CHECK(loss > 60);
  CHECK(loss == Approx(drop * total_length(ref.paths)).margin(2));
  CHECK(e.after["recall"].get<double>() < e.before["recall"].get<double>());
}

TEST_CASE("without its source image, fidelity is measured against the stroke graph and says so", "[tools][fidelity]") {
  SceneBuilder b = dev_drawing();
  Scene s = b.routed();
  s.source->path = "/nonexistent/drawing.png";
  s.source->sha256 = std::string(64, 'b');  // an image this process never measured
  for (const char* tool : {"EvaluateRevision", "AnalyzeCoverage"}) {
    json env = run(tool, s);
    INFO(tool);
    CHECK(env["reference"] == "the stroke graph's centrelines");
    REQUIRE(env["warnings"].size() >= 1);
    CHECK(env["warnings"][0].get<std::string>().rfind("fidelity is measured against the stroke graph", 0) == 0);
  }
  json diff = run("GetCurrentRender", s, {{"overlay", "diff"}});
  CHECK(diff["warnings"].dump().find("fidelity is measured against the stroke graph") != std::string::npos);
}

TEST_CASE("the ink reference keeps dots and is the same fresh or cached", "[eval][fidelity]") {
  SceneBuilder b(120, 80, 4);
  Scene s = b.scene();
  set_source(s, {{{10, 40}, {90, 40}}, {{105, 40}, {105, 40}}});
  const FidelityReference first = fidelity_reference(s, nullptr);
  REQUIRE(first.from_ink);
  bool dot = false;
  for (const auto& pl : first.paths) dot = dot || (polyline_length(pl) < 1e-9 && dist(pl.front(), {105, 40}) < 1.5);
  CHECK(dot);
  const FidelityReference again = fidelity_reference(s, nullptr);
  CHECK(again.paths == first.paths);
}
