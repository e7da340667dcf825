// The messages a shell user reads, from the executables themselves: a file's failure in the
// system's words, an image where a scene belongs named as one, "did you mean" for a mistyped
// command or option, limits in words, lengths with their units. Each keeps the contract's code
// and exit status.
#include <catch2/catch.hpp>
#include <unistd.h>

#include <filesystem>
#include <nlohmann/json.hpp>
#include <regex>

#include "process.hpp"

using namespace svtest;

namespace {

const std::string kMessagesDrawing = "hand_chevrons-up-left_w6.png";

// One line on standard error, with the code and the status, nothing on standard output.
void refused_once(const Run& r, int status, const std::string& code) {
  INFO(r.err);
  CHECK(r.status == status);
  CHECK(std::count(r.err.begin(), r.err.end(), '\n') == 1);
  CHECK(r.err.find(": " + code + ": ") != std::string::npos);
  CHECK(r.out.empty());
}

bool says(const Run& r, const std::string& text) { return r.err.find(text) != std::string::npos; }

// A fitted scene of the test drawing, made once.
std::string messages_scene() {
  static const std::string path = [] {
    const std::string p = (scratch() / "messages_fitted.json").string();
    Run r = run(bin("sv-skeleton") + " --no-store " + data(kMessagesDrawing) + " | " + bin("sv-fit") + " --no-store > " + p);
    REQUIRE(r.status == 0);
    return p;
  }();
  return path;
}

}  // namespace

TEST_CASE("a missing or unreadable input gives the system's reason with the path", "[e2e][messages]") {
  const std::string missing = (scratch() / "no-such-drawing.json").string();
  for (const std::string& cmd : {bin("sv-fit") + " --no-store " + missing, bin("sv-skeleton") + " --no-store " + missing,
                                 bin("sv-simulate") + " --no-store " + missing,
                                 bin("sv-diagnose") + " list-primitives " + missing,
                                 bin("sv-edit") + " refine --no-store " + missing,
                                 bin("sv-diagnose") + " list-primitives --request-file " + missing + " " + messages_scene()}) {
    INFO(cmd);
    Run r = run(cmd);
    refused_once(r, 3, "io_error");
    CHECK(says(r, "cannot open " + missing + ": No such file or directory"));
  }
  Run dir = run(bin("sv-route") + " --no-store " + scratch().string());
  refused_once(dir, 3, "io_error");
  CHECK(says(dir, scratch().string() + ": Is a directory"));

  if (::geteuid() != 0) {  // root reads whatever the mode says
    const auto locked = scratch() / "locked.json";
    spit(locked, "{}");
    std::filesystem::permissions(locked, std::filesystem::perms::none);
    Run denied = run(bin("sv-fit") + " --no-store " + locked.string());
    refused_once(denied, 3, "io_error");
    CHECK(says(denied, locked.string() + ": Permission denied"));
  }

  // A store that is not there: not_found as before, with the reason.
  Run store = run(bin("sv-route") + " --store " + missing + " --rev HEAD");
  CHECK(store.status == 4);
  CHECK(says(store, "no store at " + missing + ": No such file or directory"));
  Run plain = run(bin("sv-route") + " --store " + scratch().string() + " --rev HEAD");
  CHECK(plain.status == 4);
  CHECK(says(plain, "sv-commit init " + scratch().string()));

  // An export the system will not write names its path and the reason.
  Run svg = run(bin("sv-route") + " --no-store " + messages_scene() + " | " + bin("sv-simulate") + " --no-store --svg " +
                missing + "/view.svg");
  refused_once(svg, 3, "io_error");
  CHECK(says(svg, missing + "/view.svg: No such file or directory"));
}

TEST_CASE("an image given where a scene belongs is named as one, with the pipeline that makes its scene",
          "[e2e][messages]") {
  const std::string png = data(kMessagesDrawing);
  Run fit = run(bin("sv-fit") + " --no-store " + png);
  refused_once(fit, 3, "invalid_scene");
  CHECK(says(fit, png + " is a PNG image, not a scene: run sv-skeleton on it first (sv-skeleton " + png + " | sv-fit)"));
  CHECK_FALSE(says(fit, "malformed JSON"));

  Run route = run(bin("sv-route") + " --no-store " + png);
  refused_once(route, 3, "invalid_scene");
  CHECK(says(route, "(sv-skeleton " + png + " | sv-fit | sv-route)"));

  Run tool = run(bin("sv-diagnose") + " list-primitives " + png);
  CHECK(tool.status == 3);
  CHECK(says(tool, "is a PNG image, not a scene"));
  CHECK(says(tool, "| sv-diagnose list-primitives)"));

  Run refine = run(bin("sv-edit") + " refine --no-store " + png);
  refused_once(refine, 3, "invalid_scene");
  CHECK(says(refine, "| sv-edit refine)"));

  // By its bytes, not its name: a JPEG on standard input, a GIF called .json.
  const auto jpeg = scratch() / "photo.jpg";
  spit(jpeg, std::string("\xFF\xD8\xFF\xE0\0\x10JFIF", 10));
  Run in = run(bin("sv-simulate") + " --no-store < " + jpeg.string());
  refused_once(in, 3, "invalid_scene");
  CHECK(says(in, "standard input is a JPEG image, not a scene"));
  const auto gif = scratch() / "scene.json";
  spit(gif, "GIF89a\x01\x00\x01\x00");
  Run g = run(bin("sv-route") + " --no-store " + gif.string());
  refused_once(g, 3, "invalid_scene");
  CHECK(says(g, "scene.json is a GIF image"));
}

