// Junction drawings with exact truth (test/data/junctions, from scripts/lib/junctions.py): where
// strokes meet and what they are, end to end through sv-skeleton and sv-fit.
#include <catch2/catch.hpp>

#include <fmt/format.h>

#include "core/scene.hpp"
#include "process.hpp"

using namespace svtest;

TEST_CASE("a circle with a stem leaving along its tangent is one circle and one line meeting at the contact",
          "[e2e][junctions]") {
  const std::string name = "junctions/circle_tangent_stem_a00_end_w12_228";
  Run r = run(fmt::format("{} --no-store {} | {} --no-store", bin("sv-skeleton"), data(name + ".png"), bin("sv-fit")));
  REQUIRE(r.status == 0);
  const sv::Scene s = sv::parse_scene(r.out);
  REQUIRE(s.primitives);
  REQUIRE(s.graph);
  const auto gt = nlohmann::json::parse(slurp(data(name + ".gt.json")));
  const double half_width = gt["stroke_width_px"].get<double>() / 2;
  const auto& truth = gt["junctions"][0]["point"];
  const sv::Vec2 contact{truth[0].get<double>(), truth[1].get<double>()};
  const auto& gt_circle = gt["primitives"][0];
  REQUIRE(gt_circle["type"] == "circle");

  // The shared stretch of ink is the circle's, whole; the stem is one line.
  REQUIRE(s.primitives->size() == 2);
  const sv::Primitive* circle = nullptr;
  const sv::Primitive* line = nullptr;
  for (const sv::Primitive& p : *s.primitives)
    (p.shape.type == sv::PrimType::circle ? circle : line) = &p;
  REQUIRE(circle);
  REQUIRE(line);
  REQUIRE(line->shape.type == sv::PrimType::line);
  CHECK(sv::dist(circle->shape.center, {gt_circle["center"][0].get<double>(), gt_circle["center"][1].get<double>()}) <
        1.0);
  CHECK(std::abs(circle->shape.radius - gt_circle["radius"].get<double>()) < 1.0);

  // The junction is at the contact, not where the skeleton splits (some 20 px along the stem),
  // and the line starts there.
  const sv::Vertex* junction = nullptr;
  for (const sv::Vertex& v : s.graph->vertices)
    if (v.degree >= 3) junction = &v;
  REQUIRE(junction);
  INFO(fmt::format("junction ({:.1f}, {:.1f}), contact ({:.1f}, {:.1f})", junction->p.x, junction->p.y, contact.x,
                   contact.y));
  CHECK(sv::dist(junction->p, contact) <= half_width);
  CHECK(std::min(sv::dist(line->shape.p0, contact), sv::dist(line->shape.p1, contact)) <= half_width);
}
