// How the executables start (cmd/): position-independent, on Debian's shared libraries, their
// memory on transparent huge pages (allocator.cpp). On a virtual machine a page fault costs
// 10-25 us, and a drawing's sv-skeleton took 1,490 of them on 4 KiB pages.
#include <chrono>
#include <nlohmann/json.hpp>
#include <opencv2/imgproc.hpp>
#include <thread>
#include <utility>

#include "process.hpp"
#include "raster/png.hpp"
#include "raster/threads.hpp"

using namespace svtest;

// Runs sv-skeleton with the dynamic loader logging every library it loads (LD_DEBUG, to files of
// its own, so stderr stays the program's); returns the run and that log.
static std::pair<Run, std::string> skeleton_loading(const std::string& png) {
  static int n = 0;
  const std::string log = "ld-" + std::to_string(n++);
  Run r = run("LD_DEBUG=files LD_DEBUG_OUTPUT=" + (scratch() / log).string() + " " + bin("sv-skeleton") + " --no-store " + png);
  std::string loaded;
  for (const auto& f : std::filesystem::directory_iterator(scratch()))
    if (f.path().filename().string().rfind(log + ".", 0) == 0) loaded += slurp(f.path());
  return {r, loaded};
}

// Only images above kParallelPixels run OpenCV's loops threaded, on TBB.
TEST_CASE("an image above the threading threshold traces on TBB", "[memory]") {
  cv::Mat paper(4100, 4200, CV_8UC1, cv::Scalar(255));
  REQUIRE(paper.total() > sv::kParallelPixels);
  cv::line(paper, {100, 100}, {4000, 3900}, cv::Scalar(0), 9);
  const std::string png = (scratch() / "threaded.png").string();
  spit(png, sv::encode_png_gray(paper));
  auto [r, loaded] = skeleton_loading(png);
  INFO(r.err);
  REQUIRE(r.status == 0);
  CHECK(r.err.empty());
  CHECK(loaded.find("libtbb") != std::string::npos);
  const auto graph = nlohmann::json::parse(r.out).at("graph");
  CHECK(graph.at("edges").size() == 1);
  CHECK(graph.at("vertices").size() == 2);
}

// Position-independent executables (ELF type ET_DYN): their code's address is randomised, and
// they load Debian's shared libraries, which its security updates replace.
TEST_CASE("every executable is position independent", "[memory]") {
  for (const auto& f : std::filesystem::directory_iterator(SV_BIN_DIR)) {
    INFO(f.path());
    const std::string head = slurp(f.path()).substr(0, 18);
    REQUIRE(head.size() == 18);
    CHECK(head.substr(0, 4) == "\x7f" "ELF");
    CHECK((static_cast<unsigned char>(head[16]) | static_cast<unsigned char>(head[17]) << 8) == 3);  // ET_DYN
  }
}

#ifdef SV_MIMALLOC
static std::string proc_file(pid_t pid, const char* name) { return slurp("/proc/" + std::to_string(pid) + "/" + name); }

// True when the process has a mapping on huge pages: advised MADV_HUGEPAGE ("hg" among its
// VmFlags), or hugetlbfs pages ("ht") where the machine reserves them and mimalloc takes those.
static bool asks_for_huge_pages(pid_t pid) {
  std::istringstream smaps(proc_file(pid, "smaps"));
  for (std::string line; std::getline(smaps, line);) {
    if (line.rfind("VmFlags:", 0) != 0) continue;
    line += ' ';
    if (line.find(" hg ") != std::string::npos || line.find(" ht ") != std::string::npos) return true;
  }
  return false;
}

TEST_CASE("every stage's heap asks for huge pages", "[memory]") {
  const bool thp = std::filesystem::exists("/sys/kernel/mm/transparent_hugepage");  // else a kernel without
  for (const char* stage : {"sv-skeleton", "sv-fit", "sv-route", "sv-simulate", "sv-mcp"}) {
    INFO(stage);
    // Blocked on its standard input, the process has started and allocated, and stays alive.
    PipedChild c = spawn_piped({bin(stage)}, scratch());
    REQUIRE(c.pid > 0);
    bool huge = false;
    for (int i = 0; i < 500 && thp && !(huge = asks_for_huge_pages(c.pid)); ++i)
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    ::close(c.to_child);
    ::close(c.from_child);
    kill_child(c);
    CHECK((huge || !thp));
  }
}
#endif
