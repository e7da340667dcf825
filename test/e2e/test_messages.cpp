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

  Run far = run(bin("sv-commit") + " frobnicate");
  refused_once(far, 2, "invalid_selection");
  CHECK(says(far, "'frobnicate' is not an sv-commit command (see sv-commit --help)"));

  // A tool named in a batch request.
  Run batch = run(bin("sv-edit") + " merge-primitives --no-store --request '[{\"tool\": \"delete-primitve\"}]' " +
                  messages_scene());
  refused_once(batch, 2, "invalid_selection");
  CHECK(says(batch, "did you mean delete-primitive?"));
}
