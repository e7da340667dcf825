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
