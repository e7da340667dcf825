// The command-line shell's own pieces: the progress line.
#include <catch2/catch.hpp>

#include <unistd.h>

#include <sstream>

#include "cli/progress.hpp"

using sv::Progress;

namespace {

// A clock the test moves by hand.
struct FakeClock {
  double t = 100;
  Progress::Clock clock() {
    return [this] { return t; };
  }
};

}  // namespace

TEST_CASE("progress rewrites one line on a terminal and ends it", "[cli][progress]") {
  std::ostringstream out;
  FakeClock c;
  {
    Progress p("sv-fit", true, out, c.clock());
    p.update("1/3 drawings");
    c.t += 0.5;
    p.update("2/3 drawings");
    c.t += 0.5;
    p.update("3/3 drawings");
    p.finish();
    p.update("after the end");  // ignored
  }
  CHECK(out.str() == "\rsv-fit: 1/3 drawings\rsv-fit: 2/3 drawings\rsv-fit: 3/3 drawings\n");
}

TEST_CASE("progress draws at most ten times a second and never loses the last state", "[cli][progress]") {
  std::ostringstream out;
  FakeClock c;
  Progress p("sv-edit refine", true, out, c.clock());
  p.update("step 1, draw time 60.0 s");
  c.t += 0.05;
  p.update("step 2, draw time 58.0 s");  // too soon: kept, not drawn
  CHECK(out.str() == "\rsv-edit refine: step 1, draw time 60.0 s");
  c.t += 0.01;
  p.update("step 3, draw time 9.5 s");  // still too soon
  CHECK(out.str() == "\rsv-edit refine: step 1, draw time 60.0 s");
  c.t += 0.1;
  p.update("step 4, draw time 9.0 s");
  c.t += 0.01;
  p.update("step 5, draw time 8.5 s");
  p.finish();  // draws step 5, which the throttle held back
  // A shorter line is padded over the longer one before it.
  CHECK(out.str() ==
        "\rsv-edit refine: step 1, draw time 60.0 s"
        "\rsv-edit refine: step 4, draw time 9.0 s "
        "\rsv-edit refine: step 5, draw time 8.5 s \n");
}

TEST_CASE("progress clears its line for a message and redraws on the next update", "[cli][progress]") {
  std::ostringstream out;
  FakeClock c;
  Progress p("sv-skeleton", true, out, c.clock());
  p.update("1/2 drawings");
  p.clear();
  out << "sv-skeleton: a.png: warning: no ink found\n";
  p.update("2/2 drawings");  // drawn at once, however soon, since the line is empty
  p.finish();
  const std::string first = "sv-skeleton: 1/2 drawings";
  CHECK(out.str() == "\r" + first + "\r" + std::string(first.size(), ' ') + "\r" +
                         "sv-skeleton: a.png: warning: no ink found\n"
                         "\rsv-skeleton: 2/2 drawings\n");
}

TEST_CASE("progress is silent when stderr is not a terminal or with --quiet", "[cli][progress]") {
  std::ostringstream out;
  FakeClock c;
  {
    Progress p("sv-fit", false, out, c.clock());
    p.update("1/2 drawings");
    c.t += 1;
    p.update("2/2 drawings");
    p.clear();
    p.finish();
  }
  CHECK(out.str().empty());
  // Nothing drawn, nothing to end: work too short for an update leaves no blank line.
  { Progress p("sv-fit", true, out, c.clock()); }
  CHECK(out.str().empty());
  // Under ctest stderr is a file or a pipe, so the real one stays silent either way.
  CHECK_FALSE(Progress::wanted(true));
  if (::isatty(2) != 1) CHECK_FALSE(Progress::wanted(false));
}

// --version: sv's version, the commit, the libraries; shell completion from the shell's own app.
#include <CLI/CLI.hpp>

#include <regex>

#include "../e2e/completion_driver.hpp"
#include "cli/completion.hpp"
#include "cli/version.hpp"

TEST_CASE("the version names sv's version, the commit and the libraries it was built with", "[cli][version]") {
  const std::string commit = sv::build_commit();
  CHECK(std::regex_match(commit, std::regex("[0-9a-f]{12}(-dirty)?|unknown")));
  const std::string v = sv::version_text("sv-test");
  INFO(v);
  CHECK(v.rfind(std::string("sv-test ") + SV_VERSION + " (commit " + commit + ")\n", 0) == 0);
  // The test binary loads OpenCV and the codec libraries: each is named with its runtime version.
  for (const char* lib : {"OpenCV 4.", "libpng 1.", "libjpeg-turbo ", "libtiff ", "libwebp ", "zlib 1.", "Nettle 3.",
                          "Boost 1.", "nlohmann_json 3.", "fmt ", "CLI11 2.", "Eigen 3."})
    CHECK(v.find(lib) != std::string::npos);
  CHECK(std::regex_search(v, std::regex(R"(OpenCV \d+\.\d+\.\d+, libpng \d+\.\d+\.\d+)")));
}

TEST_CASE("bash completion walks the app: subcommands, options, choices, files", "[cli][completion]") {
  namespace fs = std::filesystem;
  CLI::App app{"demo", "sv-demo"};
  std::string store, format, input, name;
  int n = 0;
  bool quiet = false;
  app.fallthrough();
  app.add_option("--store", store)->type_name("DIR");
  CLI::App* log = app.add_subcommand("log", "history");
  log->add_option("-n,--max-count", n);
  log->add_option("--format", format)->check(CLI::IsMember({"short", "long"}));
  log->add_option("--sort-by", name)->type_name(R"(["length_desc","id"])");
  log->add_flag("-q,--quiet", quiet);
  log->add_option("--secret", name)->group("");
  app.add_subcommand("list", "list")->add_option("input", input)->type_name("FILE");
  app.add_subcommand("init", "init");

  const std::string script = sv::bash_completion(app);
  CHECK(script.find("complete -F _sv_demo sv-demo") != std::string::npos);
  const fs::path dir = svtest::scratch() / "completion-unit";
  fs::create_directories(dir / "drawings");
  svtest::spit(dir / "drawing.png", "");
  svtest::spit(dir / "demo.bash", script);
  auto complete = [&](std::vector<std::string> words) {
    words.insert(words.begin(), "sv-demo");
    return svtest::complete(dir / "demo.bash", "_sv_demo", words, dir.string());
  };
  using S = std::set<std::string>;
  CHECK(complete({"l"}) == S{"log", "list"});
  CHECK(complete({""}) == S{"log", "list", "init"});
  CHECK(complete({"log", "--f"}) == S{"--format"});
  CHECK(complete({"log", "--format", ""}) == S{"short", "long"});
  CHECK(complete({"log", "--format=s"}) == S{"--format=short"});
  CHECK(complete({"log", "--format", "=", "l"}) == S{"long"});
  CHECK(complete({"log", "--sort-by", "l"}) == S{"length_desc"});
  CHECK(complete({"log", "-n", "5", "--q"}) == S{"--quiet"});
  CHECK(complete({"log", "--s"}) == S{"--sort-by", "--store"});  // the executable's --store falls through; --secret is hidden
  CHECK(complete({"--store", "d"}) == S{"drawings"});             // a directory, not drawing.png
  CHECK(complete({"--store", "drawings", "i"}) == S{"init"});      // the option's value is skipped
  CHECK(complete({"list", "dr"}) == S{"drawings", "drawing.png"});
}
