#include <catch2/catch.hpp>

#include "eval/coverage.hpp"

using namespace sv;

TEST_CASE("coverage of a path against itself is perfect", "[eval]") {
  std::vector<Polyline> ref = {{{10, 10}, {110, 10}}, {{10, 50}, {60, 100}}};
  Coverage c = measure_coverage(ref, ref, 2.0, 724);
  CHECK(c.precision == Approx(1));
  CHECK(c.recall == Approx(1));
  CHECK(c.f1_tol1 == Approx(1));
  CHECK(c.chamfer_px < 0.13);  // samples are at most 0.125 px from a target
  CHECK(c.reference_length_px == Approx(100 + std::hypot(50, 50)));
}

TEST_CASE("a shifted path scores by its offset and the tolerance", "[eval]") {
  std::vector<Polyline> ref = {{{0, 0}, {200, 0}}};
  std::vector<Polyline> near = {{{0, 1.5}, {200, 1.5}}};
  Coverage c = measure_coverage(near, ref, 2.0, 300);
  CHECK(c.f1 == Approx(1));
  CHECK(c.f1_tol1 == Approx(0));
  CHECK(c.chamfer_px == Approx(1.5).margin(0.01));
  std::vector<Polyline> far = {{{0, 3}, {200, 3}}};
  Coverage f = measure_coverage(far, ref, 2.0, 300);
  CHECK(f.f1 == Approx(0));
  CHECK(f.hausdorff_px == Approx(3).margin(0.01));
}

TEST_CASE("missing half the reference halves recall, not precision", "[eval]") {
  std::vector<Polyline> ref = {{{0, 0}, {100, 0}}, {{0, 50}, {100, 50}}};
  std::vector<Polyline> drawn = {{{0, 0}, {100, 0}}};
  Coverage c = measure_coverage(drawn, ref, 2.0, 150);
  CHECK(c.precision == Approx(1));
  CHECK(c.recall == Approx(0.5).margin(0.01));
  CHECK(c.f1 == Approx(2.0 / 3).margin(0.01));
  Coverage empty = measure_coverage({}, ref, 2.0, 150);
  CHECK(empty.f1 == 0);
  CHECK(empty.chamfer_px == 150);
}
