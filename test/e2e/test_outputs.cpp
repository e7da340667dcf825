// Outputs that respect what a path is (issue 49): a new path or a regular file is written
// atomically, a device, a FIFO, a symlink to one or a process substitution is written through and
// stays what it is, and every failed write, standard output's included, is io_error.
//
// The cases run first on stand-ins in the scratch directory (a symlink to /dev/null, a null device
// of their own, a FIFO), which a regression can only break there; then on /dev/null and
// /dev/stdout themselves.
#include <catch2/catch.hpp>

#include <fmt/format.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <algorithm>
#include <thread>

#include "process.hpp"

using namespace svtest;
namespace fs = std::filesystem;

namespace outputs {
namespace {

// A routed scene file (no store), made once.
fs::path routed_scene() {
  static const fs::path p = [] {
    const fs::path f = scratch() / "outputs-routed.json";
    REQUIRE(run(fmt::format("{} --no-store {} | {} --no-store | {} --no-store > {}", bin("sv-skeleton"),
                            data("tabler_hexagons_w5.png"), bin("sv-fit"), bin("sv-route"), f.string()))
                .status == 0);
    return f;
  }();
  return p;
}

bool is_char_device(const fs::path& p, unsigned major_no, unsigned minor_no) {
  struct stat st {};
  return ::stat(p.c_str(), &st) == 0 && S_ISCHR(st.st_mode) && major(st.st_rdev) == major_no &&
         minor(st.st_rdev) == minor_no;
}

}  // namespace
}  // namespace outputs

using namespace outputs;

TEST_CASE("output through a symlink to /dev/null and to a null device of its own: written through", "[e2e][outputs]") {
  const fs::path link = scratch() / "null-link";
  fs::remove(link);
  fs::create_symlink("/dev/null", link);
  Run r = run(fmt::format("{} --no-store {} -o {}", bin("sv-simulate"), routed_scene().string(), link.string()));
  INFO(r.err);
  CHECK(r.status == 0);
  CHECK(fs::is_symlink(link));
  CHECK(is_char_device("/dev/null", 1, 3));
  if (::geteuid() == 0) {  // a device node of the test's own (mknod needs root)
    const fs::path node = scratch() / "null-node";
    fs::remove(node);
    REQUIRE(::mknod(node.c_str(), S_IFCHR | 0666, makedev(1, 3)) == 0);
    Run n = run(fmt::format("{} --no-store {} -o {} --svg {}", bin("sv-simulate"), routed_scene().string(), node.string(),
                            node.string()));
    CHECK(n.status == 0);
    CHECK(is_char_device(node, 1, 3));
  }
}

