// The one resolver of every stage's parameters (core/params.hpp): a user's value wins, else the
// derived one, else the default; each recorded with its provenance and read back from the scene.
#include <catch2/catch.hpp>

#include <map>
#include <optional>
#include <string>

#include "core/error.hpp"
#include "core/params.hpp"
#include "core/scene.hpp"
#include "error_code.hpp"
#include "fit/params.hpp"
#include "route/route.hpp"

using namespace sv;

namespace {

// A toy stage: one constant, one integer, one value derived from a width (when known) and one
// that follows the constant where nothing derives it.
struct ToyParams {
  double gap_px = 0, passes = 0, reach_px = 0, bound_px = 0;
};

struct ToyBasis {
  double width = 0;  // 0: unknown
  double scale = 1;  // working px per recorded px, as the skeleton's trace scale
};

std::optional<double> toy_reach(const ToyBasis& b, const ToyParams& p) {
  if (b.width <= 0) return std::nullopt;
  return 2 * b.width + p.gap_px;
}

ParamSpec toy_spec(const char* key, double value, double max = 100, ParamType type = ParamType::number,
                   const char* from = "default") {
  ParamSpec s = param_spec(key, type == ParamType::number ? "px" : "", "a toy parameter", 0, max, type);
  s.value = value;
  s.from = from;
  return s;
}

const ParamSet<ToyParams, ToyBasis>& toy_set(bool scaled = false) {
  static const ParamSet<ToyParams, ToyBasis> plain(
      "sv-toy", {{toy_spec("toy.gap_px", 1.5), &ToyParams::gap_px},
                 {toy_spec("toy.passes", 4, 10, ParamType::integer), &ToyParams::passes},
                 {toy_spec("toy.reach_px", 3, 100, ParamType::number, "stroke_width"), &ToyParams::reach_px, toy_reach},
                 {toy_spec("toy.bound_px", 7), &ToyParams::bound_px, nullptr,
                  [](const ToyParams& p) { return 2 * p.gap_px; }}});
  static const ParamSet<ToyParams, ToyBasis> traced(
      "sv-toy", plain.params(), [](const ParamSpec& s, const ToyBasis& b) { return s.unit == "px" ? b.scale : 1.0; });
  return scaled ? traced : plain;
}

ToyParams resolve_toy(const std::map<std::string, double>& overrides, ToyBasis basis, Scene* record = nullptr,
                      bool scaled = false) {
  ParamResolver<ToyParams, ToyBasis> r(toy_set(scaled), overrides, record);
  ToyParams p;
  r.resolve_all(basis, p);
  return p;
}

std::string from_of(const Scene& s, const std::string& key) { return s.config.at(key).at("from").get<std::string>(); }

}  // namespace

TEST_CASE("params: the declared default where no user value or rule applies") {
  Scene s;
  const ToyParams p = resolve_toy({}, {}, &s);
  CHECK(p.gap_px == 1.5);
  CHECK(p.passes == 4);
  CHECK(p.reach_px == 3);  // the width is unknown: the rule does not apply
  CHECK(p.bound_px == 3);  // in place of its declared 7: twice the gap
  for (const char* key : {"toy.gap_px", "toy.passes", "toy.reach_px", "toy.bound_px"}) CHECK(from_of(s, key) == "default");
  CHECK(s.config.at("toy.gap_px").at("doc") == "a toy parameter");
}

TEST_CASE("params: a derived value, from the basis and the members resolved before it") {
  Scene s;
  const ToyParams p = resolve_toy({{"toy.gap_px", 2}}, {5, 1}, &s);
  CHECK(p.reach_px == 12);  // 2 * 5 + the user's gap
  CHECK(from_of(s, "toy.reach_px") == "stroke_width");
  CHECK(from_of(s, "toy.gap_px") == "user");
}

TEST_CASE("params: the user's value wins over the derived one and the default") {
  Scene s;
  const ToyParams p = resolve_toy({{"toy.reach_px", 40}, {"toy.passes", 9}}, {5, 1}, &s);
  CHECK(p.reach_px == 40);
  CHECK(p.passes == 9);
  CHECK(from_of(s, "toy.reach_px") == "user");
  CHECK(s.config.at("toy.reach_px").at("value") == 40);
}

