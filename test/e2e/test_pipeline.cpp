// The whole pipeline on the bundled drawings, scored against their ground truth with sv's own
// metrics; determinism; and the revision store seen from the command line.
#include <catch2/catch.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <set>
#include <sstream>

#include "core/scene.hpp"
#include "eval/coverage.hpp"
#include "../unit/image_files.hpp"
#include "process.hpp"
#include "raster/png.hpp"
#include "robot/motion.hpp"
#include "robot/replay.hpp"
#include "robot/simulate.hpp"

using namespace svtest;

namespace {

std::string pipeline(const std::string& png) {
  return fmt::format("{} --no-store {} | {} --no-store | {} --no-store", bin("sv-skeleton"), png, bin("sv-fit"),
                     bin("sv-route"));
}

struct Case {
  const char* name;
  double min_f1;       // at the corpus's default tolerance, max(2, stroke width / 2)
  double min_f1_tol1;  // at 1 px
};

}  // namespace

TEST_CASE("the pipeline draws each bundled drawing faithfully", "[e2e][pipeline]") {
  // hanzi ground truth is a coarse hand-placed median: judged at the default tolerance only.
  const Case cases[] = {
      {"feather_umbrella_w8", 0.97, 0.85},      {"feather_shopping-cart_w5", 0.97, 0.85},
      {"lucide_circle-check_w8", 0.97, 0.85},   {"lucide_milestone_w3", 0.97, 0.85},
      {"tabler_circle-letter-x_w8", 0.97, 0.85}, {"tabler_hexagons_w5", 0.97, 0.85},
      {"hand_circle-pause_w10", 0.95, 0.60},    {"hand_info-square_w4", 0.95, 0.60},
      {"hanzi_u5165", 0.90, 0.0},               {"hanzi_u5f51", 0.90, 0.0},
      {"hershey_futural_02_w4", 0.95, 0.80},    {"hershey_scripts_09_w6", 0.95, 0.80},
      // phone photos of drawings on paper: marker under a shadowed corner, light pencil
      {"photo_tabler_math-x-floor-divide-y_w3", 0.97, 0.85}, {"photo_lucide_playing-card_w3", 0.97, 0.85},
  };
  for (const auto& c : cases) {
    INFO(c.name);
    Run r = run(pipeline(data(std::string(c.name) + ".png")));
    REQUIRE(r.status == 0);
    sv::Scene s = sv::parse_scene(r.out);
    REQUIRE(s.commands);
    REQUIRE(s.robot);
    auto gt = nlohmann::json::parse(slurp(data(std::string(c.name) + ".gt.json")));
    auto drawn = sv::replay(*s.commands, s.robot->start).strokes;
    double diag = std::hypot(gt["width"].get<double>(), gt["height"].get<double>());
    double tol = sv::default_tolerance(gt["stroke_width_px"].get<double>());
    sv::Coverage cov = sv::measure_coverage(drawn, sv::ground_truth_polylines(gt), tol, diag);
    sv::Coverage cov1 = sv::measure_coverage(drawn, sv::ground_truth_polylines(gt), 1.0, diag);
    INFO(fmt::format("f1 {:.4f} f1@1px {:.4f} chamfer {:.3f}", cov.f1, cov1.f1, cov.chamfer_px));
    CHECK(cov.f1 >= c.min_f1);
    CHECK(cov1.f1 >= c.min_f1_tol1);
    // Nothing left out, and little drawn twice (lines drawn again where that beats a pen lift):
    // the drawn length from 90 % to 125 % of the truth's.
    CHECK(cov.drawn_length_px >= 0.9 * cov.reference_length_px);
    CHECK(cov.drawn_length_px <= 1.25 * cov.reference_length_px);
  }
}

