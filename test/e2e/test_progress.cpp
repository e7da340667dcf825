// The progress line as a person at a terminal sees it (stderr a pseudo-terminal, through
// script(1)), and that it never reaches standard output, the files written or the revision.
#include <catch2/catch.hpp>
#include <fmt/format.h>

#include <cstdio>
#include <opencv2/imgproc.hpp>

#include "process.hpp"
#include "raster/png.hpp"

using namespace svtest;
namespace fs = std::filesystem;

namespace {

// `cmd` with its stderr on a terminal: what the terminal showed (stdout is redirected by `cmd`).
Run on_terminal(const std::string& cmd) { return run(fmt::format("script -qec '{}' /dev/null", cmd)); }

const std::string kA = data("lucide_milestone_w3.png"), kB = data("feather_bar-chart-2_w8.png");


}  // namespace

TEST_CASE("batch mode counts the drawings on a terminal, and -q or a pipe silences it", "[e2e][progress]") {
  const fs::path d = scratch() / "progress-batch";
  const std::string skeleton = bin("sv-skeleton") + " --no-store --output-dir " + d.string() + " " + kA + " " + kB;
  Run shown = on_terminal(skeleton + " >/dev/null");
  INFO(shown.out);
  REQUIRE(shown.status == 0);
  CHECK(shown.out.find("\rsv-skeleton: 1/2 drawings") != std::string::npos);
  CHECK(shown.out.find("\rsv-skeleton: 2/2 drawings\r\n") != std::string::npos);  // the line ends
  const std::string first = slurp(d / "lucide_milestone_w3.json");

  Run quiet = on_terminal(skeleton + " -q >/dev/null");
  REQUIRE(quiet.status == 0);
  CHECK(quiet.out.empty());
  CHECK(slurp(d / "lucide_milestone_w3.json") == first);  // -q is not recorded in the revision

  Run piped = run(skeleton);
  REQUIRE(piped.status == 0);
  CHECK(piped.err.empty());
  CHECK(slurp(d / "lucide_milestone_w3.json") == first);
}

TEST_CASE("sv-skeleton shows its stages on an image over 4 megapixels only", "[e2e][progress]") {
  const fs::path d = scratch() / "progress-large";
  fs::create_directories(d);
  cv::Mat paper(2000, 2100, CV_8UC1, cv::Scalar(255));
  cv::line(paper, {100, 100}, {1900, 1800}, cv::Scalar(0), 9);
  spit(d / "large.png", sv::encode_png_gray(paper));
  const std::string skeleton = bin("sv-skeleton") + " --no-store " + (d / "large.png").string();
  Run shown = on_terminal(skeleton + " >" + (d / "shown.json").string());
  INFO(shown.out);
  REQUIRE(shown.status == 0);
  CHECK(shown.out.find("\rsv-skeleton: 1/3 ink") != std::string::npos);
  CHECK(shown.out.find("sv-skeleton: 3/3 stroke graph\r\n") != std::string::npos);
  Run plain = run(skeleton);
  REQUIRE(plain.status == 0);
  CHECK(plain.err.empty());
  CHECK(plain.out == slurp(d / "shown.json"));

  Run small = on_terminal(bin("sv-skeleton") + " --no-store " + kA + " >/dev/null");
  REQUIRE(small.status == 0);
  CHECK(small.out.empty());
}

TEST_CASE("sv-edit refine tells each step on a terminal, the scene unchanged", "[e2e][progress]") {
  const fs::path d = scratch() / "progress-refine";
  fs::create_directories(d);
  const std::string routed = (d / "routed.json").string();
  REQUIRE(run(fmt::format("{} --no-store {} | {} --no-store | {} --no-store >{}", bin("sv-skeleton"),
                          data("hanzi_u5efe.png"), bin("sv-fit"), bin("sv-route"), routed))
              .status == 0);
  const std::string refine =
      bin("sv-edit") + " refine --no-store --min-gain-ms 1 --max-f1-1px-loss 0.3 --max-chamfer-gain 100 " + routed;
  Run shown = on_terminal(refine + " >" + (d / "shown.json").string());
  INFO(shown.out);
  REQUIRE(shown.status == 0);
  // The summary says how many steps and the draw time reached: the last line drawn says the same.
  int steps = 0;
  double t0 = 0, t1 = 0;
  const auto at = shown.out.find("\nrefine: ");
  REQUIRE(at != std::string::npos);
  REQUIRE(std::sscanf(shown.out.c_str() + at + 1, "refine: %d steps; draw time %lf -> %lf", &steps, &t0, &t1) == 3);
  REQUIRE(steps >= 1);
  CHECK(shown.out.find("\rsv-edit refine: step 1, draw time ") != std::string::npos);
  CHECK(shown.out.find(fmt::format("\rsv-edit refine: step {}, draw time {:.1f} s\r\n", steps, t1)) != std::string::npos);

  Run quiet = on_terminal(refine + " -q >" + (d / "quiet.json").string());
  REQUIRE(quiet.status == 0);
  CHECK(quiet.out.find("sv-edit refine: step") == std::string::npos);
  CHECK(quiet.out.find(fmt::format("refine: {} steps", steps)) != std::string::npos);  // the summary stays
  Run plain = run(refine);
  REQUIRE(plain.status == 0);
  CHECK(plain.err.find("sv-edit refine: step") == std::string::npos);
  CHECK(plain.out == slurp(d / "shown.json"));
  CHECK(plain.out == slurp(d / "quiet.json"));
}
