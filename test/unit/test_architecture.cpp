// The architecture page (man/sv.7) kept true: every module of lib/ is described there, and no
// module includes one from a layer above its own.
#include <catch2/catch.hpp>

#include "../e2e/process.hpp"

#include <filesystem>
#include <map>
#include <regex>
#include <set>
#include <sstream>
#include <string>

namespace {

namespace fs = std::filesystem;
const fs::path kRoot = fs::path(SV_TEST_DATA) / ".." / "..";

// Each module's layer, from the page's LAYERS section: a line a layer (".B core ;",
// ".BR raster \", \" robot ;"), the last ending with ".".
std::map<std::string, int> layers_of(const std::string& page) {
  std::map<std::string, int> layer;
  const size_t from = page.find(".SH LAYERS"), to = page.find(".SH", from + 1);
  std::istringstream in(page.substr(from, to - from));
  int k = 0;
  const std::regex word("[a-z]+");
  for (std::string line; std::getline(in, line);) {
    if (line.rfind(".B ", 0) != 0 && line.rfind(".BR ", 0) != 0) continue;
    const std::string body = line.substr(line.find(' ') + 1);
    bool any = false;
    for (std::sregex_iterator it(body.begin(), body.end(), word), end; it != end; ++it)
      if (!layer.count(it->str())) layer[it->str()] = k, any = true;
    if (any && line.back() == ';') ++k;
    if (line.back() == '.') break;
  }
  return layer;
}

}  // namespace

TEST_CASE("man/sv.7 describes every module of lib/, and includes follow its layers", "[architecture]") {
  const std::string page = svtest::slurp(kRoot / "man" / "sv.7");
  REQUIRE(page.find(".SH MODULES") != std::string::npos);
  const std::map<std::string, int> layer = layers_of(page);
  std::set<std::string> modules;
  for (const auto& e : fs::directory_iterator(kRoot / "lib"))
    if (e.is_directory()) modules.insert(e.path().filename().string());
  REQUIRE(modules.size() >= 10);
  for (const auto& m : modules) {
    INFO("module " << m);
    CHECK(page.find(".B lib/" + m + "\n") != std::string::npos);
    CHECK(layer.count(m) == 1);
  }
  CHECK(layer.at("core") == 0);

  // An include of another module's header: "module/header.hpp".
  const std::regex include(R"re(#include "([a-z_]+)/[a-z_0-9]+\.hpp")re");
  int checked = 0;
  for (const auto& e : fs::recursive_directory_iterator(kRoot / "lib")) {
    const std::string ext = e.path().extension().string();
    if (ext != ".cpp" && ext != ".hpp") continue;
    const std::string own = fs::relative(e.path(), kRoot / "lib").begin()->string();
    const std::string text = svtest::slurp(e.path());
    for (std::sregex_iterator it(text.begin(), text.end(), include), end; it != end; ++it) {
      const std::string other = (*it)[1].str();
      if (other == own || !modules.count(other)) continue;
      INFO(e.path().filename().string() << " (" << own << ") includes " << other);
      CHECK(layer.at(other) < layer.at(own));
      ++checked;
    }
  }
  CHECK(checked > 100);
}