TEST_CASE("sv-skeleton reads the drawing as JPEG, TIFF, BMP and WebP as it reads the PNG", "[e2e][pipeline][image]") {
  const std::string name = "feather_umbrella_w8";
  cv::Mat gray = sv::decode_png(slurp(data(name + ".png")));
  auto write = [&](const std::string& file, const std::string& bytes) {
    spit(scratch() / file, bytes);
    return (scratch() / file).string();
  };
  Run png = run(bin("sv-skeleton") + " --no-store " + data(name + ".png"));
  REQUIRE(png.status == 0);
  const auto png_graph = nlohmann::json::parse(png.out)["graph"];
  // Lossless formats give the PNG's pixels, hence the PNG's graph exactly.
  for (auto [file, bytes] : {std::pair{std::string("drawing.tiff"), sv::test::encode_tiff(gray, {COMPRESSION_LZW})},
                             std::pair{std::string("drawing.bmp"), sv::test::encode_bmp(gray)},
                             std::pair{std::string("drawing.webp"), sv::test::encode_webp(gray)}}) {
    INFO(file);
    Run r = run(bin("sv-skeleton") + " --no-store " + write(file, bytes));
    REQUIRE(r.status == 0);
    CHECK(r.err.empty());
    CHECK(nlohmann::json::parse(r.out)["graph"] == png_graph);
  }
  // A JPEG (a phone's quality) traces to the same strokes: the drawn result scores against the
  // ground truth as the PNG's must, and the graph has the PNG's edges.
  std::string jpeg = write("drawing.jpg", sv::test::encode_jpeg(gray, {90}));
  Run r = run(pipeline(jpeg));
  REQUIRE(r.status == 0);
  CHECK(r.err.empty());
  sv::Scene s = sv::parse_scene(r.out);
  REQUIRE(s.graph);
  REQUIRE(s.commands);
  CHECK(s.source->width == gray.cols);
  CHECK(s.source->height == gray.rows);
  CHECK(s.graph->edges.size() == png_graph["edges"].size());
  auto gt = nlohmann::json::parse(slurp(data(name + ".gt.json")));
  double diag = std::hypot(gt["width"].get<double>(), gt["height"].get<double>());
  double tol = sv::default_tolerance(gt["stroke_width_px"].get<double>());
  sv::Coverage cov = sv::measure_coverage(sv::replay(*s.commands, s.robot->start).strokes, sv::ground_truth_polylines(gt), tol, diag);
  INFO(fmt::format("JPEG f1 {:.4f}", cov.f1));
  CHECK(cov.f1 >= 0.97);

  // A phone's photo held upright: stored sideways with EXIF Orientation 6; the scene is upright.
  cv::Mat sideways;
  cv::rotate(gray, sideways, cv::ROTATE_90_COUNTERCLOCKWISE);
  const std::string b = sv::test::encode_jpeg(sideways, {90});
  const std::string exif("\xFF\xE1\x00\x22" "Exif\0\0" "MM\x00\x2A\x00\x00\x00\x08" "\x00\x01"
                         "\x01\x12\x00\x03\x00\x00\x00\x01\x00\x06\x00\x00" "\x00\x00\x00\x00", 36);
  spit(scratch() / "upright.jpg", std::string(b.begin(), b.begin() + 2) + exif + std::string(b.begin() + 2, b.end()));
  Run up = run(bin("sv-skeleton") + " --no-store " + (scratch() / "upright.jpg").string());
  REQUIRE(up.status == 0);
  sv::Scene u = sv::parse_scene(up.out);
  CHECK(u.source->width == gray.cols);
  CHECK(u.source->height == gray.rows);
  CHECK(u.graph->edges.size() == png_graph["edges"].size());

  // The codecs are in the executable (libtiff aside, loaded for a TIFF): a copy of it alone reads
  // a JPEG as well as a PNG.
  namespace fs = std::filesystem;
  const fs::path alone = scratch() / "alone" / "bin";
  fs::create_directories(alone);
  fs::copy_file(bin("sv-skeleton"), alone / "sv-skeleton", fs::copy_options::overwrite_existing);
  const std::string exe = (alone / "sv-skeleton").string();
  CHECK(run(exe + " --no-store " + data(name + ".png")).status == 0);
  Run copied = run(exe + " --no-store " + (scratch() / "upright.jpg").string());
  CHECK(copied.status == 0);
  CHECK(copied.out == up.out);
}

