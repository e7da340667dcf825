// The wording of messages (core/messages.hpp) and the reading of option values (cli/values.hpp):
// the closest names to a mistyped one, limits in words, image signatures, lengths with units.
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "cli/values.hpp"
#include "core/error.hpp"
#include "core/messages.hpp"

using namespace sv;

TEST_CASE("edit distance counts insertions, deletions, substitutions and swaps of neighbours", "[messages]") {
  CHECK(edit_distance("", "") == 0);
  CHECK(edit_distance("log", "log") == 0);
  CHECK(edit_distance("lgo", "log") == 1);  // one swap, not two substitutions
  CHECK(edit_distance("footprnt", "footprint") == 1);
  CHECK(edit_distance("kitten", "sitting") == 3);
  CHECK(edit_distance("", "abc") == 3);
  CHECK(edit_distance("ListPrimitives", "listprimitives") == 0);  // letters case-insensitively
  CHECK(edit_distance("ca", "abc") == 3);  // optimal string alignment: no edit of a swapped pair
}

TEST_CASE("the closest names to a mistyped one, within a bound that grows with its length", "[messages]") {
  const std::vector<std::string> commands{"init", "log", "show", "status", "branch", "fsck", "gc", "list-revisions",
                                          "checkout", "revert", "branch-revision", "commit", "done"};
  CHECK(closest_names("lgo", commands) == std::vector<std::string>{"log"});
  CHECK(closest_names("stauts", commands) == std::vector<std::string>{"status"});
  CHECK(closest_names("comit", commands) == std::vector<std::string>{"commit"});
  CHECK(closest_names("chekcout", commands) == std::vector<std::string>{"checkout"});
  // The closest only: "brnch" is one from branch and further from the rest.
  CHECK(closest_names("brnch", commands) == std::vector<std::string>{"branch"});
  // Nothing close: no guess, however wild.
  CHECK(closest_names("xyzzy", commands).empty());
  CHECK(closest_names("compile", commands).empty());
  // A prefix when nothing is close.
  CHECK(closest_names("list", commands) == std::vector<std::string>{"list-revisions"});
  CHECK(closest_names("branch-", commands) == std::vector<std::string>{"branch"});
  // The word itself is never suggested; ties in name order, at most `limit`.
  CHECK(closest_names("log", commands).empty());
  CHECK(closest_names("gx", {"ga", "gb", "gc", "gd"}, 3) == std::vector<std::string>{"ga", "gb", "gc"});
  // Options: the dashes are not letters of the word.
  const std::vector<std::string> options{"--footprint-mm", "--ppi", "--pen-time", "--start", "--set", "-o", "--output"};
  CHECK(closest_names("--footprnt-mm", options) == std::vector<std::string>{"--footprint-mm"});
  CHECK(closest_names("--pen-tim", options) == std::vector<std::string>{"--pen-time"});
  CHECK(closest_names("--sart", options) == std::vector<std::string>{"--start"});
  CHECK(closest_names("--outptu", options) == std::vector<std::string>{"--output"});
  CHECK(closest_names("--zzzzzzzz", options).empty());
  CHECK(closest_names("-x", options).empty());  // -o is one step away, as is every letter
  // A hostile name costs no more than its length: no distance is computed against it.
  CHECK(closest_names(std::string(4 << 20, 'a'), options).empty());
}

TEST_CASE("did you mean lists one, two or three names", "[messages]") {
  CHECK(did_you_mean({}).empty());
  CHECK(did_you_mean({"log"}) == "did you mean log?");
  CHECK(did_you_mean({"a", "b"}) == "did you mean a or b?");
  CHECK(did_you_mean({"a", "b", "c"}) == "did you mean a, b or c?");
}

