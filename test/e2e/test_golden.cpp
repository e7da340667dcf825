// The golden tests of test/golden/*.test: each case a command line and the exact output it
// prints (format in test/golden/README.md).
#include <catch2/catch.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <regex>
#include <sstream>
#include <vector>

#include "process.hpp"

using namespace svtest;

namespace {

struct GoldenCase {
  std::string file, title, command, expected;
  int status = 0;
  int line = 0;
};

std::vector<GoldenCase> parse_golden(const std::string& file, const std::string& text) {
  std::vector<GoldenCase> out;
  std::istringstream in(text);
  std::string title;
  GoldenCase* open = nullptr;
  const std::regex exit_line(R"(\[exit ([0-9]+)\])");
  std::smatch m;
  int n = 0;
  for (std::string line; std::getline(in, line);) {
    ++n;
    if (line.empty()) {
      open = nullptr;
      title.clear();
    } else if (!open && line[0] == '#') {
      title = line.substr(line.find_first_not_of("# "));
    } else if (!open && line.rfind("$ ", 0) == 0) {
      out.push_back({file, title, line.substr(2), "", 0, n});
      open = &out.back();
    } else if (open && std::regex_match(line, m, exit_line)) {
      open->status = std::stoi(m[1]);
    } else if (open) {
      open->expected += line + "\n";
    } else {
      FAIL(fmt::format("{}:{}: a line outside a case: {}", file, n, line));
    }
  }
  return out;
}

}  // namespace

TEST_CASE("golden: every case of test/golden prints exactly its expected output", "[e2e][golden]") {
  namespace fs = std::filesystem;
  const fs::path dir = fs::path(SV_TEST_DATA) / ".." / "golden";
  std::vector<fs::path> files;
  for (const auto& e : fs::directory_iterator(dir))
    if (e.path().extension() == ".test") files.push_back(e.path());
  std::sort(files.begin(), files.end());
  REQUIRE(!files.empty());
  int k = 0, cases = 0;
  for (const auto& f : files) {
    for (const GoldenCase& c : parse_golden(f.filename().string(), slurp(f))) {
      // A fresh folder each: no store, no file left by another case.
      const fs::path work = scratch() / fmt::format("golden-{}", k++);
      fs::remove_all(work);
      fs::create_directories(work);
      fs::create_directory_symlink(fs::absolute(SV_TEST_DATA), work / "data");
      INFO(c.file << ":" << c.line << ": " << c.title << "\n$ " << c.command);
      Run r = run(fmt::format("cd '{}' && unset SV_STORE SV_ORACLE && PATH='{}':\"$PATH\" && {}", work.string(),
                              SV_BIN_DIR, c.command));
      INFO("stderr: " << r.err);
      CHECK(r.out == c.expected);
      CHECK(r.status == c.status);
      ++cases;
    }
  }
  CHECK(cases >= 8);
}