TEST_CASE("sv-fit --fast draws faster within the stroke's ink", "[e2e][pipeline]") {
  for (const char* name : {"hand_info-square_w4", "hershey_scripts_09_w6", "hershey_futural_02_w4", "hanzi_u5165"}) {
    INFO(name);
    auto gt = nlohmann::json::parse(slurp(data(std::string(name) + ".gt.json")));
    const double tol = sv::default_tolerance(gt["stroke_width_px"].get<double>());
    const double diag = std::hypot(gt["width"].get<double>(), gt["height"].get<double>());
    double seconds[2], f1[2];
    size_t primitives[2];
    for (int fast : {0, 1}) {
      Run r = run(fmt::format("{} --no-store {} | {} --no-store {} | {} --no-store", bin("sv-skeleton"),
                              data(std::string(name) + ".png"), bin("sv-fit"), fast ? "--fast" : "", bin("sv-route")));
      REQUIRE(r.status == 0);
      sv::Scene s = sv::parse_scene(r.out);
      if (fast) {
        CHECK(s.config["fit.merge_width_ratio"]["value"] == 0.5);
        // A merged primitive is explained by the merge tolerance it answers to.
        const double tol = s.config["fit.tolerance_px"]["value"];
        for (const auto& p : *s.primitives)
          if (p.fit_max_px > tol * 1.01) {
            spit(scratch() / "fast.json", r.out);
            Run why = run(fmt::format("{} explain-threshold --primitive-id {} {}", bin("sv-diagnose"), p.id,
                                      (scratch() / "fast.json").string()));
            CHECK(why.out.find("fit.merge_tolerance_px") != std::string::npos);
            break;
          }
      }
      primitives[fast] = s.primitives->size();
      f1[fast] = sv::measure_coverage(sv::replay(*s.commands, s.robot->start).strokes, sv::ground_truth_polylines(gt), tol, diag).f1;
      sv::simulate(s, {});
      seconds[fast] = s.simulation->motion_time_s;
    }
    INFO(fmt::format("{} -> {} primitives, {:.1f} -> {:.1f} s, f1 {:.3f} -> {:.3f}", primitives[0], primitives[1], seconds[0],
                     seconds[1], f1[0], f1[1]));
    CHECK(primitives[1] < primitives[0]);
    CHECK(seconds[1] < 0.95 * seconds[0]);
    CHECK(f1[1] >= 0.9);
  }
}

TEST_CASE("the same input and options give byte-identical scenes", "[e2e][determinism]") {
  std::string cmd = pipeline(data("tabler_circle-letter-x_w8.png")) + " | " + bin("sv-simulate") + " --no-store";
  Run a = run(cmd), b = run(cmd);
  REQUIRE(a.status == 0);
  CHECK(a.out == b.out);
  CHECK(sv::parse_scene(a.out).revision.id == sv::parse_scene(b.out).revision.id);
}

TEST_CASE("sv-route on its own output changes nothing, with a free or a given start", "[e2e][determinism]") {
  const auto fitted = scratch() / "route-again-fitted.json";
  REQUIRE(run(fmt::format("{} --no-store {} | {} --no-store > {}", bin("sv-skeleton"), data("hershey_scripts_09_w6.png"),
                          bin("sv-fit"), fitted.string()))
              .status == 0);
  for (std::string start : {"", " --start 5,7.5,30"}) {
    INFO(start);
    const auto once = scratch() / "route-once.json";
    REQUIRE(run(fmt::format("{} --no-store{} {} > {}", bin("sv-route"), start, fitted.string(), once.string())).status == 0);
    // Without --start the second run keeps the start the first chose (free, or the one given).
    Run twice = run(fmt::format("{} --no-store {}", bin("sv-route"), once.string()));
    REQUIRE(twice.status == 0);
    sv::Scene a = sv::parse_scene(slurp(once)), b = sv::parse_scene(twice.out);
    a.revision = {};
    b.revision = {};  // b's parent is a
    CHECK(sv::dump_scene(a) == sv::dump_scene(b));
  }
}