TEST_CASE("a FIFO and a process substitution get the bytes and stay what they are", "[e2e][outputs]") {
  const fs::path fifo = scratch() / "out.fifo", got = scratch() / "fifo-got.svg";
  fs::remove(fifo);
  REQUIRE(::mkfifo(fifo.c_str(), 0644) == 0);
  std::thread reader([&] { run("cat " + fifo.string() + " > " + got.string()); });
  Run r = run(fmt::format("{} --no-store {} --svg {} -o /dev/null", bin("sv-simulate"), routed_scene().string(), fifo.string()));
  reader.join();
  INFO(r.err);
  CHECK(r.status == 0);
  CHECK(slurp(got).find("</svg>") != std::string::npos);
  CHECK(fs::is_fifo(fifo));
  // bash's >(…) is /dev/fd/N, a pipe to the command; sv's output must reach it whole.
  const fs::path sub = scratch() / "substituted.svg";
  fs::remove(sub);
  Run s = run(fmt::format("bash -c '{} --no-store {} --svg >(cat > {}) -o /dev/null; wait'", bin("sv-simulate"),
                          routed_scene().string(), sub.string()));
  CHECK(s.status == 0);
  for (int i = 0; i < 200 && slurp(sub).find("</svg>") == std::string::npos; ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  CHECK(slurp(sub).find("</svg>") != std::string::npos);
}

TEST_CASE("output to /dev/null and --svg /dev/stdout: the device stays a device, stdout gets the bytes", "[e2e][outputs]") {
  // Run only once the stand-ins above pass: a regression here would replace the machine's own
  // /dev/null (as root) with a file.
  Run r = run(fmt::format("{} --no-store {} -o /dev/null --svg /dev/stdout", bin("sv-simulate"), routed_scene().string()));
  INFO(r.err);
  CHECK(r.status == 0);
  CHECK(r.out.rfind("<svg", 0) == 0);
  CHECK(r.out.find("</svg>") != std::string::npos);
  CHECK(is_char_device("/dev/null", 1, 3));
  CHECK(fs::is_symlink("/dev/stdout"));
  // A regular file behind /dev/stdout (a shell redirection) is written where the descriptor is,
  // never replaced: what follows on standard output lands after it.
  const fs::path file = scratch() / "stdout-file.txt";
  Run both = run(fmt::format("{} --no-store {} --svg /dev/stdout > {}", bin("sv-simulate"), routed_scene().string(),
                             file.string()));
  CHECK(both.status == 0);
  const std::string text = slurp(file);
  CHECK(text.rfind("<svg", 0) == 0);
  CHECK(text.find("\"format\":\"sv.scene\"") != std::string::npos);  // the scene, after the SVG
}

TEST_CASE("a write that fails, to a file or to standard output, is io_error with a non-zero exit", "[e2e][outputs]") {
  for (const std::string& cmd :
       {fmt::format("{} --no-store {} > /dev/full", bin("sv-simulate"), routed_scene().string()),
        fmt::format("{} --no-store {} -o /dev/full", bin("sv-simulate"), routed_scene().string()),
        fmt::format("{} --no-store {} --svg /dev/full -o /dev/null", bin("sv-simulate"), routed_scene().string()),
        fmt::format("{} list-primitives {} > /dev/full", bin("sv-diagnose"), routed_scene().string()),
        fmt::format("{} tools > /dev/full", bin("sv-commit"))}) {
    CAPTURE(cmd);
    Run r = run(cmd);
    CHECK(r.status == 3);
    CHECK(r.err.find("io_error") != std::string::npos);
  }
  CHECK(fs::is_character_file("/dev/full"));
}

TEST_CASE("exporting with a terminal for standard output: one line there, not the scene", "[e2e][outputs]") {
  const fs::path svg = scratch() / "terminal.svg";
  Run r = run_on_terminal(fmt::format("{} --no-store {} --svg {}", bin("sv-simulate"), routed_scene().string(), svg.string()));
  CHECK(r.status == 0);
  CHECK(fs::file_size(svg) > 0);
  CHECK(r.out.find('{') == std::string::npos);
  CHECK(std::count(r.out.begin(), r.out.end(), '\n') == 1);
  CHECK(r.out.find("wrote " + svg.string()) != std::string::npos);
  CHECK(r.out.find("-o FILE") != std::string::npos);

  // --report too; -o - and a pipe still get the scene; without an export a terminal gets the scene.
  r = run_on_terminal(fmt::format("{} --no-store {} --report", bin("sv-simulate"), routed_scene().string()));
  CHECK((r.status == 0 && r.out.find('{') == std::string::npos && r.err.find("primitives") != std::string::npos));
  r = run_on_terminal(fmt::format("{} --no-store {} --svg {} | head -c 1", bin("sv-simulate"), routed_scene().string(),
                                  svg.string()));
  CHECK(r.out.rfind("{", 0) == 0);
  r = run_on_terminal(fmt::format("{} --no-store {}", bin("sv-simulate"), routed_scene().string()));
  CHECK((r.status == 0 && r.out.rfind("{", 0) == 0));
}

TEST_CASE("sv-simulate: --report and the exports change what is printed and written, not the scene", "[e2e][outputs]") {
  const fs::path svg = scratch() / "same.svg";
  const Run plain = run(fmt::format("{} --no-store {}", bin("sv-simulate"), routed_scene().string()));
  const Run reported = run(fmt::format("{} --no-store --report --svg {} {} 2>/dev/null", bin("sv-simulate"),
                                       svg.string(), routed_scene().string()));
  REQUIRE(plain.status == 0);
  REQUIRE(reported.status == 0);
  CHECK(plain.out == reported.out);  // the same scene, so the same revision id in a store
}