TEST_CASE("params: unknown keys, values out of range and fractions for integers are refused") {
  CHECK(code_of([] { resolve_toy({{"toy.gap", 1}}, {}); }) == Code::invalid_selection);
  CHECK(code_of([] { resolve_toy({{"toy.gap_px", 101}}, {}); }) == Code::invalid_selection);
  CHECK(code_of([] { resolve_toy({{"toy.gap_px", -1}}, {}); }) == Code::invalid_selection);
  CHECK(code_of([] { resolve_toy({{"toy.passes", 2.5}}, {}); }) == Code::invalid_selection);
  try {
    resolve_toy({{"toy.gap", 1}}, {});
  } catch (const Error& e) {
    CHECK(std::string(e.what()).find("unknown parameter 'toy.gap'") != std::string::npos);
  }
  Scene s;
  CHECK(code_of([&] { resolve_toy({{"toy.passes", 11}}, {}, &s); }) == Code::invalid_selection);
  CHECK(s.config.empty());  // refused before anything is recorded
}

TEST_CASE("params: read back from a scene's config equals what was resolved") {
  Scene s;
  const ToyParams p = resolve_toy({{"toy.gap_px", 2.25}}, {4, 1}, &s);
  const ToyParams back = toy_set().read(s, ToyParams{});
  CHECK(back.gap_px == p.gap_px);
  CHECK(back.passes == p.passes);
  CHECK(back.reach_px == p.reach_px);
  CHECK(back.bound_px == p.bound_px);
  // A key the scene lacks keeps the value given.
  s.config.erase("toy.passes");
  CHECK(toy_set().read(s, ToyParams{0, 6, 0, 0}).passes == 6);
}

TEST_CASE("params: values in working units, recorded and given in the scene's") {
  Scene s;
  // Working px are half the scene's: a user's 3 px is 1.5 working px, recorded as 3.
  const ToyParams p = resolve_toy({{"toy.gap_px", 3}}, {5, 2}, &s, true);
  CHECK(p.gap_px == 1.5);
  CHECK(s.config.at("toy.gap_px").at("value") == 3);
  CHECK(p.passes == 4);                                  // no unit: unscaled
  CHECK(p.reach_px == Approx((2 * 5 + 1.5) / 2));        // the rule in the scene's units
  CHECK(s.config.at("toy.reach_px").at("value") == Approx(11.5));
}

TEST_CASE("params: a value the stage finds itself, unless the user gave one") {
  Scene s;
  ParamResolver<ToyParams, ToyBasis> r(toy_set(), {{"toy.passes", 2}}, &s);
  ToyParams p;
  CHECK(r.set(&ToyParams::gap_px, 0.75, {}, p, "image") == 0.75);
  CHECK(from_of(s, "toy.gap_px") == "image");
  CHECK(r.set(&ToyParams::passes, 8, {}, p, "image") == 2);
  CHECK(r.from(&ToyParams::passes) == "user");
  CHECK(r.user(&ToyParams::passes, {}) == 2);
  CHECK(!r.user(&ToyParams::gap_px, {}));
}

TEST_CASE("params: the fit's and the route's readers give what their stage resolved") {
  Scene s;
  s.source = Source{};
  s.source->stroke_width_px = 6;
  const FitParams fit = resolve_fit_params(6, 0.1, {{{"fit.corner_angle_deg", 40}}}, &s);
  CHECK(from_of(s, "fit.corner_angle_deg") == "user");
  CHECK(from_of(s, "fit.tolerance_px") == "stroke_width");
  CHECK(from_of(s, "fit.trace_noise_px") == "image");
  const FitParams back = fit_params_of(s);
  CHECK(back.corner_angle_deg == 40);
  CHECK(back.tolerance_px == Approx(fit.tolerance_px).margin(1e-4));  // the scene rounds what it records
  CHECK(back.corner_window_px == fit.corner_window_px);
  // The route's deviation by default follows the fit's merged bound, at most 0.9 px.
  REQUIRE(fit.merge_tolerance_px > 0.9);
  CHECK(route_params_of(s).deviation_px == 0.9);
  CHECK(route_params_of(Scene{}).deviation_px == 0.25);
  CHECK(route_params_of(Scene{}).snap_px == 0.75);
}