TEST_CASE("a start given to sv-route is where the robot starts", "[e2e][route]") {
  const std::string png = data("feather_umbrella_w8.png");
  Run given = run(pipeline(png) + " --start 10,20,45");
  REQUIRE(given.status == 0);
  sv::Scene s = sv::parse_scene(given.out);
  REQUIRE(s.robot);
  CHECK(s.robot->start_fixed);
  CHECK(s.robot->start.x == 10);
  CHECK(s.robot->start.y == 20);
  CHECK(s.robot->start.heading_deg == 45);
  // The stream starts there: turns and pen-up travel from (10, 20) to the first stroke's start.
  auto moves = sv::replay_moves(*s.commands, s.robot->start);
  REQUIRE(!moves.empty());
  CHECK(moves.front().start.x == 10);
  CHECK(moves.front().start.y == 20);
  CHECK(!moves.front().pen_down);
  size_t k = 0;
  while (k < moves.size() && !moves[k].pen_down) ++k;
  REQUIRE(k < moves.size());
  const sv::TourStep& first = s.tour->front();
  const sv::Shape& shape = s.primitive(first.primitive)->shape;
  if (shape.type != sv::PrimType::circle) {  // a circle starts where the route enters it
    const sv::Vec2 from = first.reverse ? shape.at(first.t1) : shape.at(first.t0);
    CHECK(sv::dist({moves[k].start.x, moves[k].start.y}, from) < 0.01);
  }
  // free: placed on the first stroke, facing along it, drawing from the first command.
  Run free = run(pipeline(png) + " --start free");
  REQUIRE(free.status == 0);
  sv::Scene f = sv::parse_scene(free.out);
  CHECK_FALSE(f.robot->start_fixed);
  CHECK(sv::replay_moves(*f.commands, f.robot->start).front().pen_down);
  CHECK(sv::stream_time_s(*f.commands, f.robot->ppi, 0) <= sv::stream_time_s(*s.commands, s.robot->ppi, 0));
  // A start off the page is refused before any work.
  Run far = run(pipeline(png) + " --start 1e9,0,0");
  CHECK(far.status == 2);
  CHECK(far.err.find("invalid_selection") != std::string::npos);
}

TEST_CASE("sv-route --robot plotter is recorded, kept and timed as a plotter by sv-simulate", "[e2e][plotter]") {
  const auto fitted = scratch() / "plotter-fitted.json";
  REQUIRE(run(fmt::format("{} --no-store {} | {} --no-store > {}", bin("sv-skeleton"), data("lucide_circle-check_w8.png"),
                          bin("sv-fit"), fitted.string()))
              .status == 0);
  const auto routed = scratch() / "plotter-routed.json";
  REQUIRE(run(fmt::format("{} --no-store --robot plotter --travel-speed 200 {} > {}", bin("sv-route"), fitted.string(),
                          routed.string()))
              .status == 0);
  const auto svg = scratch() / "plotter.svg", gcode = scratch() / "plotter.gcode";
  Run sim = run(fmt::format("{} --no-store {} --svg {} --gcode {}", bin("sv-simulate"), routed.string(), svg.string(),
                            gcode.string()));
  REQUIRE(sim.status == 0);
  sv::Scene s = sv::parse_scene(sim.out);
  REQUIRE(s.robot);
  CHECK(s.robot->model == "plotter");
  CHECK(s.robot->travel_speed_mm_s == 200);
  CHECK(s.robot->draw_speed_mm_s == sv::kDefaultPlotterDrawMmS);
  CHECK(s.robot->pen_time_s == sv::kDefaultPlotterPenTimeS);
  CHECK(s.metrics["spin_time_s"].get<double>() == 0);
  CHECK(s.metrics["draw_time_s"].get<double>() == Approx(sv::stream_time_s(*s.commands, *s.robot)).margin(1e-5));
  // The circle stays an arc: in the stream, the SVG and the G-code.
  CHECK(std::count_if(s.commands->begin(), s.commands->end(),
                      [](const sv::Command& c) { return c.kind == sv::Command::Kind::arc; }) >= 1);
  CHECK(slurp(svg).find(" A ") != std::string::npos);
  const std::string g = slurp(gcode);
  CHECK((g.find("G2 ") != std::string::npos || g.find("G3 ") != std::string::npos));
  // Routing the plotter's scene again keeps its profile; --robot doodlebot takes it back.
  Run again = run(fmt::format("{} --no-store {}", bin("sv-route"), routed.string()));
  REQUIRE(again.status == 0);
  sv::Scene a = sv::parse_scene(again.out);
  CHECK(a.robot->model == "plotter");
  CHECK(a.robot->travel_speed_mm_s == 200);
  Run back = run(fmt::format("{} --no-store --robot doodlebot {}", bin("sv-route"), routed.string()));
  REQUIRE(back.status == 0);
  CHECK(sv::parse_scene(back.out).robot->model == "doodlebot");
  // The default is the Doodlebot, byte for byte as an explicit --robot doodlebot.
  Run plain = run(fmt::format("{} --no-store {}", bin("sv-route"), fitted.string()));
  Run doodle = run(fmt::format("{} --no-store --robot doodlebot {}", bin("sv-route"), fitted.string()));
  REQUIRE(plain.status == 0);
  REQUIRE(doodle.status == 0);
  CHECK(sv::parse_scene(plain.out).robot->model == "doodlebot");
  sv::Scene p = sv::parse_scene(plain.out), d = sv::parse_scene(doodle.out);
  p.revision = {};
  d.revision = {};
  CHECK(sv::dump_scene(p) == sv::dump_scene(d));
  // Unknown robots and a Doodlebot's speeds are refused.
  CHECK(run(fmt::format("{} --no-store --robot tractor {}", bin("sv-route"), fitted.string())).status == 2);
  CHECK(run(fmt::format("{} --no-store --travel-speed 100 {}", bin("sv-route"), fitted.string())).status == 2);
}

