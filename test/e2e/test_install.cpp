// What an installed sv offers besides its work: --version on every executable, and the bash
// completion each prints for its own command line (installed as share/bash-completion).
#include <catch2/catch.hpp>

#include <regex>
#include <set>
#include <sstream>

#include "completion_driver.hpp"
#include "process.hpp"

using namespace svtest;
namespace fs = std::filesystem;

namespace {

const char* const kExecutables[] = {"sv-skeleton", "sv-fit",  "sv-route",  "sv-simulate",
                                    "sv-diagnose", "sv-edit", "sv-commit", "sv-mcp"};

fs::path completion_of(const std::string& exe) {
  const fs::path f = scratch() / (exe + ".bash");
  const Run r = run(bin(exe) + " --completion bash > " + f.string());
  REQUIRE(r.status == 0);
  return f;
}

}  // namespace

TEST_CASE("every executable's --version names the commit and the libraries it loads", "[e2e][version]") {
  for (const char* exe : kExecutables) {
    INFO(exe);
    const Run r = run(bin(exe) + " --version");
    REQUIRE(r.status == 0);
    CHECK(std::regex_search(r.out, std::regex(std::string("^") + exe + " " + SV_VERSION +
                                              R"( \(commit ([0-9a-f]{12}(-dirty)?|unknown)\)\n)")));
    CHECK(r.out.find("libraries: ") != std::string::npos);
    for (const char* lib : {"libpng ", "zlib ", "Nettle ", "Boost ", "nlohmann_json ", "fmt ", "CLI11 ", "Eigen "})
      CHECK(r.out.find(lib) != std::string::npos);
#ifdef SV_MIMALLOC
    CHECK(r.out.find("mimalloc 2.") != std::string::npos);
#endif
  }
}

TEST_CASE("every executable prints a bash completion script that bash accepts", "[e2e][completion]") {
  for (const char* exe : kExecutables) {
    INFO(exe);
    const fs::path f = completion_of(exe);
    const Run r = run("bash -n " + f.string() + " && bash -c 'source " + f.string() + " && complete -p " + exe + "'");
    CHECK(r.status == 0);
    CHECK(r.out.find(exe) != std::string::npos);
  }
  CHECK(run(bin("sv-fit") + " --completion zsh").status == 2);
}

TEST_CASE("sv-commit's completion: subcommands, their options, option values", "[e2e][completion]") {
  const fs::path f = completion_of("sv-commit");
  using S = std::set<std::string>;
  auto complete = [&](std::vector<std::string> words) { return svtest::complete(f, "_sv_commit", words); };
  const S l = complete({"sv-commit", "l"});
  CHECK(l.count("log"));
  CHECK(l.count("list-revisions"));
  CHECK(complete({"sv-commit", "log", "--m"}) == S{"--max-count"});
  CHECK(complete({"sv-commit", "log", "--"}).count("--store"));  // sv-commit's own options follow its subcommands
  CHECK(complete({"sv-commit", "revert", "--to-"}) == S{"--to-revision-id"});
  CHECK(complete({"sv-commit", "--store", "x", "g"}) == S{"gc"});
}

TEST_CASE("tool subcommands complete the choices their schemas list", "[e2e][completion]") {
  using S = std::set<std::string>;
  const S sort = complete(completion_of("sv-diagnose"), "_sv_diagnose", {"sv-diagnose", "list-primitives", "--sort-by", ""});
  CHECK(sort.count("length_desc"));
  CHECK(complete(completion_of("sv-mcp"), "_sv_mcp", {"sv-mcp", "--tools", ""}) == S{"read", "all"});
}

TEST_CASE("cmake --install: a prefix that works without the source tree, sv-batch included", "[e2e][install]") {
  const fs::path prefix = scratch() / "prefix";
  fs::remove_all(prefix);
  const std::string build = fs::path(SV_BIN_DIR).parent_path().string();
  const Run install = run("cmake --install '" + build + "' --prefix '" + prefix.string() + "' > /dev/null");
  REQUIRE(install.status == 0);
  for (const char* exe : kExecutables) {
    INFO(exe);
    CHECK(fs::exists(prefix / "bin" / exe));
    CHECK(fs::exists(prefix / "share/man/man1" / (std::string(exe) + ".1.gz")));
#ifdef SV_MIMALLOC  // the completions are generated in the Release build, not the sanitized one
    CHECK(fs::exists(prefix / "share/bash-completion/completions" / exe));
#endif
  }
  CHECK(fs::exists(prefix / "share/man/man7/sv.7.gz"));
  CHECK(fs::exists(prefix / "share/doc/sv/copyright"));
  // sv-batch from the prefix, with no sv on PATH and away from the checkout: it finds its job script
  // in libexec/sv and the executables beside itself.
  const fs::path work = scratch() / "installed-batch";
  fs::remove_all(work);
  fs::create_directories(work);
  const Run batch = run("cd '" + work.string() + "' && cp '" + data("lucide_milestone_w3.png") +
                        "' . && env PATH=/usr/bin:/bin '" + (prefix / "bin/sv-batch").string() +
                        "' -q out lucide_milestone_w3.png");
  INFO(batch.err);
  CHECK(batch.status == 0);
  CHECK(fs::file_size(work / "out/lucide_milestone_w3.json") > 1000);
}

TEST_CASE("sv-batch's completion offers every option its --help lists", "[e2e][completion]") {
  const fs::path scripts = fs::path(SV_TEST_DATA) / ".." / ".." / "scripts";
  const fs::path script = scripts / "lib" / "sv-batch.bash";
  const Run help = run((scripts / "batch").string() + " --help");
  REQUIRE(help.status == 0);
  const std::set<std::string> offered = complete(script, "_sv_batch", {"sv-batch", "-"});
  const std::regex option(R"(^ *(-[a-z]), (--[a-z-]+)|^ *(--?[a-z][a-z-]*))");
  int listed = 0;
  std::istringstream in(help.out);
  for (std::string line; std::getline(in, line);) {
    std::smatch m;
    if (!std::regex_search(line, m, option)) continue;
    for (int g : {1, 2, 3})
      if (m[g].matched) {
        INFO(m[g].str());
        CHECK(offered.count(m[g].str()));
        ++listed;
      }
  }
  CHECK(listed >= 10);
  CHECK(complete(script, "_sv_batch", {"sv-batch", "--export", "svg,g"}) == std::set<std::string>{"svg,gcode"});
}