TEST_CASE("limits are stated in words and normal numbers, never a double's 309 digits", "[messages]") {
  const double inf = std::numeric_limits<double>::infinity();
  const double max = std::numeric_limits<double>::max();
  CHECK(limits_text(NumberLimits{}) == "any number");
  CHECK(limits_text(NumberLimits{0, inf, true}) == "positive");
  CHECK(limits_text(NumberLimits{0, max, true}) == "positive");  // CLI11's PositiveNumber bounds
  CHECK(limits_text(NumberLimits{std::numeric_limits<double>::min(), max}) == "at least 2.2250738585072014e-308");
  CHECK(limits_text(NumberLimits{0}) == "at least 0");
  CHECK(limits_text(NumberLimits{0}, "px") == "at least 0 px");
  CHECK(limits_text(NumberLimits{2, inf, true}) == "greater than 2");
  CHECK(limits_text(NumberLimits{-inf, 1}) == "at most 1");
  CHECK(limits_text(NumberLimits{-max, 0, false, true}) == "negative");
  CHECK(limits_text(NumberLimits{0, 1}) == "between 0 and 1");
  CHECK(limits_text(NumberLimits{0.5, 4}, "px") == "between 0.5 and 4 px");
  CHECK(limits_text(NumberLimits{0, 1e9}) == "between 0 and 1000000000");
  CHECK(limits_text(NumberLimits{0, 1, true}) == "positive and at most 1");
  CHECK(limits_text(NumberLimits{1e-6, inf}, "px") == "at least 1e-06 px");
  for (const auto& l : {NumberLimits{0, max}, NumberLimits{-max, max}, NumberLimits{0, max, true}})
    CHECK(limits_text(l).size() < 30);

  CHECK(number_text(100) == "100");
  CHECK(number_text(-3) == "-3");
  CHECK(number_text(0.005) == "0.005");
  CHECK(number_text(25.4) == "25.4");
  CHECK(number_text(1e300).size() < 10);

  CHECK(within(0, NumberLimits{0}));
  CHECK_FALSE(within(0, NumberLimits{0, 1, true}));
  CHECK_FALSE(within(1, NumberLimits{0, 1, false, true}));
  CHECK_FALSE(within(std::nan(""), NumberLimits{}));
}

TEST_CASE("an image is told by its signature, whatever its name", "[messages]") {
  using namespace std::string_literals;
  CHECK(image_signature("\x89PNG\r\n\x1a\n rest"s) == "PNG");
  CHECK(image_signature("\xFF\xD8\xFF\xE0 JFIF"s) == "JPEG");
  CHECK(image_signature("II*\0rest"s) == "TIFF");
  CHECK(image_signature("MM\0*rest"s) == "TIFF");
  CHECK(image_signature("RIFF\x10\0\0\0WEBPVP8 "s) == "WebP");
  CHECK(image_signature("BM\x36\0\0\0"s) == "BMP");
  CHECK(image_signature("GIF89a..."s) == "GIF");
  CHECK(image_signature("GIF87a..."s) == "GIF");
  CHECK_FALSE(image_signature("{\"format\": \"sv.scene\"}"));
  CHECK_FALSE(image_signature(""));
  CHECK_FALSE(image_signature("\x89PN"s));  // cut short
  CHECK_FALSE(image_signature("RIFF\x10\0\0\0WAVE"s));
}

TEST_CASE("an image given as a scene is refused as invalid_scene, naming it and the pipeline", "[messages]") {
  const std::string png = "\x89PNG\r\n\x1a\n and the rest";
  auto message = [&](const std::string& path, const std::string& command) {
    try {
      refuse_image_as_scene(png, path, command);
    } catch (const Error& e) {
      CHECK(e.code() == Code::invalid_scene);
      return std::string(e.what());
    }
    return std::string("accepted");
  };
  CHECK(message("input.png", "sv-fit") ==
        "input.png is a PNG image, not a scene: run sv-skeleton on it first (sv-skeleton input.png | sv-fit)");
  CHECK(message("a b.png", "sv-route") == "a b.png is a PNG image, not a scene: run sv-skeleton on it first "
                                          "(sv-skeleton 'a b.png' | sv-fit | sv-route)");
  CHECK(message("-", "sv-diagnose list-primitives") ==
        "standard input is a PNG image, not a scene: run sv-skeleton on it first (sv-skeleton IMAGE | sv-fit | "
        "sv-route | sv-diagnose list-primitives)");
  CHECK_NOTHROW(refuse_image_as_scene("{\"format\": \"sv.scene\"}", "s.json", "sv-fit"));
}