TEST_CASE("stages record revisions in the store and run from it", "[e2e][store]") {
  auto dir = scratch() / "storework";
  std::filesystem::create_directories(dir);
  std::string cd = "cd " + dir.string() + " && ";
  REQUIRE(run(cd + bin("sv-commit") + " init").status == 0);
  std::string png = data("feather_umbrella_w8.png");
  Run piped = run(cd + fmt::format("{} {} | {} | {}", bin("sv-skeleton"), png, bin("sv-fit"), bin("sv-route")));
  REQUIRE(piped.status == 0);
  std::string routed = sv::parse_scene(piped.out).revision.id;

  Run log = run(cd + bin("sv-commit") + " --json log");
  REQUIRE(log.status == 0);
  auto revs = nlohmann::json::parse(log.out)["revisions"];
  REQUIRE(revs.size() == 3);
  CHECK(revs[0]["revision_id"] == routed);
  CHECK(revs[0]["created_by_tool"] == "sv-route");
  CHECK(revs[2]["created_by_tool"] == "sv-skeleton");

  // The stored scene is the one the pipeline printed, byte for byte.
  Run show = run(cd + bin("sv-commit") + " show HEAD");
  CHECK(show.out == piped.out);
  // The source PNG is kept as a blob named by its hash.
  std::string sha = sv::parse_scene(piped.out).source->sha256;
  CHECK(std::filesystem::exists(dir / ".svrev" / "objects" / sha.substr(0, 2) / sha.substr(2)));

  // Store mode: re-fit the skeleton revision once it is checked out (a --rev HEAD has moved past
  // is a conflict); the result is a small envelope, HEAD advances.
  std::string skel = revs[2]["revision_id"];
  Run stale = run(cd + bin("sv-fit") + " --rev " + skel.substr(0, 10) + " --note again");
  CHECK(stale.status == 5);
  CHECK(nlohmann::json::parse(stale.out)["error"]["code"] == "conflict");
  REQUIRE(run(cd + bin("sv-commit") + " checkout " + skel.substr(0, 10)).status == 0);
  Run refit = run(cd + bin("sv-fit") + " --rev " + skel.substr(0, 10) + " --note again");
  REQUIRE(refit.status == 0);
  auto env = nlohmann::json::parse(refit.out);
  CHECK(env["ok"] == true);
  CHECK(env["parent_revision_id"] == skel);
  Run status = run(cd + bin("sv-commit") + " --json status");
  CHECK(nlohmann::json::parse(status.out)["current_revision_id"] == env["revision_id"]);

  // Checkout goes back; unknown revisions are not_found, in store mode on stdout too.
  CHECK(run(cd + bin("sv-commit") + " checkout " + routed).status == 0);
  CHECK(nlohmann::json::parse(run(cd + bin("sv-commit") + " --json status").out)["current_revision_id"] == routed);
  Run missing = run(cd + bin("sv-route") + " --rev 0123abcd");
  CHECK(missing.status == 4);
  CHECK(nlohmann::json::parse(missing.out)["error"]["code"] == "not_found");
  CHECK(count_lines(missing.err) == 1);
}