TEST_CASE("sv-skeleton names a scene or a GIF given as its image", "[e2e][messages]") {
  Run scene = run(bin("sv-skeleton") + " --no-store " + messages_scene());
  refused_once(scene, 3, "invalid_raster");
  CHECK(says(scene, messages_scene() + " is JSON (a scene?), not an image: sv-skeleton reads PNG, JPEG, TIFF, BMP or WebP"));
  const auto gif = scratch() / "drawing.gif";
  spit(gif, "GIF89a\x01\x00\x01\x00");
  Run g = run(bin("sv-skeleton") + " --no-store < " + gif.string());
  refused_once(g, 3, "invalid_raster");
  CHECK(says(g, "standard input is a GIF image: sv-skeleton reads PNG, JPEG, TIFF, BMP or WebP (convert it first)"));
}

TEST_CASE("a mistyped command or option is named, with the closest names", "[e2e][messages]") {
  Run lgo = run(bin("sv-commit") + " lgo");
  refused_once(lgo, 2, "invalid_selection");
  CHECK(says(lgo, "'lgo' is not an sv-commit command: did you mean log?"));
  CHECK_FALSE(says(lgo, "A subcommand is required"));

  Run none = run(bin("sv-commit"));
  refused_once(none, 2, "invalid_selection");
  CHECK(says(none, "sv-commit needs a command: "));
  CHECK(says(none, "log"));

  Run tool = run(bin("sv-diagnose") + " list-primitivs");
  refused_once(tool, 2, "invalid_selection");
  CHECK(says(tool, "did you mean list-primitives?"));
  Run catalog = run(bin("sv-diagnose") + " ListPrimitivs");
  CHECK(says(catalog, "did you mean ListPrimitives?"));

  Run option = run(bin("sv-route") + " --footprnt-mm 100 " + messages_scene());
  refused_once(option, 2, "invalid_selection");
  CHECK(says(option, "unknown option --footprnt-mm: did you mean --footprint-mm?"));

  Run sub = run(bin("sv-commit") + " log --max-cuont 3");
  refused_once(sub, 2, "invalid_selection");
  CHECK(says(sub, "unknown option --max-cuont for sv-commit log: did you mean --max-count?"));

  Run field = run(bin("sv-diagnose") + " list-primitives --sort-bi length_desc " + messages_scene());
  refused_once(field, 2, "invalid_selection");
  CHECK(says(field, "did you mean --sort-by?"));

  // A stage with subcommands reads a word that is none as its input: neither is named.
  Run word = run("cd " + scratch().string() + " && " + bin("sv-simulate") + " --no-store rendr");
  refused_once(word, 3, "io_error");
  CHECK(says(word, "cannot open rendr: No such file or directory; nor is it an sv-simulate command: did you mean render?"));

  Run one_letter = run(bin("sv-edit") + " -x");
  refused_once(one_letter, 2, "invalid_selection");
  CHECK(says(one_letter, "unknown option -x (see sv-edit --help)"));

  Run far = run(bin("sv-commit") + " frobnicate");
  refused_once(far, 2, "invalid_selection");
  CHECK(says(far, "'frobnicate' is not an sv-commit command (see sv-commit --help)"));

  Run key = run(bin("sv-fit") + " --no-store --set fit.tolerence_px=1 " + messages_scene());
  refused_once(key, 2, "invalid_selection");
  CHECK(says(key, "unknown parameter 'fit.tolerence_px': did you mean fit.tolerance_px? (see sv-fit --params)"));

  Run count = run(bin("sv-commit") + " log -n abc");
  refused_once(count, 2, "invalid_selection");
  CHECK(says(count, "--max-count: 'abc' is not a number"));

  Run robot = run(bin("sv-route") + " --no-store --robot plottr " + messages_scene());
  refused_once(robot, 2, "invalid_selection");
  CHECK(says(robot, "--robot: 'plottr' is not one of doodlebot, plotter: did you mean plotter?"));

  Run choice = run(bin("sv-mcp") + " --tools reed");
  refused_once(choice, 2, "invalid_selection");
  CHECK(says(choice, "'reed' is not one of read, all: did you mean read?"));

  // A tool named in a batch request.
  Run batch = run(bin("sv-edit") + " merge-primitives --no-store --request '[{\"tool\": \"delete-primitve\"}]' " +
                  messages_scene());
  refused_once(batch, 2, "invalid_selection");
  CHECK(says(batch, "did you mean delete-primitive?"));
}