TEST_CASE("lengths take their units, converted exactly", "[messages][units]") {
  const std::string what = "--footprint-mm";
  CHECK(parse_number("100", LengthUnit::mm, what) == 100);
  CHECK(parse_number("100mm", LengthUnit::mm, what) == 100);
  CHECK(parse_number("10cm", LengthUnit::mm, what) == 100);
  CHECK(parse_number("10 cm", LengthUnit::mm, what) == 100);
  CHECK(parse_number("4in", LengthUnit::mm, what) == 101.6);
  CHECK(parse_number("0.1in", LengthUnit::mm, what) == 2.54);  // not 0.1 * 25.4 = 2.5400000000000005
  CHECK(parse_number("1.5CM", LengthUnit::mm, what) == 15);
  CHECK(parse_number("2.5e1mm", LengthUnit::mm, what) == 25);
  CHECK(parse_number("0.3cm", LengthUnit::mm, what) == 3);  // not 0.3 * 10 = 3.0000000000000004
  CHECK(parse_number("-2cm", LengthUnit::mm, what) == -20);
  CHECK(parse_number(".5", LengthUnit::mm, what) == 0.5);
  CHECK(parse_number("2px", LengthUnit::px, "--tolerance-px") == 2);
  CHECK(parse_number("1.25", LengthUnit::px, "--tolerance-px") == 1.25);
  CHECK(parse_number("3", LengthUnit::none, "--pen-time") == 3);

  auto refusal = [](const std::string& text, LengthUnit u) {
    try {
      parse_number(text, u, "--x");
    } catch (const Error& e) {
      CHECK(e.code() == Code::invalid_selection);
      return std::string(e.what());
    }
    return std::string("accepted");
  };
  const std::string ft = refusal("10ft", LengthUnit::mm);
  CHECK(ft.find("--x: '10ft': ft is not a unit it takes") == 0);
  CHECK(ft.find("mm (the default), cm or in") != std::string::npos);
  CHECK(refusal("2mm", LengthUnit::px).find("px (the default)") != std::string::npos);
  CHECK(refusal("10cm", LengthUnit::none) == "--x: '10cm' is not a number");
  CHECK(refusal("abc", LengthUnit::mm) == "--x: 'abc' is not a number");
  CHECK(refusal("", LengthUnit::mm) == "--x: '' is not a number");
  CHECK(refusal("1e999", LengthUnit::mm) == "--x: '1e999' is not a finite number");
  CHECK(refusal("nan", LengthUnit::none) == "--x: 'nan' is not a number");
  CHECK(refusal("1.2.3", LengthUnit::none) == "--x: '1.2.3' is not a number");

  CHECK(length_unit_of("--footprint-mm") == LengthUnit::mm);
  CHECK(length_unit_of("fit.tolerance_px") == LengthUnit::px);
  CHECK(length_unit_of("--tolerance-px") == LengthUnit::px);
  CHECK(length_unit_of("--pen-time") == LengthUnit::none);
}

TEST_CASE("an option's number is read, checked against its limits and rewritten in plain digits", "[messages][units]") {
  std::string text = "10cm";
  CHECK(read_number(text, LengthUnit::mm, positive()) == "");
  CHECK(text == "100");
  text = "0.1in";
  CHECK(read_number(text, LengthUnit::mm, positive()) == "");
  CHECK(std::stod(text) == 2.54);
  text = "-1";
  CHECK(read_number(text, LengthUnit::mm, positive()) == "-1 is out of range: it must be positive");
  text = "2";
  CHECK(read_number(text, LengthUnit::none, between(0, 1)) == "2 is out of range: it must be between 0 and 1");
  text = "2.5";
  CHECK(read_number(text, LengthUnit::none, at_least(0), true) == "2.5 is not a whole number");
  text = "-1px";
  CHECK(read_number(text, LengthUnit::px, at_least(0)) == "-1px is out of range: it must be at least 0 px");
}