TEST_CASE("batch mode gives the same scenes as one run per drawing, and reports a bad input by name",
          "[e2e][batch]") {
  namespace fs = std::filesystem;
  fs::path dir = scratch() / "batch";
  for (const char* d : {"graph", "fit", "route", "sim"}) fs::create_directories(dir / d);
  const std::vector<std::string> names = {"feather_umbrella_w8", "hershey_futural_02_w4", "tabler_hexagons_w5"};
  std::string pngs;
  for (const auto& n : names) pngs += fmt::format(" {}.png", data(n));
  std::string graph = (dir / "graph").string(), fit = (dir / "fit").string(), route = (dir / "route").string();
  REQUIRE(run(bin("sv-skeleton") + " --no-store --output-dir " + graph + pngs).status == 0);
  REQUIRE(run(bin("sv-fit") + " --no-store --output-dir " + fit + " " + graph + "/*.json").status == 0);
  REQUIRE(run(bin("sv-route") + " --no-store --output-dir " + route + " " + fit + "/*.json").status == 0);
  const std::string sim = (dir / "sim").string();
  REQUIRE(run(bin("sv-simulate") + " --no-store --output-dir " + sim + " " + route + "/*.json").status == 0);
  for (const auto& n : names) {
    INFO(n);
    Run one = run(pipeline(data(n + ".png")));
    REQUIRE(one.status == 0);
    CHECK(slurp(dir / "route" / (n + ".json")) == one.out);
    Run simulated = run(bin("sv-simulate") + " --no-store " + (dir / "route" / (n + ".json")).string());
    REQUIRE(simulated.status == 0);
    CHECK(slurp(dir / "sim" / (n + ".json")) == simulated.out);
  }
  // An export names one file: refused in batch mode before anything is read or written.
  Run exported = run(bin("sv-simulate") + " --no-store --svg one.svg --output-dir " + (dir / "sim2").string() + " " +
                     route + "/*.json");
  CHECK(exported.status == 2);
  CHECK(exported.err.find("--svg") != std::string::npos);
  CHECK(!fs::exists(dir / "sim2"));

  // One unreadable input: the others are still written; the failure names the file and sets
  // the exit status.
  spit(dir / "broken.json", "{\"version\": 1, \"primitives\": [");
  fs::path again = dir / "again" / "created";  // made as needed
  const fs::path timings = dir / "timings.tsv";
  Run r = run(bin("sv-route") + " --no-store --timings " + timings.string() + " --output-dir " + again.string() + " " +
              (dir / "broken.json").string() + " " + fit + "/tabler_hexagons_w5.json");
  CHECK(r.status == 3);
  CHECK(r.err.find("broken.json") != std::string::npos);
  CHECK(r.err.find("invalid_scene") != std::string::npos);
  CHECK(!fs::exists(again / "broken.json"));
  CHECK(slurp(again / "tabler_hexagons_w5.json") == slurp(dir / "route" / "tabler_hexagons_w5.json"));
  // --timings: one line per input, in order, with its status; not part of the revision.
  std::istringstream lines(slurp(timings));
  std::string header, first, second, extra;
  std::getline(lines, header), std::getline(lines, first), std::getline(lines, second);
  CHECK(header == "input\tseconds\tstatus");
  CHECK(first.rfind((dir / "broken.json").string() + "\t", 0) == 0);
  CHECK(first.substr(first.size() - 7) == "\tfailed");
  CHECK(second.substr(second.size() - 3) == "\tok");
  CHECK(!std::getline(lines, extra));
  CHECK(run(bin("sv-route") + " --no-store --timings t.tsv " + fit + "/tabler_hexagons_w5.json").status == 2);

  // A scene that cannot be written (a directory holds its name): named, and the inputs after it
  // still written; its timing says failed.
  const fs::path blocked = dir / "blocked";
  fs::create_directories(blocked / "feather_umbrella_w8.json");
  Run unwritable = run(bin("sv-route") + " --no-store --timings " + timings.string() + " --output-dir " +
                       blocked.string() + " " + fit + "/feather_umbrella_w8.json " + fit + "/tabler_hexagons_w5.json");
  CHECK(unwritable.status == 3);
  CHECK(unwritable.err.find("feather_umbrella_w8.json: cannot") != std::string::npos);
  CHECK(unwritable.err.find("io_error") != std::string::npos);
  CHECK(slurp(blocked / "tabler_hexagons_w5.json") == slurp(dir / "route" / "tabler_hexagons_w5.json"));
  const std::string rows = slurp(timings);
  CHECK(rows.find("feather_umbrella_w8.json\t") != std::string::npos);
  CHECK(rows.find("\tfailed\n") < rows.find("tabler_hexagons_w5.json"));
  CHECK(rows.substr(rows.size() - 4) == "\tok\n");

  // Misuse is refused before anything runs.
  CHECK(run(bin("sv-fit") + " --no-store " + graph + "/a.json " + graph + "/b.json").status == 2);
  CHECK(run(bin("sv-fit") + " --no-store -o x.json --output-dir " + fit + " " + graph + "/*.json").status == 2);
  Run same = run(bin("sv-fit") + " --no-store --output-dir " + fit + " " + graph + "/tabler_hexagons_w5.json " +
                 route + "/tabler_hexagons_w5.json");
  CHECK(same.status == 2);
  CHECK(same.err.find("would both write") != std::string::npos);
}