TEST_CASE("a value out of range states the range in words, never a double's 309 digits", "[e2e][messages]") {
  const std::regex long_number("[0-9]{20}");
  struct Case {
    std::string cmd, words;
  };
  const std::vector<Case> cases{
      {bin("sv-route") + " --no-store --footprint-mm -1 " + messages_scene(), "--footprint-mm: -1 is out of range: it must be positive"},
      {bin("sv-route") + " --no-store --ppi 0 " + messages_scene(), "--ppi: 0 is out of range: it must be positive"},
      {bin("sv-route") + " --no-store --robot plotter --draw-speed 0 " + messages_scene(),
       "--draw-speed: 0 is out of range: it must be positive"},
      {bin("sv-simulate") + " --no-store --pen-time -1", "--pen-time: -1 is out of range: it must be at least 0"},
      {bin("sv-simulate") + " --no-store --animate-speed 0", "--animate-speed: 0 is out of range: it must be positive"},
      {bin("sv-edit") + " refine --max-f1-loss 2", "--max-f1-loss: 2 is out of range: it must be between 0 and 1"},
      {bin("sv-commit") + " gc --expire -5", "--expire: -5 is out of range: it must be at least 0"},
      {bin("sv-fit") + " --no-store --set fit.tolerance_px=-1 " + messages_scene(), "it must be at least"},
  };
  for (const Case& c : cases) {
    INFO(c.cmd);
    Run r = run(c.cmd + " < /dev/null");
    refused_once(r, 2, "invalid_selection");
    CHECK(says(r, c.words));
    CHECK_FALSE(std::regex_search(r.err, long_number));
  }
}

TEST_CASE("lengths take their units: --footprint-mm 10cm is --footprint-mm 100", "[e2e][messages][units]") {
  auto routed = [](const std::string& options) {
    Run r = run(bin("sv-route") + " --no-store " + options + " " + messages_scene());
    INFO(r.err);
    REQUIRE(r.status == 0);
    const nlohmann::json s = nlohmann::json::parse(r.out);
    return nlohmann::json{{"robot", s["robot"]}, {"commands", s["commands"]}, {"tour", s["tour"]}};
  };
  const nlohmann::json mm = routed("--footprint-mm 100");
  CHECK(mm["robot"]["footprint_mm"] == 100.0);
  CHECK(routed("--footprint-mm 10cm") == mm);
  CHECK(routed("--footprint-mm=100mm") == mm);
  CHECK(routed("--footprint-mm '10 cm'") == mm);
  const nlohmann::json in = routed("--footprint-mm 4in");
  CHECK(in["robot"]["footprint_mm"] == 101.6);
  CHECK(in == routed("--footprint-mm 101.6"));

  // --help and --params show what it takes, as before: the type and its limits.
  Run help = run(bin("sv-route") + " --help");
  CHECK(help.out.find("--footprint-mm LENGTH:POSITIVE=200") != std::string::npos);
  CHECK(help.out.find("--pen-time FLOAT:NONNEGATIVE") != std::string::npos);
  CHECK(run(bin("sv-simulate") + " --help").out.find("--color-by TEXT:{primitive_type,draw_order,none}=primitive_type") != std::string::npos);

  Run ft = run(bin("sv-route") + " --no-store --footprint-mm 10ft " + messages_scene());
  refused_once(ft, 2, "invalid_selection");
  CHECK(says(ft, "--footprint-mm: '10ft': ft is not a unit it takes"));
  CHECK(says(ft, "mm (the default), cm or in"));

  // --set's *_px keys take px; a tool's -px field too.
  Run px = run(bin("sv-fit") + " --no-store --set fit.tolerance_px=2px " + messages_scene());
  Run plain = run(bin("sv-fit") + " --no-store --set fit.tolerance_px=2 " + messages_scene());
  REQUIRE(px.status == 0);
  CHECK(px.out.size() > 100);
  // The scene records its command line; what it computed is the same.
  const nlohmann::json a = nlohmann::json::parse(px.out), b = nlohmann::json::parse(plain.out);
  CHECK(a["primitives"] == b["primitives"]);
  CHECK(a["config"] == b["config"]);
  Run wrong = run(bin("sv-fit") + " --no-store --set fit.tolerance_px=2mm " + messages_scene());
  refused_once(wrong, 2, "invalid_selection");
  CHECK(says(wrong, "--set fit.tolerance_px: '2mm': mm is not a unit it takes"));

  Run field = run(bin("sv-diagnose") + " analyze-geometric-fit --flag-threshold-px 2px " + messages_scene() + " 2>&1");
  CHECK(field.status == 0);
  CHECK(field.out.find("\"flag_threshold_px\":2.0") != std::string::npos);
}
