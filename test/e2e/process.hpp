// Running the executables from tests: shell command in, exit status and both streams out.
#pragma once
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

namespace svtest {

struct Run {
  int status = -1;
  std::string out, err;
};

inline std::string slurp(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

inline void spit(const std::filesystem::path& p, const std::string& bytes) {
  std::ofstream out(p, std::ios::binary | std::ios::trunc);
  out << bytes;
}

// A fresh scratch directory per test binary run.
inline std::filesystem::path scratch() {
  static std::filesystem::path dir = [] {
    auto d = std::filesystem::temp_directory_path() / ("sv-e2e-" + std::to_string(::getpid()));
    std::filesystem::remove_all(d);
    std::filesystem::create_directories(d);
    return d;
  }();
  return dir;
}

inline std::string bin(const std::string& name) { return std::string(SV_BIN_DIR) + "/" + name; }
inline std::string data(const std::string& name) { return std::string(SV_TEST_DATA) + "/" + name; }

// Runs `cmd` with /bin/sh; stdout and stderr are captured through files.
inline Run run(const std::string& cmd) {
  static int counter = 0;
  auto base = scratch() / ("run" + std::to_string(counter++));
  std::string full = "(" + cmd + ") >" + base.string() + ".out 2>" + base.string() + ".err";
  int raw = std::system(full.c_str());
  Run r;
  r.status = WIFEXITED(raw) ? WEXITSTATUS(raw) : 128;
  r.out = slurp(base.string() + ".out");
  r.err = slurp(base.string() + ".err");
  return r;
}

inline int count_lines(const std::string& s) {
  int n = 0;
  for (char c : s) n += c == '\n';
  return n;
}

}  // namespace svtest