TEST_CASE("each stage prints its parameter table, and declares every setting its scenes record", "[e2e][params]") {
  std::map<std::string, nlohmann::json> declared;
  for (const char* stage : {"sv-skeleton", "sv-fit", "sv-route", "sv-simulate"}) {
    INFO(stage);
    Run r = run(bin(stage) + " --params");
    REQUIRE(r.status == 0);
    auto j = nlohmann::json::parse(r.out);
    CHECK(j["stage"] == stage);
    for (const auto& p : j["parameters"]) {
      for (const char* field : {"key", "type", "default", "derivation", "min", "max", "unit", "doc"})
        CHECK(p.contains(field));
      CHECK(!p["doc"].get<std::string>().empty());
      // A parameter has a default or a rule that derives it.
      CHECK((!p["default"].is_null() || !p["derivation"].is_null()));
      CHECK(declared.emplace(p["key"].get<std::string>(), p).second);  // declared once
    }
    // And every option of its command line, as --help declares it.
    std::set<std::string> options;
    for (const auto& o : j["options"]) {
      CHECK(!o["doc"].get<std::string>().empty());
      CHECK(!o["type"].get<std::string>().empty());
      options.insert(o["name"].get<std::string>());
    }
    for (const char* common : {"--store", "--rev", "--note", "--output"}) CHECK(options.count(common) == 1);
    if (std::string(stage) == "sv-simulate")
      for (const char* own : {"--png", "--svg", "--gcode", "--pen-time", "--trace"}) CHECK(options.count(own) == 1);
    else
      CHECK(options.count("--set") == 1);
  }
  CHECK(declared.at("fit.tolerance_px")["derivation"].get<std::string>().find("sw") != std::string::npos);
  CHECK(declared.at("fit.beautify")["type"] == "flag");
  Run r = run(pipeline(data("feather_umbrella_w8.png")));
  REQUIRE(r.status == 0);
  sv::Scene s = sv::parse_scene(r.out);
  REQUIRE(!s.config.empty());
  for (auto it = s.config.begin(); it != s.config.end(); ++it) {
    INFO(it.key());
    REQUIRE(declared.count(it.key()));
    CHECK(it.value()["doc"] == declared.at(it.key())["doc"]);
  }
}

TEST_CASE("the executables without a stage print their options and each command's with --params", "[e2e][params]") {
  for (const char* exe : {"sv-edit", "sv-diagnose", "sv-commit"}) {
    INFO(exe);
    Run r = run(bin(exe) + " --params");
    REQUIRE(r.status == 0);
    auto j = nlohmann::json::parse(r.out);
    CHECK(j["stage"] == exe);
    CHECK(j["parameters"] == nlohmann::json::array());
    REQUIRE(j["commands"].size() >= 2);
    std::set<std::string> names;
    size_t options = 0;
    for (const auto& c : j["commands"]) {
      CHECK(!c["doc"].get<std::string>().empty());
      names.insert(c["name"].get<std::string>());
      for (const auto& o : c["options"]) {
        CHECK(!o["name"].get<std::string>().empty());
        ++options;
      }
    }
    CHECK(options > 0);
    CHECK(names.count(std::string(exe) == "sv-commit" ? "log" : "tools") == 1);
  }
  // sv-mcp has no commands: its own options.
  Run r = run(bin("sv-mcp") + " --params");
  REQUIRE(r.status == 0);
  auto j = nlohmann::json::parse(r.out);
  CHECK(j["stage"] == "sv-mcp");
  CHECK(j["commands"] == nlohmann::json::array());
  std::set<std::string> options;
  for (const auto& o : j["options"]) options.insert(o["name"].get<std::string>());
  CHECK(options.count("--tools") == 1);
  CHECK(options.count("--store") == 1);
}
