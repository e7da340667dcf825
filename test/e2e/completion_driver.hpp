// Runs a generated bash completion script as bash would at a TAB: sources it, sets COMP_WORDS and
// COMP_CWORD to a command line whose last word is the one being completed, calls the completion
// function and returns COMPREPLY, a word a line.
#pragma once
#include <fmt/format.h>

#include <filesystem>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "process.hpp"

namespace svtest {

inline std::set<std::string> complete(const std::filesystem::path& script, const std::string& function,
                                      const std::vector<std::string>& words, const std::string& cwd = ".") {
  const std::filesystem::path driver = scratch() / "complete.sh";
  spit(driver,
       "source \"$1\" || exit 9; shift; fn=$1; shift\n"
       "COMP_WORDS=(\"$@\"); COMP_CWORD=$(($# - 1)); COMP_LINE=\"$*\"; COMP_POINT=${#COMP_LINE}\n"
       "\"$fn\" || exit 8\n"
       "[ ${#COMPREPLY[@]} -eq 0 ] || printf '%s\\n' \"${COMPREPLY[@]}\"\n");
  std::string cmd = fmt::format("cd '{}' && bash '{}' '{}' {}", cwd, driver.string(), script.string(), function);
  for (const auto& w : words) cmd += " '" + w + "'";
  const Run r = run(cmd);
  INFO(cmd << "\n" << r.err);
  REQUIRE(r.status == 0);
  std::set<std::string> out;
  std::istringstream in(r.out);
  for (std::string line; std::getline(in, line);) out.insert(line);
  return out;
}

}  // namespace svtest
